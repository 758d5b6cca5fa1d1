//! nf_tables over a blocking NETLINK_NETFILTER socket (the
//! [`Nftables`] seam), opened at its first use.
//!
//! A batch goes out in one `sendmsg`, without NLM_F_ACK on its messages
//! (as nft sends it): the kernel processes it inside that call and
//! queues an error for each message that failed, nothing for the others.
//! To know the answer is complete without waiting on a clock, a GETGEN
//! request follows the batch as a fence: replies arrive in order, so once
//! the fence's is read every error of the batch has been read too (a
//! kernel without GETGEN, before 3.18?, answers it with an error, which
//! fences as well). Any reply that does not belong to the batch or the
//! fence, or that is malformed, fails the commit; it is never success.
//!
//! The socket asks for short error replies (NETLINK_CAP_ACK: the original
//! message's header only) with the kernel's words and the offending
//! attribute's offset (NETLINK_EXT_ACK, 4.12+); older kernels refuse the
//! options, which changes nothing but the detail of the messages.

use std::io;
use std::os::fd::AsRawFd;

use netlink_sys::{Socket, SocketAddr};

use crate::seam::nftables::{CommitError, Nftables, Tables};
use crate::sys::nftnl::{self as nl, Answer, Order, Reply, Sent, Writer};

use super::RECV_BUF;

/// What a request's replies go to: each one's kind (NFT_MSG_*), family,
/// generation (its low 16 bits) and attributes.
type OnReply<'a> = dyn FnMut(u8, u8, u16, &[u8]) + 'a;

#[derive(Default)]
pub struct RealNftables {
    sock: Option<Socket>,
    seq: u32,
    buf: Vec<u8>,
}

fn malformed(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("nf_tables: {what}"))
}

impl RealNftables {
    pub fn new() -> RealNftables {
        RealNftables::default()
    }

    fn socket(&mut self) -> io::Result<&Socket> {
        if self.sock.is_none() {
            let mut s = Socket::new(nl::NETLINK_NETFILTER)?;
            s.bind_auto()?;
            s.connect(&SocketAddr::new(0, 0))?;
            // Extended and capped acks: a kernel without them still answers.
            let _ = s.set_ext_ack(true);
            let _ = s.set_cap_ack(true);
            self.sock = Some(s);
            self.buf = Vec::with_capacity(RECV_BUF);
            // The socket is this process's own (its port id), so no reply
            // for another can reach it: numbers from 1 are unique.
            self.seq = 1;
        }
        Ok(self.sock.as_ref().expect("opened above"))
    }

    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let n = self.socket()?.send(bytes, 0)?;
        if n != bytes.len() {
            return Err(malformed("short send"));
        }
        Ok(())
    }

    /// One datagram from the kernel, received into the buffer's spare
    /// capacity (see `RECV_BUF`).
    fn recv(&mut self) -> io::Result<&[u8]> {
        let sock = self.sock.as_ref().ok_or_else(|| malformed("no socket"))?;
        self.buf.clear();
        sock.recv(&mut self.buf, 0)?;
        Ok(&self.buf)
    }

    /// A dump request (or a request with NLM_F_ACK), its replies to
    /// `each(kind, family, generation, attrs)`, until its end (or the
    /// ack); an error, a reply for another request or a malformed
    /// datagram ends it with an error.
    fn dump_request(&mut self, w: Writer, each: &mut OnReply<'_>) -> io::Result<()> {
        let req = w.finish();
        let (seq, _) = req.seqs().ok_or_else(|| malformed("empty request"))?;
        self.send(&req.bytes)?;
        loop {
            let mut end: Option<io::Result<()>> = None;
            let read = nl::replies(self.recv()?, Order::HOST, &mut |r| match (r, &end) {
                (_, Some(_)) => end = Some(Err(malformed("a reply after the end"))),
                // The end of a dump, or the ack of a request that asked for one.
                (Reply::Done { seq: s } | Reply::Ack { seq: s }, None) if s == seq => end = Some(Ok(())),
                (Reply::Nft { seq: s, kind, family, generation, attrs }, None) if s == seq => each(kind, family, generation, attrs),
                (Reply::Error { seq: s, errno, .. }, None) if s == seq => end = Some(Err(io::Error::from_raw_os_error(errno))),
                _ => end = Some(Err(malformed("a reply for another request"))),
            });
            read.map_err(|_| malformed("a malformed reply"))?;
            if let Some(r) = end {
                return r;
            }
        }
    }

    fn writer(&mut self) -> io::Result<Writer> {
        self.socket()?;
        let w = Writer::new(Order::HOST, self.seq);
        self.seq = self.seq.wrapping_add(1);
        Ok(w)
    }

    /// Make room for a large batch: the kernel refuses a message larger
    /// than the socket's send buffer (EMSGSIZE), which is
    /// net.core.wmem_default, commonly 208 KiB, ten times nasboot's largest
    /// rule set; SO_SNDBUFFORCE (root, as loading needs) passes wmem_max.
    /// Should it fail, the send's EMSGSIZE says so.
    fn room_for(&mut self, len: usize) -> io::Result<()> {
        if len < 128 * 1024 {
            return Ok(());
        }
        let fd = self.socket()?.as_raw_fd();
        let size = (len + 4096) as nix::libc::c_int;
        // SAFETY: a valid socket and a c_int option value of its size.
        unsafe {
            nix::libc::setsockopt(
                fd,
                nix::libc::SOL_SOCKET,
                nix::libc::SO_SNDBUFFORCE,
                (&size as *const nix::libc::c_int).cast(),
                std::mem::size_of::<nix::libc::c_int>() as nix::libc::socklen_t,
            )
        };
        Ok(())
    }
}

