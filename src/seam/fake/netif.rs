//! The fake [`Netif`]: links, addresses, routes, a driver's ethtool knobs
//! and traffic control, answered as the kernel does.

use std::collections::BTreeMap;
use std::io;

use super::Journal;
use crate::config::types::{IfName, IpNet};
use crate::seam::netif::{
    EthtoolSet, Features, Kind, LinkInfo, LinkModes, LinkState, Netif, NewLink, Qdisc, RouteEntry, TcKind, TcList, TcObject, TcOp,
    ARPHRD_ETHER, OURS,
};
use crate::sys::ethtool::{cmd, Coalesce, GetFeaturesBlock, LegacyCmd, LinkSettings, PauseParam, RingParam};
use crate::sys::tc::{INGRESS_HANDLE, TC_H_INGRESS, TC_H_ROOT};

/// A fake driver's ethtool knobs; `None` means the driver lacks the
/// knob (EOPNOTSUPP), as veth lacks rings and coalescing.
#[derive(Clone, Debug, Default)]
pub(crate) struct FakeNic {
    pub rings: Option<RingParam>,
    pub coalesce: Option<(u32, u32)>,
    pub pause: Option<PauseParam>,
    /// Speed, duplex and autoneg (the header of ETHTOOL_GLINKSETTINGS).
    pub link: Option<LinkSettings>,
    /// Only ETHTOOL_GSET/SSET, no GLINKSETTINGS (kernels before 4.6).
    pub legacy_link: bool,
    /// ETH_SS_FEATURES: (name, changeable, active). None: a kernel before
    /// 2.6.39, answered through the legacy per-offload commands instead.
    pub features: Option<Vec<(String, bool, bool)>>,
    /// Legacy offload values by get command (ETHTOOL_GTSO ...).
    pub legacy: BTreeMap<u32, bool>,
}

/// The link-mode words this fake driver has (3 bitmaps of `NWORDS` each).
const NWORDS: i8 = 3;

impl FakeNic {
    /// Carry out one change as a driver would.
    fn set(&mut self, change: &EthtoolSet) -> io::Result<()> {
        match change {
            EthtoolSet::Rings(want) => {
                let cur = self.rings.as_mut().ok_or_else(nosup)?;
                if want.rx_pending > cur.rx_max_pending || want.tx_pending > cur.tx_max_pending {
                    return Err(io::Error::from_raw_os_error(nix::libc::EINVAL));
                }
                cur.rx_pending = want.rx_pending;
                cur.tx_pending = want.tx_pending;
            }
            EthtoolSet::Coalesce(want) => {
                *self.coalesce.as_mut().ok_or_else(nosup)? = (want.rx_coalesce_usecs, want.tx_coalesce_usecs);
            }
            EthtoolSet::Pause(want) => *self.pause.as_mut().ok_or_else(nosup)? = *want,
            EthtoolSet::LinkSettings(_) if self.legacy_link => return Err(nosup()),
            EthtoolSet::LinkSettings(l) => {
                let cur = self.link.as_mut().ok_or_else(nosup)?;
                if l.settings.link_mode_masks_nwords != NWORDS || l.masks.len() != 3 * NWORDS as usize {
                    return Err(io::Error::from_raw_os_error(nix::libc::EINVAL));
                }
                *cur = l.settings;
            }
            EthtoolSet::LegacySettings(c) => {
                let cur = self.link.as_mut().ok_or_else(nosup)?;
                cur.speed = u32::from(c.speed) | u32::from(c.speed_hi) << 16;
                cur.duplex = c.duplex;
                cur.autoneg = c.autoneg;
            }
            EthtoolSet::Features(blocks) => {
                let f = self.features.as_mut().ok_or_else(nosup)?;
                let mut refused = false;
                for (k, (_, avail, active)) in f.iter_mut().enumerate() {
                    let Some(b) = blocks.get(k / 32) else { break };
                    let m = 1u32 << (k % 32);
                    if b.valid & m != 0 {
                        if *avail {
                            *active = b.requested & m != 0;
                        } else {
                            refused = true;
                        }
                    }
                }
                if refused {
                    return Err(nosup());
                }
            }
            EthtoolSet::Offload { set, on } => {
                let (get, _) = cmd::LEGACY_OFFLOADS.iter().find(|(_, s)| s == set).ok_or_else(nosup)?;
                *self.legacy.get_mut(get).ok_or_else(nosup)? = *on;
            }
        }
        Ok(())
    }
}

