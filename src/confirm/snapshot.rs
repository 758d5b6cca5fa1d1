//! The board as the plan observed it, flattened to `NAME = VALUE` lines,
//! so that the observation taken before a candidate can be kept in the
//! journal and compared, name by name, with the one taken after a revert.
//! Pure.
//!
//! What is kept is what a revert must bring back: every link (kind,
//! bridge, up or down, MTU, txqueuelen), every profile interface's
//! addresses and sysctls, the main table's routes, the global sysctls,
//! the qdiscs, the text of each file the shares write (by digest; an
//! empty file is as good as none: the revert empties one that was absent,
//! and takes the text of another back from the `.bak` copy its write
//! kept), the kernel files a write sets back (`knob PATH`: nfsd's knobs,
//! the block devices' read-ahead), the digest nasboot's loaded rule set
//! is sealed with, and the watchdog's timeout (sysfs). Counters and
//! carrier, which move on their own, are not. A value of [`UNKNOWN`]
//! could not be read: it is compared with nothing.

use std::fmt::{self, Write as _};

use crate::paths;
use crate::plan::Observed;
use crate::seam::netif::{Kind, LinkInfo};
use crate::sys::tc;

/// A value that could not be observed (a rule set not sealed by
/// nasboot's own load, a watchdog without sysfs): nothing to compare.
pub(crate) const UNKNOWN: &str = "?";

/// The lines of one or more observations of the same board (a key seen
/// twice keeps its first known value), and of the watchdog's timeout
/// (device, seconds as sysfs gives them), sorted by name.
/// (A sorted Vec, not a BTreeMap: the map's code for String keys would be
/// in the binary for this alone.)
pub(crate) fn lines(observed: &[&Observed], watchdog: Option<(&str, Option<u32>)>) -> Vec<String> {
    let mut m: Vec<String> = Vec::new();
    for o in observed {
        one(o, &mut m);
    }
    if let Some((dev, t)) = watchdog {
        m.push(format!("watchdog {dev} = {}", Known(t)));
    }
    dedup(&mut m);
    m
}

/// Sort lines by name, and keep one line of a name: the first whose value
/// is known.
pub(crate) fn dedup(m: &mut Vec<String>) {
    by_name(m);
    m.dedup_by(|later, first| split(later).0 == split(first).0);
}

