//! The seal nasboot leaves in the table it loads, and what it is made
//! of: the batch's digest, the ruleset generation, and the devices its
//! chains and flowtable hook. With it a later apply of the same rule set
//! finds it loaded and untouched, and has nothing to do.

use crate::digest::{fnv, FNV_START};
use crate::sys::nftnl::{self as nl, Order, Sent};

/// nasboot's userdata record in the first table it fills (a record as
/// nft writes userdata: a type byte nft does not use, a length byte,
/// then the value): the digest of the batch ([`digest`], with this
/// record zeroed), the ruleset generation its commit makes and the
/// batch's hook devices ([`Encoded::hook_devices`]), little-endian. A
/// later apply finds its rule set loaded and untouched when the table
/// carries the digest of the batch it would send, the kernel is still at
/// that generation (every commit moves it on, so no change at all has
/// been committed since), and every hook device of the batch is still
/// bound (a device that goes away leaves without a commit). Nothing else
/// changes nf_tables: the rule sets have no dynamic sets or timeouts. A
/// kernel before 5.13 keeps no table userdata, so there every apply
/// loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seal {
    pub digest: u64,
    pub generation: u32,
    pub hook_devices: u64,
}

pub(super) const SEAL_TYPE: u8 = b'n';
pub(super) const SEAL_LEN: usize = 2 + 8 + 4 + 8;

impl Seal {
    /// The seal in a table's userdata, if it carries one.
    pub(crate) fn read(udata: &[u8]) -> Option<Seal> {
        let mut rest = udata;
        while let [kind, len, tail @ ..] = rest {
            let (value, next) = tail.split_at_checked(usize::from(*len))?;
            if *kind == SEAL_TYPE && value.len() == SEAL_LEN - 2 {
                let digest = u64::from_le_bytes(value[..8].try_into().ok()?);
                let generation = u32::from_le_bytes(value[8..12].try_into().ok()?);
                let hook_devices = u64::from_le_bytes(value[12..].try_into().ok()?);
                return Some(Seal { digest, generation, hook_devices });
            }
            rest = next;
        }
        None
    }
}

/// One hook device of table `table`'s chain or flowtable `name`, as a
/// number: their FNV-1a digest.
pub(crate) fn hook_device(table: &str, name: &str, dev: &str) -> u64 {
    [table, name, dev].iter().fold(FNV_START, |h, part| fnv(h, part.as_bytes()) ^ 0xff)
}

/// The devices an object hooks (a dump's reply or a batch's message),
/// added to `sum` ([`hook_device`]; a sum, so that the order of the
/// devices and of the objects does not matter).
pub(crate) fn hooked(kind: u8, attrs: &[u8], order: Order, sum: &mut u64) {
    let table = nl::find(attrs, order, nl::table_attr(kind)).map(nl::str_value).unwrap_or_default();
    let name = match kind {
        nl::NFT_MSG_NEWCHAIN => nl::find(attrs, order, nl::NFTA_CHAIN_NAME),
        nl::NFT_MSG_NEWFLOWTABLE => nl::find(attrs, order, nl::NFTA_FLOWTABLE_NAME),
        _ => return,
    }
    .map(nl::str_value)
    .unwrap_or_default();
    nl::hook_devices(kind, attrs, order, &mut |dev| *sum = sum.wrapping_add(hook_device(table, name, dev)));
}

/// A 64-bit digest of a batch's bytes, its messages' sequence numbers
/// left out: the same rule set encodes to the same digest whatever the
/// numbers it was sent with. FNV-1a's steps over 32-bit words (`words`)
/// rather than bytes: a quarter of the 64-bit multiplications, which a
/// 32-bit CPU makes of three of its own each (a router's batch, digested
/// at every apply, runs to kilobytes).
pub(crate) fn digest(sent: &Sent) -> u64 {
    let mut h = FNV_START;
    let mut from = 0;
    for (_, at) in &sent.starts {
        h = words(h, &sent.bytes[from..at + 8]);
        from = at + 12;
    }
    words(h, sent.bytes.get(from..).unwrap_or_default())
}

/// `bytes` added to `h` a 32-bit word (little-endian) at a time, then any
/// last bytes one by one.
fn words(h: u64, bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(4);
    let h = chunks.by_ref().fold(h, |h, w| (h ^ u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))).wrapping_mul(0x100_0000_01b3));
    fnv(h, chunks.remainder())
}
