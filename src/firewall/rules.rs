//! The nftables rule set as data: built once from the model, then written
//! out by two thin emitters, `nft.rs` (the `nft -f` file that `firewall
//! render` and `plan` print and the tool path loads) and `netlink.rs`
//! (one nf_tables batch). Neither decides anything about the rules.
//!
//! The shape (see `firewall/mod.rs` for the reasons): an input chain with
//! policy drop; a LAN open to everything accepted by one compare rule
//! first (no set lookup); loopback; one verdict map on the input interface
//! for the other zones; per-zone chains with named port sets; no `ct`
//! expression, no NAT and no helper in the stateless profile. With
//! `hook = "ingress"` (stateless only) the per-zone chains are reached
//! from one ingress chain per interface instead, and a LAN open to
//! everything gets none: no input chain at all.
//!
//! Each table is replaced in the same transaction that defines it:
//! created empty if missing, deleted, then defined again (`nft -f`'s
//! `table inet nasboot {}`, `delete table inet nasboot`, the table).
//! Every rule, chain and set carries the profile key it comes from, so
//! that a rule the kernel refuses is reported against the profile.
//!
//! Rules are constant templates (`&'static [Item]`): what varies with the
//! profile (the zones' interfaces, the reply ports, the log rate, the
//! port forwards) is held once by the [`Ruleset`], and an item names it
//! (`Names::Lan`, `PortMatch::Reply`, `L4::Fwd`); a rule's [`Instance`]
//! says which LAN interface or port forward its items mean. The emitters look
//! the values up; building a rule set copies no rule.

use std::fmt;

use super::model::{Dnat, Ifaces, Kind, Model, Ports, Zone, DHCP4, DHCP6, REPLY_UDP_SPORTS};
use crate::config::firewall::{Proto, MAX_PORT_FORWARDS};
use crate::config::types::{IfName, IpNet, PortRange};

/// The two tables nasboot owns.
pub(crate) const FILTER_TABLE: &str = "nasboot";
pub(crate) const NAT_TABLE: &str = "nasboot_nat";
/// The flowtable's name.
pub(crate) const FLOWTABLE: &str = "ft";
/// The log prefix of dropped WAN packets, and the burst of its limit.
pub(crate) const LOG_PREFIX: &str = "nasboot-wan-drop: ";
pub(crate) const LOG_BURST: u32 = 5;

/// A table's family: `inet` (IPv4 and IPv6) or `ip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TableFamily {
    Inet,
    Ip,
}

/// What a rule set does, for its first comment line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    Profile { kind: Kind, ingress: bool },
    Fallback,
    Emergency,
}

/// A whole rule set: each of nasboot's tables, replaced, and the values
/// its rules name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ruleset {
    pub purpose: Purpose,
    pub lan: Ifaces,
    pub wan: Ifaces,
    /// The local ports replies come back to (`PortMatch::Reply`).
    pub reply: PortRange,
    /// Dropped WAN packets logged a minute (`Item::Limit`).
    pub log_rate: u32,
    pub dnat: heapless::Vec<Dnat, MAX_PORT_FORWARDS>,
    pub tables: Vec<Replace>,
}

/// One table replaced: removed, then defined again unless `body` is None.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Replace {
    pub family: TableFamily,
    pub name: &'static str,
    pub body: Option<Table>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Table {
    /// The flowtable over the LAN and WAN devices (`flow_offload`).
    pub flowtable: bool,
    pub sets: Vec<Set>,
    pub chains: Vec<Chain>,
}

/// A named set of ports (`type inet_service`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Set {
    pub name: &'static str,
    pub ports: Ports,
    pub key: Key,
}

pub(crate) type ChainName = heapless::String<16>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Chain {
    pub name: ChainName,
    pub base: Option<Base>,
    pub rules: Vec<Rule>,
    pub key: Key,
}

/// A base chain's hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Base {
    pub nat: bool,
    pub hook: Hook,
    pub priority: i32,
    pub accept: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Hook {
    Prerouting,
    Input,
    Forward,
    Output,
    Postrouting,
    Ingress(IfName),
}

