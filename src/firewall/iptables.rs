//! The iptables renderer: the model as two iptables-restore files, one
//! for `iptables-restore` (IPv4) and one for `ip6tables-restore` (IPv6).
//!
//! Ownership, and why `--noflush`: nasboot loads these files with
//! `iptables-restore --noflush`, so tables and chains it does not own are
//! left alone (another tool's OUTPUT rules, a `mangle` table). It owns:
//!
//! - in `filter`: the INPUT and FORWARD chains (their policy is set and
//!   they are flushed with `-F` inside the file) and its own chains
//!   `nasboot-lan` and `nasboot-wan` (declaring a user chain under
//!   `--noflush` flushes it);
//! - in `raw`: PREROUTING and OUTPUT, only when LAN traffic is marked
//!   notrack (stateful, or forwarding), or when the `raw` table is already
//!   loaded (`/proc/net/ip_tables_names`), to remove an earlier notrack;
//! - in `nat` (IPv4): POSTROUTING, only with `forward = true`, or when the
//!   `nat` table is loaded, to remove an earlier masquerade.
//!
//! iptables-restore commits each table as a whole, so INPUT is never seen
//! half-written. Loading `raw` or `nat` when no rule needs them is avoided
//! on purpose: on 2.6 kernels every registered table costs every packet.
//!
//! Rules follow the model (see `firewall/mod.rs`): LAN interfaces are the
//! first INPUT rules (`-i LAN -j ACCEPT` for a LAN that may reach
//! everything), then loopback, then a jump to `nasboot-wan`. The stateless
//! rule set has no `-m state`, no `-m conntrack`, no `CT` and no NAT.
//! Replies are TCP to the local port range unless `SYN` without `ACK`
//! (`! --tcp-flags SYN,ACK SYN`, which also refuses the SYN+FIN that
//! `--syn` would let through) and UDP from ports 53 and 123 to that range.
//! IPv6 fragments reach INPUT one by one (nothing reassembles them before
//! it without conntrack): non-first ones are accepted last, after a drop of
//! the first fragments no rule accepted. Ports are matched with
//! `multiport`, at most 15 ports a rule (xt_multiport).

use std::fmt::{self, Write};

use super::model::{Ifaces, Kind, Model, Zone, DHCP4, DHCP6, REPLY_UDP_SPORTS};
use crate::config::types::PortRange;

/// xt_multiport's limit (XT_MULTI_PORTS).
const MULTIPORT_MAX: usize = 15;

/// IPv4 or IPv6: which of iptables-restore and ip6tables-restore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IpVersion {
    V4,
    V6,
}

/// Tables that are loaded on the board (`/proc/net/ip_tables_names`,
/// `ip6_tables_names`): an earlier rule set may have left notrack or
/// masquerade rules in raw and nat although this one does not need them,
/// and with no filter table no chain of nasboot's can be loaded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Leftovers {
    pub filter: bool,
    pub raw: bool,
    pub nat: bool,
}

impl Leftovers {
    /// From the text of `/proc/net/ip_tables_names`.
    pub(crate) fn from_names(text: &str) -> Leftovers {
        let has = |name: &str| text.lines().any(|l| l.trim() == name);
        Leftovers { filter: has("filter"), raw: has("raw"), nat: has("nat") }
    }
}

/// What differs between the IPv4 and the IPv6 rule file.
struct PerVersion {
    icmp: &'static str,
    /// ICMP types a WAN accepts: echo reply, destination unreachable,
    /// time exceeded, and for IPv6 packet too big and ND 133-136.
    icmp_ok: &'static [u8],
    echo_request: u8,
    dhcp: (u16, u16),
    /// Whether fragments reach INPUT unreassembled (IPv6).
    fragments: bool,
}

const V4: PerVersion =
    PerVersion { icmp: "-p icmp -m icmp --icmp-type", icmp_ok: &[0, 3, 11], echo_request: 8, dhcp: DHCP4, fragments: false };
