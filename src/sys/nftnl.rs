//! nf_tables over NETLINK_NETFILTER (include/uapi/linux/netlink.h,
//! netfilter/nfnetlink.h, netfilter/nf_tables.h): the message types,
//! attributes and expression attributes nasboot sends, a batch writer,
//! and the reader of the kernel's replies.
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

/// The netlink protocol (include/uapi/linux/netlink.h).
pub(crate) const NETLINK_NETFILTER: isize = 12;

// nlmsghdr flags and types.
pub(crate) const NLM_F_REQUEST: u16 = 0x1;
pub(crate) const NLM_F_ACK: u16 = 0x4;
pub(crate) const NLM_F_DUMP: u16 = 0x300;
pub(crate) const NLM_F_CREATE: u16 = 0x400;
pub(crate) const NLM_F_APPEND: u16 = 0x800;
/// In an NLMSG_ERROR: the original message's payload was left out, and
/// extended-ack attributes follow.
const NLM_F_CAPPED: u16 = 0x100;
const NLM_F_ACK_TLVS: u16 = 0x200;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLMSGERR_ATTR_MSG: u16 = 1;
const NLMSGERR_ATTR_OFFS: u16 = 2;
/// sizeof(struct nlmsghdr), sizeof(struct nfgenmsg), sizeof(struct nlattr).
pub(crate) const NLMSG_HDRLEN: usize = 16;
pub(crate) const NFGENMSG_LEN: usize = 4;
const NLA_HDRLEN: usize = 4;
const NLA_F_NESTED: u16 = 0x8000;
const NLA_TYPE_MASK: u16 = 0x3fff;

/// nfnetlink: the batch framing and the nf_tables subsystem.
const NFNL_MSG_BATCH_BEGIN: u16 = 0x10;
const NFNL_MSG_BATCH_END: u16 = 0x11;
const NFNL_SUBSYS_NFTABLES: u16 = 10;

// NFT_MSG_* (enum nf_tables_msg_types).
pub(crate) const NEWTABLE: u8 = 0;
pub(crate) const GETTABLE: u8 = 1;
pub(crate) const DELTABLE: u8 = 2;
pub(crate) const NEWCHAIN: u8 = 3;
pub(crate) const GETCHAIN: u8 = 4;
pub(crate) const NEWRULE: u8 = 6;
pub(crate) const GETRULE: u8 = 7;
pub(crate) const NEWSET: u8 = 9;
pub(crate) const GETSET: u8 = 10;
pub(crate) const NEWSETELEM: u8 = 12;
pub(crate) const GETSETELEM: u8 = 13;
pub(crate) const NEWGEN: u8 = 15;
pub(crate) const GETGEN: u8 = 16;
pub(crate) const NEWFLOWTABLE: u8 = 22;
pub(crate) const GETFLOWTABLE: u8 = 23;

/// Families (NFPROTO_*).
pub(crate) const NFPROTO_UNSPEC: u8 = 0;
pub(crate) const NFPROTO_INET: u8 = 1;
pub(crate) const NFPROTO_IPV4: u8 = 2;
pub(crate) const NFPROTO_IPV6: u8 = 10;

