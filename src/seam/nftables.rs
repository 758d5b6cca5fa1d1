//! The nf_tables seam: nf_tables over NETLINK_NETFILTER, one method per
//! kernel operation: list the tables, dump one table's objects, commit
//! one batch. The messages are built and read by `crate::sys::nftnl`
//! (the encoding) and `crate::firewall::netlink` (the rules); the real
//! implementation (`seam::real::nfnl`) owns the socket, the dry-run one
//! reads the real kernel and prints what it would commit, and the fake
//! (tests) models the kernel's tables and its all-or-nothing commit.

use std::fmt;
use std::io;

use crate::sys::nftnl::Sent;

/// Why a batch was not committed. Either way the kernel's rule set is
/// what it was before: a batch is committed whole or not at all.
#[derive(Debug)]
pub enum CommitError {
    /// The kernel refused message `seq` (the BATCH_BEGIN's for a failed
    /// commit): its errno, and with the extended ack its words and the
    /// offset of the offending attribute in that message.
    Refused { seq: u32, errno: i32, text: Option<String>, offset: Option<u32> },
    /// The exchange failed: the socket, the send (a batch too large for
    /// the socket's buffer: EMSGSIZE), or a reply that is not what the
    /// kernel sends (truncated, or for another sequence number).
    Io(io::Error),
}

impl fmt::Display for CommitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommitError::Refused { errno, text, .. } => {
                io::Error::from_raw_os_error(*errno).fmt(f)?;
                match text {
                    Some(t) => write!(f, ": {t}"),
                    None => Ok(()),
                }
            }
            CommitError::Io(e) => e.fmt(f),
        }
    }
}

/// A table the kernel has: its family (NFPROTO_*) and name.
pub(crate) type TableId = (u8, String);

/// The kernel's tables, as one dump gave them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tables {
    pub ids: Vec<TableId>,
    /// The userdata of the tables that have one (NFTA_TABLE_USERDATA).
    pub udata: Vec<(TableId, Vec<u8>)>,
    /// The ruleset generation the dump was taken at, its low 16 bits
    /// (the replies' `nfgenmsg.res_id`).
    pub generation: u16,
}

/// nf_tables operations.
pub trait Nftables {
    /// Every table (NFT_MSG_GETTABLE dump). An error when the kernel
    /// cannot be asked: the socket refused (EPROTONOSUPPORT: qemu-user,
    /// or a kernel without nfnetlink) or no nf_tables in the kernel.
    fn tables(&mut self) -> io::Result<Tables>;
    /// The objects of one kind in table `table` of `family`, each reply's
    /// NFT_MSG_* kind and attributes to `each`: GETCHAIN, GETSET,
    /// GETFLOWTABLE, GETRULE, or GETSETELEM of set `set`.
    fn dump(&mut self, kind: u8, family: u8, table: &str, set: Option<&str>, each: &mut dyn FnMut(u8, &[u8])) -> io::Result<()>;
    /// The ruleset's generation (NFT_MSG_GETGEN): every commit moves it
    /// on, in this network namespace.
    fn generation(&mut self) -> io::Result<u32>;
    /// The sequence number the next batch starts from.
    fn next_seq(&mut self) -> u32;
    /// Send one batch (`crate::sys::nftnl::Writer::batch`) in one
    /// `sendmsg` and wait for the kernel's verdict: Ok once it has
    /// committed the batch.
    fn commit(&mut self, batch: &Sent) -> Result<(), CommitError>;
}
