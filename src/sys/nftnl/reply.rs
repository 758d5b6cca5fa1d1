//! The reader of what the kernel sends back: the replies to a batch or a
//! request, checked whole, and the attributes of a message.

use super::abi::*;
use super::Order;
#[cfg(test)]
use super::Sent;

/// One reply from the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reply<'a> {
    /// NLMSG_ERROR with an errno: the message with sequence number `seq`
    /// failed; `text` is the kernel's message, `offset` the offending
    /// attribute's offset in that message (extended ack).
    Error { seq: u32, errno: i32, text: Option<&'a str>, offset: Option<u32> },
    /// NLMSG_ERROR with 0: an acknowledgement.
    Ack { seq: u32 },
    /// The end of a dump.
    Done { seq: u32 },
    /// An nf_tables message (NFT_MSG_*) and its attributes; `generation`
    /// is the low 16 bits of the ruleset generation it was made at
    /// (`nfgenmsg.res_id`, network order).
    Nft { seq: u32, kind: u8, family: u8, generation: u16, attrs: &'a [u8] },
}

/// A reply that is not what the kernel sends: truncated, or not an
/// nf_tables or control message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Malformed;

/// Read one datagram of replies, handing each to `each`. The whole
/// datagram is checked: a message whose length runs past it, an error
/// reply too short for its code and header, or a message of another
/// subsystem is [`Malformed`], and so is the datagram. Pure (fuzzed:
/// tests/fuzz).
pub(crate) fn replies<'a>(buf: &'a [u8], order: Order, each: &mut dyn FnMut(Reply<'a>)) -> Result<(), Malformed> {
    let mut off = 0;
    while off < buf.len() {
        let b = &buf[off..];
        if b.len() < NLMSG_HDRLEN {
            return Err(Malformed);
        }
        let len = order.read_u32(b) as usize;
        if len < NLMSG_HDRLEN || len > b.len() {
            return Err(Malformed);
        }
        let kind = order.read_u16(&b[4..]);
        let flags = order.read_u16(&b[6..]);
        let seq = order.read_u32(&b[8..]);
        let payload = &b[NLMSG_HDRLEN..len];
        off += nla_align(len).min(b.len());
        match kind {
            NLMSG_DONE => each(Reply::Done { seq }),
            NLMSG_ERROR => each(error(payload, flags, seq, order)?),
            _ if kind >> 8 == NFNL_SUBSYS_NFTABLES && payload.len() >= NFGENMSG_LEN => {
                let attrs = &payload[NFGENMSG_LEN..];
                check_attrs(attrs, order)?;
                let generation = u16::from_be_bytes([payload[2], payload[3]]);
                each(Reply::Nft { seq, kind: kind as u8, family: payload[0], generation, attrs });
            }
            _ => return Err(Malformed),
        }
    }
    Ok(())
}

fn error(payload: &[u8], flags: u16, seq: u32, order: Order) -> Result<Reply<'_>, Malformed> {
    // int error, then the original message's header (and, unless capped,
    // its payload), then the extended-ack attributes.
    if payload.len() < 4 + NLMSG_HDRLEN {
        return Err(Malformed);
    }
    let code = order.read_u32(payload) as i32;
    if code == 0 {
        return Ok(Reply::Ack { seq });
    }
    let errno = code.checked_neg().filter(|e| *e > 0).ok_or(Malformed)?;
    let orig_len = order.read_u32(&payload[4..]) as usize;
    let tlvs_at = if flags & NLM_F_CAPPED != 0 { 4 + NLMSG_HDRLEN } else { 4 + nla_align(orig_len) };
    let (mut text, mut offset) = (None, None);
    if flags & NLM_F_ACK_TLVS != 0 {
        let tlvs = payload.get(tlvs_at..).ok_or(Malformed)?;
        each_attr(tlvs, order, &mut |kind, v| {
            match kind {
                NLMSGERR_ATTR_MSG => text = std::str::from_utf8(v.split(|c| *c == 0).next().unwrap_or(v)).ok(),
                NLMSGERR_ATTR_OFFS if v.len() >= 4 => offset = Some(order.read_u32(v)),
                _ => {}
            }
            Ok(())
        })?;
    }
    Ok(Reply::Error { seq, errno, text, offset })
}

