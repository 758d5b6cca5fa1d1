//! Loading through netlink: the rule set encoded (`netlink.rs`) and
//! committed in one batch through the [`Nftables`] seam; a refusal traced
//! back to the rule, chain, set or flowtable that caused it, with its
//! profile key and, where the kernel lacks a module, the feature; and the
//! copy of what is loaded that `--confirm` rolls back to.
//!
//! There is no check pass: the kernel's verdict on the batch is the
//! check, and a refused batch changes nothing.
//!
//! [`Nftables`]: crate::seam::nftables::Nftables

use std::fmt;

use super::load::LoadError;
use super::netlink::{self, Origin};
use super::rules::{Family, Ruleset, FILTER_TABLE, NAT_TABLE};
use crate::seam::nftables::CommitError;
use crate::seam::Seams;
use crate::sys::nftnl::{self as nl, Order, Sent, Writer};

/// What the kernel refused, traced back to the rule set and the profile.
#[derive(Debug)]
pub(crate) struct Refusal {
    /// The rule as `firewall render` prints it, or the chain, set,
    /// flowtable or table.
    pub what: String,
    /// The profile key it comes from.
    pub key: Option<String>,
    pub errno: i32,
    /// The kernel's own words (extended ack), where it gave them.
    pub text: Option<String>,
    /// The expression the kernel pointed at, where it did.
    pub expr: Option<String>,
}

/// The kernel module an expression lives in, where it is one.
fn module(expr: &str) -> Option<&'static str> {
    Some(match expr {
        "fib" => "nft_fib_inet and nft_fib_ipv4",
        "flow_offload" => "nft_flow_offload",
        "log" => "nft_log",
        "limit" => "nft_limit",
        "ct" | "notrack" => "nft_ct",
        "masq" => "nft_masq",
        "nat" => "nft_nat",
        _ => return None,
    })
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the kernel refused {}", self.what)?;
        if let Some(k) = &self.key {
            write!(f, " (from {k})")?;
        }
        write!(f, ": {}", std::io::Error::from_raw_os_error(self.errno))?;
        if let Some(t) = &self.text {
            write!(f, ": {t}")?;
        }
        let missing = self.errno == nix::libc::ENOENT || self.errno == nix::libc::EOPNOTSUPP;
        match (self.expr.as_deref(), missing) {
            (Some(e), true) => match module(e) {
                Some(m) => write!(f, "; this kernel has no `{e}` expression ({m})"),
                None => write!(f, "; this kernel has no `{e}` expression"),
            },
            _ if missing && self.what.starts_with("flowtable") => f.write_str("; this kernel has no flowtable (nf_flow_table_inet)"),
            _ if missing && self.what.contains("hook ingress") => {
                f.write_str("; the device is missing, or this kernel has no inet ingress hook (Linux 5.10)")
            }
            _ => Ok(()),
        }
    }
}

/// The rule set's part that message `origin` came from, and its key.
fn describe(rs: &Ruleset, origin: Origin) -> (String, Option<String>) {
    let table = |t: usize| &rs.tables[t];
    let body = |t: usize| table(t).body.as_ref();
    let name = |t: usize| format!("table {} {}", super::nft::family(table(t).family), table(t).name);
    match origin {
        Origin::Table { table: t } => (name(t), None),
        Origin::Flowtable { table: t } => (format!("flowtable {} in {}", netlink_ft(), name(t)), Some("firewall.flow_offload".into())),
        Origin::Set { table: t, set } => match body(t).and_then(|b| b.sets.get(set)) {
            Some(s) => (format!("set {} in {}", s.name, name(t)), Some(s.key.to_string())),
            None => (name(t), None),
        },
        Origin::Chain { table: t, chain } => match body(t).and_then(|b| b.chains.get(chain)) {
            Some(c) => {
                let mut what = format!("chain {}", c.name);
                if let Some(b) = &c.base {
                    what.push_str(" (");
                    let _ = super::nft::base(&mut what, b);
                    what.push(')');
                }
                (what, Some(c.key.to_string()))
            }
            None => (name(t), None),
        },
        Origin::Rule { table: t, chain, rule } => {
            match body(t).and_then(|b| b.chains.get(chain)).and_then(|c| Some((c, c.rules.get(rule)?))) {
                Some((c, r)) => {
                    let mut text = String::from("`");
                    let _ = super::nft::rule(&mut text, rs, r);
                    text.push_str("` in chain ");
                    text.push_str(&c.name);
                    (text, Some(r.key.to_string()))
                }
                None => (name(t), None),
            }
        }
    }
}

fn netlink_ft() -> &'static str {
    super::rules::FLOWTABLE
}

