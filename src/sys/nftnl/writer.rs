//! The writer of netlink messages: a batch framed as nfnetlink wants it,
//! or one request; attributes, nests, strings and nf_tables data.

use super::abi::*;
use super::Order;

/// Netlink messages being written into one buffer: a batch, or one
/// request. Each message's sequence number and offset are kept, so that
/// an error reply can be traced to the message (and, with the extended
/// ack's offset, the attribute) that caused it.
pub(crate) struct Writer {
    pub(super) buf: Vec<u8>,
    order: Order,
    seq: u32,
    open: Option<usize>,
    starts: Vec<(u32, usize)>,
}

/// A finished batch or request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    pub bytes: Vec<u8>,
    /// Each message's sequence number and offset in `bytes`.
    pub starts: Vec<(u32, usize)>,
}

impl Sent {
    /// The message with sequence number `seq`, from its header on.
    pub(crate) fn message(&self, seq: u32) -> Option<&[u8]> {
        let (_, at) = self.starts.iter().find(|(s, _)| *s == seq)?;
        self.bytes.get(*at..)
    }
    /// The sequence numbers sent, first and last.
    pub(crate) fn seqs(&self) -> Option<(u32, u32)> {
        Some((self.starts.first()?.0, self.starts.last()?.0))
    }
}

/// The room a batch starts with.
pub(crate) const BATCH_ROOM: usize = 16 * 1024;

impl Writer {
    /// Messages numbered from `seq`: room for a request (a dump's or
    /// GETGEN's are under 64 bytes), not for a batch: a buffer of some KiB
    /// allocated and freed per request is heap churn a slow board pays
    /// for in page faults.
    pub(crate) fn new(order: Order, seq: u32) -> Writer {
        Writer::with_room(order, seq, 64)
    }

    fn with_room(order: Order, seq: u32, room: usize) -> Writer {
        Writer { buf: Vec::with_capacity(room), order, seq, open: None, starts: Vec::new() }
    }

    /// A batch: BATCH_BEGIN written, numbered from `seq`, with room for a
    /// router's batch without regrowing (`a_router_batch_fits_its_room`).
    pub(crate) fn batch(order: Order, seq: u32) -> Writer {
        let mut w = Writer::with_room(order, seq, BATCH_ROOM);
        w.header(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, NFPROTO_UNSPEC, NFNL_SUBSYS_NFTABLES);
        w
    }

    pub(crate) fn order(&self) -> Order {
        self.order
    }

    /// Append `N` bytes known at compile time: stores, where
    /// `extend_from_slice` is a call to a generic extend and to memcpy for
    /// each 4- or 8-byte field (a router's batch has thousands).
    ///
    /// The room is checked here, not by a call to `reserve` for each field
    /// (a size-optimized build keeps `reserve` out of line: on a router's
    /// batch, the calls cost more than the stores).
    fn push<const N: usize>(&mut self, bytes: [u8; N]) {
        if self.buf.capacity() - self.buf.len() < N {
            self.buf.reserve(N);
        }
        let len = self.buf.len();
        // SAFETY: there is room for N more bytes past `len` (there was, or
        // `reserve` made it); they are written (unaligned: a Vec<u8> has
        // no alignment) before the length covers them.
        unsafe {
            self.buf.as_mut_ptr().add(len).cast::<[u8; N]>().write_unaligned(bytes);
            self.buf.set_len(len + N);
        }
    }

    /// Overwrite the `N` bytes at `at` (a length written once its message
    /// or nest is complete): a store, not a call to memcpy as
    /// `copy_from_slice` is in a size-optimized build.
    fn set<const N: usize>(&mut self, at: usize, bytes: [u8; N]) {
        let field: &mut [u8; N] = (&mut self.buf[at..at + N]).try_into().expect("N bytes");
        *field = bytes;
    }

    /// `n` zero bytes, at most 4: padding, or a string's NUL and padding.
    fn zeros(&mut self, n: usize) {
        debug_assert!(n <= 4);
        self.push([0u8; 4]);
        self.buf.truncate(self.buf.len() - (4 - n));
    }

    fn close(&mut self) {
        if let Some(at) = self.open.take() {
            let len = (self.buf.len() - at) as u32;
            let b = self.order.u32(len);
            self.set(at, b);
        }
    }

