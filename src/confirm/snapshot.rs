//! The board as the plan observed it, flattened to `NAME = VALUE` lines,
//! so that the observation taken before a candidate can be kept in the
//! journal and compared, name by name, with the one taken after a revert.
//! Pure.
//!
//! What is kept is what a revert must bring back: every link (kind,
//! bridge, up or down, MTU), every profile interface's addresses and
//! sysctls, the main table's routes, the global sysctls, the qdiscs, and
//! the text of each file the shares write (by digest). Counters and
//! carrier, which move on their own, are not.

use std::fmt::Write as _;

use crate::plan::Observed;
use crate::seam::netif::{Kind, LinkInfo};
use crate::sys::tc;

/// The lines of one or more observations of the same board (a key seen
/// twice keeps its first value), sorted by name.
/// (A sorted Vec, not a BTreeMap: the map's code for String keys would be
/// in the binary for this alone.)
pub(crate) fn lines(observed: &[&Observed]) -> Vec<String> {
    let mut m: Vec<(String, String)> = Vec::new();
    for o in observed {
        one(o, &mut m);
    }
    // Stable: of a name seen twice, the first value stays.
    m.sort_by(|a, b| a.0.cmp(&b.0));
    m.dedup_by(|later, first| later.0 == first.0);
    m.into_iter().map(|(k, v)| format!("{k} = {v}")).collect()
}

fn one(o: &Observed, m: &mut Vec<(String, String)>) {
    let links: &[LinkInfo] = o.net.virt.links.as_deref().unwrap_or_default();
    let name = |index: u32| links.iter().find(|l| l.state.index == index).map_or_else(|| format!("#{index}"), |l| l.name.to_string());
    let mut put = |k: String, v: String| m.push((k, v));
    for l in links {
        let kind = match &l.kind {
            Kind::Device => "device".to_string(),
            Kind::Bridge { .. } => "bridge".to_string(),
            Kind::Vlan { link, id } => format!("vlan {id} on {}", name(*link)),
            Kind::Other(k) => k.to_string(),
        };
        let master = l.master.map(|i| format!(" master {}", name(i))).unwrap_or_default();
        let up = if l.state.up { "up" } else { "down" };
        put(format!("link {}", l.name), format!("{kind}{master} {up} mtu {}", l.state.mtu));
    }
    for i in &o.net.ifaces {
        let addrs = match &i.addrs {
            Ok(a) => {
                let mut a: Vec<String> = a.iter().filter(|n| !is_link_local(n)).map(ToString::to_string).collect();
                a.sort();
                if a.is_empty() {
                    "none".to_string()
                } else {
                    a.join(" ")
                }
            }
            Err(_) if i.link.is_none() => "no such link".to_string(),
            Err(e) => format!("unreadable ({e})"),
        };
        put(format!("addr {}", i.name), addrs);
        for (k, v) in &i.sysctl.values {
            put(format!("sysctl {}:{k}", i.name), v.as_deref().unwrap_or("absent").trim().to_string());
        }
    }
    if let Ok(routes) = &o.net.routes {
        for r in routes {
            let via = r.via.map(|v| format!("via {v} ")).unwrap_or_default();
            put(format!("route {} dev {}", r.dst, name(r.oif)), format!("{via}metric {}", r.metric));
        }
    }
    for (k, v) in &o.sysctl.values {
        put(format!("sysctl {k}"), v.as_deref().map_or("absent".to_string(), |v| v.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    for q in &o.net.sqm.qdiscs {
        let kind = match &q.kind {
            tc::Kind::Cake(_) => "cake",
            tc::Kind::Htb => "htb",
            tc::Kind::FqCodel => "fq_codel",
            tc::Kind::Ingress => "ingress",
            tc::Kind::Other(k) => k.as_str(),
            _ => "other",
        };
        put(format!("qdisc {} {:x}:", name(q.index), q.handle >> 16), format!("{kind} parent {:x}", q.parent));
    }
    for (path, text) in &o.nfs.files {
        let v = text.as_deref().map_or("absent".to_string(), |t| super::Digest::of(t.as_bytes()).to_string());
        put(format!("file {path}"), v);
    }
}

/// IPv6 link-local addresses come and go with the link (the kernel adds
/// one when a link goes up): not the profile's.
fn is_link_local(n: &crate::config::types::IpNet) -> bool {
    let mut s = String::new();
    let _ = write!(s, "{n}");
    s.starts_with("fe80:")
}

/// The names whose values differ between two sets of lines, each as
/// "NAME: was X, now Y" (absent on one side: "absent").
pub(crate) fn differences(before: &[String], after: &[String]) -> Vec<String> {
    let find = |lines: &[String], k: &str| lines.iter().map(|l| split(l)).find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
    let mut out = Vec::new();
    for (k, v) in before.iter().map(|l| split(l)) {
        match find(after, k) {
            Some(w) if w == v => {}
            Some(w) => out.push(format!("{k}: was {v}, now {w}")),
            None => out.push(format!("{k}: was {v}, now absent")),
        }
    }
    for (k, w) in after.iter().map(|l| split(l)) {
        if find(before, k).is_none() {
            out.push(format!("{k}: was absent, now {w}"));
        }
    }
    out
}

/// A line's name and value.
fn split(l: &str) -> (&str, &str) {
    l.split_once(" = ").unwrap_or((l, ""))
}