/// Load `rs` in one batch.
pub(crate) fn load(rs: &Ruleset, seams: &mut Seams<'_>) -> Result<(), LoadError> {
    let seq = seams.nft.next_seq();
    let enc = netlink::encode(rs, Order::HOST, seq);
    log::debug!("nf_tables: one batch of {} messages, {} bytes", enc.sent.starts.len(), enc.sent.bytes.len());
    match seams.nft.commit(&enc.sent) {
        Ok(()) => Ok(()),
        Err(CommitError::Refused { seq, errno, text, offset }) => {
            let (what, key) = match enc.origin(seq) {
                Some(o) => describe(rs, o),
                // The BATCH_BEGIN's: the commit itself (or a permission).
                None => ("the whole batch".to_string(), None),
            };
            let expr = offset.and_then(|o| nl::expr_at(enc.sent.message(seq)?, o, Order::HOST)).map(str::to_string);
            Err(LoadError::Kernel(Box::new(Refusal { what, key, errno, text, expr })))
        }
        Err(CommitError::Io(e)) => Err(LoadError::Netlink(e)),
    }
}

/// Commit a saved copy (`--confirm`'s rollback).
pub(crate) fn load_saved(saved: &Sent, seams: &mut Seams<'_>) -> Result<(), LoadError> {
    match seams.nft.commit(saved) {
        Ok(()) => Ok(()),
        Err(CommitError::Refused { seq, errno, text, offset }) => {
            let msg = saved.message(seq);
            let kind = msg.and_then(|m| m.get(4)).map_or("?", |k| nl::kind_name(*k));
            let expr = offset.and_then(|o| nl::expr_at(msg?, o, Order::HOST)).map(str::to_string);
            let what = format!("the saved rule set's {kind} (message {})", seq.wrapping_sub(saved.seqs().map_or(seq, |s| s.0)));
            Err(LoadError::Kernel(Box::new(Refusal { what, key: None, errno, text, expr })))
        }
        Err(CommitError::Io(e)) => Err(LoadError::Netlink(e)),
    }
}

/// What is loaded in nasboot's tables now, as one batch that puts it back:
/// each table replaced (created, deleted, created) and, where it existed,
/// filled again with its chains, sets and their elements, flowtable and
/// rules, as the kernel dumps them ([`nl::replay`]).
pub(crate) fn save(seams: &mut Seams<'_>) -> Result<Sent, LoadError> {
    let tables = seams.nft.tables().map_err(LoadError::Netlink)?;
    let mut w = Writer::batch(Order::HOST, seams.nft.next_seq());
    for (family, name) in [(Family::Inet, FILTER_TABLE), (Family::Ip, NAT_TABLE)] {
        let fam = if family == Family::Inet { nl::NFPROTO_INET } else { nl::NFPROTO_IPV4 };
        for kind in [nl::NEWTABLE, nl::DELTABLE] {
            w.msg(kind, fam, 0);
            w.put_str(nl::TABLE_NAME, name);
        }
        if !tables.iter().any(|(f, n)| *f == fam && n == name) {
            continue;
        }
        w.msg(nl::NEWTABLE, fam, 0);
        w.put_str(nl::TABLE_NAME, name);
        let mut sets = Vec::new();
        let mut set_id = 0;
        for get in [nl::GETCHAIN, nl::GETSET, nl::GETFLOWTABLE, nl::GETRULE] {
            let mut objs: Vec<(u8, Vec<u8>)> = Vec::new();
            seams.nft.dump(get, fam, name, None, &mut |kind, attrs| objs.push((kind, attrs.to_vec()))).map_err(LoadError::Netlink)?;
            for (kind, attrs) in &objs {
                set_id += 1;
                nl::replay(&mut w, *kind, fam, attrs, Order::HOST, set_id);
                if *kind == nl::NEWSET {
                    // A set's elements right after it.
                    let set = nl::find(attrs, Order::HOST, nl::SET_NAME).map(nl::str_value).unwrap_or_default().to_string();
                    sets.push(set.clone());
                    let mut elems: Vec<(u8, Vec<u8>)> = Vec::new();
                    seams
                        .nft
                        .dump(nl::GETSETELEM, fam, name, Some(&set), &mut |k, a| elems.push((k, a.to_vec())))
                        .map_err(LoadError::Netlink)?;
                    for (k, a) in &elems {
                        nl::replay(&mut w, *k, fam, a, Order::HOST, 0);
                    }
                }
            }
        }
        log::debug!("nf_tables: saved {} {name} with {} sets", super::nft::family(family), sets.len());
    }
    Ok(w.finish_batch())
}
