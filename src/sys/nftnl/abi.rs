//! The kernel's names and numbers for nf_tables over netlink, each by its
//! name in the uapi header it comes from: include/uapi/linux/netlink.h,
//! netfilter/nfnetlink.h, netfilter/nf_tables.h, netfilter.h,
//! netfilter/nf_conntrack_common.h, netfilter/nf_nat.h and
//! rtnetlink.h. Nothing here decides anything.

/// The netlink protocol (linux/netlink.h).
pub(crate) const NETLINK_NETFILTER: isize = 12;

// nlmsghdr flags and types (linux/netlink.h).
pub(crate) const NLM_F_REQUEST: u16 = 0x1;
pub(crate) const NLM_F_ACK: u16 = 0x4;
pub(crate) const NLM_F_DUMP: u16 = 0x300;
pub(crate) const NLM_F_CREATE: u16 = 0x400;
pub(crate) const NLM_F_APPEND: u16 = 0x800;
/// In an NLMSG_ERROR: the original message's payload was left out, and
/// extended-ack attributes follow.
pub(super) const NLM_F_CAPPED: u16 = 0x100;
pub(super) const NLM_F_ACK_TLVS: u16 = 0x200;
pub(super) const NLMSG_ERROR: u16 = 2;
pub(super) const NLMSG_DONE: u16 = 3;
pub(super) const NLMSGERR_ATTR_MSG: u16 = 1;
pub(super) const NLMSGERR_ATTR_OFFS: u16 = 2;
/// sizeof(struct nlmsghdr), sizeof(struct nfgenmsg), sizeof(struct nlattr).
pub(crate) const NLMSG_HDRLEN: usize = 16;
pub(crate) const NFGENMSG_LEN: usize = 4;
pub(crate) const NLA_HDRLEN: usize = 4;
pub(crate) const NLA_F_NESTED: u16 = 0x8000;
pub(crate) const NLA_TYPE_MASK: u16 = 0x3fff;

// nfnetlink: the batch framing and the nf_tables subsystem.
pub(super) const NFNL_MSG_BATCH_BEGIN: u16 = 0x10;
pub(super) const NFNL_MSG_BATCH_END: u16 = 0x11;
pub(super) const NFNL_SUBSYS_NFTABLES: u16 = 10;

// enum nf_tables_msg_types.
pub(crate) const NFT_MSG_NEWTABLE: u8 = 0;
pub(crate) const NFT_MSG_GETTABLE: u8 = 1;
pub(crate) const NFT_MSG_DELTABLE: u8 = 2;
pub(crate) const NFT_MSG_NEWCHAIN: u8 = 3;
pub(crate) const NFT_MSG_GETCHAIN: u8 = 4;
pub(crate) const NFT_MSG_NEWRULE: u8 = 6;
pub(crate) const NFT_MSG_GETRULE: u8 = 7;
pub(crate) const NFT_MSG_NEWSET: u8 = 9;
pub(crate) const NFT_MSG_GETSET: u8 = 10;
pub(crate) const NFT_MSG_NEWSETELEM: u8 = 12;
pub(crate) const NFT_MSG_GETSETELEM: u8 = 13;
pub(crate) const NFT_MSG_NEWGEN: u8 = 15;
pub(crate) const NFT_MSG_GETGEN: u8 = 16;
pub(crate) const NFT_MSG_NEWFLOWTABLE: u8 = 22;
pub(crate) const NFT_MSG_GETFLOWTABLE: u8 = 23;

// Families (linux/netfilter.h).
pub(crate) const NFPROTO_UNSPEC: u8 = 0;
pub(crate) const NFPROTO_INET: u8 = 1;
pub(crate) const NFPROTO_IPV4: u8 = 2;
pub(crate) const NFPROTO_IPV6: u8 = 10;

