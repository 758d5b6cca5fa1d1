//! Recording fakes for unit tests. Each keeps its state in memory and
//! appends every side effect to a shared journal, so a test can assert on
//! exactly what would have been done, or that nothing was.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::netif::{
    EthtoolSet, Features, Kind, LinkInfo, LinkModes, LinkState, Netif, NewLink, Qdisc, RouteEntry, TcKind, TcList, TcObject, TcOp,
    ARPHRD_ETHER, OURS,
};
use super::nftables::{CommitError, Nftables, TableId, Tables};
use super::watchdog::{WatchdogDevice, WatchdogPort};
use super::{Cmd, Files, Output, Replaced, Runner, Seams, Sysctl};
use crate::config::types::{IfName, IpNet};
use crate::sys::ethtool::{cmd, Coalesce, GetFeaturesBlock, LegacyCmd, LinkSettings, PauseParam, RingParam};
use crate::sys::tc::{INGRESS_HANDLE, TC_H_INGRESS, TC_H_ROOT};

/// The journal of side effects, shared by all fakes of one board.
pub(crate) type Journal = Rc<RefCell<Vec<String>>>;

#[derive(Default)]
pub(crate) struct FakeFiles {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
    pub journal: Journal,
    /// Make writes fail with this error (e.g. StorageFull for ENOSPC).
    pub fail_writes: Option<io::ErrorKind>,
    /// Modification times (heartbeat files).
    /// Modification times since the epoch.
    pub mtimes: BTreeMap<PathBuf, std::time::Duration>,
    /// Behave like files under `--root`.
    pub relocated: bool,
    /// Files that exist but cannot be read (PermissionDenied), as
    /// /proc/net/ip_tables_names (mode 0440) for a user who is not root.
    pub unreadable: BTreeSet<PathBuf>,
    /// Locks another process holds. Like `flock`, a lock held elsewhere is
    /// `WouldBlock` without waiting; waiting for it takes it once the other
    /// process lets go, which the fake models as at once (it cannot block).
    /// Not modelled: two locks taken by the code under test itself, which
    /// `flock` would let deadlock.
    pub locked_elsewhere: BTreeSet<PathBuf>,
    /// Locks taken and released, apart from the journal (a lock changes
    /// nothing on the board), each with the journal's length at that
    /// moment: `lock PATH at N` (`lock PATH after waiting, at N`),
    /// `unlock PATH at N`.
    pub locks: Journal,
    /// Make `lock` fail with this error (e.g. a read-only /run).
    pub fail_lock: Option<io::ErrorKind>,
}

/// A fake lock: logs its release.
struct FakeLock {
    path: PathBuf,
    journal: Journal,
    locks: Journal,
}

impl Drop for FakeLock {
    fn drop(&mut self) {
        let at = self.journal.borrow().len();
        self.locks.borrow_mut().push(format!("unlock {} at {at}", self.path.display()));
    }
}