/// Each line is built whole, `NAME = VALUE`, by one `format!`.
fn one(o: &Observed, m: &mut Vec<String>) {
    let links: &[LinkInfo] = o.net.virt.links.as_deref().unwrap_or_default();
    let name = |index: u32| Name(links, index);
    for l in links {
        let mut line = format!("link {} = ", l.name);
        let _ = match &l.kind {
            Kind::Device => line.write_str("device"),
            Kind::Bridge { .. } => line.write_str("bridge"),
            Kind::Vlan { link, id } => write!(line, "vlan {id} on {}", name(*link)),
            Kind::Other(k) => write!(line, "{k}"),
        };
        if let Some(i) = l.master {
            let _ = write!(line, " master {}", name(i));
        }
        let up = if l.state.up { "up" } else { "down" };
        let _ = write!(line, " {up} mtu {} qlen {}", l.state.mtu, l.state.txqueuelen);
        m.push(line);
    }
    for i in &o.net.ifaces {
        let mut line = format!("addr {} = ", i.name);
        match &i.addrs {
            Ok(a) => {
                // IPv6 link-local addresses come and go with the link (the
                // kernel adds one when a link goes up): not the profile's.
                let mut kept = Vec::new();
                for n in a {
                    let s = n.to_string();
                    if !s.starts_with("fe80:") {
                        kept.push(s);
                    }
                }
                let mut a = kept;
                by_name(&mut a);
                if a.is_empty() {
                    line.push_str("none");
                } else {
                    line.push_str(&a.join(" "));
                }
            }
            Err(_) if i.link.is_none() => line.push_str("no such link"),
            Err(e) => {
                let _ = write!(line, "unreadable ({e})");
            }
        }
        m.push(line);
        for (k, v) in &i.sysctl.values {
            m.push(format!("sysctl {}:{k} = {}", i.name, v.as_deref().unwrap_or("absent").trim()));
        }
    }
    if let Ok(routes) = &o.net.routes {
        for r in routes {
            m.push(match r.via {
                Some(v) => format!("route {} dev {} = via {v} metric {}", r.dst, name(r.oif), r.metric),
                None => format!("route {} dev {} = metric {}", r.dst, name(r.oif), r.metric),
            });
        }
    }
    for (k, v) in &o.sysctl.values {
        m.push(format!("sysctl {k} = {}", v.as_deref().map_or_else(|| "absent".to_string(), words)));
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
        m.push(format!("qdisc {} {:x}: = {kind} parent {:x}", name(q.index), q.handle >> 16, q.parent));
    }
    // An empty file is as good as none (an export table, an include):
    // the revert empties a file that was absent.
    for (path, text) in &o.nfs.files {
        let digest = text.as_deref().filter(|t| !t.is_empty()).map(|t| super::Digest::of(t.as_bytes()));
        m.push(match digest {
            Some(d) => format!("file {path} = {d}"),
            None => format!("file {path} = absent"),
        });
    }
    // Kernel files a write sets back: nfsd's knobs, the read-ahead.
    let nfsd = &o.nfs.nfsd;
    if nfsd.present {
        let versions = nfsd.versions.as_deref().map_or_else(|| UNKNOWN.to_string(), words);
        let (threads, block) = (Known(nfsd.threads), Known(nfsd.max_block_size));
        for (k, v) in [("threads", &threads as &dyn fmt::Display), ("versions", &versions), ("max_block_size", &block)] {
            m.push(format!("knob {}/{k} = {v}", paths::PROC_NFSD));
        }
    }
    for (dev, kb) in &o.storage.read_ahead_kb {
        if let Some(kb) = kb {
            m.push(format!("knob {}/{dev}/queue/read_ahead_kb = {kb}", paths::SYS_BLOCK));
        }
    }
    // The digest nasboot's loaded rule set is sealed with.
    m.push(match &o.firewall.loaded {
        Some(l) => format!("firewall = {:x}", l.digest),
        None => format!("firewall = {UNKNOWN}"),
    });
}

/// A number, or [`UNKNOWN`].
struct Known(Option<u32>);

impl fmt::Display for Known {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(v) => v.fmt(f),
            None => f.write_str(UNKNOWN),
        }
    }
}

/// The lines of `before` whose value `now` does not have (another value,
/// or the name absent), as (name, value); never those of value
/// [`UNKNOWN`].
pub(crate) fn changed<'a>(before: &'a [String], now: &[String]) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    for l in before {
        let (name, v) = split(l);
        if v != UNKNOWN && find(now, name).is_none_or(|w| w != v) {
            out.push((name, v));
        }
    }
    out
}

fn find<'a>(lines: &'a [String], k: &str) -> Option<&'a str> {
    lines.iter().map(|l| split(l)).find(|(n, _)| *n == k).map(|(_, v)| v)
}

/// A link by its index: its name, or `#INDEX` when no link has it.
struct Name<'a>(&'a [LinkInfo], u32);

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.iter().find(|l| l.state.index == self.1) {
            Some(l) => f.write_str(l.name.as_str()),
            None => write!(f, "#{}", self.1),
        }
    }
}

/// Sorted by name, stably, an [`UNKNOWN`] value after the known ones of
/// its name: of a name seen twice, the first known value comes first.
/// (Lines without ` = `, such as addresses, sort whole; one sort for both.)
fn by_name(m: &mut [String]) {
    m.sort_by(|a, b| {
        let (a, b) = (split(a), split(b));
        a.0.cmp(b.0).then((a.1 == UNKNOWN).cmp(&(b.1 == UNKNOWN)))
    });
}

/// A sysctl's value as the kernel prints it, its words joined by single
/// spaces.
pub(crate) fn words(v: &str) -> String {
    let mut out = String::new();
    for w in v.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// The names whose values differ between two sets of lines, each as
/// "NAME: was X, now Y" (absent on one side: "absent").
pub(crate) fn differences(before: &[String], after: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in changed(before, after) {
        out.push(format!("{k}: was {v}, now {}", find(after, k).unwrap_or("absent")));
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