// Object attributes (enum nft_*_attributes).
pub(crate) const NFTA_TABLE_NAME: u16 = 1;
pub(crate) const NFTA_TABLE_FLAGS: u16 = 2;
pub(crate) const NFTA_TABLE_USERDATA: u16 = 6;
pub(crate) const NFTA_CHAIN_TABLE: u16 = 1;
pub(crate) const NFTA_CHAIN_NAME: u16 = 3;
pub(crate) const NFTA_CHAIN_HOOK: u16 = 4;
pub(crate) const NFTA_CHAIN_POLICY: u16 = 5;
pub(crate) const NFTA_CHAIN_TYPE: u16 = 7;
pub(crate) const NFTA_CHAIN_USERDATA: u16 = 12;
pub(crate) const NFTA_HOOK_HOOKNUM: u16 = 1;
pub(crate) const NFTA_HOOK_PRIORITY: u16 = 2;
pub(crate) const NFTA_HOOK_DEV: u16 = 3;
pub(crate) const NFTA_HOOK_DEVS: u16 = 4;
pub(crate) const NFTA_RULE_TABLE: u16 = 1;
pub(crate) const NFTA_RULE_CHAIN: u16 = 2;
pub(crate) const NFTA_RULE_EXPRESSIONS: u16 = 4;
pub(crate) const NFTA_RULE_USERDATA: u16 = 7;
pub(crate) const NFTA_LIST_ELEM: u16 = 1;
pub(crate) const NFTA_EXPR_NAME: u16 = 1;
pub(crate) const NFTA_EXPR_DATA: u16 = 2;
pub(crate) const NFTA_SET_TABLE: u16 = 1;
pub(crate) const NFTA_SET_NAME: u16 = 2;
pub(crate) const NFTA_SET_FLAGS: u16 = 3;
pub(crate) const NFTA_SET_KEY_TYPE: u16 = 4;
pub(crate) const NFTA_SET_KEY_LEN: u16 = 5;
pub(crate) const NFTA_SET_DATA_TYPE: u16 = 6;
pub(crate) const NFTA_SET_DATA_LEN: u16 = 7;
pub(crate) const NFTA_SET_POLICY: u16 = 8;
pub(crate) const NFTA_SET_DESC: u16 = 9;
pub(crate) const NFTA_SET_ID: u16 = 10;
pub(crate) const NFTA_SET_USERDATA: u16 = 13;
pub(crate) const NFTA_SET_DESC_SIZE: u16 = 1;
pub(crate) const NFTA_SET_ELEM_LIST_TABLE: u16 = 1;
pub(crate) const NFTA_SET_ELEM_LIST_SET: u16 = 2;
pub(crate) const NFTA_SET_ELEM_LIST_ELEMENTS: u16 = 3;
pub(crate) const NFTA_SET_ELEM_LIST_SET_ID: u16 = 4;
pub(crate) const NFTA_SET_ELEM_KEY: u16 = 1;
pub(crate) const NFTA_SET_ELEM_DATA: u16 = 2;
pub(crate) const NFTA_DATA_VALUE: u16 = 1;
pub(crate) const NFTA_DATA_VERDICT: u16 = 2;
pub(crate) const NFTA_VERDICT_CODE: u16 = 1;
pub(crate) const NFTA_VERDICT_CHAIN: u16 = 2;
pub(crate) const NFTA_FLOWTABLE_TABLE: u16 = 1;
pub(crate) const NFTA_FLOWTABLE_NAME: u16 = 2;
pub(crate) const NFTA_FLOWTABLE_HOOK: u16 = 3;
pub(crate) const NFTA_FLOWTABLE_FLAGS: u16 = 7;
pub(crate) const NFTA_FLOWTABLE_HOOK_NUM: u16 = 1;
pub(crate) const NFTA_FLOWTABLE_HOOK_PRIORITY: u16 = 2;
pub(crate) const NFTA_FLOWTABLE_HOOK_DEVS: u16 = 3;
pub(crate) const NFTA_DEVICE_NAME: u16 = 1;
/// The ruleset's generation, which every commit moves on.
pub(crate) const NFTA_GEN_ID: u16 = 1;

