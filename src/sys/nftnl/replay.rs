//! Objects the kernel dumped, written back as the messages that create
//! them again: `firewall apply --confirm`'s rollback.

use super::abi::*;
use super::{each_attr, find, str_value, Order, Writer};

/// Append to `w` the message that creates again an object the kernel
/// dumped (`kind`: NFT_MSG_NEWCHAIN, NEWSET, NEWSETELEM, NEWFLOWTABLE or
/// NEWRULE, as the dump's replies are typed), keeping only the attributes
/// that describe it: handles, use counts, counters' state and positions
/// are left out. Base chains keep their hook, type and policy; rules
/// their expressions as the kernel dumped them, which are the attributes
/// each expression's init reads. For `firewall apply --confirm`'s
/// rollback. A set gets `set_id`, which the kernel requires of a new set
/// and does not dump. False for another kind.
pub(crate) fn replay(w: &mut Writer, kind: u8, family: u8, attrs: &[u8], order: Order, set_id: u32) -> bool {
    let keep: &[u16] = match kind {
        NFT_MSG_NEWTABLE => &[NFTA_TABLE_NAME, NFTA_TABLE_FLAGS, NFTA_TABLE_USERDATA],
        NFT_MSG_NEWCHAIN => &[NFTA_CHAIN_TABLE, NFTA_CHAIN_NAME, NFTA_CHAIN_HOOK, NFTA_CHAIN_POLICY, NFTA_CHAIN_TYPE, NFTA_CHAIN_USERDATA],
        NFT_MSG_NEWSET => &[
            NFTA_SET_TABLE,
            NFTA_SET_NAME,
            NFTA_SET_FLAGS,
            NFTA_SET_KEY_TYPE,
            NFTA_SET_KEY_LEN,
            NFTA_SET_DATA_TYPE,
            NFTA_SET_DATA_LEN,
            NFTA_SET_POLICY,
            NFTA_SET_DESC,
            NFTA_SET_USERDATA,
        ],
        NFT_MSG_NEWSETELEM => &[NFTA_SET_ELEM_LIST_TABLE, NFTA_SET_ELEM_LIST_SET, NFTA_SET_ELEM_LIST_ELEMENTS],
        NFT_MSG_NEWFLOWTABLE => &[NFTA_FLOWTABLE_TABLE, NFTA_FLOWTABLE_NAME, NFTA_FLOWTABLE_HOOK, NFTA_FLOWTABLE_FLAGS],
        NFT_MSG_NEWRULE => &[NFTA_RULE_TABLE, NFTA_RULE_CHAIN, NFTA_RULE_EXPRESSIONS, NFTA_RULE_USERDATA],
        _ => return false,
    };
    let flags = if kind == NFT_MSG_NEWRULE { NLM_F_CREATE | NLM_F_APPEND } else { NLM_F_CREATE };
    w.msg(kind, family, flags);
    let mut at = 0;
    let _ = each_attr(attrs, order, &mut |k, v| {
        let rec = NLA_HDRLEN + v.len();
        if kind == NFT_MSG_NEWRULE && k == NFTA_RULE_EXPRESSIONS {
            replay_exprs(w, v, order);
        } else if keep.contains(&k) {
            // Copied header and all: nested attributes keep their flag.
            w.raw(&attrs[at..at + rec]);
        }
        at += nla_align(rec);
        Ok(())
    });
    if kind == NFT_MSG_NEWSET {
        w.put_be32(NFTA_SET_ID, set_id);
    }
    true
}

/// A rule's expressions as the kernel dumped them, written back: the
/// dump of an exthdr write carries NFTA_EXTHDR_FLAGS, which the kernel's
/// own init of a write refuses (EINVAL), so it is left out there; every
/// other attribute is copied as it is.
fn replay_exprs(w: &mut Writer, list: &[u8], order: Order) {
    let l = w.nest(NFTA_RULE_EXPRESSIONS);
    let _ = each_attr(list, order, &mut |_, elem| {
        let e = w.nest(NFTA_LIST_ELEM);
        let name = find(elem, order, NFTA_EXPR_NAME).map(str_value).unwrap_or_default();
        w.put_str(NFTA_EXPR_NAME, name);
        if let Some(data) = find(elem, order, NFTA_EXPR_DATA) {
            let write = name == "exthdr" && find(data, order, NFTA_EXTHDR_SREG).is_some();
            let d = w.nest(NFTA_EXPR_DATA);
            let mut at = 0;
            each_attr(data, order, &mut |k, v| {
                let rec = NLA_HDRLEN + v.len();
                if !(write && k == NFTA_EXTHDR_FLAGS) {
                    w.raw(&data[at..at + rec]);
                }
                at += nla_align(rec);
                Ok(())
            })?;
            w.end(d);
        }
        w.end(e);
        Ok(())
    });
    w.end(l);
}