/// A fake interface: the link, its addresses and its driver.
#[derive(Clone, Debug, Default)]
pub(crate) struct FakeLink {
    pub state: LinkState,
    pub addrs: Vec<IpNet>,
    pub nic: FakeNic,
    /// The driver's largest MTU (EINVAL above it); 0 means 65535.
    pub max_mtu: u32,
    /// No cable: the link never gets carrier.
    pub no_carrier: bool,
    /// rtnetlink's view: kind, master (bridge index) and alias.
    pub kind: Option<Kind>,
    pub master: Option<u32>,
    pub alias: Option<String>,
}

#[derive(Default)]
pub(crate) struct FakeNetif {
    pub links: BTreeMap<String, FakeLink>,
    pub routes: Vec<RouteEntry>,
    pub journal: Journal,
    /// Every ethtool change asked for, in order (as youki's recording
    /// netlink client keeps every message).
    pub sent: Vec<(IfName, EthtoolSet)>,
    /// The qdiscs, HTB classes and ingress filters (`FakeNetif::tc_*`);
    /// a device's root is the kernel's default while none is listed.
    pub tc: Vec<TcObject>,
    /// Qdisc kinds this kernel lacks ("cake"): ENOENT, as the kernel
    /// answers an unknown kind.
    pub tc_missing: Vec<&'static str>,
    /// The qdisc the kernel attaches to a root left empty by a delete
    /// (net.core.default_qdisc; handle 0:). None: not modelled.
    pub default_qdisc: Option<TcKind>,
}

impl FakeNetif {
    /// Add an interface with a MAC, down, MTU 1500, txqueuelen 1000.
    pub(crate) fn add(&mut self, name: &str, index: u32) -> &mut FakeLink {
        let state = LinkState {
            index,
            mtu: 1500,
            txqueuelen: 1000,
            mac: [2, 0, 0, 0, 0, index as u8],
            hwtype: ARPHRD_ETHER,
            ..LinkState::default()
        };
        self.links.entry(name.to_string()).or_insert(FakeLink { state, ..FakeLink::default() })
    }

    fn get(&mut self, name: &IfName) -> io::Result<&mut FakeLink> {
        self.links.get_mut(name.as_str()).ok_or_else(|| io::Error::from_raw_os_error(19))
    }

    fn by_index(&mut self, index: u32) -> io::Result<&mut FakeLink> {
        self.links.values_mut().find(|l| l.state.index == index).ok_or_else(|| io::Error::from_raw_os_error(19))
    }

    fn note(&self, s: String) {
        self.journal.borrow_mut().push(s);
    }

    fn entry_at(&mut self, index: u32) -> io::Result<(&String, &mut FakeLink)> {
        self.links.iter_mut().find(|(_, l)| l.state.index == index).ok_or_else(|| io::Error::from_raw_os_error(nix::libc::ENODEV))
    }

    fn name_of(&self, index: u32) -> String {
        self.links.iter().find(|(_, l)| l.state.index == index).map_or_else(|| format!("#{index}"), |(n, _)| n.clone())
    }
}

fn nosup() -> io::Error {
    io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP)
}

/// The rtnetlink link operations, with the kernel's answers as observed
/// on 6.1 and 6.18: EEXIST for a name (or a VLAN id on its lower device)
/// taken, ENODEV for an index that is gone, ELOOP for a bridge made a
/// port of a bridge, EOPNOTSUPP for a master that is no bridge and for
/// deleting a NIC; deleting a bridge releases its ports and removes the
/// VLANs on it. Not modelled: carrier and forwarding through a bridge,
/// STP states, the bridge's MAC following its ports.
impl FakeNetif {
    fn fake_infos(&self) -> Vec<LinkInfo> {
        self.links
            .iter()
            .map(|(name, l)| LinkInfo {
                name: name.parse().expect("fake link names are valid"),
                kind: l.kind.clone().unwrap_or(Kind::Device),
                state: l.state.clone(),
                master: l.master,
                alias: l.alias.clone(),
            })
            .collect()
    }

