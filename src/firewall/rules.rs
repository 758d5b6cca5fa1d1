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

use std::fmt;
use std::net::Ipv4Addr;

use super::model::{Dnat, Ifaces, Kind, Model, Ports, Zone, DHCP4, DHCP6, REPLY_UDP_SPORTS};
use crate::config::firewall::Proto;
use crate::config::types::{Endpoint, IfName, IpNet, PortRange};

/// The two tables nasboot owns.
pub(crate) const FILTER_TABLE: &str = "nasboot";
pub(crate) const NAT_TABLE: &str = "nasboot_nat";
/// The flowtable's name.
pub(crate) const FLOWTABLE: &str = "ft";
/// The log prefix of dropped WAN packets.
pub(crate) const LOG_PREFIX: &str = "nasboot-wan-drop: ";

/// A table's family: `inet` (IPv4 and IPv6) or `ip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
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

/// A whole rule set: each of nasboot's tables, replaced. The LAN and WAN
/// interfaces are listed once here; rules name them by zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ruleset {
    pub purpose: Purpose,
    pub lan: Ifaces,
    pub wan: Ifaces,
    pub tables: Vec<Replace>,
}

/// Interfaces a rule matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Names {
    /// The LAN's, or the WAN's, as a set (`{ "eth1" }`; nft loads a
    /// one-element set as one compare).
    Lan,
    Wan,
    /// One interface, without braces.
    One(IfName),
}

