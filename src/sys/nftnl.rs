//! nf_tables over NETLINK_NETFILTER (include/uapi/linux/netlink.h,
//! netfilter/nfnetlink.h, netfilter/nf_tables.h), one module per part:
//! the kernel's names ([`abi`]), the byte order of host-order fields
//! ([`order`]), the writer of messages ([`writer`]), the expressions
//! ([`expr`]), what only nft reads back when it lists ([`listing`]), the
//! reader of the kernel's replies ([`reply`]) and the replay of a dump
//! ([`replay`]). Which kernel modules a batch needs is the firewall's
//! (`crate::firewall::modules`).
//!
//! A batch is NFNL_MSG_BATCH_BEGIN, the nf_tables messages, then
//! NFNL_MSG_BATCH_END, sent in one `sendmsg`; the kernel commits all of
//! it or nothing. Without NLM_F_ACK a message that succeeds gets no reply;
//! one that fails gets an NLMSG_ERROR with its sequence number (a failed
//! commit, the BATCH_BEGIN's).
//!
//! Byte order, field by field (the big-endian boards are where it bites):
//!
//! - **host order** ([`Order`]): the netlink message and attribute
//!   headers; u32 values in set userdata; data compared against what
//!   meta, ct and fib load (the ifindex of `iif`, ct state and status
//!   bits, the fib address type);
//! - **network order**: every scalar `NFTA_*` attribute (the kernel reads
//!   them with `nla_get_be32`: registers, lengths, offsets, operators,
//!   hook numbers, priorities, policies, set fields, limits, verdict
//!   codes), `nfgenmsg.res_id`, and data compared against packet bytes
//!   (ports, addresses, masks);
//! - **raw bytes**: interface names (16 bytes, NUL padded), one-byte
//!   protocol numbers and ICMP types.
//!
//! The writer takes the host order as a value, so the unit tests pin the
//! bytes of both orders on any host (and run under qemu-user on the
//! big-endian targets too).

mod abi;
mod expr;
mod listing;
mod order;
mod replay;
mod reply;
mod writer;

pub(crate) use abi::*;
pub(crate) use expr::Expr;
pub(crate) use listing::*;
pub(crate) use order::Order;
pub(crate) use replay::replay;
pub(crate) use reply::*;
#[cfg(test)]
pub(crate) use writer::BATCH_ROOM;
pub(crate) use writer::{Sent, Writer};

#[cfg(test)]
mod tests;