const V6: PerVersion = PerVersion {
    icmp: "-p ipv6-icmp -m icmp6 --icmpv6-type",
    icmp_ok: &[1, 2, 3, 129, 133, 134, 135, 136],
    echo_request: 128,
    dhcp: DHCP6,
    fragments: true,
};

fn ports(out: &mut String, chain: &str, proto: &str, dir: &str, list: &[u16]) -> fmt::Result {
    for chunk in list.chunks(MULTIPORT_MAX) {
        if let [one] = chunk {
            writeln!(out, "-A {chain} -p {proto} -m {proto} --{dir}port {one} -j ACCEPT")?;
            continue;
        }
        write!(out, "-A {chain} -p {proto} -m multiport --{dir}ports ")?;
        comma_list(out, chunk)?;
        out.push_str(" -j ACCEPT\n");
    }
    Ok(())
}

/// `53,123`: multiport's list.
fn comma_list(out: &mut String, ports: &[u16]) -> fmt::Result {
    for (i, p) in ports.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write!(out, "{p}")?;
    }
    Ok(())
}

fn services(out: &mut String, chain: &str, z: &Zone) -> fmt::Result {
    ports(out, chain, "tcp", "d", &z.tcp)?;
    ports(out, chain, "udp", "d", &z.udp)
}

fn icmp(out: &mut String, chain: &str, f: &PerVersion) -> fmt::Result {
    for t in f.icmp_ok {
        writeln!(out, "-A {chain} {} {t} -j ACCEPT", f.icmp)?;
    }
    Ok(())
}

/// Replies to the box's own connections, without connection tracking
/// (the same rules as nft.rs `stateless_replies`: TCP without SYN-only and
/// UDP from DNS and NTP servers, both to the local port range only). A
/// TCP or UDP match refuses a packet whose header it cannot read, and any
/// non-first fragment (xt_tcpudp).
fn stateless_replies(out: &mut String, chain: &str, f: &PerVersion, reply: PortRange) -> fmt::Result {
    let range = format!("{}:{}", reply.lo(), reply.hi());
    writeln!(out, "-A {chain} -p tcp -m tcp --dport {range} ! --tcp-flags SYN,ACK SYN -j ACCEPT")?;
    write!(out, "-A {chain} -p udp -m udp --dport {range} -m multiport --sports ")?;
    comma_list(out, &REPLY_UDP_SPORTS)?;
    out.push_str(" -j ACCEPT\n");
    writeln!(out, "-A {chain} -p udp -m udp --sport {} --dport {} -j ACCEPT", f.dhcp.0, f.dhcp.1)?;
    icmp(out, chain, f)?;
    if f.fragments {
        // IPv6 fragments meet INPUT one by one (nothing reassembles them
        // before it without connection tracking): a first fragment that no
        // rule above accepted is dropped, the others go on to reassembly,
        // which cannot complete without the first.
        writeln!(out, "-A {chain} -m frag --fragfirst -j DROP")?;
        writeln!(out, "-A {chain} -m frag -j ACCEPT")?;
    }
    Ok(())
}

fn pairs(out: &mut String, from: &Ifaces, to: &Ifaces, tail: &str) -> fmt::Result {
    for i in from {
        for o in to {
            writeln!(out, "-A FORWARD -i {i} -o {o} {tail}")?;
        }
    }
    Ok(())
}

/// The router's FORWARD chain (see nft.rs `forward_rules`; iptables has
/// no flowtable, so every forwarded packet crosses these rules).
fn forward_rules(m: &Model, f: &PerVersion, fam: IpVersion, out: &mut String) -> fmt::Result {
    out.push_str("-A FORWARD -p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu\n");
    out.push_str("-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n");
    out.push_str("-A FORWARD -m conntrack --ctstate INVALID -j DROP\n");
    pairs(out, &m.lan_ifaces, &m.wan_ifaces, "-j ACCEPT")?;
    pairs(out, &m.lan_ifaces, &m.lan_ifaces, "-j ACCEPT")?;
    if fam == IpVersion::V4 && !m.dnat.is_empty() {
        pairs(out, &m.wan_ifaces, &m.lan_ifaces, "-m conntrack --ctstate DNAT -j ACCEPT")?;
    }
    if fam == IpVersion::V6 {
        // RFC 4890 4.3.1: errors, and echo (see nft.rs ICMP6_FORWARD).
        for t in [1, 2, 3, 4, 128, 129] {
            pairs(out, &m.wan_ifaces, &m.lan_ifaces, &format!("{} {t} -j ACCEPT", f.icmp))?;
        }
    }
    Ok(())
}