impl Files for FakeFiles {
    fn relocated(&self) -> bool {
        self.relocated
    }
    fn read(&mut self, path: &Path) -> io::Result<Vec<u8>> {
        if self.unreadable.contains(path) {
            return Err(io::Error::from(io::ErrorKind::PermissionDenied));
        }
        self.files.get(path).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn exists(&mut self, path: &Path) -> bool {
        // A directory is there when something is in it, as on a board.
        self.files.contains_key(path) || self.unreadable.contains(path) || self.files.keys().any(|f| f.starts_with(path))
    }
    fn is_dir(&mut self, path: &Path) -> bool {
        // A file is a key; a directory holds one.
        self.files.keys().any(|f| f.starts_with(path) && f.as_path() != path)
    }
    fn replace(&mut self, path: &Path, data: &[u8]) -> io::Result<Replaced> {
        if let Some(kind) = self.fail_writes {
            return Err(io::Error::from(kind));
        }
        let old = self.files.insert(path.to_path_buf(), data.to_vec());
        let how = match old {
            Some(o) if o == data => return Ok(Replaced::Unchanged),
            Some(o) => {
                let mut bak = path.as_os_str().to_os_string();
                bak.push(".bak");
                self.files.insert(PathBuf::from(bak), o);
                Replaced::BackedUp
            }
            None => Replaced::Created,
        };
        self.journal.borrow_mut().push(format!("replace {}", path.display()));
        Ok(how)
    }
    fn write_kernel(&mut self, path: &Path, data: &[u8]) -> io::Result<()> {
        if let Some(kind) = self.fail_writes {
            return Err(io::Error::from(kind));
        }
        // As the kernel's: a control file is never created by a write.
        if !self.files.contains_key(path) {
            return Err(io::Error::from_raw_os_error(nix::libc::ENOENT));
        }
        self.files.insert(path.to_path_buf(), data.to_vec());
        self.journal.borrow_mut().push(format!("write {} {}", path.display(), String::from_utf8_lossy(data).trim_end()));
        Ok(())
    }
    fn modified(&mut self, path: &Path) -> io::Result<std::time::Duration> {
        self.mtimes.get(path).copied().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn lock(&mut self, path: &Path, wait: bool) -> io::Result<super::Lock> {
        if let Some(kind) = self.fail_lock {
            return Err(io::Error::from(kind));
        }
        let held = self.locked_elsewhere.contains(path);
        if held && !wait {
            return Err(io::Error::from(io::ErrorKind::WouldBlock));
        }
        self.locked_elsewhere.remove(path);
        let after = if held { " after waiting," } else { "" };
        let at = self.journal.borrow().len();
        self.locks.borrow_mut().push(format!("lock {}{after} at {at}", path.display()));
        let (journal, locks) = (self.journal.clone(), self.locks.clone());
        Ok(super::Lock::holding(Box::new(FakeLock { path: path.to_path_buf(), journal, locks })))
    }
}

#[derive(Default)]
pub(crate) struct FakeSysctl {
    pub values: BTreeMap<String, String>,
    pub journal: Journal,
}

impl Sysctl for FakeSysctl {
    fn get(&mut self, key: &str) -> io::Result<String> {
        self.values.get(key).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn set(&mut self, key: &str, value: &str) -> io::Result<()> {
        if !self.values.contains_key(key) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        self.values.insert(key.to_string(), value.to_string());
        self.journal.borrow_mut().push(format!("sysctl {key}={value}"));
        Ok(())
    }
}

#[derive(Default)]
pub(crate) struct FakeRunner {
    /// Programs that exist on the fake PATH.
    pub programs: BTreeSet<String>,
    /// Programs that are symlinks, to the file name they resolve to in
    /// /usr/sbin (`iptables-save` -> `xtables-legacy-multi`); the others
    /// resolve to themselves. Not modelled: links that leave /usr/sbin,
    /// dangling links and loops (the real `resolve` gives None for the
    /// last two).
    pub links: BTreeMap<String, String>,
    /// Answers, in order; success with no output once they run out.
    pub answers: VecDeque<Output>,
    pub journal: Journal,
    /// Standard input of each run, in order.
    pub stdins: Vec<Vec<u8>>,
}

impl Runner for FakeRunner {
    fn run(&mut self, cmd: &Cmd<'_>) -> io::Result<Output> {
        // A program by name, or by the path `which` gave for it.
        let base = cmd.program.strip_prefix("/usr/sbin/").unwrap_or(cmd.program);
        if !self.programs.contains(base) {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{}: not found", cmd.program)));
        }
        self.journal.borrow_mut().push(format!("run {}", cmd.display()));
        self.stdins.push(cmd.stdin.unwrap_or_default().to_vec());
        Ok(self.answers.pop_front().unwrap_or(Output { code: Some(0), ..Output::default() }))
    }
    /// As the real one: a program not on PATH is NotFound; one that is
    /// starts and is not waited for (what it then does, such as writing
    /// its pidfile, is not modelled: a test writes that itself).
    fn start(&mut self, cmd: &Cmd<'_>) -> io::Result<()> {
        let base = cmd.program.strip_prefix("/usr/sbin/").unwrap_or(cmd.program);
        if !self.programs.contains(base) {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{}: not found", cmd.program)));
        }
        self.journal.borrow_mut().push(format!("start {}", cmd.display()));
        Ok(())
    }
    fn which(&mut self, program: &str) -> Option<PathBuf> {
        self.programs.contains(program).then(|| PathBuf::from("/usr/sbin").join(program))
    }
    fn resolve(&mut self, program: &str) -> Option<PathBuf> {
        let path = self.which(program)?;
        Some(self.links.get(program).map_or(path, |to| PathBuf::from("/usr/sbin").join(to)))
    }
}

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

/// How a fake watchdog driver behaves (default: like softdog).
#[derive(Clone, Debug)]
pub(crate) struct FakeDriver {
    pub support: super::watchdog::Support,
    pub bootstatus: u32,
    /// SETTIMEOUT outside min..=max gives EINVAL.
    pub min_timeout: u32,
    pub max_timeout: u32,
    /// The timeout in use.
    pub timeout: u32,
    /// Every ioctl fails with this errno (ENOSYS under qemu-user, ENOTTY
    /// for a file that is no watchdog).
    pub ioctl_errno: Option<i32>,
    /// write() fails with this errno.
    pub write_errno: Option<i32>,
    /// Stopped by DISABLECARD or by a close after 'V'.
    pub stopped: bool,
    /// The kernel's "magic character seen" flag (_WDOG_ALLOW_RELEASE):
    /// every write clears it, then sets it if the bytes hold a 'V'; a
    /// close clears it only when it stops an active watchdog, so after
    /// 'V' plus DISABLECARD it outlives the descriptor, as in
    /// drivers/watchdog/watchdog_dev.c.
    pub expect_close: bool,
    /// Pets so far (KEEPALIVE or write).
    pub pets: u32,
}

impl Default for FakeDriver {
    fn default() -> Self {
        let mut identity = [0u8; 32];
        identity[..17].copy_from_slice(b"Software Watchdog");
        FakeDriver {
            support: super::watchdog::Support { options: 0x8180, firmware_version: 0, identity },
            bootstatus: 0,
            min_timeout: 1,
            max_timeout: 65535,
            timeout: 60,
            ioctl_errno: None,
            write_errno: None,
            stopped: false,
            expect_close: false,
            pets: 0,
        }
    }
}

pub(crate) type SharedDriver = Rc<RefCell<FakeDriver>>;

#[derive(Default)]
pub(crate) struct FakeWatchdogPort {
    /// Devices that exist.
    pub devices: BTreeSet<PathBuf>,
    pub journal: Journal,
    /// The driver behind every device.
    pub driver: SharedDriver,
    /// Opening gives EBUSY; `holder` names this process.
    pub busy: Option<(u32, String)>,
    /// Descriptors that `adopt` accepts.
    pub inherited: BTreeSet<i32>,
}

pub(crate) struct FakeWatchdog {
    pub path: PathBuf,
    pub journal: Journal,
    pub driver: SharedDriver,
}

impl FakeWatchdog {
    fn ioctl(&self) -> io::Result<std::cell::RefMut<'_, FakeDriver>> {
        let d = self.driver.borrow_mut();
        match d.ioctl_errno {
            Some(e) => Err(io::Error::from_raw_os_error(e)),
            None => Ok(d),
        }
    }
    fn log(&self, what: String) {
        self.journal.borrow_mut().push(what);
    }
}

impl WatchdogDevice for FakeWatchdog {
    fn get_support(&mut self) -> io::Result<super::watchdog::Support> {
        Ok(self.ioctl()?.support)
    }
    fn get_bootstatus(&mut self) -> io::Result<u32> {
        Ok(self.ioctl()?.bootstatus)
    }
    fn set_timeout(&mut self, secs: u32) -> io::Result<u32> {
        let mut d = self.ioctl()?;
        if secs < d.min_timeout || secs > d.max_timeout {
            drop(d);
            self.log(format!("settimeout {} {secs} EINVAL", self.path.display()));
            return Err(io::Error::from_raw_os_error(nix::libc::EINVAL));
        }
        d.timeout = secs;
        d.pets += 1;
        drop(d);
        self.log(format!("settimeout {} {secs}", self.path.display()));
        Ok(secs)
    }
    fn get_timeout(&mut self) -> io::Result<u32> {
        Ok(self.ioctl()?.timeout)
    }
    fn set_options(&mut self, options: u32) -> io::Result<()> {
        let mut d = self.ioctl()?;
        if options & 1 != 0 {
            d.stopped = true;
        }
        if options & 2 != 0 {
            d.stopped = false;
        }
        drop(d);
        self.log(format!("setoptions {} {options}", self.path.display()));
        Ok(())
    }
    fn keepalive(&mut self) -> io::Result<()> {
        self.ioctl()?.pets += 1;
        self.log(format!("pet {}", self.path.display()));
        Ok(())
    }
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut d = self.driver.borrow_mut();
        if let Some(e) = d.write_errno {
            return Err(io::Error::from_raw_os_error(e));
        }
        d.pets += 1;
        d.expect_close = bytes.contains(&b'V');
        drop(d);
        self.log(format!("write {} {:?}", self.path.display(), String::from_utf8_lossy(bytes)));
        Ok(())
    }
    fn exec_handover(&mut self, argv: &[&str]) -> io::Error {
        self.log(format!("exec WDTFD=3 {}", argv.join(" ")));
        io::Error::from_raw_os_error(nix::libc::ENOENT)
    }
}

impl Drop for FakeWatchdog {
    fn drop(&mut self) {
        let mut d = self.driver.borrow_mut();
        if !d.stopped && d.expect_close {
            d.stopped = true;
            d.expect_close = false;
        }
        drop(d);
        self.log(format!("close {}", self.path.display()));
    }
}

impl WatchdogPort for FakeWatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>> {
        if !self.devices.contains(path) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        if self.busy.is_some() {
            return Err(io::Error::from_raw_os_error(nix::libc::EBUSY));
        }
        self.journal.borrow_mut().push(format!("open {}", path.display()));
        self.driver.borrow_mut().stopped = false;
        Ok(Box::new(FakeWatchdog { path: path.to_path_buf(), journal: self.journal.clone(), driver: self.driver.clone() }))
    }
    fn adopt(&mut self, fd: i32) -> io::Result<Box<dyn WatchdogDevice>> {
        if !self.inherited.contains(&fd) {
            return Err(io::Error::from_raw_os_error(nix::libc::EBADF));
        }
        if let Some(e @ nix::libc::ENOTTY) = self.driver.borrow().ioctl_errno {
            return Err(io::Error::from_raw_os_error(e));
        }
        self.journal.borrow_mut().push(format!("adopt {fd}"));
        Ok(Box::new(FakeWatchdog { path: PathBuf::from(format!("fd{fd}")), journal: self.journal.clone(), driver: self.driver.clone() }))
    }
    fn holder(&mut self, _path: &Path) -> Option<(u32, String)> {
        self.busy.clone()
    }
}