impl Nftables for RealNftables {
    fn tables(&mut self) -> io::Result<Tables> {
        let mut w = self.writer()?;
        w.msg(nl::NFT_MSG_GETTABLE, nl::NFPROTO_UNSPEC, nl::NLM_F_DUMP);
        let mut out = Tables::default();
        self.dump_request(w, &mut |kind, family, generation, attrs| {
            if let (nl::NFT_MSG_NEWTABLE, Some(name)) = (kind, nl::find(attrs, Order::HOST, nl::NFTA_TABLE_NAME)) {
                let id = (family, nl::str_value(name).to_string());
                if let Some(u) = nl::find(attrs, Order::HOST, nl::NFTA_TABLE_USERDATA) {
                    out.udata.push((id.clone(), u.to_vec()));
                }
                out.ids.push(id);
                out.generation = generation;
            }
        })?;
        Ok(out)
    }

    fn dump(&mut self, kind: u8, family: u8, table: &str, set: Option<&str>, each: &mut dyn FnMut(u8, &[u8])) -> io::Result<()> {
        let mut w = self.writer()?;
        w.msg(kind, family, nl::NLM_F_DUMP);
        // The table (and set) names filter the dump where the kernel can;
        // the replies are filtered again here, for the kernels that cannot.
        match set {
            Some(s) => {
                w.put_str(nl::NFTA_SET_ELEM_LIST_TABLE, table);
                w.put_str(nl::NFTA_SET_ELEM_LIST_SET, s);
            }
            None => w.put_str(nl::table_attr(kind), table),
        }
        self.dump_request(w, &mut |k, _, _, attrs| {
            let in_table = nl::find(attrs, Order::HOST, nl::table_attr(k)).is_some_and(|t| nl::str_value(t) == table);
            if in_table {
                each(k, attrs);
            }
        })
    }

    fn generation(&mut self) -> io::Result<u32> {
        // Asked with NLM_F_ACK: the NEWGEN reply, then the ack ends it.
        let mut w = self.writer()?;
        w.msg(nl::NFT_MSG_GETGEN, nl::NFPROTO_UNSPEC, nl::NLM_F_ACK);
        let mut gen = None;
        self.dump_request(w, &mut |kind, _, _, attrs| {
            if kind == nl::NFT_MSG_NEWGEN {
                gen = nl::find(attrs, Order::HOST, nl::NFTA_GEN_ID).and_then(|v| v.try_into().ok()).map(u32::from_be_bytes);
            }
        })?;
        gen.ok_or_else(|| malformed("a generation without its id"))
    }

    fn next_seq(&mut self) -> u32 {
        if self.socket().is_err() {
            return 1;
        }
        self.seq
    }

    fn commit(&mut self, batch: &Sent) -> Result<(), CommitError> {
        let (first, last) = batch.seqs().ok_or_else(|| CommitError::Io(malformed("empty batch")))?;
        self.seq = last.wrapping_add(1);
        self.room_for(batch.bytes.len()).map_err(CommitError::Io)?;
        self.send(&batch.bytes).map_err(CommitError::Io)?;
        let mut fence = self.writer().map_err(CommitError::Io)?;
        fence.msg(nl::NFT_MSG_GETGEN, nl::NFPROTO_UNSPEC, 0);
        let fence = fence.finish();
        let (fence_seq, _) = fence.seqs().expect("one message");
        self.send(&fence.bytes).map_err(CommitError::Io)?;
        let mut answer = Answer::new(first, last, fence_seq);
        while !answer.done {
            let datagram = self.recv().map_err(CommitError::Io)?;
            answer.read(datagram, Order::HOST).map_err(|_| CommitError::Io(malformed("a reply not for the batch")))?;
        }
        match answer.refused {
            None => Ok(()),
            Some((seq, errno, text, offset)) => Err(CommitError::Refused { seq, errno, text, offset }),
        }
    }
}