// Expression attributes (enum nft_*_attributes), per expression.
pub(crate) const NFTA_META_DREG: u16 = 1;
pub(crate) const NFTA_META_KEY: u16 = 2;
pub(crate) const NFTA_CT_DREG: u16 = 1;
pub(crate) const NFTA_CT_KEY: u16 = 2;
pub(crate) const NFTA_RT_DREG: u16 = 1;
pub(crate) const NFTA_RT_KEY: u16 = 2;
pub(crate) const NFTA_CMP_SREG: u16 = 1;
pub(crate) const NFTA_CMP_OP: u16 = 2;
pub(crate) const NFTA_CMP_DATA: u16 = 3;
pub(crate) const NFTA_PAYLOAD_DREG: u16 = 1;
pub(crate) const NFTA_PAYLOAD_BASE: u16 = 2;
pub(crate) const NFTA_PAYLOAD_OFFSET: u16 = 3;
pub(crate) const NFTA_PAYLOAD_LEN: u16 = 4;
pub(crate) const NFTA_BITWISE_SREG: u16 = 1;
pub(crate) const NFTA_BITWISE_DREG: u16 = 2;
pub(crate) const NFTA_BITWISE_LEN: u16 = 3;
pub(crate) const NFTA_BITWISE_MASK: u16 = 4;
pub(crate) const NFTA_BITWISE_XOR: u16 = 5;
pub(crate) const NFTA_BITWISE_OP: u16 = 6;
pub(crate) const NFTA_LOOKUP_SET: u16 = 1;
pub(crate) const NFTA_LOOKUP_SREG: u16 = 2;
pub(crate) const NFTA_LOOKUP_DREG: u16 = 3;
pub(crate) const NFTA_LOOKUP_SET_ID: u16 = 4;
pub(crate) const NFTA_IMMEDIATE_DREG: u16 = 1;
pub(crate) const NFTA_IMMEDIATE_DATA: u16 = 2;
pub(crate) const NFTA_FIB_DREG: u16 = 1;
pub(crate) const NFTA_FIB_RESULT: u16 = 2;
pub(crate) const NFTA_FIB_FLAGS: u16 = 3;
pub(crate) const NFTA_EXTHDR_DREG: u16 = 1;
pub(crate) const NFTA_EXTHDR_TYPE: u16 = 2;
pub(crate) const NFTA_EXTHDR_OFFSET: u16 = 3;
pub(crate) const NFTA_EXTHDR_LEN: u16 = 4;
pub(crate) const NFTA_EXTHDR_FLAGS: u16 = 5;
pub(crate) const NFTA_EXTHDR_OP: u16 = 6;
pub(crate) const NFTA_EXTHDR_SREG: u16 = 7;
pub(crate) const NFTA_BYTEORDER_SREG: u16 = 1;
pub(crate) const NFTA_BYTEORDER_DREG: u16 = 2;
pub(crate) const NFTA_BYTEORDER_OP: u16 = 3;
pub(crate) const NFTA_BYTEORDER_LEN: u16 = 4;
pub(crate) const NFTA_BYTEORDER_SIZE: u16 = 5;
pub(crate) const NFTA_LIMIT_RATE: u16 = 1;
pub(crate) const NFTA_LIMIT_UNIT: u16 = 2;
pub(crate) const NFTA_LIMIT_BURST: u16 = 3;
pub(crate) const NFTA_LIMIT_TYPE: u16 = 4;
pub(crate) const NFTA_LIMIT_FLAGS: u16 = 5;
pub(crate) const NFTA_LOG_PREFIX: u16 = 2;
pub(crate) const NFTA_FLOW_TABLE_NAME: u16 = 1;
pub(crate) const NFTA_NAT_TYPE: u16 = 1;
pub(crate) const NFTA_NAT_FAMILY: u16 = 2;
pub(crate) const NFTA_NAT_REG_ADDR_MIN: u16 = 3;
pub(crate) const NFTA_NAT_REG_PROTO_MIN: u16 = 5;
pub(crate) const NFTA_NAT_FLAGS: u16 = 7;

// Set flags (enum nft_set_flags).
pub(crate) const NFT_SET_ANONYMOUS: u32 = 0x1;
pub(crate) const NFT_SET_CONSTANT: u32 = 0x2;
pub(crate) const NFT_SET_MAP: u32 = 0x8;
/// Verdict data (enum nft_data_types), as a map's data type.
pub(crate) const NFT_DATA_VERDICT: u32 = 0xffff_ff00;

// Hooks (enum nf_inet_hooks): ingress is the inet family's (5.10).
pub(crate) const NF_INET_PRE_ROUTING: u32 = 0;
pub(crate) const NF_INET_LOCAL_IN: u32 = 1;
pub(crate) const NF_INET_FORWARD: u32 = 2;
pub(crate) const NF_INET_LOCAL_OUT: u32 = 3;
pub(crate) const NF_INET_POST_ROUTING: u32 = 4;
pub(crate) const NF_INET_INGRESS: u32 = 5;
/// A flowtable's hook (enum nf_dev_hooks).
pub(crate) const NF_NETDEV_INGRESS: u32 = 0;
// Verdicts (linux/netfilter.h, enum nft_verdicts).
pub(crate) const NF_DROP: u32 = 0;
pub(crate) const NF_ACCEPT: u32 = 1;
pub(crate) const NFT_JUMP: u32 = -3i32 as u32;

