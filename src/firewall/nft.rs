//! The nftables text emitter: the rule set ([`super::rules`]) as one
//! `nft -f` file, for `firewall render`, `plan` and the tool path.
//!
//! The file replaces nasboot's own tables atomically and leaves every other
//! table alone: `table inet nasboot {}` (creates it if missing), then
//! `delete table inet nasboot`, then the new definition, all in one file,
//! which `nft -f` commits as one kernel transaction (nft(8), "nft -f").
//! The same is done for `table ip nasboot_nat`, which exists only with
//! `forward = true`. Priorities are numbers (raw -300, filter 0, srcnat
//! 100, dstnat -100) so that nft releases older than 0.9.1, which lack the
//! names, read the file too.

use std::fmt::{self, Write};

use super::model::Kind;
use super::rules::{
    Base, Chain, Family, Hook, Icmp, Item, Names, PortMatch, Purpose, Replace, Rule, Ruleset, Verdict, FLOWTABLE, LOG_PREFIX,
};
use crate::config::types::IfName;

fn list<T>(out: &mut String, items: impl IntoIterator<Item = T>, each: impl Fn(&mut String, T) -> fmt::Result) -> fmt::Result {
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        each(out, item)?;
    }
    Ok(())
}

fn quoted(out: &mut String, name: &IfName) {
    out.push('"');
    out.push_str(name.as_str());
    out.push('"');
}

fn names<'a>(out: &mut String, names: impl IntoIterator<Item = &'a IfName>) -> fmt::Result {
    out.push_str("{ ");
    list(out, names, |o, n| {
        quoted(o, n);
        Ok(())
    })?;
    out.push_str(" }");
    Ok(())
}

fn verdict(out: &mut String, v: &Verdict) -> fmt::Result {
    match v {
        Verdict::Accept => out.push_str("accept"),
        Verdict::Drop => out.push_str("drop"),
        Verdict::Jump(c) => write!(out, "jump {c}")?,
    }
    Ok(())
}

/// TCP flag names by bit (fin 1, syn 2, rst 4, psh 8, ack 16).
const TCP_FLAGS: [&str; 5] = ["fin", "syn", "rst", "psh", "ack"];

fn flags(out: &mut String, bits: u8) -> fmt::Result {
    let set: heapless::Vec<&str, 5> = TCP_FLAGS.iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).map(|(_, n)| *n).collect();
    if set.len() == 1 {
        out.push_str(set[0]);
        return Ok(());
    }
    out.push('(');
    for (i, n) in set.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        out.push_str(n);
    }
    out.push(')');
    Ok(())
}

fn icmp_types(out: &mut String, types: Icmp) -> fmt::Result {
    if let [(name, _)] = types {
        out.push_str(name);
        return Ok(());
    }
    out.push_str("{ ");
    list(out, types, |o, (n, _)| {
        o.push_str(n);
        Ok(())
    })?;
    out.push_str(" }");
    Ok(())
}

fn item(out: &mut String, rs: &Ruleset, i: &Item) -> fmt::Result {
    match i {
        Item::IfName { out: o, names: n } => {
            out.push_str(if *o { "oifname " } else { "iifname " });
            match n {
                Names::One(one) => quoted(out, one),
                _ => names(out, rs.names(n))?,
            }
        }
        Item::IifLo => out.push_str("iif lo"),
        Item::TcpOrUdp => out.push_str("meta l4proto { tcp, udp }"),
        Item::Port { proto, src, m } => {
            write!(out, "{proto} {} ", if *src { "sport" } else { "dport" })?;
            match m {
                PortMatch::One(p) => write!(out, "{p}")?,
                PortMatch::Range(r) => write!(out, "{r}")?,
                PortMatch::Any(ports) => {
                    out.push_str("{ ");
                    list(out, ports.iter(), |o, p| write!(o, "{p}"))?;
                    out.push_str(" }");
                }
                PortMatch::Named(set) => write!(out, "@{set}")?,
            }
        }
        Item::TcpFlags { mask, eq, value } => {
            out.push_str("tcp flags & ");
            flags(out, *mask)?;
            out.push_str(if *eq { " == " } else { " != " });
            flags(out, *value)?;
        }
        Item::CtState { invalid: true } => out.push_str("ct state invalid"),
        Item::CtState { invalid: false } => out.push_str("ct state established,related"),
        Item::CtDnat => out.push_str("ct status dnat"),
        Item::Ip { src, eq, net } => {
            write!(out, "ip {} {}", if *src { "saddr" } else { "daddr" }, if *eq { "" } else { "!= " })?;
            if net.prefix == 32 {
                write!(out, "{}", net.addr)?;
            } else {
                write!(out, "{net}")?;
            }
        }
        Item::IpTcp => out.push_str("ip protocol tcp"),
        Item::IpFrag { eq, value } => write!(out, "ip frag-off & 0x1fff {} {value}", if *eq { "==" } else { "!=" })?,
        Item::Ip6Frag => out.push_str("frag frag-off != 0"),
        Item::Icmp { v6, types } => {
            out.push_str(if *v6 { "icmpv6 type " } else { "icmp type " });
            icmp_types(out, types)?;
        }
        Item::FibLocal => out.push_str("fib daddr type local"),
        Item::FlowAdd => write!(out, "flow add @{FLOWTABLE}")?,
        Item::ClampMss => out.push_str("tcp option maxseg size set rt mtu"),
        Item::Limit { per_minute, burst } => write!(out, "limit rate {per_minute}/minute burst {burst} packets")?,
        Item::Log => write!(out, "log prefix \"{LOG_PREFIX}\"")?,
        Item::Notrack => out.push_str("notrack"),
        Item::Masquerade => out.push_str("masquerade"),
        Item::Dnat(to) => write!(out, "dnat to {to}")?,
        Item::Verdict(v) => verdict(out, v)?,
        Item::Vmap { lan } => {
            out.push_str("iifname vmap { ");
            list(out, rs.vmap(*lan), |o, (name, zone)| {
                quoted(o, name);
                o.push_str(" : jump ");
                o.push_str(zone);
                Ok(())
            })?;
            out.push_str(" }");
        }
    }
    Ok(())
}