/// A fake nf_tables: the kernel's tables, each with the messages that
/// filled it, and its all-or-nothing commit. Modelled, as the kernel does
/// them: a batch must be framed by BATCH_BEGIN and BATCH_END; NEWTABLE
/// creates a missing table and keeps an existing one; DELTABLE of a
/// missing table is ENOENT; an object for a missing table is ENOENT; one
/// refused message leaves every table as it was; an anonymous set
/// (`__set%d`) gets the table's next free name (`__set0`, …), which its
/// elements follow by the set's id; a dump gives back each object as it
/// was stored, in order (what `--confirm` replays). Not modelled: the
/// expressions' meaning, names that do not resolve (a jump to a missing
/// chain, a missing set or hook device; a rule's lookup keeps the name it
/// was sent with), the kernel's own checks of each attribute, and handles.
/// A table keeps the attributes of the NEWTABLE that created it (its
/// userdata), which the tables' dump gives back; every commit moves the
/// generation on, as the kernel's does, and the dump gives its low 16
/// bits. Not modelled: a device going away (the kernel then unbinds its
/// hooks without a commit): a test does that to `tables` itself.
#[derive(Default)]
pub(crate) struct FakeNftables {
    /// The socket is refused with this errno (EPROTONOSUPPORT, as under
    /// qemu-user), or the dump with it (a kernel without nf_tables).
    pub refused: Option<i32>,
    /// (family, name) -> the (NFT_MSG_NEW*, attributes) messages in it.
    pub tables: BTreeMap<TableId, Vec<(u8, Vec<u8>)>>,
    /// (family, name) -> the attributes of the NEWTABLE that created it.
    pub table_attrs: BTreeMap<TableId, Vec<u8>>,
    /// The ruleset generation (NFTA_GEN_ID).
    pub generation: u32,
    /// A rule with an expression of this name is refused with this errno,
    /// and the extended ack points at the expression: a kernel without
    /// that expression's module (ENOENT).
    pub missing_expr: Option<(&'static str, i32)>,
    /// Batches committed or refused, in order.
    pub batches: Vec<Vec<u8>>,
    pub journal: Journal,
}

impl FakeNftables {
    fn refuse(&self) -> io::Result<()> {
        self.refused.map_or(Ok(()), |e| Err(io::Error::from_raw_os_error(e)))
    }