/// The kernel's answer to a batch whose messages are numbered `first` to
/// `last`, followed by a request numbered `fence` (GETGEN): replies come
/// in order, so the fence's reply ends the answer. Fed one datagram at a
/// time; pure (fuzzed: tests/fuzz).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Answer {
    pub first: u32,
    pub last: u32,
    pub fence: u32,
    /// The first error of the batch: (seq, errno, the kernel's words,
    /// the offending attribute's offset).
    pub refused: Option<(u32, i32, Option<String>, Option<u32>)>,
    /// The fence's reply was read: the answer is complete.
    pub done: bool,
}

impl Answer {
    pub(crate) fn new(first: u32, last: u32, fence: u32) -> Answer {
        Answer { first, last, fence, refused: None, done: false }
    }

    fn in_batch(&self, seq: u32) -> bool {
        seq.wrapping_sub(self.first) <= self.last.wrapping_sub(self.first)
    }

    /// Read one datagram. A reply for another sequence number, a message
    /// other than an error or an ack for the batch, anything after the
    /// fence, or a malformed datagram is [`Malformed`]: never success.
    pub(crate) fn read(&mut self, datagram: &[u8], order: Order) -> Result<(), Malformed> {
        let mut bad = false;
        replies(datagram, order, &mut |r| {
            let seq = match r {
                Reply::Error { seq, .. } | Reply::Ack { seq } | Reply::Done { seq } | Reply::Nft { seq, .. } => seq,
            };
            if self.done {
                bad = true;
            } else if seq == self.fence {
                self.done = true;
            } else if !self.in_batch(seq) {
                bad = true;
            } else if let Reply::Error { errno, text, offset, .. } = r {
                if self.refused.is_none() {
                    self.refused = Some((seq, errno, text.map(str::to_string), offset));
                }
            } else if !matches!(r, Reply::Ack { .. }) {
                bad = true;
            }
        })?;
        if bad {
            return Err(Malformed);
        }
        Ok(())
    }
}

/// Each attribute record of `buf` to `each(type without flags, value)`;
/// a record shorter than its header or running past `buf` is Malformed.
pub(crate) fn each_attr<'a>(
    mut buf: &'a [u8],
    order: Order,
    each: &mut dyn FnMut(u16, &'a [u8]) -> Result<(), Malformed>,
) -> Result<(), Malformed> {
    while !buf.is_empty() {
        if buf.len() < NLA_HDRLEN {
            return Err(Malformed);
        }
        let len = usize::from(order.read_u16(buf));
        if len < NLA_HDRLEN || len > buf.len() {
            return Err(Malformed);
        }
        each(order.read_u16(&buf[2..]) & NLA_TYPE_MASK, &buf[NLA_HDRLEN..len])?;
        buf = &buf[nla_align(len).min(buf.len())..];
    }
    Ok(())
}

/// Whether a batch reads back whole: each message's length within it,
/// each message's attributes (nested ones too) within their message.
#[cfg(any(test, feature = "fuzz"))]
pub(crate) fn check_batch(buf: &[u8], order: Order) -> Result<(), Malformed> {
    fn nested(buf: &[u8], order: Order) -> Result<(), Malformed> {
        each_attr(buf, order, &mut |_, v| {
            // A value that parses as attributes is walked too; one that
            // does not is a plain value.
            let _ = nested(v, order);
            Ok(())
        })
    }
    let mut at = 0;
    while at < buf.len() {
        let len = order.read_u32(buf.get(at..at + 4).ok_or(Malformed)?) as usize;
        let msg = buf.get(at..at + len).ok_or(Malformed)?;
        if len < NLMSG_HDRLEN + NFGENMSG_LEN {
            return Err(Malformed);
        }
        nested(&msg[NLMSG_HDRLEN + NFGENMSG_LEN..], order)?;
        at += nla_align(len);
    }
    Ok(())
}

fn check_attrs(buf: &[u8], order: Order) -> Result<(), Malformed> {
    each_attr(buf, order, &mut |_, _| Ok(()))
}

