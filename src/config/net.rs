//! `[[interface]]`: one table per NIC.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::decode::{self as dec, decode_enum, Decode, Error, Fields, Value};
use super::{List, Spanned};

use super::types::{IfName, IpNet, MacAddr, SysctlKey, SysctlValue, VlanId};

/// Addresses per interface.
pub(crate) const MAX_ADDRESSES: usize = 8;
/// Static routes per interface.
pub(crate) const MAX_ROUTES: usize = 16;
/// Per-interface sysctls.
pub(crate) const MAX_IF_SYSCTLS: usize = 8;
/// Ports of one bridge.
pub(crate) const MAX_BRIDGE_PORTS: usize = 8;

/// What kind of link an `[[interface]]` is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinkKind {
    /// A device the board already has (a NIC, a switch port): nasboot
    /// configures it but never creates or removes it.
    #[default]
    Nic,
    /// A software bridge over `ports`, created by nasboot (rtnetlink).
    Bridge,
    /// An 802.1Q VLAN `id` on `link`, created by nasboot (rtnetlink).
    Vlan,
}

decode_enum!(LinkKind { "nic" => Nic, "bridge" => Bridge, "vlan" => Vlan });
decode_enum!(Role { "lan" => Lan, "wan" => Wan, "none" => None });
decode_enum!(Method { "static" => Static, "dhcp" => Dhcp, "manual" => Manual });
decode_enum!(Duplex { "half" => Half, "full" => Full });
decode_enum!(LinkLayer { "ethernet" => Ethernet, "atm" => Atm, "ptm" => Ptm });
decode_enum!(SqmQdisc { "auto" => Auto, "cake" => Cake, "fq_codel" => FqCodel });

impl std::fmt::Display for LinkKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LinkKind::Nic => "nic",
            LinkKind::Bridge => "bridge",
            LinkKind::Vlan => "vlan",
        })
    }
}

/// Which firewall zone an interface belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Role {
    /// Trusted side: storage clients.
    Lan,
    /// Untrusted side: default-deny inbound.
    Wan,
    /// In no zone. Refused when the firewall is on.
    #[default]
    None,
}

/// How the interface gets its addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// The addresses listed in the profile.
    #[default]
    Static,
    /// The board's DHCP client (udhcpc or dhclient on PATH).
    Dhcp,
    /// Link settings only, no addresses.
    Manual,
}

/// MTU: 68 (the IPv4 minimum, RFC 791) to 65535. The driver's own maximum
/// is checked by the kernel when applying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mtu(pub u32);

impl Decode for Mtu {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        dec::int_in_range(v, 68, 65535, "MTU").map(|n| Mtu(n as u32))
    }
}

/// A static route through this interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// Destination network.
    pub to: Spanned<IpNet>,
    /// Gateway; on-link when absent.
    pub via: Option<Spanned<std::net::IpAddr>>,
    /// Route metric.
    pub metric: Option<u32>,
}

/// Link speed/duplex forced through ethtool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Duplex {
    Half,
    Full,
}

/// ethtool settings (SIOCETHTOOL). Every field is optional: unset means
/// "leave the driver's value alone".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ethtool {
    /// RX ring entries; clamped to the driver's maximum (ETHTOOL_GRINGPARAM).
    pub rx_ring: Option<u32>,
    /// TX ring entries; clamped likewise.
    pub tx_ring: Option<u32>,
    pub tso: Option<bool>,
    pub gso: Option<bool>,
    pub gro: Option<bool>,
    pub rx_checksum: Option<bool>,
    pub tx_checksum: Option<bool>,
    pub sg: Option<bool>,
    /// Interrupt coalescing, microseconds.
    pub rx_usecs: Option<u32>,
    pub tx_usecs: Option<u32>,
    /// Pause frames.
    pub pause_autoneg: Option<bool>,
    pub pause_rx: Option<bool>,
    pub pause_tx: Option<bool>,
    /// Link: Mb/s, duplex, autonegotiation.
    pub speed: Option<u32>,
    pub duplex: Option<Duplex>,
    pub autoneg: Option<bool>,
}

/// A shaper rate in kbit/s: 8 (the shapers' floor) to 10,000,000 (10 Gbit/s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kbit(pub u32);

impl Decode for Kbit {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        dec::int_in_range(v, 8, 10_000_000, "rate (kbit/s)").map(|n| Kbit(n as u32))
    }
}

/// Bytes the link adds to each packet, as cake's `overhead` takes them:
/// -64 to 256.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overhead(pub i32);

impl Decode for Overhead {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        dec::int_in_range(v, -64, 256, "overhead").map(|n| Overhead(n as i32))
    }
}

/// How the modem's link frames packets (cake's `atm`/`ptm`; an HTB
/// rate's link layer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinkLayer {
    /// Ethernet-like: the overhead only.
    #[default]
    Ethernet,
    /// ADSL: 53-byte cells carrying 48 bytes each.
    Atm,
    /// VDSL2: 64b/65b encoding.
    Ptm,
}

/// Which queue discipline shapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SqmQdisc {
    /// cake where the kernel has sch_cake, else fq_codel under HTB.
    #[default]
    Auto,
    Cake,
    FqCodel,
}

/// `[interface.sqm]`: shaping a WAN a little under the modem's rates, so
/// that the queue builds here, where cake or fq_codel keep it short,
/// not in the modem's buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sqm {
    /// Upload: the root qdisc of the WAN.
    pub egress_kbit: Spanned<Kbit>,
    /// Download: an IFB device (`ifb4<wan>`) fed by the WAN's ingress
    /// qdisc (u32 match-all, mirred redirect). None: egress only.
    pub ingress_kbit: Option<Spanned<Kbit>>,
    pub overhead: Overhead,
    pub link_layer: LinkLayer,
    pub qdisc: SqmQdisc,
}

