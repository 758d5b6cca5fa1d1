//! The expressions nasboot's rules use, and how each is written: every
//! attribute by its name in include/uapi/linux/netfilter/nf_tables.h
//! (`NFTA_<EXPRESSION>_*`), in the order nft 1.0.6 writes them, so that
//! a batch is byte for byte nft's.

use super::abi::*;
use super::Writer;

/// One kernel expression, as nft 1.0.6 encodes it: loads into register 1
/// (the legacy 16-byte numbering), verdicts into register 0. Data that is
/// compared against meta, ct or fib results is host order and built by
/// the caller with [`Writer::order`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expr<'a> {
    Meta {
        key: u32,
    },
    Cmp {
        op: u32,
        data: &'a [u8],
    },
    Payload {
        base: u32,
        offset: u32,
        len: u32,
    },
    /// `reg & mask ^ 0`; `op`: nft writes NFTA_BITWISE_OP for a mask it
    /// was given (`& 0x1fff`, a sub-byte field), not for a flag test or
    /// a prefix.
    Bitwise {
        mask: &'a [u8],
        op: bool,
    },
    /// A set (`map`: a verdict map, into register 0), by name and by its
    /// id within the batch.
    Lookup {
        set: &'a str,
        id: u32,
        map: bool,
    },
    /// A verdict: accept, drop, or a jump to `chain`.
    Verdict {
        code: u32,
        chain: Option<&'a str>,
    },
    /// A value into register `reg`.
    Immediate {
        reg: u32,
        data: &'a [u8],
    },
    Ct {
        key: u32,
    },
    Fib {
        flags: u32,
        result: u32,
    },
    /// An IPv6 extension header field (`frag frag-off`).
    Exthdr {
        ty: u8,
        offset: u32,
        len: u32,
    },
    /// Register 1 written into TCP option `ty` (the MSS).
    ExthdrWrite {
        ty: u8,
        offset: u32,
        len: u32,
    },
    Rt {
        key: u32,
    },
    Hton {
        len: u32,
        size: u32,
    },
    /// Packets a `unit` seconds.
    Limit {
        rate: u64,
        unit: u64,
        burst: u32,
    },
    Log {
        prefix: &'a str,
    },
    Notrack,
    Masq,
    FlowOffload {
        table: &'a str,
    },
    /// DNAT to the address in register 1 and the port in register 2.
    Dnat {
        family: u32,
    },
}

impl Expr<'_> {
    /// The kernel's name of the expression (`NFTA_EXPR_NAME`), and of its
    /// module where it has one, for messages.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Expr::Meta { .. } => "meta",
            Expr::Cmp { .. } => "cmp",
            Expr::Payload { .. } => "payload",
            Expr::Bitwise { .. } => "bitwise",
            Expr::Lookup { .. } => "lookup",
            Expr::Verdict { .. } | Expr::Immediate { .. } => "immediate",
            Expr::Ct { .. } => "ct",
            Expr::Fib { .. } => "fib",
            Expr::Exthdr { .. } | Expr::ExthdrWrite { .. } => "exthdr",
            Expr::Rt { .. } => "rt",
            Expr::Hton { .. } => "byteorder",
            Expr::Limit { .. } => "limit",
            Expr::Log { .. } => "log",
            Expr::Notrack => "notrack",
            Expr::Masq => "masq",
            Expr::FlowOffload { .. } => "flow_offload",
            Expr::Dnat { .. } => "nat",
        }
    }
}

impl Writer {
    /// One expression, as an `NFTA_LIST_ELEM` of a rule's list.
    pub(crate) fn expr(&mut self, e: &Expr<'_>) {
        let elem = self.nest(NFTA_LIST_ELEM);
        self.put_str(NFTA_EXPR_NAME, e.name());
        if *e != Expr::Notrack {
            let d = self.nest(NFTA_EXPR_DATA);
            self.expr_data(e);
            self.end(d);
        }
        self.end(elem);
    }