/// The value of attribute `kind` in `attrs` (checked by [`replies`]).
pub(crate) fn find(attrs: &[u8], order: Order, kind: u16) -> Option<&[u8]> {
    let mut found = None;
    let _ = each_attr(attrs, order, &mut |k, v| {
        if k == kind && found.is_none() {
            found = Some(v);
        }
        Ok(())
    });
    found
}

/// A NUL-terminated string attribute.
pub(crate) fn str_value(v: &[u8]) -> &str {
    std::str::from_utf8(v.split(|c| *c == 0).next().unwrap_or(v)).unwrap_or("")
}

/// The name of the expression whose attribute sits at `offset` in the
/// message `msg` (from its header on), as an extended ack points at it:
/// the `NFTA_LIST_ELEM` of a rule, or an attribute inside it.
pub(crate) fn expr_at(msg: &[u8], offset: u32, order: Order) -> Option<&str> {
    let offset = offset as usize;
    let exprs_at = NLMSG_HDRLEN + NFGENMSG_LEN;
    let attrs = msg.get(exprs_at..order.read_u32(msg.get(..4)?) as usize)?;
    let list = find(attrs, order, NFTA_RULE_EXPRESSIONS)?;
    let list_at = list.as_ptr() as usize - msg.as_ptr() as usize;
    let mut at = list_at;
    let mut name = None;
    let _ = each_attr(list, order, &mut |_, elem| {
        let end = at + NLA_HDRLEN + elem.len();
        if (at..end).contains(&offset) {
            name = find(elem, order, NFTA_EXPR_NAME).map(str_value);
        }
        at = nla_align(end);
        Ok(())
    });
    name
}

/// The devices a chain's or a flowtable's hook is bound to (`kind`:
/// NFT_MSG_NEWCHAIN or NFT_MSG_NEWFLOWTABLE, as a dump types its replies or a batch its
/// messages), each to `each`: the NFTA_DEVICE_NAMEs of the device list,
/// or without one a base chain's NFTA_HOOK_DEV (a kernel dumps a chain's
/// only device both ways). Linux 6.1 drops a device from these lists when
/// the device goes away, and with its last device a chain itself; 6.18
/// keeps the name, and binds the device again when it comes back. Neither
/// is a commit.
pub(crate) fn hook_devices<'a>(kind: u8, attrs: &'a [u8], order: Order, each: &mut dyn FnMut(&'a str)) {
    let (hook, devs) = match kind {
        NFT_MSG_NEWCHAIN => (NFTA_CHAIN_HOOK, NFTA_HOOK_DEVS),
        NFT_MSG_NEWFLOWTABLE => (NFTA_FLOWTABLE_HOOK, NFTA_FLOWTABLE_HOOK_DEVS),
        _ => return,
    };
    let Some(h) = find(attrs, order, hook) else { return };
    match (find(h, order, devs), find(h, order, NFTA_HOOK_DEV)) {
        (Some(list), _) => {
            let _ = each_attr(list, order, &mut |k, name| {
                if k == NFTA_DEVICE_NAME {
                    each(str_value(name));
                }
                Ok(())
            });
        }
        (None, Some(dev)) if kind == NFT_MSG_NEWCHAIN => each(str_value(dev)),
        _ => {}
    }
}

/// Each message of a batch or request: its NFT_MSG_* kind (the low byte
/// of its type; the batch framing's are not nf_tables messages and are
/// left out) and its attributes. (The unit tests read batches with it; a
/// dump's replies are read as they come, `seam::real::nfnl`.)
#[cfg(test)]
pub(crate) fn messages<'a>(sent: &'a Sent, order: Order, each: &mut dyn FnMut(u8, &'a [u8])) {
    for (_, at) in &sent.starts {
        let b = &sent.bytes[*at..];
        let len = (order.read_u32(b) as usize).min(b.len());
        let kind = order.read_u16(&b[4..]);
        if kind >> 8 == NFNL_SUBSYS_NFTABLES && len >= NLMSG_HDRLEN + NFGENMSG_LEN {
            each(kind as u8, &b[NLMSG_HDRLEN + NFGENMSG_LEN..len]);
        }
    }
}