/// One rule of `rs` as the file has it, without indentation.
pub(crate) fn rule(out: &mut String, rs: &Ruleset, r: &Rule) -> fmt::Result {
    for (i, it) in r.items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        item(out, rs, it)?;
    }
    Ok(())
}

/// A base chain's `type … hook … priority …; policy …;` line, without
/// indentation.
pub(crate) fn base(out: &mut String, b: &Base) -> fmt::Result {
    let hook = match &b.hook {
        Hook::Prerouting => "prerouting",
        Hook::Input => "input",
        Hook::Forward => "forward",
        Hook::Output => "output",
        Hook::Postrouting => "postrouting",
        Hook::Ingress(_) => "ingress",
    };
    write!(out, "type {} hook {hook}", if b.nat { "nat" } else { "filter" })?;
    if let Hook::Ingress(dev) = &b.hook {
        write!(out, " device \"{dev}\"")?;
    }
    write!(out, " priority {}; policy {};", b.priority, if b.accept { "accept" } else { "drop" })
}

fn chain(out: &mut String, rs: &Ruleset, c: &Chain) -> fmt::Result {
    writeln!(out, "\tchain {} {{", c.name)?;
    if let Some(b) = &c.base {
        out.push_str("\t\t");
        base(out, b)?;
        out.push('\n');
    }
    for r in &c.rules {
        out.push_str("\t\t");
        rule(out, rs, r)?;
        out.push('\n');
    }
    out.push_str("\t}\n");
    Ok(())
}

pub(crate) fn family(f: Family) -> &'static str {
    match f {
        Family::Inet => "inet",
        Family::Ip => "ip",
    }
}

fn replace(out: &mut String, rs: &Ruleset, r: &Replace) -> fmt::Result {
    let (fam, name) = (family(r.family), r.name);
    writeln!(out, "table {fam} {name} {{}}\ndelete table {fam} {name}")?;
    let Some(t) = &r.body else { return Ok(()) };
    writeln!(out, "table {fam} {name} {{")?;
    if t.flowtable {
        write!(out, "\tflowtable {FLOWTABLE} {{\n\t\thook ingress priority 0;\n\t\tdevices = ")?;
        names(out, rs.devices())?;
        out.push_str(";\n\t}\n");
    }
    for s in &t.sets {
        write!(out, "\tset {} {{\n\t\ttype inet_service\n\t\telements = {{ ", s.name)?;
        list(out, s.ports.iter(), |o, p| write!(o, "{p}"))?;
        out.push_str(" }\n\t}\n");
    }
    for c in &t.chains {
        chain(out, rs, c)?;
    }
    out.push_str("}\n");
    Ok(())
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Stateless => "stateless",
        Kind::Stateful => "stateful",
        Kind::Off => "off",
    }
}

/// Write the rule set as an `nft -f` file into `out`.
pub(crate) fn render(rs: &Ruleset, out: &mut String) -> fmt::Result {
    match rs.purpose {
        Purpose::Profile { kind, ingress } => {
            let hooks = if ingress { ", ingress hooks" } else { "" };
            writeln!(out, "#!/usr/sbin/nft -f\n# nasboot firewall: profile {}{hooks} (nftables)", kind_name(kind))?;
        }
        Purpose::Fallback => out.push_str("# nasboot firewall: fallback (the configured rule set did not load)\n"),
        Purpose::Emergency => out.push_str("# nasboot firewall: emergency (the profile could not be read)\n"),
    }
    rs.tables.iter().try_for_each(|t| replace(out, rs, t))
}