    /// Carry out one message on `tables`; `anon` maps the batch's set ids
    /// to the names given to its anonymous sets.
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        tables: &mut BTreeMap<TableId, Vec<(u8, Vec<u8>)>>,
        table_attrs: &mut BTreeMap<TableId, Vec<u8>>,
        anon: &mut BTreeMap<u32, String>,
        kind: u8,
        family: u8,
        msg: &[u8],
    ) -> Result<(), (i32, Option<u32>)> {
        use crate::sys::nftnl::{self as nl, Order};
        let attrs = &msg[nl::NLMSG_HDRLEN + nl::NFGENMSG_LEN..];
        let name = |k| nl::find(attrs, Order::HOST, k).map(|v| nl::str_value(v).to_string()).unwrap_or_default();
        match kind {
            nl::NEWTABLE => {
                let id = (family, name(nl::TABLE_NAME));
                if !tables.contains_key(&id) {
                    table_attrs.insert(id.clone(), attrs.to_vec());
                }
                tables.entry(id).or_default();
            }
            nl::DELTABLE => {
                let id = (family, name(nl::TABLE_NAME));
                table_attrs.remove(&id);
                tables.remove(&id).ok_or((nix::libc::ENOENT, None))?;
            }
            _ => {
                if let (nl::NEWRULE, Some((expr, errno))) = (kind, self.missing_expr) {
                    let list = nl::find(attrs, Order::HOST, nl::RULE_EXPRESSIONS).unwrap_or_default();
                    let start = list.as_ptr() as usize - msg.as_ptr() as usize;
                    let mut at = start;
                    let mut hit = None;
                    let _ = nl::each_attr(list, Order::HOST, &mut |_, elem| {
                        if nl::expr_at(msg, at as u32, Order::HOST) == Some(expr) && hit.is_none() {
                            hit = Some(at as u32);
                        }
                        at += (4 + elem.len() + 3) & !3;
                        Ok(())
                    });
                    if let Some(offset) = hit {
                        return Err((errno, Some(offset)));
                    }
                }
                let objs = tables.get_mut(&(family, name(1))).ok_or((nix::libc::ENOENT, None))?;
                let id = |k| nl::find(attrs, Order::HOST, k).map(|v| u32::from_be_bytes(v.try_into().unwrap_or_default()));
                let stored = match kind {
                    nl::NEWSET if name(nl::SET_NAME).contains('%') => {
                        let prefix = name(nl::SET_NAME).replace("%d", "");
                        let taken = |n: &String| {
                            objs.iter()
                                .any(|(k, a)| *k == nl::NEWSET && nl::find(a, Order::HOST, nl::SET_NAME).map(nl::str_value) == Some(n))
                        };
                        let given = (0..).map(|i| format!("{prefix}{i}")).find(|n| !taken(n)).expect("a free name");
                        anon.insert(id(nl::SET_ID).unwrap_or_default(), given.clone());
                        renamed(attrs, nl::SET_NAME, &given)
                    }
                    nl::NEWSETELEM if name(nl::SET_ELEM_LIST_SET).contains('%') => {
                        let given = anon.get(&id(nl::SET_ELEM_LIST_SET_ID).unwrap_or_default()).ok_or((nix::libc::ENOENT, None))?;
                        renamed(attrs, nl::SET_ELEM_LIST_SET, given)
                    }
                    _ => attrs.to_vec(),
                };
                objs.push((kind, stored));
            }
        }
        Ok(())
    }
}