/// The profile key a rule, chain or set comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// A key of `[firewall]` (or the interfaces' roles), by its path.
    Firewall(&'static str),
    /// `firewall.port_forward[i]`.
    PortForward(usize),
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Firewall(k) => f.write_str(k),
            Key::PortForward(i) => write!(f, "firewall.port_forward[{i}]"),
        }
    }
}

/// A rule: a template of items, its key, and which LAN interface or port
/// forward its items mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    pub items: &'static [Item],
    pub key: Key,
    pub instance: Instance,
}

/// Which of the profile's LAN interfaces or port forwards a rule stands
/// for: what its items `Names::LanOne`, `L4::Fwd`, `PortMatch::FwdWan`,
/// `IpRef::FwdHost` and the like mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Instance {
    /// None in particular: the rule's items name no one interface or
    /// port forward.
    Shared,
    /// The LAN interface of this index.
    LanIface(usize),
    /// `firewall.port_forward[i]`.
    PortForward(usize),
}

/// Interfaces a rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Names {
    /// The LAN's, or the WAN's, as a set (`{ "eth1" }`; nft loads a
    /// one-element set as one compare).
    Lan,
    Wan,
    /// The rule's LAN interface, without braces.
    LanOne,
}

/// A transport protocol: TCP, UDP, or the rule's port forward's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum L4 {
    Tcp,
    Udp,
    Fwd,
}

/// A port match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortMatch {
    One(u16),
    /// The reply range (`local_port_range`).
    Reply,
    /// An anonymous set.
    Any(&'static [u16]),
    /// One of the table's named sets.
    Named(&'static str),
    /// The rule's port forward: its WAN port, its target's port.
    FwdWan,
    FwdTo,
}

/// An IPv4 network of the rule's port forward: its target host (a /32),
/// or the LAN network it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpRef {
    FwdHost,
    FwdLanNet,
}

/// ICMP types (text and number), as a rule lists them.
pub(crate) type Icmp = &'static [(&'static str, u8)];

/// ICMP types a WAN (and a restricted LAN) accepts.
pub(crate) const ICMP4: Icmp = &[("echo-reply", 0), ("destination-unreachable", 3), ("time-exceeded", 11)];
/// ICMPv6 types: errors, and neighbour discovery (133-136).
pub(crate) const ICMP6: Icmp = &[
    ("echo-reply", 129),
    ("destination-unreachable", 1),
    ("packet-too-big", 2),
    ("time-exceeded", 3),
    ("nd-router-solicit", 133),
    ("nd-router-advert", 134),
    ("nd-neighbor-solicit", 135),
    ("nd-neighbor-advert", 136),
];
/// ICMPv6 a router passes from the WAN to the LAN unasked (RFC 4890
/// 4.3.1: errors, and echo for reachability).
pub(crate) const ICMP6_FORWARD: Icmp = &[
    ("destination-unreachable", 1),
    ("packet-too-big", 2),
    ("time-exceeded", 3),
    ("parameter-problem", 4),
    ("echo-request", 128),
    ("echo-reply", 129),
];

/// A verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Accept,
    Drop,
    /// To the zone chain `lan` or `wan`, or to `replies`.
    Jump(&'static str),
}

/// One match or statement of a rule, in the rule's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// `iifname`/`oifname`.
    IfName {
        out: bool,
        names: Names,
    },
    /// `iif lo`.
    IifLo,
    /// `meta l4proto { tcp, udp }`.
    TcpOrUdp,
    /// `tcp dport …`, `udp sport …`.
    Port {
        proto: L4,
        src: bool,
        m: PortMatch,
    },
    /// `tcp flags & MASK ==|!= VALUE` (bits: fin 1, syn 2, rst 4, ack
    /// 16), and its text.
    TcpFlags {
        mask: u8,
        eq: bool,
        value: u8,
        text: &'static str,
    },
    /// `ct state …`: established and related, or invalid.
    CtState {
        invalid: bool,
    },
    /// `ct status dnat`.
    CtDnat,
    /// `ip saddr|daddr [!=] NET` (a /32 prints as an address).
    Ip {
        src: bool,
        eq: bool,
        net: IpRef,
    },
    /// `ip protocol tcp`.
    IpTcp,
    /// `ip frag-off & 0x1fff ==|!= VALUE`.
    IpFrag {
        eq: bool,
        value: u16,
    },
    /// `frag frag-off != 0`: an IPv6 fragment header, not the first.
    Ip6Frag,
    /// `icmp type …`, `icmpv6 type …`.
    Icmp {
        v6: bool,
        types: Icmp,
    },
    /// `fib daddr type local`.
    FibLocal,
    /// `flow add @ft`.
    FlowAdd,
    /// `tcp option maxseg size set rt mtu`.
    ClampMss,
    /// `limit rate N/minute burst 5 packets` (the log rate).
    Limit,
    /// `log prefix "…"`.
    Log,
    Notrack,
    Masquerade,
    /// `dnat to` the rule's port forward's target.
    Dnat,
    Verdict(Verdict),
    /// `iifname vmap { "eth0" : jump wan, … }` ([`Ruleset::vmap`]).
    Vmap {
        lan: bool,
    },
}