    fn fake_create(&mut self, link: &NewLink) -> io::Result<()> {
        let (name, kind, mtu) = match link {
            NewLink::Bridge { name, stp } => (name, Kind::Bridge { stp: *stp }, 1500),
            NewLink::Ifb { name } => (name, Kind::Other(heapless::String::try_from("ifb").expect("fits")), 1500),
            NewLink::Vlan { name, link, id } => {
                let lower = self.links.get(link.as_str()).ok_or_else(|| io::Error::from_raw_os_error(nix::libc::ENODEV))?;
                let (mtu, link) = (lower.state.mtu, lower.state.index);
                if self.links.values().any(|l| l.kind == Some(Kind::Vlan { link, id: *id })) {
                    return Err(io::Error::from_raw_os_error(nix::libc::EEXIST));
                }
                (name, Kind::Vlan { link, id: *id }, mtu)
            }
        };
        if self.links.contains_key(name.as_str()) {
            return Err(io::Error::from_raw_os_error(nix::libc::EEXIST));
        }
        let index = self.links.values().map(|l| l.state.index).max().unwrap_or(0) + 1;
        let l = self.add(name.as_str(), index);
        l.state.mtu = mtu;
        l.kind = Some(kind);
        l.alias = Some(OURS.to_string());
        self.note(format!("create {name}"));
        Ok(())
    }

    fn fake_set_master(&mut self, index: u32, master: u32) -> io::Result<()> {
        if master != 0 {
            let (_, m) = self.entry_at(master)?;
            if !matches!(m.kind, Some(Kind::Bridge { .. })) {
                return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
            }
        }
        let (_, l) = self.entry_at(index)?;
        if master != 0 && matches!(l.kind, Some(Kind::Bridge { .. })) {
            return Err(io::Error::from_raw_os_error(nix::libc::ELOOP));
        }
        l.master = (master != 0).then_some(master);
        let (port, bridge) = (self.name_of(index), self.name_of(master));
        self.note(if master == 0 { format!("release {port}") } else { format!("enslave {port} to {bridge}") });
        Ok(())
    }

    fn fake_delete(&mut self, index: u32) -> io::Result<()> {
        let (name, l) = self.entry_at(index)?;
        if l.kind.is_none() || l.kind == Some(Kind::Device) {
            return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
        }
        let name = name.clone();
        self.links.remove(&name);
        self.links.retain(|_, l| !matches!(l.kind, Some(Kind::Vlan { link, .. }) if link == index));
        for l in self.links.values_mut().filter(|l| l.master == Some(index)) {
            l.master = None;
        }
        self.note(format!("delete {name}"));
        Ok(())
    }
}