/// IPv4 NAT (see nft.rs `nat_table`).
fn nat(m: &Model, out: &mut String) -> fmt::Result {
    for d in &m.dnat {
        for i in &m.wan_ifaces {
            writeln!(out, "-A PREROUTING -i {i} -p {p} -m {p} --dport {} -j DNAT --to-destination {}", d.wan_port, d.to, p = d.proto)?;
        }
    }
    if m.reflection {
        for d in &m.dnat {
            for i in &m.lan_ifaces {
                writeln!(
                    out,
                    "-A PREROUTING -i {i} ! -d {} -m addrtype --dst-type LOCAL -p {p} -m {p} --dport {} -j DNAT --to-destination {}",
                    d.lan_net,
                    d.wan_port,
                    d.to,
                    p = d.proto
                )?;
            }
        }
    }
    for o in &m.wan_ifaces {
        writeln!(out, "-A POSTROUTING -o {o} -j MASQUERADE")?;
    }
    if m.reflection {
        for d in &m.dnat {
            writeln!(
                out,
                "-A POSTROUTING -s {} -d {}/32 -p {p} -m {p} --dport {} -m conntrack --ctstate DNAT -j MASQUERADE",
                d.lan_net,
                d.to.addr,
                d.to.port,
                p = d.proto
            )?;
        }
    }
    Ok(())
}

fn render_family(m: &Model, fam: IpVersion, left: Leftovers, out: &mut String) -> fmt::Result {
    let f = match fam {
        IpVersion::V4 => &V4,
        IpVersion::V6 => &V6,
    };
    let (tool, name) = match fam {
        IpVersion::V4 => ("iptables-restore", "IPv4"),
        IpVersion::V6 => ("ip6tables-restore", "IPv6"),
    };
    let kind = match m.kind {
        Kind::Stateless => "stateless",
        Kind::Stateful => "stateful",
        Kind::Off => "off",
    };
    writeln!(out, "# nasboot firewall: profile {kind} ({tool} --noflush, {name})")?;
    if m.notrack_lan() || left.raw {
        out.push_str("*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-F PREROUTING\n-F OUTPUT\n");
        if m.notrack_lan() {
            let local = if m.forward { " -m addrtype --dst-type LOCAL" } else { "" };
            if m.reflection && fam == IpVersion::V4 {
                // Reflected connections to the WAN address must be tracked.
                for i in &m.lan_ifaces {
                    for d in &m.dnat {
                        writeln!(out, "-A PREROUTING -i {i} -p {p} -m {p} --dport {} -j ACCEPT", d.wan_port, p = d.proto)?;
                        writeln!(
                            out,
                            "-A PREROUTING -i {i} -s {}/32 -p {p} -m {p} --sport {} -j ACCEPT",
                            d.to.addr,
                            d.to.port,
                            p = d.proto
                        )?;
                    }
                }
            }
            for i in &m.lan_ifaces {
                writeln!(out, "-A PREROUTING -i {i}{local} -j CT --notrack")?;
            }
            for i in &m.lan_ifaces {
                writeln!(out, "-A OUTPUT -o {i} -j CT --notrack")?;
            }
        }
        out.push_str("COMMIT\n");
    }
    let forward = m.forward && m.kind != Kind::Off;
    if fam == IpVersion::V4 && (forward || left.nat) {
        out.push_str("*nat\n:PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-F PREROUTING\n-F POSTROUTING\n");
        if forward {
            nat(m, out)?;
        }
        out.push_str("COMMIT\n");
    }
    let policy = if m.kind == Kind::Off { "ACCEPT" } else { "DROP" };
    writeln!(out, "*filter\n:INPUT {policy} [0:0]\n:FORWARD {policy} [0:0]")?;
    out.push_str(":nasboot-lan - [0:0]\n:nasboot-wan - [0:0]\n-F INPUT\n-F FORWARD\n");
    if m.kind == Kind::Off {
        out.push_str("-X nasboot-lan\n-X nasboot-wan\nCOMMIT\n");
        return Ok(());
    }
    let lan_target = if m.lan.all { "ACCEPT" } else { "nasboot-lan" };
    for i in &m.lan_ifaces {
        writeln!(out, "-A INPUT -i {i} -j {lan_target}")?;
    }
    out.push_str("-A INPUT -i lo -j ACCEPT\n");
    for i in &m.wan_ifaces {
        writeln!(out, "-A INPUT -i {i} -j nasboot-wan")?;
    }
    if forward {
        forward_rules(m, f, fam, out)?;
    }
    if !m.lan.all {
        services(out, "nasboot-lan", &m.lan)?;
        writeln!(out, "-A nasboot-lan {} {} -j ACCEPT", f.icmp, f.echo_request)?;
        stateless_replies(out, "nasboot-lan", f, m.reply_ports)?;
        out.push_str("-A nasboot-lan -j DROP\n");
    }
    if m.kind == Kind::Stateful {
        out.push_str("-A nasboot-wan -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n");
        out.push_str("-A nasboot-wan -m conntrack --ctstate INVALID -j DROP\n");
        services(out, "nasboot-wan", &m.wan)?;
        icmp(out, "nasboot-wan", f)?;
    } else {
        services(out, "nasboot-wan", &m.wan)?;
        stateless_replies(out, "nasboot-wan", f, m.reply_ports)?;
    }
    if let Some(rate) = m.log_rate {
        writeln!(out, "-A nasboot-wan -m limit --limit {rate}/min --limit-burst 5 -j LOG --log-prefix \"nasboot-wan-drop: \"")?;
    }
    out.push_str("-A nasboot-wan -j DROP\nCOMMIT\n");
    Ok(())
}