impl Ruleset {
    /// The interfaces `n` stands for in a rule for `of`.
    pub(crate) fn names(&self, n: Names, of: Instance) -> &[IfName] {
        match (n, of) {
            (Names::Lan, _) => &self.lan,
            (Names::Wan, _) => &self.wan,
            (Names::LanOne, Instance::LanIface(i)) => self.lan.get(i..=i).unwrap_or_default(),
            (Names::LanOne, _) => &[],
        }
    }
    /// The flowtable's devices: the LAN's, then the WAN's.
    pub(crate) fn devices(&self) -> impl Iterator<Item = &IfName> {
        self.lan.iter().chain(self.wan.iter())
    }
    /// The verdict map on the input interface: the restricted LAN's
    /// interfaces (`lan`) to its chain, the WAN's to theirs.
    pub(crate) fn vmap(&self, lan: bool) -> impl Iterator<Item = (&IfName, &'static str)> {
        let lan_part = if lan { &self.lan[..] } else { &self.lan[..0] };
        lan_part.iter().map(|n| (n, "lan")).chain(self.wan.iter().map(|n| (n, "wan")))
    }
    /// The port forward a rule for `of` stands for.
    pub(crate) fn fwd(&self, of: Instance) -> Option<&Dnat> {
        match of {
            Instance::PortForward(i) => self.dnat.get(i),
            _ => None,
        }
    }
    /// The protocol `p` means in a rule for `of`.
    pub(crate) fn proto(&self, p: L4, of: Instance) -> Proto {
        match p {
            L4::Tcp => Proto::Tcp,
            L4::Udp => Proto::Udp,
            L4::Fwd => self.fwd(of).map_or(Proto::Tcp, |d| d.proto),
        }
    }
    /// The port `m` names in a rule for `of`, when it is one port.
    pub(crate) fn port(&self, m: PortMatch, of: Instance) -> Option<u16> {
        match m {
            PortMatch::One(p) => Some(p),
            PortMatch::FwdWan => self.fwd(of).map(|d| d.wan_port),
            PortMatch::FwdTo => self.fwd(of).map(|d| d.to.port.get()),
            _ => None,
        }
    }
    /// The network `r` names in a rule for `of`.
    pub(crate) fn net(&self, r: IpRef, of: Instance) -> Option<IpNet> {
        let d = self.fwd(of)?;
        Some(match r {
            IpRef::FwdHost => IpNet { addr: d.to.addr.into(), prefix: 32 },
            IpRef::FwdLanNet => d.lan_net,
        })
    }
}

use Item::{IfName as If, Port as P};

const ACCEPT: Item = Item::Verdict(Verdict::Accept);
const DROP: Item = Item::Verdict(Verdict::Drop);
const LAN: Item = If { out: false, names: Names::Lan };
const WAN: Item = If { out: false, names: Names::Wan };
const OUT_LAN: Item = If { out: true, names: Names::Lan };
const OUT_WAN: Item = If { out: true, names: Names::Wan };