    /// The attributes of an expression's `NFTA_EXPR_DATA`.
    fn expr_data(&mut self, e: &Expr<'_>) {
        match *e {
            Expr::Meta { key } => self.key_into_reg_1(NFTA_META_KEY, key, NFTA_META_DREG),
            Expr::Ct { key } => self.key_into_reg_1(NFTA_CT_KEY, key, NFTA_CT_DREG),
            Expr::Rt { key } => self.key_into_reg_1(NFTA_RT_KEY, key, NFTA_RT_DREG),
            Expr::Cmp { op, data } => {
                self.put_be32(NFTA_CMP_SREG, NFT_REG_1);
                self.put_be32(NFTA_CMP_OP, op);
                self.put_data(NFTA_CMP_DATA, data);
            }
            Expr::Payload { base, offset, len } => {
                self.put_be32(NFTA_PAYLOAD_DREG, NFT_REG_1);
                self.put_be32(NFTA_PAYLOAD_BASE, base);
                self.put_be32(NFTA_PAYLOAD_OFFSET, offset);
                self.put_be32(NFTA_PAYLOAD_LEN, len);
            }
            Expr::Bitwise { mask, op } => self.bitwise(mask, op),
            Expr::Lookup { set, id, map } => self.lookup(set, id, map),
            Expr::Verdict { code, chain } => {
                self.put_be32(NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
                self.put_verdict(NFTA_IMMEDIATE_DATA, code, chain);
            }
            Expr::Immediate { reg, data } => {
                self.put_be32(NFTA_IMMEDIATE_DREG, reg);
                self.put_data(NFTA_IMMEDIATE_DATA, data);
            }
            Expr::Fib { flags, result } => {
                self.put_be32(NFTA_FIB_FLAGS, flags);
                self.put_be32(NFTA_FIB_RESULT, result);
                self.put_be32(NFTA_FIB_DREG, NFT_REG_1);
            }
            Expr::Exthdr { ty, offset, len } => self.exthdr(ty, offset, len),
            Expr::ExthdrWrite { ty, offset, len } => self.exthdr_write(ty, offset, len),
            Expr::Hton { len, size } => self.hton(len, size),
            Expr::Limit { rate, unit, burst } => self.limit(rate, unit, burst),
            Expr::Log { prefix } => self.put_str(NFTA_LOG_PREFIX, prefix),
            Expr::FlowOffload { table } => self.put_str(NFTA_FLOW_TABLE_NAME, table),
            Expr::Dnat { family } => self.dnat(family),
            Expr::Masq | Expr::Notrack => {}
        }
    }

    /// A meta, ct or rt load: its key, then its destination register.
    fn key_into_reg_1(&mut self, key_attr: u16, key: u32, dreg_attr: u16) {
        self.put_be32(key_attr, key);
        self.put_be32(dreg_attr, NFT_REG_1);
    }

    fn bitwise(&mut self, mask: &[u8], op: bool) {
        self.put_be32(NFTA_BITWISE_SREG, NFT_REG_1);
        self.put_be32(NFTA_BITWISE_DREG, NFT_REG_1);
        if op {
            self.put_be32(NFTA_BITWISE_OP, NFT_BITWISE_BOOL);
        }
        self.put_be32(NFTA_BITWISE_LEN, mask.len() as u32);
        self.put_data(NFTA_BITWISE_MASK, mask);
        self.put_data(NFTA_BITWISE_XOR, &[0; 16][..mask.len()]);
    }

    fn lookup(&mut self, set: &str, id: u32, map: bool) {
        self.put_be32(NFTA_LOOKUP_SREG, NFT_REG_1);
        if map {
            self.put_be32(NFTA_LOOKUP_DREG, NFT_REG_VERDICT);
        }
        self.put_str(NFTA_LOOKUP_SET, set);
        self.put_be32(NFTA_LOOKUP_SET_ID, id);
    }

    /// An IPv6 extension header field loaded into register 1.
    fn exthdr(&mut self, ty: u8, offset: u32, len: u32) {
        self.put_be32(NFTA_EXTHDR_DREG, NFT_REG_1);
        self.put(NFTA_EXTHDR_TYPE, &[ty]);
        self.put_be32(NFTA_EXTHDR_OFFSET, offset);
        self.put_be32(NFTA_EXTHDR_LEN, len);
        self.put_be32(NFTA_EXTHDR_OP, NFT_EXTHDR_OP_IPV6);
        self.put_be32(NFTA_EXTHDR_FLAGS, 0);
    }

    /// Register 1 written into a TCP option.
    fn exthdr_write(&mut self, ty: u8, offset: u32, len: u32) {
        self.put_be32(NFTA_EXTHDR_SREG, NFT_REG_1);
        self.put(NFTA_EXTHDR_TYPE, &[ty]);
        self.put_be32(NFTA_EXTHDR_OFFSET, offset);
        self.put_be32(NFTA_EXTHDR_LEN, len);
        self.put_be32(NFTA_EXTHDR_OP, NFT_EXTHDR_OP_TCPOPT);
    }

    /// Register 1 to network order, in place.
    fn hton(&mut self, len: u32, size: u32) {
        self.put_be32(NFTA_BYTEORDER_SREG, NFT_REG_1);
        self.put_be32(NFTA_BYTEORDER_DREG, NFT_REG_1);
        self.put_be32(NFTA_BYTEORDER_OP, NFT_BYTEORDER_HTON);
        self.put_be32(NFTA_BYTEORDER_LEN, len);
        self.put_be32(NFTA_BYTEORDER_SIZE, size);
    }

    fn limit(&mut self, rate: u64, unit: u64, burst: u32) {
        self.put(NFTA_LIMIT_RATE, &rate.to_be_bytes());
        self.put(NFTA_LIMIT_UNIT, &unit.to_be_bytes());
        self.put_be32(NFTA_LIMIT_BURST, burst);
        self.put_be32(NFTA_LIMIT_TYPE, NFT_LIMIT_PKTS);
        self.put_be32(NFTA_LIMIT_FLAGS, 0);
    }

    /// DNAT to the address in register 1 and the port in register 2.
    fn dnat(&mut self, family: u32) {
        self.put_be32(NFTA_NAT_TYPE, NFT_NAT_DNAT);
        self.put_be32(NFTA_NAT_FAMILY, family);
        self.put_be32(NFTA_NAT_REG_ADDR_MIN, NFT_REG_1);
        self.put_be32(NFTA_NAT_REG_PROTO_MIN, NFT_REG_2);
        self.put_be32(NFTA_NAT_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
    }
}
