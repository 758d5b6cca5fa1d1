//! The network interface seam: interface ioctls, rtnetlink and SIOCETHTOOL.
//!
//! Narrow on purpose, one method per kernel operation: the planner asks
//! for the current state (flags, MTU, addresses, routes, ethtool reads)
//! and the applier sends single changes. ethtool is typed: each read
//! returns the kernel's structure for its command, each change is one
//! [`EthtoolSet`] request, so the recording fake lists the requests and
//! dry-run prints their values; the byte buffers, the GLINKSETTINGS
//! handshake and the GSTRINGS/GFEATURES sizing live in the real
//! implementation only (`seam::real::ethtool`). The policy above a
//! command (read-modify-write, the legacy fallbacks, the diffing) lives
//! in `crate::net`.

use std::fmt;
use std::io;
use std::net::IpAddr;

use crate::config::types::{IfName, IpNet};
use crate::sys::ethtool::{cmd, Coalesce, GetFeaturesBlock, LegacyCmd, LinkSettings, PauseParam, RingParam, SetFeaturesBlock};
pub(crate) use crate::sys::tc::{Cake, Framing, HtbRate, Kind as TcKind, Qdisc, TcObject};
use crate::sys::tc::{INGRESS_HANDLE, TC_H_INGRESS, TC_H_ROOT};

/// What the kernel says about a link (netdevice(7) ioctls).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkState {
    pub index: u32,
    /// IFF_UP: administratively up.
    pub up: bool,
    /// IFF_RUNNING: the driver reports carrier (operationally up).
    pub carrier: bool,
    pub promisc: bool,
    pub mtu: u32,
    pub txqueuelen: u32,
    pub mac: [u8; 6],
    /// The link type, ARPHRD_* (SIOCGIFHWADDR's sa_family): 1 Ethernet,
    /// 772 loopback, 512 ppp, 65534 a tun device.
    pub hwtype: u16,
}

/// ARPHRD_ETHER and ARPHRD_LOOPBACK (include/uapi/linux/if_arp.h).
pub(crate) const ARPHRD_ETHER: u16 = 1;
pub(crate) const ARPHRD_LOOPBACK: u16 = 772;

/// A route in the main table (rtnetlink RTM_GETROUTE / RTM_NEWROUTE).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteEntry {
    /// Destination network; 0.0.0.0/0 or ::/0 for a default route.
    pub dst: IpNet,
    /// Gateway; None for an on-link route.
    pub via: Option<IpAddr>,
    /// Output interface index.
    pub oif: u32,
    /// RTA_PRIORITY (the kernel stores 1024 for IPv6 routes given 0).
    pub metric: u32,
}

/// What kind of link rtnetlink says an interface is (IFLA_INFO_KIND).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No IFLA_LINKINFO: a NIC (or anything without an rtnl_link_ops).
    Device,
    Bridge {
        stp: bool,
    },
    /// An 802.1Q VLAN on interface `link` (IFLA_LINK).
    Vlan {
        link: u32,
        id: u16,
    },
    /// Another kind: "veth", "dummy", "bond"...
    Other(heapless::String<16>),
}

/// One interface from an RTM_GETLINK dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    pub name: IfName,
    pub kind: Kind,
    /// What [`Netif::link`] reads by name (five ioctls), from the dump's
    /// one message: ifi_index, ifi_type, ifi_flags (dev_get_flags(), what
    /// SIOCGIFFLAGS returns too), IFLA_MTU, IFLA_TXQLEN and the first 6
    /// bytes of IFLA_ADDRESS (zeros without one).
    pub state: LinkState,
    /// The bridge (or bond) it is a port of (IFLA_MASTER).
    pub master: Option<u32>,
    /// IFLA_IFALIAS; nasboot marks the links it creates with [`OURS`].
    pub alias: Option<String>,
}

/// The alias nasboot gives the bridges and VLANs it creates, so that it
/// removes only its own.
pub(crate) const OURS: &str = "nasboot";

/// A link to create (RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL), down,
/// marked with the alias [`OURS`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NewLink {
    Bridge {
        name: IfName,
        stp: bool,
    },
    Vlan {
        name: IfName,
        link: IfName,
        id: u16,
    },
    /// An intermediate functional block: the download shaper's device.
    Ifb {
        name: IfName,
    },
}