// The templates.
const LO: &[Item] = &[Item::IifLo, ACCEPT];
const LAN_ONE: &[Item] = &[If { out: false, names: Names::LanOne }, ACCEPT];
const LAN_IN: &[Item] = &[LAN, ACCEPT];
const DROP_ALL: &[Item] = &[DROP];
/// Replies to the box's own connections, without connection tracking:
/// TCP to the reply range without SYN-only; UDP from DNS and NTP servers
/// to it; DHCP and DHCPv6 server replies.
const REPLY_TCP: &[Item] = &[
    P { proto: L4::Tcp, src: false, m: PortMatch::Reply },
    Item::TcpFlags { mask: 0x12, eq: false, value: 0x02, text: "tcp flags & (syn | ack) != syn" },
    ACCEPT,
];
const REPLY_UDP: &[Item] =
    &[P { proto: L4::Udp, src: true, m: PortMatch::Any(&REPLY_UDP_SPORTS) }, P { proto: L4::Udp, src: false, m: PortMatch::Reply }, ACCEPT];
const REPLY_DHCP4: &[Item] =
    &[P { proto: L4::Udp, src: true, m: PortMatch::One(DHCP4.0) }, P { proto: L4::Udp, src: false, m: PortMatch::One(DHCP4.1) }, ACCEPT];
const REPLY_DHCP6: &[Item] =
    &[P { proto: L4::Udp, src: true, m: PortMatch::One(DHCP6.0) }, P { proto: L4::Udp, src: false, m: PortMatch::One(DHCP6.1) }, ACCEPT];
const ICMP4_IN: &[Item] = &[Item::Icmp { v6: false, types: ICMP4 }, ACCEPT];
const ICMP6_IN: &[Item] = &[Item::Icmp { v6: true, types: ICMP6 }, ACCEPT];
const ECHO4: &[Item] = &[Item::Icmp { v6: false, types: &[("echo-request", 8)] }, ACCEPT];
const ECHO6: &[Item] = &[Item::Icmp { v6: true, types: &[("echo-request", 128)] }, ACCEPT];
const LAN_TCP: &[Item] = &[P { proto: L4::Tcp, src: false, m: PortMatch::Named("lan_tcp") }, ACCEPT];
const LAN_UDP: &[Item] = &[P { proto: L4::Udp, src: false, m: PortMatch::Named("lan_udp") }, ACCEPT];
const WAN_TCP: &[Item] = &[P { proto: L4::Tcp, src: false, m: PortMatch::Named("wan_tcp") }, ACCEPT];
const WAN_UDP: &[Item] = &[P { proto: L4::Udp, src: false, m: PortMatch::Named("wan_udp") }, ACCEPT];
const FRAG_TCP8: &[Item] = &[Item::IpTcp, Item::IpFrag { eq: true, value: 1 }, DROP];
const FRAG4: &[Item] = &[Item::IpFrag { eq: false, value: 0 }, ACCEPT];
const FRAG6: &[Item] = &[Item::Ip6Frag, ACCEPT];
const CT_REPLIES: &[Item] = &[Item::CtState { invalid: false }, ACCEPT];
const CT_INVALID: &[Item] = &[Item::CtState { invalid: true }, DROP];
const LOG: &[Item] = &[Item::Limit, Item::Log];
const JUMP_LAN: &[Item] = &[Item::Verdict(Verdict::Jump("lan"))];
const JUMP_WAN: &[Item] = &[Item::Verdict(Verdict::Jump("wan"))];
const JUMP_REPLIES: &[Item] = &[Item::Verdict(Verdict::Jump("replies"))];
const VMAP: &[Item] = &[Item::Vmap { lan: true }];
const VMAP_WAN: &[Item] = &[Item::Vmap { lan: false }];
const NOTRACK_LAN: &[Item] = &[LAN, Item::Notrack];
const NOTRACK_LAN_LOCAL: &[Item] = &[LAN, Item::FibLocal, Item::Notrack];
const NOTRACK_OUT: &[Item] = &[OUT_LAN, Item::Notrack];
/// A LAN client's connection to a forwarded port at the WAN address,
/// and the target's replies to the box's LAN address (masqueraded).
const REFLECT_IN: &[Item] = &[LAN, P { proto: L4::Fwd, src: false, m: PortMatch::FwdWan }, ACCEPT];
const REFLECT_BACK: &[Item] =
    &[LAN, Item::Ip { src: true, eq: true, net: IpRef::FwdHost }, P { proto: L4::Fwd, src: true, m: PortMatch::FwdTo }, ACCEPT];
