//! The fake [`Nftables`]: the kernel's tables and its all-or-nothing commit.

use std::collections::BTreeMap;
use std::io;

use super::Journal;
use crate::seam::nftables::{CommitError, Nftables, TableId, Tables};

/// A fake nf_tables: the kernel's tables, each with the messages that
/// filled it, and its all-or-nothing commit. Modelled, as the kernel does
/// them: a batch must be framed by BATCH_BEGIN and BATCH_END; NEWTABLE
/// creates a missing table and keeps an existing one; DELTABLE of a
/// missing table is ENOENT; an object for a missing table is ENOENT; one
/// refused message leaves every table as it was; an anonymous set
/// (`__set%d`) gets the table's next free name (`__set0`, …), which its
/// elements follow by the set's id; a dump gives back each object as it
/// was stored, in order (what `--confirm` replays). Not modelled: the
/// expressions' meaning, names that do not resolve (a jump to a missing
/// chain, a missing set or hook device; a rule's lookup keeps the name it
/// was sent with), the kernel's own checks of each attribute, and handles.
/// A table keeps the attributes of the NEWTABLE that created it (its
/// userdata), which the tables' dump gives back; every commit moves the
/// generation on, as the kernel's does, and the dump gives its low 16
/// bits. Not modelled: a device going away (the kernel then unbinds its
/// hooks without a commit): a test does that to `tables` itself.
#[derive(Default)]
pub(crate) struct FakeNftables {
    /// The socket is refused with this errno (EPROTONOSUPPORT, as under
    /// qemu-user), or the dump with it (a kernel without nf_tables).
    pub refused: Option<i32>,
    /// (family, name) -> the (NFT_MSG_NEW*, attributes) messages in it.
    pub tables: BTreeMap<TableId, Vec<(u8, Vec<u8>)>>,
    /// (family, name) -> the attributes of the NEWTABLE that created it.
    pub table_attrs: BTreeMap<TableId, Vec<u8>>,
    /// The ruleset generation (NFTA_GEN_ID).
    pub generation: u32,
    /// A rule with an expression of this name is refused with this errno,
    /// and the extended ack points at the expression: a kernel without
    /// that expression's module (ENOENT).
    pub missing_expr: Option<(&'static str, i32)>,
    /// Batches committed or refused, in order.
    pub batches: Vec<Vec<u8>>,
    pub journal: Journal,
}

impl FakeNftables {
    fn refuse(&self) -> io::Result<()> {
        self.refused.map_or(Ok(()), |e| Err(io::Error::from_raw_os_error(e)))
    }

    /// Carry out one message on `tables`; `anon` maps the batch's set ids
    /// to the names given to its anonymous sets.
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        tables: &mut BTreeMap<TableId, Vec<(u8, Vec<u8>)>>,
        table_attrs: &mut BTreeMap<TableId, Vec<u8>>,
        anon: &mut BTreeMap<u32, String>,
        kind: u8,
        family: u8,
        msg: &[u8],
    ) -> Result<(), (i32, Option<u32>)> {
        use crate::sys::nftnl::{self as nl, Order};
        let attrs = &msg[nl::NLMSG_HDRLEN + nl::NFGENMSG_LEN..];
        let name = |k| nl::find(attrs, Order::HOST, k).map(|v| nl::str_value(v).to_string()).unwrap_or_default();
        match kind {
            nl::NFT_MSG_NEWTABLE => {
                let id = (family, name(nl::NFTA_TABLE_NAME));
                if !tables.contains_key(&id) {
                    table_attrs.insert(id.clone(), attrs.to_vec());
                }
                tables.entry(id).or_default();
            }
            nl::NFT_MSG_DELTABLE => {
                let id = (family, name(nl::NFTA_TABLE_NAME));
                table_attrs.remove(&id);
                tables.remove(&id).ok_or((nix::libc::ENOENT, None))?;
            }
            _ => {
                if let (nl::NFT_MSG_NEWRULE, Some((expr, errno))) = (kind, self.missing_expr) {
                    let list = nl::find(attrs, Order::HOST, nl::NFTA_RULE_EXPRESSIONS).unwrap_or_default();
                    let start = list.as_ptr() as usize - msg.as_ptr() as usize;
                    let mut at = start;
                    let mut hit = None;
                    let _ = nl::each_attr(list, Order::HOST, &mut |_, elem| {
                        if nl::expr_at(msg, at as u32, Order::HOST) == Some(expr) && hit.is_none() {
                            hit = Some(at as u32);
                        }
                        at += (4 + elem.len() + 3) & !3;
                        Ok(())
                    });
                    if let Some(offset) = hit {
                        return Err((errno, Some(offset)));
                    }
                }
                let objs = tables.get_mut(&(family, name(1))).ok_or((nix::libc::ENOENT, None))?;
                let id = |k| nl::find(attrs, Order::HOST, k).map(|v| u32::from_be_bytes(v.try_into().unwrap_or_default()));
                let stored = match kind {
                    nl::NFT_MSG_NEWSET if name(nl::NFTA_SET_NAME).contains('%') => {
                        let prefix = name(nl::NFTA_SET_NAME).replace("%d", "");
                        let taken = |n: &String| {
                            objs.iter().any(|(k, a)| {
                                *k == nl::NFT_MSG_NEWSET && nl::find(a, Order::HOST, nl::NFTA_SET_NAME).map(nl::str_value) == Some(n)
                            })
                        };
                        let given = (0..).map(|i| format!("{prefix}{i}")).find(|n| !taken(n)).expect("a free name");
                        anon.insert(id(nl::NFTA_SET_ID).unwrap_or_default(), given.clone());
                        renamed(attrs, nl::NFTA_SET_NAME, &given)
                    }
                    nl::NFT_MSG_NEWSETELEM if name(nl::NFTA_SET_ELEM_LIST_SET).contains('%') => {
                        let given = anon.get(&id(nl::NFTA_SET_ELEM_LIST_SET_ID).unwrap_or_default()).ok_or((nix::libc::ENOENT, None))?;
                        renamed(attrs, nl::NFTA_SET_ELEM_LIST_SET, given)
                    }
                    _ => attrs.to_vec(),
                };
                objs.push((kind, stored));
            }
        }
        Ok(())
    }
}

