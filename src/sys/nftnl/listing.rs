//! What only nft reads, when it lists a rule set: its datatype numbers
//! (nft's src/datatype.h, enum datatypes), which the kernel keeps as a
//! set's key type, and set userdata (libnftnl's udata.h and nft's
//! enum byteorder and enum expr_types), which the kernel keeps as bytes.
//! Without them `nft list ruleset` shows a set of interface names as
//! `{ "" }`.

use super::Order;

/// Set key and data types, as nft numbers its datatypes: ifname,
/// inet_proto, inet_service, icmp_type, icmpv6_type.
pub(crate) const TYPE_IFNAME: u32 = 41;
pub(crate) const TYPE_INET_PROTO: u32 = 12;
pub(crate) const TYPE_INET_SERVICE: u32 = 13;
pub(crate) const TYPE_ICMP: u32 = 14;
pub(crate) const TYPE_ICMPV6: u32 = 29;

/// Set userdata records (NFTNL_UDATA_SET_*).
pub(crate) const NFTNL_UDATA_SET_KEYBYTEORDER: u8 = 0;
pub(crate) const NFTNL_UDATA_SET_DATABYTEORDER: u8 = 1;
pub(crate) const NFTNL_UDATA_SET_KEY_TYPEOF: u8 = 3;
pub(crate) const NFTNL_UDATA_SET_DATA_TYPEOF: u8 = 4;
pub(crate) const NFTNL_UDATA_SET_DATA_INTERVAL: u8 = 6;
pub(crate) const NFTNL_UDATA_SET_TYPEOF_EXPR: u8 = 0;
pub(crate) const NFTNL_UDATA_SET_TYPEOF_DATA: u8 = 1;
/// nft's byte orders (enum byteorder) and expression kinds (enum
/// expr_types: verdict, payload, meta) as userdata records name them.
pub(crate) const BYTEORDER_HOST_ENDIAN: u32 = 1;
pub(crate) const BYTEORDER_BIG_ENDIAN: u32 = 2;
pub(crate) const EXPR_VERDICT: u32 = 1;
pub(crate) const EXPR_PAYLOAD: u32 = 7;
pub(crate) const EXPR_META: u32 = 9;
/// A payload's protocol in a typeof record (nft's enum proto_desc_id),
/// and its fields (enum icmp_hdr_fields, udp_hdr_fields, tcp_hdr_fields:
/// the type, the source port and the destination port).
pub(crate) const PROTO_DESC_ICMP: u32 = 4;
pub(crate) const PROTO_DESC_UDP: u32 = 6;
pub(crate) const PROTO_DESC_TCP: u32 = 8;
pub(crate) const PROTO_DESC_ICMPV6: u32 = 14;
pub(crate) const ICMPHDR_TYPE: u32 = 1;
pub(crate) const THDR_SPORT: u32 = 1;
pub(crate) const THDR_DPORT: u32 = 2;

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
    udata_u32(&mut u, NFTNL_UDATA_SET_KEYBYTEORDER, byteorder, order);
    if let [expr, data @ ..] = typeof_ {
        let inner = 6 * data.len() as u8;
        let _ = u.extend_from_slice(&[NFTNL_UDATA_SET_KEY_TYPEOF, 6 + 2 + inner]);
        udata_u32(&mut u, NFTNL_UDATA_SET_TYPEOF_EXPR, *expr, order);
        let _ = u.extend_from_slice(&[NFTNL_UDATA_SET_TYPEOF_DATA, inner]);
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
    udata_u32(&mut u, NFTNL_UDATA_SET_KEYBYTEORDER, BYTEORDER_HOST_ENDIAN, order);
    udata_u32(&mut u, NFTNL_UDATA_SET_DATABYTEORDER, 0, order);
    let _ = u.extend_from_slice(&[NFTNL_UDATA_SET_DATA_TYPEOF, 8]);
    udata_u32(&mut u, NFTNL_UDATA_SET_TYPEOF_EXPR, EXPR_VERDICT, order);
    let _ = u.extend_from_slice(&[NFTNL_UDATA_SET_TYPEOF_DATA, 0]);
    udata_u32(&mut u, NFTNL_UDATA_SET_DATA_INTERVAL, 0, order);
    u
}