const FLOW: &[Item] = &[Item::TcpOrUdp, Item::FlowAdd];
const CLAMP: &[Item] = &[Item::TcpFlags { mask: 0x06, eq: true, value: 0x02, text: "tcp flags & (syn | rst) == syn" }, Item::ClampMss];
const LAN_TO_WAN: &[Item] = &[LAN, OUT_WAN, ACCEPT];
const LAN_TO_LAN: &[Item] = &[LAN, OUT_LAN, ACCEPT];
const WAN_TO_LAN_DNAT: &[Item] = &[WAN, OUT_LAN, Item::CtDnat, ACCEPT];
const WAN_TO_LAN_ICMP6: &[Item] = &[WAN, OUT_LAN, Item::Icmp { v6: true, types: ICMP6_FORWARD }, ACCEPT];
const DNAT_WAN: &[Item] = &[WAN, P { proto: L4::Fwd, src: false, m: PortMatch::FwdWan }, Item::Dnat];
/// A LAN client that uses an address of the box other than its LAN
/// network's (the WAN address) for a forwarded port.
const DNAT_REFLECT: &[Item] = &[
    LAN,
    Item::FibLocal,
    Item::Ip { src: false, eq: false, net: IpRef::FwdLanNet },
    P { proto: L4::Fwd, src: false, m: PortMatch::FwdWan },
    Item::Dnat,
];
const MASQUERADE: &[Item] = &[OUT_WAN, Item::Masquerade];
/// The reflected connection's replies must come back through the box,
/// not straight from the LAN host to the client.
const MASQUERADE_REFLECT: &[Item] = &[
    Item::Ip { src: true, eq: true, net: IpRef::FwdLanNet },
    Item::Ip { src: false, eq: true, net: IpRef::FwdHost },
    P { proto: L4::Fwd, src: false, m: PortMatch::FwdTo },
    Item::CtDnat,
    Item::Masquerade,
];

fn key(k: &'static str) -> Key {
    Key::Firewall(k)
}

fn chain_name(s: &str) -> ChainName {
    // Every name here is short: "raw_prerouting" is the longest, at 14
    // bytes; `{zone}_in{i}` at most 7.
    let mut n = ChainName::new();
    let _ = n.push_str(s);
    n
}

impl Chain {
    fn add(&mut self, items: &'static [Item], key: Key) {
        self.rules.push(Rule { items, key, instance: Instance::Shared });
    }
    fn add_for(&mut self, items: &'static [Item], key: Key, instance: Instance) {
        self.rules.push(Rule { items, key, instance });
    }
}

fn base(name: &str, hook: Hook, priority: i32, accept: bool, key: Key) -> Chain {
    Chain { name: chain_name(name), base: Some(Base { nat: false, hook, priority, accept }), rules: Vec::new(), key }
}

fn plain_chain(name: &str, key: Key) -> Chain {
    Chain { name: chain_name(name), base: None, rules: Vec::new(), key }
}

/// The stateless replies (see `REPLY_TCP`) and the essential ICMP and
/// ICMPv6. Every TCP and UDP rule reads the ports (and TCP the flags)
/// from the packet: a first fragment too short to hold them matches none
/// of them, and a non-first fragment has no transport header to match
/// (nft_payload refuses both). No service nasboot configures listens in
/// the reply range: validation keeps the pinned ports below it.
fn stateless_replies(c: &mut Chain) {
    c.add(REPLY_TCP, key("firewall.local_port_range"));
    c.add(REPLY_UDP, key("firewall.local_port_range"));
    c.add(REPLY_DHCP4, key("firewall.profile"));
    c.add(REPLY_DHCP6, key("firewall.profile"));
    icmp(c);
}

fn icmp(c: &mut Chain) {
    c.add(ICMP4_IN, key("firewall.profile"));
    c.add(ICMP6_IN, key("firewall.profile"));
}