/// Traffic control as the kernel answers `tc` (checked on 6.18 with
/// iproute2's tc, and in net/sched/sch_api.c): a root qdisc replaced
/// with the handle of a root of another kind is EINVAL; deleting a root
/// whose handle is another is EINVAL, and deleting none ENOENT; a second
/// ingress qdisc is EEXIST; a class needs its HTB qdisc and a leaf its
/// class (ENOENT); a filter needs the ingress qdisc (EINVAL) and its
/// target device (ENODEV); deleting a qdisc takes its children, classes
/// and filters with it, and deleting a link its qdiscs. Not modelled:
/// packets, counters (a test sets them), and any qdisc below a leaf.
impl FakeNetif {
    fn fake_tc_set(&mut self, op: &TcOp) -> io::Result<()> {
        let err = |e| Err(io::Error::from_raw_os_error(e));
        let dev_index = |n: &IfName, me: &Self| me.links.get(n.as_str()).map(|l| l.state.index);
        let (dev, what) = match op {
            TcOp::Qdisc { dev, .. } | TcOp::Delete { dev, .. } | TcOp::Class { dev, .. } | TcOp::Redirect { dev, .. } => (dev, op),
        };
        let Some(index) = dev_index(dev, self) else { return err(nix::libc::ENODEV) };
        let at = |me: &Self, parent: u32| me.tc.iter().position(|o| o.index == index && o.parent == parent && !Self::is_filter_or_class(o));
        match what {
            TcOp::Qdisc { parent, handle, qdisc, .. } => {
                let kind = match qdisc {
                    Qdisc::Cake(c) => TcKind::Cake(*c),
                    Qdisc::Htb => TcKind::Htb,
                    Qdisc::FqCodel => TcKind::FqCodel,
                    Qdisc::Ingress => TcKind::Ingress,
                };
                let name = qdisc.to_string();
                if self.tc_missing.iter().any(|m| name.starts_with(m)) {
                    return err(nix::libc::ENOENT);
                }
                if *parent != TC_H_ROOT
                    && *parent != TC_H_INGRESS
                    && !self.tc.iter().any(|o| o.index == index && o.handle == *parent && matches!(o.kind, TcKind::HtbClass(_)))
                {
                    return err(nix::libc::ENOENT);
                }
                if let Some(i) = at(self, *parent) {
                    let old = &self.tc[i];
                    if *qdisc == Qdisc::Ingress {
                        return err(nix::libc::EEXIST);
                    }
                    if old.handle == *handle && std::mem::discriminant(&old.kind) != std::mem::discriminant(&kind) {
                        return err(nix::libc::EINVAL);
                    }
                    if old.handle == *handle {
                        self.tc[i].kind = kind;
                        self.note(format!("tc {op}"));
                        return Ok(());
                    }
                    self.fake_tc_drop(index, self.tc[i].handle);
                }
                self.tc.push(TcObject { index, handle: *handle, parent: *parent, prio: 0, kind, stats: Default::default() });
            }
            TcOp::Delete { parent, handle, .. } => {
                let Some(i) = at(self, *parent) else { return err(nix::libc::ENOENT) };
                if self.tc[i].handle != *handle {
                    return err(nix::libc::EINVAL);
                }
                self.fake_tc_drop(index, *handle);
                if let Some(kind) = self.default_qdisc.clone().filter(|_| *parent == TC_H_ROOT) {
                    self.tc.push(TcObject { index, handle: 0, parent: TC_H_ROOT, prio: 0, kind, stats: Default::default() });
                }
            }
            TcOp::Class { parent, classid, rate, .. } => {
                if !self.tc.iter().any(|o| o.index == index && o.handle == *parent && o.kind == TcKind::Htb) {
                    return err(nix::libc::ENOENT);
                }
                self.tc.retain(|o| !(o.index == index && o.handle == *classid));
                self.tc.push(TcObject {
                    index,
                    handle: *classid,
                    parent: *parent,
                    prio: 0,
                    kind: TcKind::HtbClass(*rate),
                    stats: Default::default(),
                });
            }
            TcOp::Redirect { to, .. } => {
                let Some(to) = dev_index(to, self) else { return err(nix::libc::ENODEV) };
                if at(self, TC_H_INGRESS).is_none() {
                    return err(nix::libc::EINVAL);
                }
                let kind = TcKind::U32 { redirect: Some(to) };
                self.tc.push(TcObject { index, handle: 0x800, parent: INGRESS_HANDLE, prio: 10, kind, stats: Default::default() });
            }
        }
        self.note(format!("tc {op}"));
        Ok(())
    }

    fn is_filter_or_class(o: &TcObject) -> bool {
        matches!(o.kind, TcKind::U32 { .. } | TcKind::HtbClass(_))
    }

    /// Remove qdisc `handle` of device `index`, with everything below it.
    fn fake_tc_drop(&mut self, index: u32, handle: u32) {
        let mut gone = vec![handle];
        while let Some(h) = gone.pop() {
            let major = h & 0xffff_0000;
            let (drop, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.tc).into_iter().partition(|o| {
                o.index == index
                    && (o.handle == h || (o.parent & 0xffff_0000 == major && o.parent != TC_H_ROOT && o.parent != TC_H_INGRESS))
            });
            self.tc = keep;
            gone.extend(drop.iter().filter(|o| o.handle != h && o.handle & 0xffff == 0).map(|o| o.handle));
        }
    }
}