/// One `[[interface]]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    pub name: Spanned<IfName>,
    /// `nic` (default), `bridge` or `vlan`.
    pub kind: LinkKind,
    /// A bridge's ports: NICs or VLANs (not bridges), enslaved to it.
    pub ports: List<Spanned<IfName>, MAX_BRIDGE_PORTS>,
    /// A bridge's spanning tree (IFLA_BR_STP_STATE). Default off: a
    /// router's LAN bridge has no loop, and STP holds every port in the
    /// listening and learning states for 30 s after it comes up.
    pub stp: Option<bool>,
    /// A VLAN's lower device.
    pub link: Option<Spanned<IfName>>,
    /// A VLAN's id.
    pub id: Option<Spanned<VlanId>>,
    pub role: Role,
    pub method: Method,
    /// Administratively up (default) or down.
    pub up: bool,
    pub mtu: Option<Mtu>,
    pub txqueuelen: Option<u32>,
    pub mac: Option<MacAddr>,
    /// Leave promiscuous mode off (default) or on.
    pub promisc: bool,
    /// IPv4 and IPv6 addresses with prefix, e.g. "192.168.1.2/24".
    pub address: List<Spanned<IpNet>, MAX_ADDRESSES>,
    pub gateway: Option<Spanned<Ipv4Addr>>,
    pub gateway6: Option<Spanned<Ipv6Addr>>,
    pub route: List<Route, MAX_ROUTES>,
    /// net.ipv6.conf.IF.accept_ra (0, 1 or 2).
    pub accept_ra: Option<u8>,
    /// Wait up to this many seconds for carrier after bringing the link up.
    pub carrier_timeout: Option<u32>,
    pub ethtool: Option<Ethtool>,
    /// Smart queue management on a WAN (`[interface.sqm]`).
    pub sqm: Option<Sqm>,
    /// Per-interface sysctls, relative to net.ipv4.conf.IF / net.ipv6.conf.IF,
    /// written as e.g. "ipv4.rp_filter" = 1.
    pub sysctl: heapless::LinearMap<SysctlKey, SysctlValue, MAX_IF_SYSCTLS>,
}

impl Decode for Route {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(v, "struct Route", &["to", "via", "metric"])?;
        Ok(Route { to: f.req("to")?, via: f.opt("via")?, metric: f.opt("metric")? })
    }
}

impl Decode for Ethtool {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(
            v,
            "struct Ethtool",
            &[
                "rx_ring",
                "tx_ring",
                "tso",
                "gso",
                "gro",
                "rx_checksum",
                "tx_checksum",
                "sg",
                "rx_usecs",
                "tx_usecs",
                "pause_autoneg",
                "pause_rx",
                "pause_tx",
                "speed",
                "duplex",
                "autoneg",
            ],
        )?;
        Ok(Ethtool {
            rx_ring: f.opt("rx_ring")?,
            tx_ring: f.opt("tx_ring")?,
            tso: f.opt("tso")?,
            gso: f.opt("gso")?,
            gro: f.opt("gro")?,
            rx_checksum: f.opt("rx_checksum")?,
            tx_checksum: f.opt("tx_checksum")?,
            sg: f.opt("sg")?,
            rx_usecs: f.opt("rx_usecs")?,
            tx_usecs: f.opt("tx_usecs")?,
            pause_autoneg: f.opt("pause_autoneg")?,
            pause_rx: f.opt("pause_rx")?,
            pause_tx: f.opt("pause_tx")?,
            speed: f.opt("speed")?,
            duplex: f.opt("duplex")?,
            autoneg: f.opt("autoneg")?,
        })
    }
}

impl Decode for Sqm {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(v, "struct Sqm", &["egress_kbit", "ingress_kbit", "overhead", "link_layer", "qdisc"])?;
        Ok(Sqm {
            egress_kbit: f.req("egress_kbit")?,
            ingress_kbit: f.opt("ingress_kbit")?,
            overhead: f.or_default("overhead")?,
            link_layer: f.or_default("link_layer")?,
            qdisc: f.or_default("qdisc")?,
        })
    }
}

impl Decode for Interface {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(
            v,
            "struct Interface",
            &[
                "name",
                "kind",
                "ports",
                "stp",
                "link",
                "id",
                "role",
                "method",
                "up",
                "mtu",
                "txqueuelen",
                "mac",
                "promisc",
                "address",
                "gateway",
                "gateway6",
                "route",
                "accept_ra",
                "carrier_timeout",
                "ethtool",
                "sqm",
                "sysctl",
            ],
        )?;
        Ok(Interface {
            name: f.req("name")?,
            kind: f.or_default("kind")?,
            ports: f.or_default("ports")?,
            stp: f.opt("stp")?,
            link: f.opt("link")?,
            id: f.opt("id")?,
            role: f.or_default("role")?,
            method: f.or_default("method")?,
            up: f.or("up", true)?,
            mtu: f.opt("mtu")?,
            txqueuelen: f.opt("txqueuelen")?,
            mac: f.opt("mac")?,
            promisc: f.or_default("promisc")?,
            address: f.or_default("address")?,
            gateway: f.opt("gateway")?,
            gateway6: f.opt("gateway6")?,
            route: f.or_default("route")?,
            accept_ra: f.opt("accept_ra")?,
            carrier_timeout: f.opt("carrier_timeout")?,
            ethtool: f.opt("ethtool")?,
            sqm: f.opt("sqm")?,
            sysctl: f.or_default("sysctl")?,
        })
    }
}
