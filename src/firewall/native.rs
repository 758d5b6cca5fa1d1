//! Loading through netlink: the rule set encoded (`netlink.rs`) and
//! committed in one batch through the [`Nftables`] seam; a refusal traced
//! back to the rule, chain, set or flowtable that caused it, with its
//! profile key and, where the kernel lacks a module, the feature; and the
//! copy of what is loaded that `--confirm` rolls back to; and whether
//! the rule set nasboot loaded is still loaded as it was ([`loaded`],
//! with the seal of [`seal::Seal`]), so that an apply of the same
//! rule set has nothing to do.
//!
//! There is no check pass: the kernel's verdict on the batch is the
//! check, and a refused batch changes nothing.
//!
//! [`Nftables`]: crate::seam::nftables::Nftables

use std::fmt;

use super::load::LoadError;
use super::netlink::{self, Origin};
use super::rules::{Ruleset, TableFamily, FILTER_TABLE, NAT_TABLE};
use super::seal;
use crate::seam::nftables::{CommitError, Tables};
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

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = if self.key.is_some() { " (from " } else { "" };
        let key = self.key.as_deref().unwrap_or_default();
        let to = if self.key.is_some() { ")" } else { "" };
        let colon = if self.text.is_some() { ": " } else { "" };
        let text = self.text.as_deref().unwrap_or_default();
        let errno = std::io::Error::from_raw_os_error(self.errno);
        write!(f, "the kernel refused {}{from}{key}{to}: {errno}{colon}{text}", self.what)?;
        let missing = self.errno == nix::libc::ENOENT || self.errno == nix::libc::EOPNOTSUPP;
        let hint = match self.expr.as_deref() {
            _ if !missing => return Ok(()),
            Some(e) => return write!(f, "; this kernel has no `{e}` expression ({})", super::modules::holding(e)),
            None if self.what.starts_with("flowtable") => {
                "one of its devices is not there yet (the flowtable hooks each when it loads), or this kernel has no flowtable (nf_flow_table_inet)"
            }
            None if self.what.contains("hook ingress") => "the device is missing, or this kernel has no inet ingress hook (Linux 5.10)",
            None => return Ok(()),
        };
        write!(f, "; {hint}")
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

/// Load `rs` in one batch, sealed with the generation its commit makes
/// (the one after the kernel's now; should another commit come between,
/// the seal never matches, and the next apply loads again).
pub(crate) fn load(rs: &Ruleset, seams: &mut Seams<'_>) -> Result<(), LoadError> {
    let seq = seams.nft.next_seq();
    let mut enc = netlink::encode(rs, Order::HOST, seq);
    super::modules::preload(enc.modules, seams);
    enc.seal(seams.nft.generation().map_or(0, next_generation));
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

/// The generation after `g`, as the kernel counts (it skips 0).
fn next_generation(g: u32) -> u32 {
    g.wrapping_add(1).max(1)
}

/// nasboot's rule set as loaded, when nothing has been committed since
/// nasboot loaded it: the digest its seal carries, and the hook devices
/// its tables have now (see [`seal::Seal`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Loaded {
    pub digest: u64,
    pub hook_devices: u64,
}

/// Read what [`Loaded`] holds, asking the kernel as little as it can
/// (each request is a round trip a slow board pays at every apply;
/// scripts/bench-fwload measures an apply):
/// the seal of nasboot's `inet` table, from the tables' dump the
/// observation made; the generation, whose low 16 bits that dump gave,
/// then all 32 (one request); and, only when the sealed batch hooks
/// devices, the hook devices of that table's chains and flowtable (two
/// requests; only the `inet` table hooks devices: the ingress chains and
/// the flowtable). None when any of it is missing, differs or cannot be
/// read: then the rule set is loaded again.
pub(crate) fn loaded(tables: &Tables, seams: &mut Seams<'_>) -> Option<Loaded> {
    let (_, udata) = tables.udata.iter().find(|((f, n), _)| *f == nl::NFPROTO_INET && n == FILTER_TABLE)?;
    let seal = seal::Seal::read(udata)?;
    if seal.generation as u16 != tables.generation || seams.nft.generation().ok()? != seal.generation {
        return None;
    }
    let mut hook_devices = 0;
    if seal.hook_devices != 0 {
        for get in [nl::NFT_MSG_GETCHAIN, nl::NFT_MSG_GETFLOWTABLE] {
            seams
                .nft
                .dump(get, nl::NFPROTO_INET, FILTER_TABLE, None, &mut |kind, attrs| {
                    seal::hooked(kind, attrs, Order::HOST, &mut hook_devices)
                })
                .ok()?;
        }
    }
    Some(Loaded { digest: seal.digest, hook_devices })
}

