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
    Base, Chain, Hook, Icmp, Instance, Item, Names, PortMatch, Purpose, Replace, Rule, Ruleset, TableFamily, Verdict, FLOWTABLE, LOG_BURST,
    LOG_PREFIX,
};
use crate::config::firewall::Proto;
use crate::config::types::IfName;

/// ", " before every item but the first.
fn sep(out: &mut String, i: usize) {
    if i > 0 {
        out.push_str(", ");
    }
}

/// A number, as `{}` prints it.
fn num(out: &mut String, n: u32) {
    let _ = write!(out, "{n}");
}

/// `{ 53, 123 }`.
fn ports(out: &mut String, ports: &[u16]) {
    out.push_str("{ ");
    for (i, p) in ports.iter().enumerate() {
        sep(out, i);
        num(out, u32::from(*p));
    }
    out.push_str(" }");
}

fn quoted(out: &mut String, name: &IfName) {
    out.push('"');
    out.push_str(name.as_str());
    out.push('"');
}

fn names<'a>(out: &mut String, names: impl IntoIterator<Item = &'a IfName>) {
    out.push_str("{ ");
    for (i, n) in names.into_iter().enumerate() {
        sep(out, i);
        quoted(out, n);
    }
    out.push_str(" }");
}

fn verdict(out: &mut String, v: &Verdict) -> fmt::Result {
    match v {
        Verdict::Accept => out.push_str("accept"),
        Verdict::Drop => out.push_str("drop"),
        Verdict::Jump(c) => write!(out, "jump {c}")?,
    }
    Ok(())
}

fn icmp_types(out: &mut String, types: Icmp) {
    if let [(name, _)] = types {
        out.push_str(name);
        return;
    }
    out.push_str("{ ");
    for (i, (n, _)) in types.iter().enumerate() {
        sep(out, i);
        out.push_str(n);
    }
    out.push_str(" }");
}

fn item(out: &mut String, rs: &Ruleset, of: Instance, i: &Item) -> fmt::Result {
    match *i {
        Item::IfName { out: o, names: n } => {
            out.push_str(if o { "oifname " } else { "iifname " });
            match (n, rs.names(n, of)) {
                (Names::LanOne, [one]) => quoted(out, one),
                (_, list) => names(out, list),
            }
        }
        Item::IifLo => out.push_str("iif lo"),
        Item::TcpOrUdp => out.push_str("meta l4proto { tcp, udp }"),
        Item::Port { proto, src, m } => {
            out.push_str(if rs.proto(proto, of) == Proto::Tcp { "tcp " } else { "udp " });
            out.push_str(if src { "sport " } else { "dport " });
            match m {
                PortMatch::Reply => {
                    num(out, u32::from(rs.reply.lo()));
                    out.push('-');
                    num(out, u32::from(rs.reply.hi()));
                }
                PortMatch::Any(list) => ports(out, list),
                PortMatch::Named(set) => {
                    out.push('@');
                    out.push_str(set);
                }
                _ => num(out, u32::from(rs.port(m, of).unwrap_or(0))),
            }
        }
        Item::TcpFlags { text, .. } => out.push_str(text),
        Item::CtState { invalid: true } => out.push_str("ct state invalid"),
        Item::CtState { invalid: false } => out.push_str("ct state established,related"),
        Item::CtDnat => out.push_str("ct status dnat"),
        Item::Ip { src, eq, net } => {
            write!(out, "ip {} {}", if src { "saddr" } else { "daddr" }, if eq { "" } else { "!= " })?;
            match rs.net(net, of) {
                Some(n) if n.prefix == 32 => write!(out, "{}", n.addr)?,
                Some(n) => write!(out, "{n}")?,
                None => {}
            }
        }
        Item::IpTcp => out.push_str("ip protocol tcp"),
        Item::IpFrag { eq, value } => write!(out, "ip frag-off & 0x1fff {} {value}", if eq { "==" } else { "!=" })?,
        Item::Ip6Frag => out.push_str("frag frag-off != 0"),
        Item::Icmp { v6, types } => {
            out.push_str(if v6 { "icmpv6 type " } else { "icmp type " });
            icmp_types(out, types);
        }
        Item::FibLocal => out.push_str("fib daddr type local"),
        Item::FlowAdd => write!(out, "flow add @{FLOWTABLE}")?,
        Item::ClampMss => out.push_str("tcp option maxseg size set rt mtu"),
        Item::Limit => write!(out, "limit rate {}/minute burst {LOG_BURST} packets", rs.log_rate)?,
        Item::Log => write!(out, "log prefix \"{LOG_PREFIX}\"")?,
        Item::Notrack => out.push_str("notrack"),
        Item::Masquerade => out.push_str("masquerade"),
        Item::Dnat => {
            if let Some(d) = rs.fwd(of) {
                write!(out, "dnat to {}", d.to)?;
            }
        }
        Item::Verdict(v) => verdict(out, &v)?,
        Item::Vmap { lan } => {
            out.push_str("iifname vmap { ");
            for (i, (name, zone)) in rs.vmap(lan).enumerate() {
                sep(out, i);
                quoted(out, name);
                out.push_str(" : jump ");
                out.push_str(zone);
            }
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
        item(out, rs, r.instance, it)?;
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

pub(crate) fn family(f: TableFamily) -> &'static str {
    match f {
        TableFamily::Inet => "inet",
        TableFamily::Ip => "ip",
    }
}

fn replace(out: &mut String, rs: &Ruleset, r: &Replace) -> fmt::Result {
    let (fam, name) = (family(r.family), r.name);
    writeln!(out, "table {fam} {name} {{}}\ndelete table {fam} {name}")?;
    let Some(t) = &r.body else { return Ok(()) };
    writeln!(out, "table {fam} {name} {{")?;
    if t.flowtable {
        write!(out, "\tflowtable {FLOWTABLE} {{\n\t\thook ingress priority 0;\n\t\tdevices = ")?;
        names(out, rs.devices());
        out.push_str(";\n\t}\n");
    }
    for s in &t.sets {
        write!(out, "\tset {} {{\n\t\ttype inet_service\n\t\telements = ", s.name)?;
        ports(out, &s.ports);
        out.push_str("\n\t}\n");
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