// Registers (enum nft_registers): the legacy 16-byte numbering.
pub(crate) const NFT_REG_VERDICT: u32 = 0;
pub(crate) const NFT_REG_1: u32 = 1;
pub(crate) const NFT_REG_2: u32 = 2;

// Expression keys, operators and their values.
pub(crate) const NFT_META_IIF: u32 = 4;
pub(crate) const NFT_META_IIFNAME: u32 = 6;
pub(crate) const NFT_META_OIFNAME: u32 = 7;
pub(crate) const NFT_META_NFPROTO: u32 = 15;
pub(crate) const NFT_META_L4PROTO: u32 = 16;
pub(crate) const NFT_CMP_EQ: u32 = 0;
pub(crate) const NFT_CMP_NEQ: u32 = 1;
pub(crate) const NFT_CMP_LTE: u32 = 3;
pub(crate) const NFT_CMP_GTE: u32 = 5;
pub(crate) const NFT_PAYLOAD_NETWORK_HEADER: u32 = 1;
pub(crate) const NFT_PAYLOAD_TRANSPORT_HEADER: u32 = 2;
/// The mask-and-xor operation (enum nft_bitwise_ops).
pub(crate) const NFT_BITWISE_BOOL: u32 = 0;
pub(crate) const NFT_CT_STATE: u32 = 0;
pub(crate) const NFT_CT_STATUS: u32 = 2;
/// ct state bits (nf_conntrack_common.h): invalid, and
/// `NF_CT_STATE_BIT(ctinfo)` of the enum ip_conntrack_info values.
pub(crate) const NF_CT_STATE_INVALID_BIT: u32 = 1;
pub(crate) const IP_CT_ESTABLISHED: u32 = 0;
pub(crate) const IP_CT_RELATED: u32 = 1;
const IP_CT_IS_REPLY: u32 = 3;
#[allow(non_snake_case)]
pub(crate) const fn NF_CT_STATE_BIT(ctinfo: u32) -> u32 {
    1 << (ctinfo % IP_CT_IS_REPLY + 1)
}
/// `ct status dnat` (enum ip_conntrack_status).
pub(crate) const IPS_DST_NAT: u32 = 0x20;
/// fib: look up the destination address (enum nft_fib_flags), give its
/// address type (enum nft_fib_result).
pub(crate) const NFTA_FIB_F_DADDR: u32 = 2;
pub(crate) const NFT_FIB_RESULT_ADDRTYPE: u32 = 3;
/// rtnetlink.h's route type of a local address.
pub(crate) const RTN_LOCAL: u32 = 2;
pub(crate) const NFT_EXTHDR_OP_IPV6: u32 = 0;
pub(crate) const NFT_EXTHDR_OP_TCPOPT: u32 = 1;
pub(crate) const NFT_RT_TCPMSS: u32 = 3;
pub(crate) const NFT_BYTEORDER_HTON: u32 = 1;
/// `limit` in packets, not bytes (enum nft_limit_type).
pub(crate) const NFT_LIMIT_PKTS: u32 = 0;
pub(crate) const NFT_NAT_DNAT: u32 = 1;
/// nf_nat.h: the range names a port.
pub(crate) const NF_NAT_RANGE_PROTO_SPECIFIED: u32 = 2;
/// The loopback interface's index in every network namespace
/// (LOOPBACK_IFINDEX, net/flow.h).
pub(crate) const LOOPBACK_IFINDEX: u32 = 1;

/// NLA_ALIGN and NLMSG_ALIGN: attributes and messages start on 4 bytes.
pub(crate) const fn nla_align(n: usize) -> usize {
    (n + 3) & !3
}

/// The attribute that names the table of an object of message `kind`
/// (NFT_MSG_NEW* or GET*), or the table itself.
pub(crate) fn table_attr(kind: u8) -> u16 {
    match kind {
        NFT_MSG_NEWCHAIN | NFT_MSG_GETCHAIN => NFTA_CHAIN_TABLE,
        NFT_MSG_NEWRULE | NFT_MSG_GETRULE => NFTA_RULE_TABLE,
        NFT_MSG_NEWSET | NFT_MSG_GETSET => NFTA_SET_TABLE,
        NFT_MSG_NEWSETELEM | NFT_MSG_GETSETELEM => NFTA_SET_ELEM_LIST_TABLE,
        NFT_MSG_NEWFLOWTABLE | NFT_MSG_GETFLOWTABLE => NFTA_FLOWTABLE_TABLE,
        _ => NFTA_TABLE_NAME,
    }
}