impl NewLink {
    pub(crate) fn name(&self) -> &IfName {
        match self {
            NewLink::Bridge { name, .. } | NewLink::Vlan { name, .. } | NewLink::Ifb { name } => name,
        }
    }
}

/// Which traffic-control objects to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcList {
    /// Every device's qdiscs (RTM_GETQDISC dump).
    Qdiscs,
    /// One device's classes (RTM_GETTCLASS).
    Classes(u32),
    /// The filters on one device's ingress qdisc (RTM_GETTFILTER).
    IngressFilters(u32),
}

/// One traffic-control change (rtnetlink, as `tc` would send it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TcOp {
    /// Create or replace a qdisc (NLM_F_CREATE | NLM_F_REPLACE; the
    /// ingress qdisc NLM_F_CREATE | NLM_F_EXCL) at `parent`.
    Qdisc { dev: IfName, parent: u32, handle: u32, qdisc: Qdisc },
    /// Delete the qdisc `handle` at `parent` (its classes, filters and
    /// children go with it).
    Delete { dev: IfName, parent: u32, handle: u32 },
    /// Create or replace HTB class `classid`.
    Class { dev: IfName, parent: u32, classid: u32, rate: HtbRate },
    /// The u32 match-all filter on `dev`'s ingress qdisc that redirects
    /// every packet to `to` (mirred).
    Redirect { dev: IfName, to: IfName },
}

/// A handle as tc writes it: `4e42:`, `4e42:1`, `root`, `ingress`.
pub(crate) struct Handle(pub u32);

impl fmt::Display for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            TC_H_ROOT => f.write_str("root"),
            TC_H_INGRESS => f.write_str("ingress"),
            h if h & 0xffff == 0 => write!(f, "{:x}:", h >> 16),
            h => write!(f, "{:x}:{:x}", h >> 16, h & 0xffff),
        }
    }
}

/// A parent as tc writes it: `root`, `ingress`, `parent 4e42:1`.
struct Parent(u32);

impl fmt::Display for Parent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            TC_H_ROOT | TC_H_INGRESS => Handle(self.0).fmt(f),
            h => write!(f, "parent {}", Handle(h)),
        }
    }
}

/// kbit/s of a rate in bytes/s.
pub(crate) fn kbit(bytes_per_s: u64) -> u64 {
    bytes_per_s.saturating_mul(8) / 1000
}

impl fmt::Display for Qdisc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Qdisc::Cake(c) => {
                write!(f, "cake bandwidth {}kbit besteffort overhead {}", kbit(c.rate), c.overhead)?;
                match c.framing {
                    Framing::Ethernet => {}
                    Framing::Atm => f.write_str(" atm")?,
                    Framing::Ptm => f.write_str(" ptm")?,
                }
                f.write_str(if c.ingress { " ingress" } else { "" })
            }
            Qdisc::Htb => f.write_str("htb default 1"),
            Qdisc::FqCodel => f.write_str("fq_codel"),
            Qdisc::Ingress => f.write_str("ingress"),
        }
    }
}

/// What the change sends, in tc's words: `eth1: qdisc replace root
/// handle 4e42: cake bandwidth 2850kbit besteffort overhead 18`.
impl fmt::Display for TcOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TcOp::Qdisc { dev, handle, qdisc, .. } if *handle == INGRESS_HANDLE => write!(f, "{dev}: qdisc add handle ffff: {qdisc}"),
            TcOp::Qdisc { dev, parent, handle, qdisc } => {
                write!(f, "{dev}: qdisc replace {} handle {} {qdisc}", Parent(*parent), Handle(*handle))
            }
            TcOp::Delete { dev, parent, handle } => write!(f, "{dev}: qdisc del {} handle {}", Parent(*parent), Handle(*handle)),
            TcOp::Class { dev, parent, classid, rate } => write!(
                f,
                "{dev}: class replace parent {} classid {} htb rate {}kbit overhead {}{}",
                Handle(*parent),
                Handle(*classid),
                kbit(rate.rate.into()),
                rate.overhead,
                if rate.atm { " linklayer atm" } else { "" }
            ),
            TcOp::Redirect { dev, to } => {
                write!(f, "{dev}: filter add parent ffff: protocol all prio 10 u32 match u32 0 0 action mirred egress redirect dev {to}")
            }
        }
    }
}