// Attributes, per object (NFTA_*).
pub(crate) const TABLE_NAME: u16 = 1;
pub(crate) const TABLE_FLAGS: u16 = 2;
pub(crate) const TABLE_USERDATA: u16 = 6;
pub(crate) const CHAIN_TABLE: u16 = 1;
pub(crate) const CHAIN_NAME: u16 = 3;
pub(crate) const CHAIN_HOOK: u16 = 4;
pub(crate) const CHAIN_POLICY: u16 = 5;
pub(crate) const CHAIN_TYPE: u16 = 7;
const CHAIN_USERDATA: u16 = 12;
pub(crate) const HOOK_HOOKNUM: u16 = 1;
pub(crate) const HOOK_PRIORITY: u16 = 2;
pub(crate) const HOOK_DEV: u16 = 3;
pub(crate) const HOOK_DEVS: u16 = 4;
pub(crate) const RULE_TABLE: u16 = 1;
pub(crate) const RULE_CHAIN: u16 = 2;
pub(crate) const RULE_EXPRESSIONS: u16 = 4;
const RULE_USERDATA: u16 = 7;
pub(crate) const LIST_ELEM: u16 = 1;
const EXPR_NAME: u16 = 1;
const EXPR_DATA: u16 = 2;
pub(crate) const SET_TABLE: u16 = 1;
pub(crate) const SET_NAME: u16 = 2;
pub(crate) const SET_FLAGS: u16 = 3;
pub(crate) const SET_KEY_TYPE: u16 = 4;
pub(crate) const SET_KEY_LEN: u16 = 5;
pub(crate) const SET_DATA_TYPE: u16 = 6;
pub(crate) const SET_DATA_LEN: u16 = 7;
const SET_POLICY: u16 = 8;
pub(crate) const SET_DESC: u16 = 9;
pub(crate) const SET_ID: u16 = 10;
pub(crate) const SET_USERDATA: u16 = 13;
pub(crate) const SET_DESC_SIZE: u16 = 1;
pub(crate) const SET_ELEM_LIST_TABLE: u16 = 1;
pub(crate) const SET_ELEM_LIST_SET: u16 = 2;
pub(crate) const SET_ELEM_LIST_ELEMENTS: u16 = 3;
pub(crate) const SET_ELEM_LIST_SET_ID: u16 = 4;
pub(crate) const SET_ELEM_KEY: u16 = 1;
pub(crate) const SET_ELEM_DATA: u16 = 2;
pub(crate) const DATA_VALUE: u16 = 1;
pub(crate) const DATA_VERDICT: u16 = 2;
pub(crate) const VERDICT_CODE: u16 = 1;
pub(crate) const VERDICT_CHAIN: u16 = 2;
pub(crate) const FLOWTABLE_TABLE: u16 = 1;
pub(crate) const FLOWTABLE_NAME: u16 = 2;
pub(crate) const FLOWTABLE_HOOK: u16 = 3;
pub(crate) const FLOWTABLE_FLAGS: u16 = 7;
pub(crate) const FLOWTABLE_HOOK_NUM: u16 = 1;
pub(crate) const FLOWTABLE_HOOK_PRIORITY: u16 = 2;
pub(crate) const FLOWTABLE_HOOK_DEVS: u16 = 3;
pub(crate) const DEVICE_NAME: u16 = 1;
/// NFTA_GEN_ID: the ruleset's generation, which every commit moves on.
pub(crate) const GEN_ID: u16 = 1;

/// Set flags (NFT_SET_*).
pub(crate) const SET_ANONYMOUS: u32 = 0x1;
pub(crate) const SET_CONSTANT: u32 = 0x2;
pub(crate) const SET_MAP: u32 = 0x8;
/// Set key and data types, as nft numbers its datatypes (the kernel keeps
/// them for nft's listing): ifname, inet_proto, inet_service, icmp_type,
/// icmpv6_type; verdict data (NFT_DATA_VERDICT).
pub(crate) const TYPE_IFNAME: u32 = 41;
pub(crate) const TYPE_INET_PROTO: u32 = 12;
pub(crate) const TYPE_INET_SERVICE: u32 = 13;
pub(crate) const TYPE_ICMP: u32 = 14;
pub(crate) const TYPE_ICMPV6: u32 = 29;
pub(crate) const DATA_VERDICT_TYPE: u32 = 0xffff_ff00;

/// Hooks (enum nf_inet_hooks): ingress is the inet family's (5.10).
pub(crate) const HOOK_PREROUTING: u32 = 0;
pub(crate) const HOOK_INPUT: u32 = 1;
pub(crate) const HOOK_FORWARD: u32 = 2;
pub(crate) const HOOK_OUTPUT: u32 = 3;
pub(crate) const HOOK_POSTROUTING: u32 = 4;
pub(crate) const HOOK_INGRESS: u32 = 5;
/// Verdicts: NF_DROP, NF_ACCEPT, NFT_JUMP.
pub(crate) const VERDICT_DROP: u32 = 0;
pub(crate) const VERDICT_ACCEPT: u32 = 1;
pub(crate) const VERDICT_JUMP: u32 = -3i32 as u32;