impl Ruleset {
    /// The interfaces `n` stands for.
    pub(crate) fn names<'a>(&'a self, n: &'a Names) -> &'a [IfName] {
        match n {
            Names::Lan => &self.lan,
            Names::Wan => &self.wan,
            Names::One(one) => std::slice::from_ref(one),
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
}

/// One table replaced: removed, then defined again unless `body` is None.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Replace {
    pub family: Family,
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
    /// A key of `[firewall]` (or the interfaces' roles), by name.
    Firewall(&'static str),
    /// `firewall.port_forward[i]`.
    PortForward(usize),
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Firewall(k) if k.contains('[') => f.write_str(k),
            Key::Firewall(k) => write!(f, "firewall.{k}"),
            Key::PortForward(i) => write!(f, "firewall.port_forward[{i}]"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rule {
    pub items: Vec<Item>,
    pub key: Key,
}

/// A port match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortMatch {
    One(u16),
    Range(PortRange),
    /// An anonymous set.
    Any(&'static [u16]),
    /// One of the table's named sets.
    Named(&'static str),
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
pub(crate) const ICMP4_ECHO: Icmp = &[("echo-request", 8)];
pub(crate) const ICMP6_ECHO: Icmp = &[("echo-request", 128)];

/// A verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Accept,
    Drop,
    /// To the zone chain `lan` or `wan`.
    Jump(&'static str),
}

/// One match or statement of a rule, in the rule's order.
#[derive(Clone, Debug, PartialEq, Eq)]
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
        proto: Proto,
        src: bool,
        m: PortMatch,
    },
    /// `tcp flags & MASK ==|!= VALUE` (bits: fin 1, syn 2, rst 4, ack 16).
    TcpFlags {
        mask: u8,
        eq: bool,
        value: u8,
    },
    /// `ct state …`: established and related, or invalid.
    CtState {
        invalid: bool,
    },
    /// `ct status dnat`.
    CtDnat,
    /// `ip saddr|daddr [!=] NET` (an address is a /32).
    Ip {
        src: bool,
        eq: bool,
        net: IpNet,
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
    /// `limit rate N/minute burst B packets`.
    Limit {
        per_minute: u32,
        burst: u32,
    },
    /// `log prefix "…"`.
    Log,
    Notrack,
    Masquerade,
    Dnat(Endpoint),
    Verdict(Verdict),
    /// `iifname vmap { "eth0" : jump wan, … }` ([`Ruleset::vmap`]).
    Vmap {
        lan: bool,
    },
}

fn chain_name(s: &str) -> ChainName {
    // Every name below is short: "raw_prerouting" is the longest fixed
    // one, at 14 bytes; `{zone}_in{i}` at most 7.
    let mut n = ChainName::new();
    let _ = n.push_str(s);
    n
}

impl Rule {
    fn new(key: Key, items: Vec<Item>) -> Rule {
        Rule { items, key }
    }
}

fn fw(k: &'static str) -> Key {
    Key::Firewall(k)
}

fn iif(names: Names) -> Item {
    Item::IfName { out: false, names }
}

fn oif(names: Names) -> Item {
    Item::IfName { out: true, names }
}

fn base(name: &str, hook: Hook, priority: i32, accept: bool, key: Key) -> Chain {
    Chain { name: chain_name(name), base: Some(Base { nat: false, hook, priority, accept }), rules: Vec::new(), key }
}

fn accept(mut items: Vec<Item>) -> Vec<Item> {
    items.push(Item::Verdict(Verdict::Accept));
    items
}

fn port(proto: Proto, src: bool, m: PortMatch) -> Item {
    Item::Port { proto, src, m }
}

/// Rules that let replies to the box's own connections in without
/// connection tracking. The box's own connections use local ports from the
/// kernel's ephemeral range (`reply`), and no service nasboot configures
/// listens there (validation keeps the pinned ports below it), so:
/// TCP to that range without SYN-only (a segment there can open no
/// connection; ACK and FIN probes of a service port are dropped); UDP from
/// DNS and NTP servers to that range; DHCP and DHCPv6 server replies;
/// essential ICMP and ICMPv6. Every TCP and UDP rule reads the ports (and
/// TCP the flags) from the packet: a first fragment too short to hold
/// them matches none of them, and a non-first fragment has no transport
/// header to match (nft_payload refuses both).
fn stateless_replies(out: &mut Vec<Rule>, reply: PortRange) {
    let range = fw("local_port_range");
    out.push(Rule::new(
        range,
        accept(vec![port(Proto::Tcp, false, PortMatch::Range(reply)), Item::TcpFlags { mask: 0x12, eq: false, value: 0x02 }]),
    ));
    out.push(Rule::new(
        range,
        accept(vec![port(Proto::Udp, true, PortMatch::Any(&REPLY_UDP_SPORTS)), port(Proto::Udp, false, PortMatch::Range(reply))]),
    ));
    for (s, d) in [DHCP4, DHCP6] {
        out.push(Rule::new(
            fw("profile"),
            accept(vec![port(Proto::Udp, true, PortMatch::One(s)), port(Proto::Udp, false, PortMatch::One(d))]),
        ));
    }
    icmp(out);
}

fn icmp(out: &mut Vec<Rule>) {
    out.push(Rule::new(fw("profile"), accept(vec![Item::Icmp { v6: false, types: ICMP4 }])));
    out.push(Rule::new(fw("profile"), accept(vec![Item::Icmp { v6: true, types: ICMP6 }])));
}

fn zone_services(out: &mut Vec<Rule>, zone: &str, z: &Zone) {
    let (sets, key): ([&'static str; 2], _) =
        if zone == "lan" { (["lan_tcp", "lan_udp"], fw("lan_services")) } else { (["wan_tcp", "wan_udp"], fw("wan_services")) };
    for (ports, proto, set) in [(&z.tcp, Proto::Tcp, sets[0]), (&z.udp, Proto::Udp, sets[1])] {
        if !ports.is_empty() {
            out.push(Rule::new(key, accept(vec![port(proto, false, PortMatch::Named(set))])));
        }
    }
}

/// A zone's chain on one interface's ingress hook (the `inet` family's,
/// Linux 5.10): it sees that interface's IPv4 and IPv6 packets only (ARP
/// and the rest pass), before routing and before reassembly.
fn ingress_chain(zone: &'static str, i: usize, name: &IfName) -> Chain {
    let mut n = chain_name(zone);
    let _ = n.push_str("_in");
    let _ = fmt::Write::write_fmt(&mut n, format_args!("{i}"));
    let mut c = base("", Hook::Ingress(name.clone()), 0, true, fw("hook"));
    c.name = n;
    c.rules.push(Rule::new(fw("hook"), vec![Item::Verdict(Verdict::Jump(zone))]));
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
fn fragments(out: &mut Vec<Rule>, ipv4: bool) {
    if ipv4 {
        out.push(Rule::new(fw("hook"), vec![Item::IpTcp, Item::IpFrag { eq: true, value: 1 }, Item::Verdict(Verdict::Drop)]));
        out.push(Rule::new(fw("hook"), accept(vec![Item::IpFrag { eq: false, value: 0 }])));
    }
    out.push(Rule::new(fw("profile"), accept(vec![Item::Ip6Frag])));
}

fn set(sets: &mut Vec<Set>, name: &'static str, ports: &Ports, key: Key) {
    if !ports.is_empty() {
        sets.push(Set { name, ports: ports.clone(), key });
    }
}

/// The rule set for `m`. Pure.
pub(crate) fn build(m: &Model) -> Ruleset {
    let purpose = Purpose::Profile { kind: m.kind, ingress: m.ingress };
    let (lan_if, wan_if) = (m.lan_ifaces.clone(), m.wan_ifaces.clone());
    if m.kind == Kind::Off {
        return Ruleset { purpose, lan: lan_if, wan: wan_if, tables: vec![replace(Family::Inet, None), replace(Family::Ip, None)] };
    }
    // The software fast path (nf_flow_table): once `flow add` has seen a
    // flow established, its packets go from the ingress hook of the LAN
    // and WAN devices straight to the output device.
    let mut t = Table { flowtable: m.forward && m.flowtable && !m.lan_ifaces.is_empty(), ..Table::default() };
    set(&mut t.sets, "lan_tcp", &m.lan.tcp, fw("lan_services"));
    set(&mut t.sets, "lan_udp", &m.lan.udp, fw("lan_services"));
    set(&mut t.sets, "wan_tcp", &m.wan.tcp, fw("wan_services"));
    set(&mut t.sets, "wan_udp", &m.wan.udp, fw("wan_services"));
    if m.notrack_lan() {
        notrack_chains(m, &mut t.chains);
    }
    if m.ingress {
        for (i, name) in m.wan_ifaces.iter().enumerate() {
            t.chains.push(ingress_chain("wan", i, name));
        }
        if !m.lan.all {
            for (i, name) in m.lan_ifaces.iter().enumerate() {
                t.chains.push(ingress_chain("lan", i, name));
            }
        }
    } else {
        t.chains.push(input_chain(m));
    }
    let mut forward = base("forward", Hook::Forward, 0, false, fw("forward"));
    if m.forward && !m.lan_ifaces.is_empty() {
        forward_rules(m, &mut forward.rules);
    }
    t.chains.push(forward);
    if !m.lan.all {
        // A LAN limited to services: the services, the LAN's own pings,
        // and (stateless, as LAN traffic is never tracked) replies.
        let mut lan = plain_chain("lan", fw("lan_services"));
        zone_services(&mut lan.rules, "lan", &m.lan);
        lan.rules.push(Rule::new(fw("lan_services"), accept(vec![Item::Icmp { v6: false, types: ICMP4_ECHO }])));
        lan.rules.push(Rule::new(fw("lan_services"), accept(vec![Item::Icmp { v6: true, types: ICMP6_ECHO }])));
        stateless_replies(&mut lan.rules, m.reply_ports);
        fragments(&mut lan.rules, m.ingress);
        lan.rules.push(Rule::new(fw("lan_services"), vec![Item::Verdict(Verdict::Drop)]));
        t.chains.push(lan);
    }
    let mut wan = plain_chain("wan", fw("wan_services"));
    if m.kind == Kind::Stateful {
        wan.rules.push(Rule::new(fw("profile"), accept(vec![Item::CtState { invalid: false }])));
        wan.rules.push(Rule::new(fw("profile"), vec![Item::CtState { invalid: true }, Item::Verdict(Verdict::Drop)]));
        zone_services(&mut wan.rules, "wan", &m.wan);
        icmp(&mut wan.rules);
    } else {
        zone_services(&mut wan.rules, "wan", &m.wan);
        stateless_replies(&mut wan.rules, m.reply_ports);
        fragments(&mut wan.rules, m.ingress);
    }
    if let Some(rate) = m.log_rate {
        wan.rules.push(Rule::new(fw("log_rate"), vec![Item::Limit { per_minute: rate, burst: 5 }, Item::Log]));
    }
    wan.rules.push(Rule::new(fw("wan_services"), vec![Item::Verdict(Verdict::Drop)]));
    t.chains.push(wan);
    let nat = (m.forward && !m.wan_ifaces.is_empty()).then(|| nat_table(m));
    Ruleset { purpose, lan: lan_if, wan: wan_if, tables: vec![replace(Family::Inet, Some(t)), replace(Family::Ip, nat)] }
}

fn replace(family: Family, body: Option<Table>) -> Replace {
    let name = if family == Family::Inet { FILTER_TABLE } else { NAT_TABLE };
    Replace { family, name, body }
}

fn plain_chain(name: &str, key: Key) -> Chain {
    Chain { name: chain_name(name), base: None, rules: Vec::new(), key }
}

/// Storage traffic skips connection tracking; with forwarding, only what
/// is addressed to the box itself (LAN to WAN flows need conntrack for
/// the masquerade).
fn notrack_chains(m: &Model, chains: &mut Vec<Chain>) {
    let mut pre = base("raw_prerouting", Hook::Prerouting, -300, true, fw("profile"));
    if m.reflection {
        // A LAN client's connection to a forwarded port at the WAN
        // address, and the target's replies to the box's LAN address
        // (masqueraded), are for the box: they must be tracked to be NATed.
        for (i, d) in m.dnat.iter().enumerate() {
            let key = Key::PortForward(i);
            pre.rules.push(Rule::new(key, accept(vec![iif(Names::Lan), port(d.proto, false, PortMatch::One(d.wan_port))])));
            let host = host(d.to.addr);
            pre.rules.push(Rule::new(
                key,
                accept(vec![
                    iif(Names::Lan),
                    Item::Ip { src: true, eq: true, net: host },
                    port(d.proto, true, PortMatch::One(d.to.port.get())),
                ]),
            ));
        }
    }
    let mut items = vec![iif(Names::Lan)];
    if m.forward {
        items.push(Item::FibLocal);
    }
    items.push(Item::Notrack);
    pre.rules.push(Rule::new(fw("profile"), items));
    chains.push(pre);
    let mut out = base("raw_output", Hook::Output, -300, true, fw("profile"));
    out.rules.push(Rule::new(fw("profile"), vec![oif(Names::Lan), Item::Notrack]));
    chains.push(out);
}

fn input_chain(m: &Model) -> Chain {
    let mut c = base("input", Hook::Input, 0, false, fw("profile"));
    if m.lan.all {
        for name in &m.lan_ifaces {
            c.rules.push(Rule::new(fw("lan_services"), accept(vec![iif(Names::One(name.clone()))])));
        }
    }
    c.rules.push(Rule::new(fw("profile"), accept(vec![Item::IifLo])));
    if (!m.lan.all && !m.lan_ifaces.is_empty()) || !m.wan_ifaces.is_empty() {
        c.rules.push(Rule::new(fw("interface[].role"), vec![Item::Vmap { lan: !m.lan.all }]));
    }
    c
}

/// The forward chain of a router: the fast path, MSS clamping, replies,
/// LAN to WAN, port forwards, and the ICMPv6 a router must pass.
fn forward_rules(m: &Model, out: &mut Vec<Rule>) {
    if m.flowtable {
        // Only established flows are offloaded (nft_flow_offload skips
        // new and related ones and TCP with SYN, FIN or RST set).
        out.push(Rule::new(fw("flow_offload"), vec![Item::TcpOrUdp, Item::FlowAdd]));
    }
    // Both directions' SYNs (the SYN-ACK comes back established), as
    // fw4 does for its WAN zone: a PPPoE or tunnel WAN has a smaller MTU
    // than the LAN hosts believe.
    out.push(Rule::new(fw("forward"), vec![Item::TcpFlags { mask: 0x06, eq: true, value: 0x02 }, Item::ClampMss]));
    out.push(Rule::new(fw("forward"), accept(vec![Item::CtState { invalid: false }])));
    // Invalid packets are not NATed: leaving on the WAN they would carry
    // LAN addresses (fw4's "Prevent NAT leakage").
    out.push(Rule::new(fw("forward"), vec![Item::CtState { invalid: true }, Item::Verdict(Verdict::Drop)]));
    let pair = |from, to| vec![iif(from), oif(to)];
    out.push(Rule::new(fw("forward"), accept(pair(Names::Lan, Names::Wan))));
    // Between the LAN's interfaces (and back out of the one it came in
    // on, as reflected connections do), as fw4's lan zone forwards.
    out.push(Rule::new(fw("forward"), accept(pair(Names::Lan, Names::Lan))));
    if !m.dnat.is_empty() {
        let mut items = pair(Names::Wan, Names::Lan);
        items.push(Item::CtDnat);
        out.push(Rule::new(fw("port_forward"), accept(items)));
    }
    let mut items = pair(Names::Wan, Names::Lan);
    items.push(Item::Icmp { v6: true, types: ICMP6_FORWARD });
    out.push(Rule::new(fw("forward"), accept(items)));
}

fn dnat_items(mut items: Vec<Item>, d: &Dnat) -> Vec<Item> {
    items.push(port(d.proto, false, PortMatch::One(d.wan_port)));
    items.push(Item::Dnat(d.to));
    items
}

/// IPv4 NAT: port forwards (and their reflection) before routing,
/// masquerade on the WAN after it.
fn nat_table(m: &Model) -> Table {
    // Kernels before 4.18 need both NAT hooks registered.
    let mut pre = base("prerouting", Hook::Prerouting, -100, true, fw("forward"));
    pre.base.as_mut().expect("a base chain").nat = true;
    for (i, d) in m.dnat.iter().enumerate() {
        pre.rules.push(Rule::new(Key::PortForward(i), dnat_items(vec![iif(Names::Wan)], d)));
    }
    if m.reflection {
        // A LAN client that uses an address of the box other than its
        // LAN network's (the WAN address) for a forwarded port.
        for (i, d) in m.dnat.iter().enumerate() {
            let items = vec![iif(Names::Lan), Item::FibLocal, Item::Ip { src: false, eq: false, net: d.lan_net }];
            pre.rules.push(Rule::new(Key::PortForward(i), dnat_items(items, d)));
        }
    }
    let mut post = base("postrouting", Hook::Postrouting, 100, true, fw("forward"));
    post.base.as_mut().expect("a base chain").nat = true;
    post.rules.push(Rule::new(fw("forward"), vec![oif(Names::Wan), Item::Masquerade]));
    if m.reflection {
        // The reflected connection's replies must come back through the
        // box, not straight from the LAN host to the client.
        for (i, d) in m.dnat.iter().enumerate() {
            let host = host(d.to.addr);
            post.rules.push(Rule::new(
                Key::PortForward(i),
                vec![
                    Item::Ip { src: true, eq: true, net: d.lan_net },
                    Item::Ip { src: false, eq: true, net: host },
                    port(d.proto, false, PortMatch::One(d.to.port.get())),
                    Item::CtDnat,
                    Item::Masquerade,
                ],
            ));
        }
    }
    Table { flowtable: false, sets: Vec::new(), chains: vec![pre, post] }
}

/// The fallback when the configured rule set does not load: loopback and
/// the LAN interfaces accepted, everything else dropped, nothing forwarded.
pub(crate) fn fallback(lan: &Ifaces) -> Ruleset {
    let mut input = base("input", Hook::Input, 0, false, fw("profile"));
    input.rules.push(Rule::new(fw("profile"), accept(vec![Item::IifLo])));
    if !lan.is_empty() {
        input.rules.push(Rule::new(fw("interface[].role"), accept(vec![iif(Names::Lan)])));
    }
    closed(Purpose::Fallback, lan.clone(), input)
}

/// The emergency rule set for a board whose profile cannot be read, so
/// that no interface is known to be LAN: loopback, replies to connections
/// the box opened (this engages conntrack, which is acceptable in an
/// emergency), essential ICMP and ICMPv6 (neighbour discovery), and
/// nothing else. The serial console is the way in.
pub(crate) fn emergency() -> Ruleset {
    let mut input = base("input", Hook::Input, 0, false, fw("profile"));
    input.rules.push(Rule::new(fw("profile"), accept(vec![Item::IifLo])));
    input.rules.push(Rule::new(fw("profile"), accept(vec![Item::CtState { invalid: false }])));
    icmp(&mut input.rules);
    closed(Purpose::Emergency, Ifaces::new(), input)
}

/// `input` and a forward chain with policy drop; no NAT table.
fn closed(purpose: Purpose, lan: Ifaces, input: Chain) -> Ruleset {
    let forward = base("forward", Hook::Forward, 0, false, fw("forward"));
    let t = Table { flowtable: false, sets: Vec::new(), chains: vec![input, forward] };
    Ruleset { purpose, lan, wan: Ifaces::new(), tables: vec![replace(Family::Inet, Some(t)), replace(Family::Ip, None)] }
}

impl Ruleset {
    /// Whether a chain sits on an ingress hook.
    pub(crate) fn ingress(&self) -> bool {
        self.chains().any(|c| matches!(c.base, Some(Base { hook: Hook::Ingress(_), .. })))
    }
    /// Whether the filter table has the flowtable.
    pub(crate) fn flowtable(&self) -> bool {
        self.tables.iter().any(|t| t.body.as_ref().is_some_and(|b| b.flowtable))
    }
    fn chains(&self) -> impl Iterator<Item = &Chain> {
        self.tables.iter().filter_map(|t| t.body.as_ref()).flat_map(|b| b.chains.iter())
    }
}

/// Whether a table (family NFPROTO_*, name) is one of nasboot's.
pub(crate) fn ours(family: u8, name: &str) -> bool {
    use crate::sys::nftnl::{NFPROTO_INET, NFPROTO_IPV4};
    (family == NFPROTO_INET && name == FILTER_TABLE) || (family == NFPROTO_IPV4 && name == NAT_TABLE)
}

/// An IPv4 address as a /32, for `ip saddr 192.168.1.10`.
pub(crate) fn host(addr: Ipv4Addr) -> IpNet {
    IpNet { addr: addr.into(), prefix: 32 }
}