fn zone_services(c: &mut Chain, z: &Zone, rules: [&'static [Item]; 2], key: Key) {
    if !z.tcp.is_empty() {
        c.add(rules[0], key);
    }
    if !z.udp.is_empty() {
        c.add(rules[1], key);
    }
}

/// A zone's chain on one interface's ingress hook (the `inet` family's,
/// Linux 5.10): it sees that interface's IPv4 and IPv6 packets only (ARP
/// and the rest pass), before routing and before reassembly.
fn ingress_chain(zone: &str, i: usize, name: &IfName, jump: &'static [Item]) -> Chain {
    let mut c = base(zone, Hook::Ingress(name.clone()), 0, true, key("firewall.hook"));
    let _ = fmt::Write::write_fmt(&mut c.name, format_args!("_in{i}"));
    c.add(jump, key("firewall.hook"));
    c
}

/// Non-first fragments, after every other rule (so unfragmented packets
/// never test them): they carry no transport header, so they are let
/// through to reassembly, which cannot complete a datagram whose first
/// fragment was dropped; the first fragment meets the rules above like any
/// packet. IPv6 fragments meet the input hook one by one too: without
/// connection tracking nothing reassembles them before it. On the ingress
/// hook (`ipv4`), IPv4 fragments are not reassembled yet either; there a
/// TCP fragment at offset 8 bytes, which could rewrite the flags of a
/// first fragment (RFC 1858 3.2), is dropped first.
fn fragments(c: &mut Chain, ipv4: bool) {
    if ipv4 {
        c.add(FRAG_TCP8, key("firewall.hook"));
        c.add(FRAG4, key("firewall.hook"));
    }
    c.add(FRAG6, key("firewall.profile"));
}

/// What a stateless zone chain lets in after its own services: the
/// replies, then the non-first fragments (`ipv4`: on the ingress hook).
fn replies_and_fragments(c: &mut Chain, ipv4: bool) {
    stateless_replies(c);
    fragments(c, ipv4);
}

fn set(sets: &mut Vec<Set>, name: &'static str, ports: &Ports, key: Key) {
    if !ports.is_empty() {
        sets.push(Set { name, ports: ports.clone(), key });
    }
}

fn ruleset(m: &Model, purpose: Purpose, lan: Ifaces, tables: Vec<Replace>) -> Ruleset {
    Ruleset {
        purpose,
        lan,
        wan: m.wan_ifaces.clone(),
        reply: m.reply_ports,
        log_rate: m.log_rate.unwrap_or(0),
        dnat: m.dnat.clone(),
        tables,
    }
}

/// The rule set for `m`. Pure.
pub(crate) fn build(m: &Model) -> Ruleset {
    let purpose = Purpose::Profile { kind: m.kind, ingress: m.ingress };
    if m.kind == Kind::Off {
        return ruleset(m, purpose, m.lan_ifaces.clone(), vec![replace(TableFamily::Inet, None), replace(TableFamily::Ip, None)]);
    }
    // The software fast path (nf_flow_table): once `flow add` has seen a
    // flow established, its packets go from the ingress hook of the LAN
    // and WAN devices straight to the output device.
    let mut t = Table { flowtable: m.forward && m.flowtable && !m.lan_ifaces.is_empty(), ..Table::default() };
    set(&mut t.sets, "lan_tcp", &m.lan.tcp, key("firewall.lan_services"));
    set(&mut t.sets, "lan_udp", &m.lan.udp, key("firewall.lan_services"));
    set(&mut t.sets, "wan_tcp", &m.wan.tcp, key("firewall.wan_services"));
    set(&mut t.sets, "wan_udp", &m.wan.udp, key("firewall.wan_services"));
    if m.notrack_lan() {
        notrack_chains(m, &mut t.chains);
    }
    if m.ingress {
        for (i, name) in m.wan_ifaces.iter().enumerate() {
            t.chains.push(ingress_chain("wan", i, name, JUMP_WAN));
        }
        if !m.lan.all {
            for (i, name) in m.lan_ifaces.iter().enumerate() {
                t.chains.push(ingress_chain("lan", i, name, JUMP_LAN));
            }
        }
    } else {
        t.chains.push(input_chain(m));
    }
    let mut forward = base("forward", Hook::Forward, 0, false, key("firewall.forward"));
    if m.forward && !m.lan_ifaces.is_empty() {
        forward_rules(m, &mut forward);
    }
    t.chains.push(forward);
    // The stateless replies, in the LAN's chain and the WAN's: in a chain
    // of their own that both jump to when both need them, so that the
    // kernel builds those rules and their sets once (each rule and set is
    // an allocation and a commit's work on a slow board).
    let stateless_wan = m.kind != Kind::Stateful;
    let shared = !m.lan.all && stateless_wan;
    if shared {
        let mut replies = plain_chain("replies", key("firewall.profile"));
        replies_and_fragments(&mut replies, m.ingress);
        t.chains.push(replies);
    }
    let replies = |c: &mut Chain| {
        if shared {
            c.add(JUMP_REPLIES, key("firewall.profile"));
        } else {
            replies_and_fragments(c, m.ingress);
        }
    };
    if !m.lan.all {
        // A LAN limited to services: the services, the LAN's own pings,
        // and (stateless, as LAN traffic is never tracked) replies.
        let mut lan = plain_chain("lan", key("firewall.lan_services"));
        zone_services(&mut lan, &m.lan, [LAN_TCP, LAN_UDP], key("firewall.lan_services"));
        lan.add(ECHO4, key("firewall.lan_services"));
        lan.add(ECHO6, key("firewall.lan_services"));
        replies(&mut lan);
        lan.add(DROP_ALL, key("firewall.lan_services"));
        t.chains.push(lan);
    }
    let mut wan = plain_chain("wan", key("firewall.wan_services"));
    if stateless_wan {
        zone_services(&mut wan, &m.wan, [WAN_TCP, WAN_UDP], key("firewall.wan_services"));
        replies(&mut wan);
    } else {
        wan.add(CT_REPLIES, key("firewall.profile"));
        wan.add(CT_INVALID, key("firewall.profile"));
        zone_services(&mut wan, &m.wan, [WAN_TCP, WAN_UDP], key("firewall.wan_services"));
        icmp(&mut wan);
    }
    if m.log_rate.is_some() {
        wan.add(LOG, key("firewall.log_rate"));
    }
    wan.add(DROP_ALL, key("firewall.wan_services"));
    t.chains.push(wan);
    let nat = (m.forward && !m.wan_ifaces.is_empty()).then(|| nat_table(m));
    ruleset(m, purpose, m.lan_ifaces.clone(), vec![replace(TableFamily::Inet, Some(t)), replace(TableFamily::Ip, nat)])
}

fn replace(family: TableFamily, body: Option<Table>) -> Replace {
    let name = if family == TableFamily::Inet { FILTER_TABLE } else { NAT_TABLE };
    Replace { family, name, body }
}

/// Storage traffic skips connection tracking; with forwarding, only what
/// is addressed to the box itself (LAN to WAN flows need conntrack for
/// the masquerade).
fn notrack_chains(m: &Model, chains: &mut Vec<Chain>) {
    let mut pre = base("raw_prerouting", Hook::Prerouting, -300, true, key("firewall.profile"));
    if m.reflection {
        // Reflected connections are for the box: they must be tracked to
        // be NATed.
        for i in 0..m.dnat.len() {
            pre.add_for(REFLECT_IN, Key::PortForward(i), Instance::PortForward(i));
            pre.add_for(REFLECT_BACK, Key::PortForward(i), Instance::PortForward(i));
        }
    }
    pre.add(if m.forward { NOTRACK_LAN_LOCAL } else { NOTRACK_LAN }, key("firewall.profile"));
    chains.push(pre);
    let mut out = base("raw_output", Hook::Output, -300, true, key("firewall.profile"));
    out.add(NOTRACK_OUT, key("firewall.profile"));
    chains.push(out);
}

fn input_chain(m: &Model) -> Chain {
    let mut c = base("input", Hook::Input, 0, false, key("firewall.profile"));
    if m.lan.all {
        for i in 0..m.lan_ifaces.len() {
            c.add_for(LAN_ONE, key("firewall.lan_services"), Instance::LanIface(i));
        }
    }
    c.add(LO, key("firewall.profile"));
    if (!m.lan.all && !m.lan_ifaces.is_empty()) || !m.wan_ifaces.is_empty() {
        c.add(if m.lan.all { VMAP_WAN } else { VMAP }, key("interface[].role"));
    }
    c
}

/// The forward chain of a router: the fast path, MSS clamping, replies,
/// LAN to WAN, port forwards, and the ICMPv6 a router must pass.
fn forward_rules(m: &Model, c: &mut Chain) {
    if m.flowtable {
        // Only established flows are offloaded (nft_flow_offload skips
        // new and related ones and TCP with SYN, FIN or RST set).
        c.add(FLOW, key("firewall.flow_offload"));
    }
    // Both directions' SYNs (the SYN-ACK comes back established), as
    // fw4 does for its WAN zone: a PPPoE or tunnel WAN has a smaller MTU
    // than the LAN hosts believe.
    c.add(CLAMP, key("firewall.forward"));
    c.add(CT_REPLIES, key("firewall.forward"));
    // Invalid packets are not NATed: leaving on the WAN they would carry
    // LAN addresses (fw4's "Prevent NAT leakage").
    c.add(CT_INVALID, key("firewall.forward"));
    c.add(LAN_TO_WAN, key("firewall.forward"));
    // Between the LAN's interfaces (and back out of the one it came in
    // on, as reflected connections do), as fw4's lan zone forwards.
    c.add(LAN_TO_LAN, key("firewall.forward"));
    if !m.dnat.is_empty() {
        c.add(WAN_TO_LAN_DNAT, key("firewall.port_forward"));
    }
    c.add(WAN_TO_LAN_ICMP6, key("firewall.forward"));
}

/// IPv4 NAT: port forwards (and their reflection) before routing,
/// masquerade on the WAN after it. Kernels before 4.18 need both NAT
/// hooks registered.
fn nat_table(m: &Model) -> Table {
    let mut pre = base("prerouting", Hook::Prerouting, -100, true, key("firewall.forward"));
    let mut post = base("postrouting", Hook::Postrouting, 100, true, key("firewall.forward"));
    for c in [&mut pre, &mut post] {
        if let Some(b) = c.base.as_mut() {
            b.nat = true;
        }
    }
    for i in 0..m.dnat.len() {
        pre.add_for(DNAT_WAN, Key::PortForward(i), Instance::PortForward(i));
    }
    post.add(MASQUERADE, key("firewall.forward"));
    if m.reflection {
        for i in 0..m.dnat.len() {
            pre.add_for(DNAT_REFLECT, Key::PortForward(i), Instance::PortForward(i));
            post.add_for(MASQUERADE_REFLECT, Key::PortForward(i), Instance::PortForward(i));
        }
    }
    Table { flowtable: false, sets: Vec::new(), chains: vec![pre, post] }
}

/// The fallback when the configured rule set does not load: loopback and
/// the LAN interfaces accepted, everything else dropped, nothing forwarded.
pub(crate) fn fallback(lan: &Ifaces) -> Ruleset {
    let mut input = base("input", Hook::Input, 0, false, key("firewall.profile"));
    input.add(LO, key("firewall.profile"));
    if !lan.is_empty() {
        input.add(LAN_IN, key("interface[].role"));
    }
    closed(Purpose::Fallback, lan.clone(), input)
}

/// The emergency rule set for a board whose profile cannot be read, so
/// that no interface is known to be LAN: loopback, replies to connections
/// the box opened (this engages conntrack, which is acceptable in an
/// emergency), essential ICMP and ICMPv6 (neighbour discovery), and
/// nothing else. The serial console is the way in.
pub(crate) fn emergency() -> Ruleset {
    let mut input = base("input", Hook::Input, 0, false, key("firewall.profile"));
    input.add(LO, key("firewall.profile"));
    input.add(CT_REPLIES, key("firewall.profile"));
    icmp(&mut input);
    closed(Purpose::Emergency, Ifaces::new(), input)
}

/// `input` and a forward chain with policy drop; no NAT table.
fn closed(purpose: Purpose, lan: Ifaces, input: Chain) -> Ruleset {
    let forward = base("forward", Hook::Forward, 0, false, key("firewall.forward"));
    let t = Table { flowtable: false, sets: Vec::new(), chains: vec![input, forward] };
    Ruleset {
        purpose,
        lan,
        wan: Ifaces::new(),
        reply: PortRange::LINUX_DEFAULT,
        log_rate: 0,
        dnat: heapless::Vec::new(),
        tables: vec![replace(TableFamily::Inet, Some(t)), replace(TableFamily::Ip, None)],
    }
}

/// Whether a table (family NFPROTO_*, name) is one of nasboot's.
pub(crate) fn ours(family: u8, name: &str) -> bool {
    use crate::sys::nftnl::{NFPROTO_INET, NFPROTO_IPV4};
    (family == NFPROTO_INET && name == FILTER_TABLE) || (family == NFPROTO_IPV4 && name == NAT_TABLE)
}