// Expression keys and operators.
pub(crate) const META_IIF: u32 = 4;
pub(crate) const META_IIFNAME: u32 = 6;
pub(crate) const META_OIFNAME: u32 = 7;
pub(crate) const META_NFPROTO: u32 = 15;
pub(crate) const META_L4PROTO: u32 = 16;
pub(crate) const CMP_EQ: u32 = 0;
pub(crate) const CMP_NEQ: u32 = 1;
pub(crate) const CMP_LTE: u32 = 3;
pub(crate) const CMP_GTE: u32 = 5;
pub(crate) const PAYLOAD_NETWORK: u32 = 1;
pub(crate) const PAYLOAD_TRANSPORT: u32 = 2;
pub(crate) const CT_STATE: u32 = 0;
pub(crate) const CT_STATUS: u32 = 2;
/// ct state bits (NF_CT_STATE_*): invalid, established, related.
pub(crate) const CT_INVALID: u32 = 1;
pub(crate) const CT_ESTABLISHED: u32 = 2;
pub(crate) const CT_RELATED: u32 = 4;
/// IPS_DST_NAT (`ct status dnat`).
pub(crate) const CT_STATUS_DNAT: u32 = 0x20;
/// fib: look up the destination address, give its address type.
pub(crate) const FIB_F_DADDR: u32 = 2;
pub(crate) const FIB_RESULT_ADDRTYPE: u32 = 3;
/// RTN_LOCAL.
pub(crate) const RTN_LOCAL: u32 = 2;
pub(crate) const EXTHDR_OP_IPV6: u32 = 0;
pub(crate) const EXTHDR_OP_TCPOPT: u32 = 1;
pub(crate) const RT_TCPMSS: u32 = 3;
pub(crate) const BYTEORDER_HTON: u32 = 1;
pub(crate) const NAT_DNAT: u32 = 1;
/// NF_NAT_RANGE_PROTO_SPECIFIED.
pub(crate) const NAT_PROTO_SPECIFIED: u32 = 2;
/// The loopback interface's index in every network namespace.
pub(crate) const LOOPBACK_IFINDEX: u32 = 1;

/// Set userdata records (libnftnl's NFTNL_UDATA_SET_*), read only by nft
/// when it lists: without them a set of interface names lists as `{ "" }`.
pub(crate) const UDATA_KEYBYTEORDER: u8 = 0;
pub(crate) const UDATA_DATABYTEORDER: u8 = 1;
pub(crate) const UDATA_KEY_TYPEOF: u8 = 3;
pub(crate) const UDATA_DATA_TYPEOF: u8 = 4;
pub(crate) const UDATA_DATA_INTERVAL: u8 = 6;
pub(crate) const UDATA_TYPEOF_EXPR: u8 = 0;
pub(crate) const UDATA_TYPEOF_DATA: u8 = 1;
/// nft's byte orders (enum byteorder) and expression kinds (enum
/// expr_types: verdict, payload, meta) as userdata records name them.
pub(crate) const BYTEORDER_HOST: u32 = 1;
pub(crate) const BYTEORDER_BIG: u32 = 2;
pub(crate) const EXPR_VERDICT: u32 = 1;
pub(crate) const EXPR_PAYLOAD: u32 = 7;
pub(crate) const EXPR_META: u32 = 9;

/// The byte order of host-order fields. A shipped build has one value,
/// the target's own (what its kernel reads), so every conversion is a
/// plain native-endian one; the unit tests and the fuzz targets have both
/// orders, to pin and read the bytes of either on any host.
#[cfg(any(test, feature = "fuzz"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    Little,
    Big,
}

#[cfg(any(test, feature = "fuzz"))]
impl Order {
    /// The order of the machine this runs on: what the kernel reads.
    pub(crate) const HOST: Order = if cfg!(target_endian = "big") { Order::Big } else { Order::Little };
    fn native(self) -> bool {
        self == Order::HOST
    }
}