/// `attrs` with the string attribute `kind` set to `to`.
fn renamed(attrs: &[u8], kind: u16, to: &str) -> Vec<u8> {
    use crate::sys::nftnl::{each_attr, Order};
    let mut out = Vec::new();
    let mut at = 0;
    let _ = each_attr(attrs, Order::HOST, &mut |k, v| {
        let rec = (4 + v.len() + 3) & !3;
        if k == kind {
            let len = 4 + to.len() + 1;
            out.extend_from_slice(&(len as u16).to_ne_bytes());
            out.extend_from_slice(&kind.to_ne_bytes());
            out.extend_from_slice(to.as_bytes());
            out.push(0);
            out.resize((out.len() + 3) & !3, 0);
        } else {
            out.extend_from_slice(&attrs[at..(at + rec).min(attrs.len())]);
        }
        at += rec;
        Ok(())
    });
    out
}

impl Nftables for FakeNftables {
    fn tables(&mut self) -> io::Result<Tables> {
        use crate::sys::nftnl::{self as nl, Order};
        self.refuse()?;
        let udata = self
            .table_attrs
            .iter()
            .filter_map(|(id, attrs)| nl::find(attrs, Order::HOST, nl::TABLE_USERDATA).map(|u| (id.clone(), u.to_vec())))
            .collect();
        Ok(Tables { ids: self.tables.keys().cloned().collect(), udata, generation: self.generation as u16 })
    }
    fn dump(&mut self, kind: u8, family: u8, table: &str, set: Option<&str>, each: &mut dyn FnMut(u8, &[u8])) -> io::Result<()> {
        use crate::sys::nftnl::{self as nl, Order};
        self.refuse()?;
        let Some(objs) = self.tables.get(&(family, table.to_string())) else { return Err(io::Error::from_raw_os_error(nix::libc::ENOENT)) };
        for (k, attrs) in objs.iter().filter(|(k, _)| *k + 1 == kind) {
            if set.is_some_and(|s| nl::find(attrs, Order::HOST, nl::SET_ELEM_LIST_SET).map(nl::str_value) != Some(s)) {
                continue;
            }
            each(*k, attrs);
        }
        Ok(())
    }
    fn generation(&mut self) -> io::Result<u32> {
        self.refuse()?;
        Ok(self.generation)
    }
    fn next_seq(&mut self) -> u32 {
        1
    }
    fn commit(&mut self, batch: &crate::sys::nftnl::Sent) -> Result<(), CommitError> {
        use crate::sys::nftnl::NLMSG_HDRLEN;
        self.refuse().map_err(CommitError::Io)?;
        self.batches.push(batch.bytes.clone());
        let msgs: Vec<(u32, usize)> = batch.starts.clone();
        self.journal.borrow_mut().push(format!("nf_tables commit {} messages", msgs.len().saturating_sub(2)));
        let b = &batch.bytes;
        let kind_of = |at: usize| u16::from_ne_bytes([b[at + 4], b[at + 5]]);
        let framed = msgs.len() >= 2 && kind_of(msgs[0].1) == 0x10 && kind_of(msgs[msgs.len() - 1].1) == 0x11;
        if !framed {
            return Err(CommitError::Refused { seq: msgs.first().map_or(0, |m| m.0), errno: nix::libc::EINVAL, text: None, offset: None });
        }
        let mut tables = self.tables.clone();
        let mut table_attrs = self.table_attrs.clone();
        let mut anon = BTreeMap::new();
        for (seq, at) in &msgs[1..msgs.len() - 1] {
            let len = u32::from_ne_bytes(b[*at..at + 4].try_into().expect("4 bytes")) as usize;
            let msg = &b[*at..at + len];
            let (kind, family) = ((kind_of(*at) & 0xff) as u8, msg[NLMSG_HDRLEN]);
            if let Err((errno, offset)) = self.apply(&mut tables, &mut table_attrs, &mut anon, kind, family, msg) {
                return Err(CommitError::Refused { seq: *seq, errno, text: None, offset });
            }
        }
        self.tables = tables;
        self.table_attrs = table_attrs;
        self.generation = self.generation.wrapping_add(1).max(1);
        Ok(())
    }
}