/// Interface operations.
pub trait Netif {
    /// The link's state; `Ok(None)` when there is no such interface.
    fn link(&mut self, name: &IfName) -> io::Result<Option<LinkState>>;
    /// Set the administrative state (SIOCSIFFLAGS, IFF_UP).
    fn set_up(&mut self, name: &IfName, up: bool) -> io::Result<()>;
    /// Set promiscuous mode (SIOCSIFFLAGS, IFF_PROMISC).
    fn set_promisc(&mut self, name: &IfName, on: bool) -> io::Result<()>;
    /// SIOCSIFMTU.
    fn set_mtu(&mut self, name: &IfName, mtu: u32) -> io::Result<()>;
    /// SIOCSIFTXQLEN.
    fn set_txqueuelen(&mut self, name: &IfName, len: u32) -> io::Result<()>;
    /// SIOCSIFHWADDR (most drivers want the link down: EBUSY otherwise).
    fn set_mac(&mut self, name: &IfName, mac: [u8; 6]) -> io::Result<()>;
    /// Every interface's addresses, each with its interface index, in the
    /// kernel's order (one RTM_GETADDR dump, both families: a dump is
    /// costly on a slow board, so the observation asks once for all the
    /// profile's interfaces).
    fn addresses(&mut self) -> io::Result<Vec<(u32, IpNet)>>;
    /// Add an address (RTM_NEWADDR; IPv4 gets its broadcast address).
    fn add_address(&mut self, index: u32, addr: &IpNet) -> io::Result<()>;
    /// Remove an address (RTM_DELADDR): a revert removes those a
    /// candidate added. The default refuses (a seam without it).
    fn delete_address(&mut self, index: u32, addr: &IpNet) -> io::Result<()> {
        let _ = (index, addr);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
    /// The main table's unicast routes, both families (RTM_GETROUTE dump).
    fn routes(&mut self) -> io::Result<Vec<RouteEntry>>;
    /// Add or replace a route (RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE).
    fn replace_route(&mut self, route: &RouteEntry) -> io::Result<()>;
    /// ETHTOOL_GRINGPARAM.
    fn ethtool_rings(&mut self, name: &IfName) -> io::Result<RingParam>;
    /// ETHTOOL_GCOALESCE.
    fn ethtool_coalesce(&mut self, name: &IfName) -> io::Result<Coalesce>;
    /// ETHTOOL_GPAUSEPARAM.
    fn ethtool_pause(&mut self, name: &IfName) -> io::Result<PauseParam>;
    /// ETHTOOL_GLINKSETTINGS (4.6+), the `link_mode_masks_nwords`
    /// handshake included.
    fn ethtool_link_settings(&mut self, name: &IfName) -> io::Result<LinkModes>;
    /// ETHTOOL_GSET, the deprecated one (kernels before 4.6).
    fn ethtool_legacy_settings(&mut self, name: &IfName) -> io::Result<LegacyCmd>;
    /// The ETH_SS_FEATURES table: ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS,
    /// then ETHTOOL_GFEATURES (2.6.39+; EOPNOTSUPP before).
    fn ethtool_features(&mut self, name: &IfName) -> io::Result<Features>;
    /// A legacy per-offload read: `get` is one of ETHTOOL_GTSO, GGSO, GGRO,
    /// GRXCSUM, GTXCSUM, GSG (anything else: EINVAL).
    fn ethtool_offload(&mut self, name: &IfName, get: u32) -> io::Result<bool>;
    /// One change.
    fn ethtool_set(&mut self, name: &IfName, change: &EthtoolSet) -> io::Result<()>;
    /// Every interface, with its kind, master and alias (RTM_GETLINK dump).
    fn link_infos(&mut self) -> io::Result<Vec<LinkInfo>>;
    /// Create a bridge or VLAN, down, with the alias [`OURS`].
    fn create_link(&mut self, link: &NewLink) -> io::Result<()>;
    /// Make `port` a port of `bridge`; None releases it (IFLA_MASTER).
    fn set_master(&mut self, port: &IfName, bridge: Option<&IfName>) -> io::Result<()>;
    /// A bridge's spanning tree (IFLA_BR_STP_STATE).
    fn set_bridge_stp(&mut self, bridge: &IfName, on: bool) -> io::Result<()>;
    /// Remove a link (RTM_DELLINK).
    fn delete_link(&mut self, name: &IfName) -> io::Result<()>;
    /// Traffic-control objects with their counters.
    fn tc_list(&mut self, what: TcList) -> io::Result<Vec<TcObject>>;
    /// One traffic-control change.
    fn tc_set(&mut self, op: &TcOp) -> io::Result<()>;
}

/// ETHTOOL_GLINKSETTINGS's answer: the header and the link-mode bitmaps
/// that follow it (supported, advertising, lp_advertising; `nwords` u32
/// each), kept whole for the ETHTOOL_SLINKSETTINGS that writes it back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkModes {
    pub settings: LinkSettings,
    pub masks: Vec<u32>,
}