/// The byte order of host-order fields: the target's own (see above).
#[cfg(not(any(test, feature = "fuzz")))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    Host,
}

#[cfg(not(any(test, feature = "fuzz")))]
impl Order {
    pub(crate) const HOST: Order = Order::Host;
    fn native(self) -> bool {
        true
    }
}

impl Order {
    pub(crate) fn u16(self, v: u16) -> [u8; 2] {
        if self.native() { v } else { v.swap_bytes() }.to_ne_bytes()
    }
    pub(crate) fn u32(self, v: u32) -> [u8; 4] {
        if self.native() { v } else { v.swap_bytes() }.to_ne_bytes()
    }
    fn read_u16(self, b: &[u8]) -> u16 {
        let v = u16::from_ne_bytes([b[0], b[1]]);
        if self.native() {
            v
        } else {
            v.swap_bytes()
        }
    }
    fn read_u32(self, b: &[u8]) -> u32 {
        let v = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
        if self.native() {
            v
        } else {
            v.swap_bytes()
        }
    }
}

fn align(n: usize) -> usize {
    (n + 3) & !3
}

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

/// The kernel modules a batch needs, where they are modules (Debian's
/// and OpenWrt's kernels build them so): the kernel loads each when a
/// batch first asks for what it holds, with a modprobe process per
/// request, an expression's family-specific alias asked first (a
/// process that finds nothing), and the batch replayed after each. A set
/// of [`Modules::NAMES`]' indices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Modules(u16);

impl Modules {
    /// Each module's name, in the order the firewall's preload names them
    /// to modprobe: nf_tables, then the stateless rule set's, then what
    /// only a router's needs, the flowtable's last. nf_log_syslog, the
    /// logger, came with Linux 5.12 (nf_log_ipv4 and nf_log_ipv6 before);
    /// `modprobe -a` goes on past a name it cannot load, kmod's and
    /// BusyBox's alike.
    pub(crate) const NAMES: [&'static str; 11] = [
        "nf_tables",
        "nft_limit",
        "nf_log_syslog",
        "nft_log",
        "nft_ct",
        "nft_fib_inet",
        "nft_nat",
        "nft_masq",
        "nft_chain_nat",
        "nf_flow_table_inet",
        "nft_flow_offload",
    ];
    pub(crate) const NF_TABLES: Modules = Modules(1);
    /// A chain of type nat.
    pub(crate) const CHAIN_NAT: Modules = Modules(1 << 8);
    /// A flowtable in an `inet` table.
    pub(crate) const FLOWTABLE_INET: Modules = Modules(1 << 9);

    /// What expression `e` needs beyond nf_tables (whose core holds meta,
    /// cmp, payload, bitwise, lookup, immediate, exthdr, rt and
    /// byteorder).
    pub(crate) fn of(e: &Expr<'_>) -> Modules {
        Modules(match e {
            Expr::Limit { .. } => 1 << 1,
            // The expression, and the logger it asks the kernel for.
            Expr::Log { .. } => 1 << 2 | 1 << 3,
            Expr::Ct { .. } | Expr::Notrack => 1 << 4,
            Expr::Fib { .. } => 1 << 5,
            Expr::Dnat { .. } => 1 << 6,
            Expr::Masq => 1 << 7,
            Expr::FlowOffload { .. } => 1 << 10,
            _ => 0,
        })
    }

