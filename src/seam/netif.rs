//! The network interface seam: interface ioctls, rtnetlink and SIOCETHTOOL.
//!
//! Narrow on purpose, one method per kernel operation: the planner asks
//! for the current state (flags, MTU, addresses, routes, ethtool reads)
//! and the applier sends single changes. Everything above a raw kernel
//! call (the ethtool handshakes and fallbacks, the diffing) lives in
//! `crate::net`, so the fakes only have to behave like a kernel and a
//! driver. See `seam::real::netif` for the kernel side.

use std::io;
use std::net::IpAddr;

use crate::config::types::{IfName, IpNet};

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
    /// One SIOCETHTOOL call: `data` is the command structure (its first
    /// u32 is the ETHTOOL_* command), read and written in place by the
    /// driver. Returns the ioctl's non-negative result.
    fn ethtool(&mut self, name: &IfName, data: &mut [u8]) -> io::Result<u32>;
}