/// The ETH_SS_FEATURES table: the feature names (`rx-gro`) and their
/// bits, 32 features a block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    pub names: Vec<String>,
    pub blocks: Vec<GetFeaturesBlock>,
}

/// One ethtool change, one variant per ETHTOOL_S* command nasboot sends.
/// The structure's `cmd` field is filled in by the implementation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EthtoolSet {
    /// ETHTOOL_SRINGPARAM.
    Rings(RingParam),
    /// ETHTOOL_SCOALESCE.
    Coalesce(Coalesce),
    /// ETHTOOL_SPAUSEPARAM.
    Pause(PauseParam),
    /// ETHTOOL_SLINKSETTINGS.
    LinkSettings(LinkModes),
    /// ETHTOOL_SSET.
    LegacySettings(LegacyCmd),
    /// ETHTOOL_SFEATURES: the blocks' `valid` bits say which features
    /// change. A driver that refuses one (ETHTOOL_F_UNSUPPORTED) gives
    /// EOPNOTSUPP.
    Features(Vec<SetFeaturesBlock>),
    /// A legacy per-offload change: `set` is one of ETHTOOL_STSO, SGSO,
    /// SGRO, SRXCSUM, STXCSUM, SSG.
    Offload { set: u32, on: bool },
}

impl EthtoolSet {
    /// The ETHTOOL_* command.
    pub(crate) fn command(&self) -> u32 {
        match self {
            EthtoolSet::Rings(_) => cmd::SRINGPARAM,
            EthtoolSet::Coalesce(_) => cmd::SCOALESCE,
            EthtoolSet::Pause(_) => cmd::SPAUSEPARAM,
            EthtoolSet::LinkSettings(_) => cmd::SLINKSETTINGS,
            EthtoolSet::LegacySettings(_) => cmd::SSET,
            EthtoolSet::Features(_) => cmd::SFEATURES,
            EthtoolSet::Offload { set, .. } => *set,
        }
    }
}

/// The command and the values it sends, for dry runs and logs:
/// `ETHTOOL_SRINGPARAM rx 512 tx 256`.
impl fmt::Display for EthtoolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(cmd::name(self.command()))?;
        let on_off = |b: u32| if b != 0 { "on" } else { "off" };
        match self {
            EthtoolSet::Rings(r) => write!(f, " rx {} tx {}", r.rx_pending, r.tx_pending),
            EthtoolSet::Coalesce(c) => write!(f, " rx-usecs {} tx-usecs {}", c.rx_coalesce_usecs, c.tx_coalesce_usecs),
            EthtoolSet::Pause(p) => write!(f, " autoneg {} rx {} tx {}", on_off(p.autoneg), on_off(p.rx_pause), on_off(p.tx_pause)),
            EthtoolSet::LinkSettings(LinkModes { settings: s, .. }) => {
                write!(f, " speed {} duplex {} autoneg {}", s.speed, s.duplex, on_off(s.autoneg.into()))
            }
            EthtoolSet::LegacySettings(c) => {
                let speed = u32::from(c.speed_hi) << 16 | u32::from(c.speed);
                write!(f, " speed {speed} duplex {} autoneg {}", c.duplex, on_off(c.autoneg.into()))
            }
            EthtoolSet::Features(blocks) => {
                for (i, b) in blocks.iter().enumerate().filter(|(_, b)| b.valid != 0) {
                    write!(f, " block {i} valid {:#010x} requested {:#010x}", b.valid, b.requested)?;
                }
                Ok(())
            }
            EthtoolSet::Offload { on, .. } => write!(f, " {}", on_off((*on).into())),
        }
    }
}