impl Netif for FakeNetif {
    fn link_infos(&mut self) -> io::Result<Vec<LinkInfo>> {
        Ok(self.fake_infos())
    }
    fn create_link(&mut self, link: &NewLink) -> io::Result<()> {
        self.fake_create(link)
    }
    fn set_master(&mut self, port: &IfName, bridge: Option<&IfName>) -> io::Result<()> {
        let index = self.get(port)?.state.index;
        let master = match bridge {
            Some(b) => self.get(b)?.state.index,
            None => 0,
        };
        self.fake_set_master(index, master)
    }
    fn set_bridge_stp(&mut self, bridge: &IfName, on: bool) -> io::Result<()> {
        let index = self.get(bridge)?.state.index;
        let (name, l) = self.entry_at(index)?;
        let Some(Kind::Bridge { stp }) = &mut l.kind else {
            return Err(io::Error::from_raw_os_error(nix::libc::EOPNOTSUPP));
        };
        *stp = on;
        let name = name.clone();
        self.note(format!("stp {name} {}", if on { "on" } else { "off" }));
        Ok(())
    }
    fn delete_link(&mut self, name: &IfName) -> io::Result<()> {
        let index = self.get(name)?.state.index;
        self.fake_delete(index)?;
        self.tc.retain(|o| o.index != index);
        Ok(())
    }
    fn tc_list(&mut self, what: TcList) -> io::Result<Vec<TcObject>> {
        let keep = |o: &&TcObject| match what {
            TcList::Qdiscs => !Self::is_filter_or_class(o),
            TcList::Classes(i) => o.index == i && matches!(o.kind, TcKind::HtbClass(_)),
            TcList::IngressFilters(i) => o.index == i && matches!(o.kind, TcKind::U32 { .. }),
        };
        Ok(self.tc.iter().filter(keep).cloned().collect())
    }
    fn tc_set(&mut self, op: &TcOp) -> io::Result<()> {
        self.fake_tc_set(op)
    }
    fn link(&mut self, name: &IfName) -> io::Result<Option<LinkState>> {
        let found = self.links.get(name.as_str()).map(|l| l.state.clone());
        if found.is_none() {
            // As the kernel does (dev_load, net/core/dev_ioctl.c): an
            // interface ioctl on a name it does not know runs modprobe for
            // `netdev-NAME` (then NAME), slow on a small board.
            self.note(format!("kernel: modprobe netdev-{name}"));
        }
        Ok(found)
    }
    fn set_up(&mut self, name: &IfName, up: bool) -> io::Result<()> {
        let link = self.get(name)?;
        link.state.up = up;
        link.state.carrier = up && !link.no_carrier;
        self.note(format!("link {name} {}", if up { "up" } else { "down" }));
        Ok(())
    }
    fn set_promisc(&mut self, name: &IfName, on: bool) -> io::Result<()> {
        self.get(name)?.state.promisc = on;
        self.note(format!("link {name} promisc {}", if on { "on" } else { "off" }));
        Ok(())
    }
    fn set_mtu(&mut self, name: &IfName, mtu: u32) -> io::Result<()> {
        let link = self.get(name)?;
        let max = if link.max_mtu == 0 { 65535 } else { link.max_mtu };
        if !(68..=max).contains(&mtu) {
            return Err(io::Error::from_raw_os_error(nix::libc::EINVAL));
        }
        link.state.mtu = mtu;
        self.note(format!("link {name} mtu {mtu}"));
        Ok(())
    }
    fn set_txqueuelen(&mut self, name: &IfName, len: u32) -> io::Result<()> {
        self.get(name)?.state.txqueuelen = len;
        self.note(format!("link {name} txqueuelen {len}"));
        Ok(())
    }
    fn set_mac(&mut self, name: &IfName, mac: [u8; 6]) -> io::Result<()> {
        let link = self.get(name)?;
        if link.state.up {
            return Err(io::Error::from_raw_os_error(nix::libc::EBUSY));
        }
        link.state.mac = mac;
        self.note(format!("link {name} mac {}", crate::config::types::MacAddr(mac)));
        Ok(())
    }
    fn addresses(&mut self) -> io::Result<Vec<(u32, IpNet)>> {
        Ok(self.links.values().flat_map(|l| l.addrs.iter().map(|a| (l.state.index, *a))).collect())
    }
    fn add_address(&mut self, index: u32, addr: &IpNet) -> io::Result<()> {
        let link = self.by_index(index)?;
        if link.addrs.contains(addr) {
            return Err(io::Error::from_raw_os_error(nix::libc::EEXIST));
        }
        link.addrs.push(*addr);
        self.note(format!("addr add {addr} dev {index}"));
        Ok(())
    }
    fn routes(&mut self) -> io::Result<Vec<RouteEntry>> {
        Ok(self.routes.clone())
    }
    fn replace_route(&mut self, r: &RouteEntry) -> io::Result<()> {
        let up = self.links.values().any(|l| l.state.index == r.oif && l.state.up);
        if !up {
            return Err(io::Error::from_raw_os_error(nix::libc::ENETDOWN));
        }
        self.routes.retain(|o| !(o.dst == r.dst && o.metric == r.metric));
        self.routes.push(r.clone());
        let via = r.via.map(|v| format!(" via {v}")).unwrap_or_default();
        self.note(format!("route replace {}{via} dev {} metric {}", r.dst, r.oif, r.metric));
        Ok(())
    }
    fn ethtool_rings(&mut self, name: &IfName) -> io::Result<RingParam> {
        let r = self.get(name)?.nic.rings.ok_or_else(nosup)?;
        Ok(RingParam { cmd: cmd::GRINGPARAM, ..r })
    }
    fn ethtool_coalesce(&mut self, name: &IfName) -> io::Result<Coalesce> {
        let (rx, tx) = self.get(name)?.nic.coalesce.ok_or_else(nosup)?;
        Ok(Coalesce { cmd: cmd::GCOALESCE, rx_coalesce_usecs: rx, tx_coalesce_usecs: tx, ..Coalesce::default() })
    }
    fn ethtool_pause(&mut self, name: &IfName) -> io::Result<PauseParam> {
        let p = self.get(name)?.nic.pause.ok_or_else(nosup)?;
        Ok(PauseParam { cmd: cmd::GPAUSEPARAM, ..p })
    }
    fn ethtool_link_settings(&mut self, name: &IfName) -> io::Result<LinkModes> {
        let nic = &self.get(name)?.nic;
        if nic.legacy_link {
            return Err(nosup());
        }
        let h = nic.link.ok_or_else(nosup)?;
        let settings = LinkSettings { cmd: cmd::GLINKSETTINGS, link_mode_masks_nwords: NWORDS, ..h };
        Ok(LinkModes { settings, masks: vec![0; 3 * NWORDS as usize] })
    }
    fn ethtool_legacy_settings(&mut self, name: &IfName) -> io::Result<LegacyCmd> {
        let h = self.get(name)?.nic.link.ok_or_else(nosup)?;
        let (speed, speed_hi) = (h.speed as u16, (h.speed >> 16) as u16);
        Ok(LegacyCmd { cmd: cmd::GSET, speed, speed_hi, duplex: h.duplex, autoneg: h.autoneg, ..LegacyCmd::default() })
    }
    fn ethtool_features(&mut self, name: &IfName) -> io::Result<Features> {
        let f = self.get(name)?.nic.features.as_ref().ok_or_else(nosup)?;
        let mut blocks = vec![GetFeaturesBlock::default(); f.len().div_ceil(32)];
        for (k, (_, avail, active)) in f.iter().enumerate() {
            let m = 1u32 << (k % 32);
            if *avail {
                blocks[k / 32].available |= m;
            }
            if *active {
                blocks[k / 32].active |= m;
                blocks[k / 32].requested |= m;
            }
        }
        Ok(Features { names: f.iter().map(|(n, _, _)| n.clone()).collect(), blocks })
    }
    fn ethtool_offload(&mut self, name: &IfName, get: u32) -> io::Result<bool> {
        self.get(name)?.nic.legacy.get(&get).copied().ok_or_else(nosup)
    }
    /// Recorded in `sent` whatever the driver says; a change the driver
    /// took is also in the journal as `ethtool eth0 ETHTOOL_SRINGPARAM`.
    fn ethtool_set(&mut self, name: &IfName, change: &EthtoolSet) -> io::Result<()> {
        self.sent.push((name.clone(), change.clone()));
        self.get(name)?.nic.set(change)?;
        self.note(format!("ethtool {name} {}", cmd::name(change.command())));
        Ok(())
    }
}