    fn header(&mut self, kind: u16, flags: u16, family: u8, res_id: u16) -> u32 {
        self.close();
        let at = self.buf.len();
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        let o = self.order;
        let (k, f, s, r) = (o.u16(kind), o.u16(flags), o.u32(seq), res_id.to_be_bytes());
        self.push([0, 0, 0, 0, k[0], k[1], f[0], f[1], s[0], s[1], s[2], s[3], 0, 0, 0, 0, family, 0, r[0], r[1]]);
        self.open = Some(at);
        self.starts.push((seq, at));
        seq
    }

    /// Start an nf_tables message (NFT_MSG_*); NLM_F_REQUEST is added.
    pub(crate) fn msg(&mut self, kind: u8, family: u8, flags: u16) -> u32 {
        self.header((NFNL_SUBSYS_NFTABLES << 8) | u16::from(kind), NLM_F_REQUEST | flags, family, 0)
    }

    /// End the batch (BATCH_END) and hand it over.
    pub(crate) fn finish_batch(mut self) -> Sent {
        self.header(NFNL_MSG_BATCH_END, NLM_F_REQUEST, NFPROTO_UNSPEC, NFNL_SUBSYS_NFTABLES);
        self.finish()
    }

    /// Hand the messages over.
    pub(crate) fn finish(mut self) -> Sent {
        self.close();
        Sent { bytes: self.buf, starts: self.starts }
    }

    /// One attribute.
    pub(crate) fn put(&mut self, kind: u16, value: &[u8]) {
        self.header_of(kind, value.len());
        self.buf.extend_from_slice(value);
        self.pad();
    }
    /// Zeros up to the next 4-byte boundary.
    fn pad(&mut self) {
        self.zeros(self.buf.len().wrapping_neg() % 4);
    }
    /// An attribute's header, for a value of `len` bytes.
    fn header_of(&mut self, kind: u16, len: usize) {
        let o = self.order;
        let (l, k) = (o.u16((NLA_HDRLEN + len) as u16), o.u16(kind));
        self.push([l[0], l[1], k[0], k[1]]);
    }
    /// Attribute records copied as they are, padded.
    pub(super) fn raw(&mut self, records: &[u8]) {
        self.buf.extend_from_slice(records);
        self.pad();
    }
    /// A string, NUL-terminated as NLA_STRING wants it.
    pub(crate) fn put_str(&mut self, kind: u16, s: &str) {
        self.header_of(kind, s.len() + 1);
        self.buf.extend_from_slice(s.as_bytes());
        // The NUL, and the padding after it.
        self.zeros(4 - self.buf.len() % 4);
    }
    /// One attribute; the offset of its value in the finished bytes.
    pub(crate) fn put_at(&mut self, kind: u16, value: &[u8]) -> usize {
        self.header_of(kind, value.len());
        let at = self.buf.len();
        self.raw(value);
        at
    }
    /// A 32-bit value in network order: the most common attribute, its
    /// header and value written at once (no padding: 8 bytes).
    pub(crate) fn put_be32(&mut self, kind: u16, v: u32) {
        let o = self.order;
        let (l, k, v) = (o.u16((NLA_HDRLEN + 4) as u16), o.u16(kind), v.to_be_bytes());
        self.push([l[0], l[1], k[0], k[1], v[0], v[1], v[2], v[3]]);
    }
    /// Start a nested attribute; [`Writer::end`] writes its length.
    pub(crate) fn nest(&mut self, kind: u16) -> usize {
        let at = self.buf.len();
        let k = self.order.u16(kind | NLA_F_NESTED);
        self.push([0, 0, k[0], k[1]]);
        at
    }
    pub(crate) fn end(&mut self, at: usize) {
        let len = (self.buf.len() - at) as u16;
        let b = self.order.u16(len);
        self.set(at, b);
    }
    /// A nested `NFTA_DATA_VALUE`.
    pub(crate) fn put_data(&mut self, kind: u16, value: &[u8]) {
        let n = self.nest(kind);
        self.put(NFTA_DATA_VALUE, value);
        self.end(n);
    }
    /// A nested verdict (`NFTA_DATA_VERDICT`).
    pub(crate) fn put_verdict(&mut self, kind: u16, code: u32, chain: Option<&str>) {
        let n = self.nest(kind);
        let v = self.nest(NFTA_DATA_VERDICT);
        self.put_be32(NFTA_VERDICT_CODE, code);
        if let Some(c) = chain {
            self.put_str(NFTA_VERDICT_CHAIN, c);
        }
        self.end(v);
        self.end(n);
    }
}