    /// The module that holds the expression named `expr`, for messages.
    pub(crate) fn holding(expr: &str) -> &'static str {
        match expr {
            "fib" => "nft_fib_inet and nft_fib_ipv4",
            "flow_offload" => "nft_flow_offload",
            "log" => "nft_log",
            "limit" => "nft_limit",
            "ct" | "notrack" => "nft_ct",
            "masq" => "nft_masq",
            "nat" => "nft_nat",
            _ => "nf_tables",
        }
    }

    #[must_use]
    pub(crate) fn with(self, other: Modules) -> Modules {
        Modules(self.0 | other.0)
    }

    /// For each kind of module the batch needs (the logging rule's, 1-3;
    /// conntrack's and NAT's, 4-8; the flowtable's, 9-10), the last it
    /// needs of that kind: one loaded, the kind's others are as a rule
    /// too, loaded with it by a batch like this one. A kind can come
    /// loaded alone: the flowtable's at boot (tests/routerboard.sh), the
    /// logging rule's by a stateless rule set before a router's.
    pub(crate) fn last_of_each_kind(self) -> impl Iterator<Item = &'static str> {
        const KINDS: [std::ops::RangeInclusive<usize>; 3] = [1..=3, 4..=8, 9..=10];
        KINDS.into_iter().filter_map(move |k| k.rev().find(|i| self.0 & (1 << i) != 0).map(|i| Modules::NAMES[i]))
    }

    /// The names, in [`Modules::NAMES`]' order.
    pub(crate) fn names(self) -> impl Iterator<Item = &'static str> {
        Modules::NAMES.into_iter().enumerate().filter(move |(i, _)| self.0 & (1 << i) != 0).map(|(_, n)| n)
    }
}

/// NFT_REG_1, NFT_REG_VERDICT.
const REG_1: u32 = 1;
const REG_VERDICT: u32 = 0;

/// Netlink messages being written into one buffer: a batch, or one
/// request. Each message's sequence number and offset are kept, so that
/// an error reply can be traced to the message (and, with the extended
/// ack's offset, the attribute) that caused it.
pub(crate) struct Writer {
    buf: Vec<u8>,
    order: Order,
    seq: u32,
    open: Option<usize>,
    starts: Vec<(u32, usize)>,
    /// The modules the expressions written so far need.
    modules: Modules,
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

impl Writer {
    /// Messages numbered from `seq`: room for a request (a dump's or
    /// GETGEN's are under 64 bytes), not for a batch: a buffer of some KiB
    /// allocated and freed per request is heap churn a slow board pays
    /// for in page faults.
    pub(crate) fn new(order: Order, seq: u32) -> Writer {
        Writer::with_room(order, seq, 64)
    }

    fn with_room(order: Order, seq: u32, room: usize) -> Writer {
        Writer { buf: Vec::with_capacity(room), order, seq, open: None, starts: Vec::new(), modules: Modules::default() }
    }

    /// A batch: BATCH_BEGIN written, numbered from `seq`. A router's batch
    /// is some 16 KiB: room for it without regrowing.
    pub(crate) fn batch(order: Order, seq: u32) -> Writer {
        let mut w = Writer::with_room(order, seq, 16 * 1024);
        w.header(NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, NFPROTO_UNSPEC, NFNL_SUBSYS_NFTABLES);
        w
    }

    pub(crate) fn order(&self) -> Order {
        self.order
    }

    /// What is written needs `m` too (a nat chain, a flowtable): the
    /// writer tells only its expressions' modules itself.
    pub(crate) fn uses(&mut self, m: Modules) {
        self.modules = self.modules.with(m);
    }

    /// The modules what was written needs, nf_tables itself with them.
    pub(crate) fn modules(&self) -> Modules {
        self.modules.with(Modules::NF_TABLES)
    }

    /// Append `N` bytes known at compile time: stores, where
    /// `extend_from_slice` is a call to a generic extend and to memcpy for
    /// each 4- or 8-byte field (a router's batch has some 3,000).
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
    fn raw(&mut self, records: &[u8]) {
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
        self.put(DATA_VALUE, value);
        self.end(n);
    }
    /// A nested verdict (`NFTA_DATA_VERDICT`).
    pub(crate) fn put_verdict(&mut self, kind: u16, code: u32, chain: Option<&str>) {
        let n = self.nest(kind);
        let v = self.nest(DATA_VERDICT);
        self.put_be32(VERDICT_CODE, code);
        if let Some(c) = chain {
            self.put_str(VERDICT_CHAIN, c);
        }
        self.end(v);
        self.end(n);
    }