/// Whether `rs` is what [`loaded`] found: the same batch, every hook device
/// bound. Pure.
pub(crate) fn unchanged(rs: &Ruleset, loaded: &Loaded) -> bool {
    let enc = netlink::encode(rs, Order::HOST, 0);
    enc.digest() == loaded.digest && enc.hook_devices() == loaded.hook_devices
}

/// Commit a saved copy (`--confirm`'s rollback).
pub(crate) fn load_saved(saved: &Sent, seams: &mut Seams<'_>) -> Result<(), LoadError> {
    match seams.nft.commit(saved) {
        Ok(()) => Ok(()),
        Err(CommitError::Refused { seq, errno, text, .. }) => {
            let what = format!("the saved rule set (its message {})", seq.wrapping_sub(saved.seqs().map_or(seq, |s| s.0)));
            Err(LoadError::Kernel(Box::new(Refusal { what, key: None, errno, text, expr: None })))
        }
        Err(CommitError::Io(e)) => Err(LoadError::Netlink(e)),
    }
}

/// What is loaded in nasboot's tables now, as one batch that puts it back:
/// each table replaced (created, deleted, created) and, where it existed,
/// filled again with its chains, sets, their elements, flowtable and
/// rules, as the kernel dumps them ([`nl::replay`]).
pub(crate) fn save(seams: &mut Seams<'_>) -> Result<Sent, LoadError> {
    let tables = seams.nft.tables().map_err(LoadError::Netlink)?.ids;
    let mut w = Writer::batch(Order::HOST, seams.nft.next_seq());
    for (family, name) in [(TableFamily::Inet, FILTER_TABLE), (TableFamily::Ip, NAT_TABLE)] {
        let fam = if family == TableFamily::Inet { nl::NFPROTO_INET } else { nl::NFPROTO_IPV4 };
        let exists = tables.iter().any(|(f, n)| *f == fam && n == name);
        let kinds: &[u8] = if exists {
            &[nl::NFT_MSG_NEWTABLE, nl::NFT_MSG_DELTABLE, nl::NFT_MSG_NEWTABLE]
        } else {
            &[nl::NFT_MSG_NEWTABLE, nl::NFT_MSG_DELTABLE]
        };
        for kind in kinds {
            w.msg(*kind, fam, 0);
            w.put_str(nl::NFTA_TABLE_NAME, name);
        }
        if !exists {
            continue;
        }
        // Every set before any element, as nft sends them.
        let mut sets: Vec<String> = Vec::new();
        let mut set_id = 0;
        for get in [nl::NFT_MSG_GETCHAIN, nl::NFT_MSG_GETSET, nl::NFT_MSG_GETSETELEM, nl::NFT_MSG_GETFLOWTABLE, nl::NFT_MSG_GETRULE] {
            let names: Vec<Option<&str>> =
                if get == nl::NFT_MSG_GETSETELEM { sets.iter().map(|s| Some(s.as_str())).collect() } else { vec![None] };
            let mut found = Vec::new();
            for set in names {
                seams
                    .nft
                    .dump(get, fam, name, set, &mut |kind, attrs| {
                        set_id += 1;
                        nl::replay(&mut w, kind, fam, attrs, Order::HOST, set_id);
                        if kind == nl::NFT_MSG_NEWSET {
                            found.push(nl::find(attrs, Order::HOST, nl::NFTA_SET_NAME).map(nl::str_value).unwrap_or_default().to_string());
                        }
                    })
                    .map_err(LoadError::Netlink)?;
            }
            if get == nl::NFT_MSG_GETSET {
                sets = found;
            }
        }
    }
    Ok(w.finish_batch())
}