/// `attrs` with the string attribute `kind` set to `to`.
fn renamed(attrs: &[u8], kind: u16, to: &str) -> Vec<u8> {
    use crate::sys::nftnl::{each_attr, Order};
    let mut out = Vec::new();
    let mut at = 0;
    let _ = each_attr(attrs, Order::HOST, &mut |k, v| {
        let rec = (4 + v.len() + 3) & !3;
        if k == kind {
            let len = 4 + to.len() + 1;
            out.extend_from_slice(&(len as u16).to_ne_bytes());
            out.extend_from_slice(&kind.to_ne_bytes());
            out.extend_from_slice(to.as_bytes());
            out.push(0);
            out.resize((out.len() + 3) & !3, 0);
        } else {
            out.extend_from_slice(&attrs[at..(at + rec).min(attrs.len())]);
        }
        at += rec;
        Ok(())
    });
    out
}

impl Nftables for FakeNftables {
    fn tables(&mut self) -> io::Result<Tables> {
        use crate::sys::nftnl::{self as nl, Order};
        self.refuse()?;
        let udata = self
            .table_attrs
            .iter()
            .filter_map(|(id, attrs)| nl::find(attrs, Order::HOST, nl::NFTA_TABLE_USERDATA).map(|u| (id.clone(), u.to_vec())))
            .collect();
        Ok(Tables { ids: self.tables.keys().cloned().collect(), udata, generation: self.generation as u16 })
    }
    fn dump(&mut self, kind: u8, family: u8, table: &str, set: Option<&str>, each: &mut dyn FnMut(u8, &[u8])) -> io::Result<()> {
        use crate::sys::nftnl::{self as nl, Order};
        self.refuse()?;
        let Some(objs) = self.tables.get(&(family, table.to_string())) else { return Err(io::Error::from_raw_os_error(nix::libc::ENOENT)) };
        for (k, attrs) in objs.iter().filter(|(k, _)| *k + 1 == kind) {
            if set.is_some_and(|s| nl::find(attrs, Order::HOST, nl::NFTA_SET_ELEM_LIST_SET).map(nl::str_value) != Some(s)) {
                continue;
            }
            each(*k, attrs);
        }
        Ok(())
    }
    fn generation(&mut self) -> io::Result<u32> {
        self.refuse()?;
        Ok(self.generation)
    }
    fn next_seq(&mut self) -> u32 {
        1
    }
    fn commit(&mut self, batch: &crate::sys::nftnl::Sent) -> Result<(), CommitError> {
        use crate::sys::nftnl::NLMSG_HDRLEN;
        self.refuse().map_err(CommitError::Io)?;
        self.batches.push(batch.bytes.clone());
        let msgs: Vec<(u32, usize)> = batch.starts.clone();
        self.journal.borrow_mut().push(format!("nf_tables commit {} messages", msgs.len().saturating_sub(2)));
        let b = &batch.bytes;
        let kind_of = |at: usize| u16::from_ne_bytes([b[at + 4], b[at + 5]]);
        let framed = msgs.len() >= 2 && kind_of(msgs[0].1) == 0x10 && kind_of(msgs[msgs.len() - 1].1) == 0x11;
        if !framed {
            return Err(CommitError::Refused { seq: msgs.first().map_or(0, |m| m.0), errno: nix::libc::EINVAL, text: None, offset: None });
        }
        let mut tables = self.tables.clone();
        let mut table_attrs = self.table_attrs.clone();
        let mut anon = BTreeMap::new();
        for (seq, at) in &msgs[1..msgs.len() - 1] {
            let len = u32::from_ne_bytes(b[*at..at + 4].try_into().expect("4 bytes")) as usize;
            let msg = &b[*at..at + len];
            let (kind, family) = ((kind_of(*at) & 0xff) as u8, msg[NLMSG_HDRLEN]);
            if let Err((errno, offset)) = self.apply(&mut tables, &mut table_attrs, &mut anon, kind, family, msg) {
                return Err(CommitError::Refused { seq: *seq, errno, text: None, offset });
            }
        }
        self.tables = tables;
        self.table_attrs = table_attrs;
        self.generation = self.generation.wrapping_add(1).max(1);
        Ok(())
    }
}