    /// One expression, as an `NFTA_LIST_ELEM` of a rule's list.
    pub(crate) fn expr(&mut self, e: &Expr<'_>) {
        self.modules = self.modules.with(Modules::of(e));
        let elem = self.nest(LIST_ELEM);
        self.put_str(EXPR_NAME, e.name());
        if *e == Expr::Notrack {
            self.end(elem);
            return;
        }
        let d = self.nest(EXPR_DATA);
        match *e {
            Expr::Meta { key } | Expr::Ct { key } | Expr::Rt { key } => {
                self.put_be32(2, key);
                self.put_be32(1, REG_1);
            }
            Expr::Cmp { op, data } => {
                self.put_be32(1, REG_1);
                self.put_be32(2, op);
                self.put_data(3, data);
            }
            Expr::Payload { base, offset, len } => {
                self.put_be32(1, REG_1);
                self.put_be32(2, base);
                self.put_be32(3, offset);
                self.put_be32(4, len);
            }
            Expr::Bitwise { mask, op } => {
                self.put_be32(1, REG_1);
                self.put_be32(2, REG_1);
                if op {
                    self.put_be32(6, 0);
                }
                self.put_be32(3, mask.len() as u32);
                self.put_data(4, mask);
                self.put_data(5, &[0; 16][..mask.len()]);
            }
            Expr::Lookup { set, id, map } => {
                self.put_be32(2, REG_1);
                if map {
                    self.put_be32(3, REG_VERDICT);
                }
                self.put_str(1, set);
                self.put_be32(4, id);
            }
            Expr::Verdict { code, chain } => {
                self.put_be32(1, REG_VERDICT);
                self.put_verdict(2, code, chain);
            }
            Expr::Immediate { reg, data } => {
                self.put_be32(1, reg);
                self.put_data(2, data);
            }
            Expr::Fib { flags, result } => {
                self.put_be32(3, flags);
                self.put_be32(2, result);
                self.put_be32(1, REG_1);
            }
            Expr::Exthdr { ty, offset, len } => {
                self.put_be32(1, REG_1);
                self.put(2, &[ty]);
                self.put_be32(3, offset);
                self.put_be32(4, len);
                self.put_be32(6, EXTHDR_OP_IPV6);
                self.put_be32(5, 0);
            }
            Expr::ExthdrWrite { ty, offset, len } => {
                self.put_be32(7, REG_1);
                self.put(2, &[ty]);
                self.put_be32(3, offset);
                self.put_be32(4, len);
                self.put_be32(6, EXTHDR_OP_TCPOPT);
            }
            Expr::Hton { len, size } => {
                self.put_be32(1, REG_1);
                self.put_be32(2, REG_1);
                self.put_be32(3, BYTEORDER_HTON);
                self.put_be32(4, len);
                self.put_be32(5, size);
            }
            Expr::Limit { rate, unit, burst } => {
                self.put(1, &rate.to_be_bytes());
                self.put(2, &unit.to_be_bytes());
                self.put_be32(3, burst);
                self.put_be32(4, 0);
                self.put_be32(5, 0);
            }
            Expr::Log { prefix } => self.put_str(2, prefix),
            Expr::FlowOffload { table } => self.put_str(1, table),
            Expr::Dnat { family } => {
                self.put_be32(1, NAT_DNAT);
                self.put_be32(2, family);
                self.put_be32(3, 1);
                self.put_be32(5, 2);
                self.put_be32(7, NAT_PROTO_SPECIFIED);
            }
            Expr::Masq | Expr::Notrack => {}
        }
        self.end(d);
        self.end(elem);
    }
}

/// Set userdata, as nft writes it: records of a type byte, a length
/// byte and the value; u32 values in host order.
pub(crate) type Udata = heapless::Vec<u8, 32>;

fn udata_u32(u: &mut Udata, kind: u8, v: u32, order: Order) {
    let _ = u.extend_from_slice(&[kind, 4]);
    let _ = u.extend_from_slice(&order.u32(v));
}

/// A set key's userdata: its byte order (BYTEORDER_*), then, when
/// `typeof_` names one, nft's typeof record: the expression kind
/// (EXPR_*) and its data (a meta key; a payload's protocol and field).
pub(crate) fn udata_key(order: Order, byteorder: u32, typeof_: &[u32]) -> Udata {
    let mut u = Udata::new();
    udata_u32(&mut u, UDATA_KEYBYTEORDER, byteorder, order);
    if let [expr, data @ ..] = typeof_ {
        let inner = 6 * data.len() as u8;
        let _ = u.extend_from_slice(&[UDATA_KEY_TYPEOF, 6 + 2 + inner]);
        udata_u32(&mut u, UDATA_TYPEOF_EXPR, *expr, order);
        let _ = u.extend_from_slice(&[UDATA_TYPEOF_DATA, inner]);
        for (i, v) in data.iter().enumerate() {
            udata_u32(&mut u, i as u8, *v, order);
        }
    }
    u
}

/// A verdict map's userdata (an interface-name key): the key's byte
/// order, the data's (none), the data's typeof (a verdict), no interval.
pub(crate) fn udata_vmap(order: Order) -> Udata {
    let mut u = Udata::new();
    udata_u32(&mut u, UDATA_KEYBYTEORDER, BYTEORDER_HOST, order);
    udata_u32(&mut u, UDATA_DATABYTEORDER, 0, order);
    let _ = u.extend_from_slice(&[UDATA_DATA_TYPEOF, 8]);
    udata_u32(&mut u, UDATA_TYPEOF_EXPR, EXPR_VERDICT, order);
    let _ = u.extend_from_slice(&[UDATA_TYPEOF_DATA, 0]);
    udata_u32(&mut u, UDATA_DATA_INTERVAL, 0, order);
    u
}

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
        off += align(len).min(b.len());
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
    let tlvs_at = if flags & NLM_F_CAPPED != 0 { 4 + NLMSG_HDRLEN } else { 4 + align(orig_len) };
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
        buf = &buf[align(len).min(buf.len())..];
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
        at += align(len);
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
    let list = find(attrs, order, RULE_EXPRESSIONS)?;
    let list_at = list.as_ptr() as usize - msg.as_ptr() as usize;
    let mut at = list_at;
    let mut name = None;
    let _ = each_attr(list, order, &mut |_, elem| {
        let end = at + NLA_HDRLEN + elem.len();
        if (at..end).contains(&offset) {
            name = find(elem, order, EXPR_NAME).map(str_value);
        }
        at = align(end);
        Ok(())
    });
    name
}