/// A whole fake board: every seam sharing one journal.
#[derive(Default)]
pub(crate) struct FakeBoard {
    pub journal: Journal,
    pub files: FakeFiles,
    pub sysctl: FakeSysctl,
    pub runner: FakeRunner,
    pub netif: FakeNetif,
    pub nft: FakeNftables,
    pub watchdog: FakeWatchdogPort,
}

impl FakeBoard {
    pub(crate) fn new() -> FakeBoard {
        let journal: Journal = Rc::default();
        FakeBoard {
            files: FakeFiles { journal: journal.clone(), ..FakeFiles::default() },
            sysctl: FakeSysctl { journal: journal.clone(), ..FakeSysctl::default() },
            runner: FakeRunner { journal: journal.clone(), ..FakeRunner::default() },
            netif: FakeNetif { journal: journal.clone(), ..FakeNetif::default() },
            nft: FakeNftables { journal: journal.clone(), ..FakeNftables::default() },
            watchdog: FakeWatchdogPort { journal: journal.clone(), ..FakeWatchdogPort::default() },
            journal,
        }
    }

    pub(crate) fn seams(&mut self) -> Seams<'_> {
        Seams {
            files: &mut self.files,
            sysctl: &mut self.sysctl,
            runner: &mut self.runner,
            netif: &mut self.netif,
            nft: &mut self.nft,
            watchdog: &mut self.watchdog,
        }
    }

    /// Every side effect so far.
    pub(crate) fn effects(&self) -> Vec<String> {
        self.journal.borrow().clone()
    }
}