/// Render both files into `out`; returns where the IPv6 file starts.
pub(crate) fn render(m: &Model, left4: Leftovers, left6: Leftovers, out: &mut String) -> Result<usize, fmt::Error> {
    render_family(m, IpVersion::V4, left4, out)?;
    let at = out.len();
    render_family(m, IpVersion::V6, left6, out)?;
    Ok(at)
}

fn fallback_family(lan: &Ifaces, fam: IpVersion, emergency: bool, out: &mut String) -> fmt::Result {
    let f = match fam {
        IpVersion::V4 => &V4,
        IpVersion::V6 => &V6,
    };
    let what = if emergency { "emergency (the profile could not be read)" } else { "fallback (the configured rule set did not load)" };
    writeln!(out, "# nasboot firewall: {what}")?;
    out.push_str("*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:nasboot-lan - [0:0]\n:nasboot-wan - [0:0]\n-F INPUT\n-F FORWARD\n");
    for i in lan {
        writeln!(out, "-A INPUT -i {i} -j ACCEPT")?;
    }
    out.push_str("-A INPUT -i lo -j ACCEPT\n");
    if emergency {
        out.push_str("-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n");
        icmp(out, "INPUT", f)?;
    }
    out.push_str("COMMIT\n");
    Ok(())
}

/// The fallback (see nft.rs `render_fallback`); returns where IPv6 starts.
pub(crate) fn render_fallback(lan: &Ifaces, out: &mut String) -> Result<usize, fmt::Error> {
    fallback_family(lan, IpVersion::V4, false, out)?;
    let at = out.len();
    fallback_family(lan, IpVersion::V6, false, out)?;
    Ok(at)
}

/// The emergency rule set (see nft.rs `render_emergency`).
pub(crate) fn render_emergency(out: &mut String) -> Result<usize, fmt::Error> {
    let none = Ifaces::new();
    fallback_family(&none, IpVersion::V4, true, out)?;
    let at = out.len();
    fallback_family(&none, IpVersion::V6, true, out)?;
    Ok(at)
}