/// The devices a chain's or a flowtable's hook is bound to (`kind`:
/// NEWCHAIN or NEWFLOWTABLE, as a dump types its replies or a batch its
/// messages), each to `each`: the NFTA_DEVICE_NAMEs of the device list,
/// or without one a base chain's NFTA_HOOK_DEV (a kernel dumps a chain's
/// only device both ways). Linux 6.1 drops a device from these lists when
/// the device goes away, and with its last device a chain itself; 6.18
/// keeps the name, and binds the device again when it comes back. Neither
/// is a commit.
pub(crate) fn hook_devices<'a>(kind: u8, attrs: &'a [u8], order: Order, each: &mut dyn FnMut(&'a str)) {
    let (hook, devs) = match kind {
        NEWCHAIN => (CHAIN_HOOK, HOOK_DEVS),
        NEWFLOWTABLE => (FLOWTABLE_HOOK, FLOWTABLE_HOOK_DEVS),
        _ => return,
    };
    let Some(h) = find(attrs, order, hook) else { return };
    match (find(h, order, devs), find(h, order, HOOK_DEV)) {
        (Some(list), _) => {
            let _ = each_attr(list, order, &mut |k, name| {
                if k == DEVICE_NAME {
                    each(str_value(name));
                }
                Ok(())
            });
        }
        (None, Some(dev)) if kind == NEWCHAIN => each(str_value(dev)),
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

/// A 64-bit digest of a batch's bytes, its messages' sequence numbers
/// left out: the same rule set encodes to the same digest whatever the
/// numbers it was sent with. FNV-1a's steps over 32-bit words (`words`)
/// rather than bytes: a quarter of the 64-bit multiplications, which a
/// 32-bit CPU makes of three of its own each (a router's batch is some
/// 16 KiB, digested at every apply).
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

/// FNV-1a, 64 bits: its start, and `bytes` added to `h`.
pub(crate) const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;
pub(crate) fn fnv(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3))
}

