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
    pub index: u32,
    pub name: IfName,
    pub kind: Kind,
    /// IFF_UP (ifi_flags).
    pub up: bool,
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
    Bridge { name: IfName, stp: bool },
    Vlan { name: IfName, link: IfName, id: u16 },
}

/// Interface operations.
pub trait Netif {
    /// The link's state; `Ok(None)` when there is no such interface.
    fn link(&mut self, name: &IfName) -> io::Result<Option<LinkState>>;
    /// Every interface's name, loopback included (/proc/net/dev).
    fn names(&mut self) -> io::Result<Vec<IfName>>;
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
    /// The addresses on an interface (RTM_GETADDR dump, both families).
    fn addresses(&mut self, index: u32) -> io::Result<Vec<IpNet>>;
    /// Add an address (RTM_NEWADDR; IPv4 gets its broadcast address).
    fn add_address(&mut self, index: u32, addr: &IpNet) -> io::Result<()>;
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