/// Append to `w` the message that creates again an object the kernel
/// dumped (`kind`: NEWCHAIN, NEWSET, NEWSETELEM, NEWFLOWTABLE or
/// NEWRULE, as the dump's replies are typed), keeping only the attributes
/// that describe it: handles, use counts, counters' state and positions
/// are left out. Base chains keep their hook, type and policy; rules
/// their expressions as the kernel dumped them, which are the attributes
/// each expression's init reads. For `firewall apply --confirm`'s
/// rollback. A set gets `set_id`, which the kernel requires of a new set
/// and does not dump. False for another kind.
pub(crate) fn replay(w: &mut Writer, kind: u8, family: u8, attrs: &[u8], order: Order, set_id: u32) -> bool {
    let keep: &[u16] = match kind {
        NEWTABLE => &[TABLE_NAME, TABLE_FLAGS, TABLE_USERDATA],
        NEWCHAIN => &[CHAIN_TABLE, CHAIN_NAME, CHAIN_HOOK, CHAIN_POLICY, CHAIN_TYPE, CHAIN_USERDATA],
        NEWSET => {
            &[SET_TABLE, SET_NAME, SET_FLAGS, SET_KEY_TYPE, SET_KEY_LEN, SET_DATA_TYPE, SET_DATA_LEN, SET_POLICY, SET_DESC, SET_USERDATA]
        }
        NEWSETELEM => &[SET_ELEM_LIST_TABLE, SET_ELEM_LIST_SET, SET_ELEM_LIST_ELEMENTS],
        NEWFLOWTABLE => &[FLOWTABLE_TABLE, FLOWTABLE_NAME, FLOWTABLE_HOOK, FLOWTABLE_FLAGS],
        NEWRULE => &[RULE_TABLE, RULE_CHAIN, RULE_EXPRESSIONS, RULE_USERDATA],
        _ => return false,
    };
    let flags = if kind == NEWRULE { NLM_F_CREATE | NLM_F_APPEND } else { NLM_F_CREATE };
    w.msg(kind, family, flags);
    let mut at = 0;
    let _ = each_attr(attrs, order, &mut |k, v| {
        let rec = NLA_HDRLEN + v.len();
        if kind == NEWRULE && k == RULE_EXPRESSIONS {
            replay_exprs(w, v, order);
        } else if keep.contains(&k) {
            // Copied header and all: nested attributes keep their flag.
            w.raw(&attrs[at..at + rec]);
        }
        at += align(rec);
        Ok(())
    });
    if kind == NEWSET {
        w.put_be32(SET_ID, set_id);
    }
    true
}

/// A rule's expressions as the kernel dumped them, written back: the
/// dump of an exthdr write carries NFTA_EXTHDR_FLAGS, which the kernel's
/// own init of a write refuses (EINVAL), so it is left out there; every
/// other attribute is copied as it is.
fn replay_exprs(w: &mut Writer, list: &[u8], order: Order) {
    let l = w.nest(RULE_EXPRESSIONS);
    let _ = each_attr(list, order, &mut |_, elem| {
        let e = w.nest(LIST_ELEM);
        let name = find(elem, order, EXPR_NAME).map(str_value).unwrap_or_default();
        w.put_str(EXPR_NAME, name);
        if let Some(data) = find(elem, order, EXPR_DATA) {
            let write = name == "exthdr" && find(data, order, 7).is_some();
            let d = w.nest(EXPR_DATA);
            let mut at = 0;
            each_attr(data, order, &mut |k, v| {
                let rec = NLA_HDRLEN + v.len();
                if !(write && k == 5) {
                    w.raw(&data[at..at + rec]);
                }
                at += align(rec);
                Ok(())
            })?;
            w.end(d);
        }
        w.end(e);
        Ok(())
    });
    w.end(l);
}

#[cfg(test)]
mod tests;
