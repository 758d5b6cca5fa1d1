//! The writer's bytes in both byte orders, the reply reader on the
//! kernel's shapes of reply (and on what it never sends), the replay of a
//! dump and the expression an extended ack points at. The bytes of every
//! message and expression kind the firewall sends are pinned by the
//! netlink goldens (`firewall/tests.rs`, tests/golden/firewall/netlink-*).

use super::*;

// What a dump carries and a batch never sends (nf_tables.h): handles,
// use counts, a chain's flags.
const NFTA_CHAIN_HANDLE: u16 = 2;
const NFTA_CHAIN_USE: u16 = 6;
const NFTA_CHAIN_FLAGS: u16 = 10;
const NFT_CHAIN_BASE: u32 = 1;
const NFTA_SET_HANDLE: u16 = 16;
const NFTA_RULE_HANDLE: u16 = 3;

/// A header as the kernel writes it: len, type, flags, seq, pid.
fn header(order: Order, len: u32, kind: u16, flags: u16, seq: u32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&order.u32(len));
    b.extend_from_slice(&order.u16(kind));
    b.extend_from_slice(&order.u16(flags));
    b.extend_from_slice(&order.u32(seq));
    b.extend_from_slice(&[0; 4]);
    b
}

#[test]
fn a_batch_is_framed_with_network_order_fields_and_host_order_headers() {
    for order in [Order::Little, Order::Big] {
        let mut w = Writer::batch(order, 7);
        let seq = w.msg(NFT_MSG_NEWTABLE, NFPROTO_INET, 0);
        assert_eq!(seq, 8);
        w.put_str(NFTA_TABLE_NAME, "nasboot");
        w.put_be32(NFTA_TABLE_FLAGS, 0);
        let sent = w.finish_batch();
        let mut want = header(order, 20, 0x10, NLM_F_REQUEST, 7);
        // nfgenmsg: AF_UNSPEC, version 0, res_id NFNL_SUBSYS_NFTABLES (big-endian).
        want.extend_from_slice(&[0, 0, 0, 10]);
        want.extend(header(order, 40, 0x0a00, NLM_F_REQUEST, 8));
        want.extend_from_slice(&[NFPROTO_INET, 0, 0, 0]);
        want.extend_from_slice(&order.u16(12));
        want.extend_from_slice(&order.u16(NFTA_TABLE_NAME));
        want.extend_from_slice(b"nasboot\0");
        want.extend_from_slice(&order.u16(8));
        want.extend_from_slice(&order.u16(NFTA_TABLE_FLAGS));
        want.extend_from_slice(&[0, 0, 0, 0]);
        want.extend(header(order, 20, 0x11, NLM_F_REQUEST, 9));
        want.extend_from_slice(&[0, 0, 0, 10]);
        assert_eq!(sent.bytes, want, "{order:?}");
        assert_eq!(sent.seqs(), Some((7, 9)));
        assert_eq!(sent.message(8).map(|m| m.len()), Some(40 + 20));
    }
}

#[test]
fn nests_are_flagged_and_sized_and_strings_padded() {
    for order in [Order::Little, Order::Big] {
        let mut w = Writer::new(order, 1);
        w.msg(NFT_MSG_NEWCHAIN, NFPROTO_INET, NLM_F_CREATE);
        let h = w.nest(NFTA_CHAIN_HOOK);
        w.put_be32(NFTA_HOOK_HOOKNUM, NF_INET_INGRESS);
        w.put_str(NFTA_HOOK_DEV, "eth0");
        w.end(h);
        let sent = w.finish();
        let attrs = &sent.bytes[NLMSG_HDRLEN + NFGENMSG_LEN..];
        let mut want = Vec::new();
        want.extend_from_slice(&order.u16(4 + 8 + 12));
        want.extend_from_slice(&order.u16(NFTA_CHAIN_HOOK | 0x8000));
        want.extend_from_slice(&order.u16(8));
        want.extend_from_slice(&order.u16(NFTA_HOOK_HOOKNUM));
        want.extend_from_slice(&5u32.to_be_bytes());
        want.extend_from_slice(&order.u16(9));
        want.extend_from_slice(&order.u16(NFTA_HOOK_DEV));
        want.extend_from_slice(b"eth0\0\0\0\0");
        assert_eq!(attrs, &want[..], "{order:?}");
    }
}

#[test]
fn userdata_records_are_host_order_and_nests_count_their_bytes() {
    // `udp sport { … }`'s set, as nft 1.0.6 writes it (little-endian).
    let u = udata_key(Order::Little, BYTEORDER_BIG_ENDIAN, &[EXPR_PAYLOAD, 6, 1]);
    assert_eq!(u, [0, 4, 2, 0, 0, 0, 3, 20, 0, 4, 7, 0, 0, 0, 1, 12, 0, 4, 6, 0, 0, 0, 1, 4, 1, 0, 0, 0]);
    let u = udata_key(Order::Big, BYTEORDER_HOST_ENDIAN, &[EXPR_META, NFT_META_IIFNAME]);
    assert_eq!(u, [0, 4, 0, 0, 0, 1, 3, 14, 0, 4, 0, 0, 0, 9, 1, 6, 0, 4, 0, 0, 0, 6]);
    assert_eq!(udata_key(Order::Little, BYTEORDER_BIG_ENDIAN, &[]), [0, 4, 2, 0, 0, 0]);
    assert_eq!(udata_vmap(Order::Little), [0, 4, 1, 0, 0, 0, 1, 4, 0, 0, 0, 0, 4, 8, 0, 4, 1, 0, 0, 0, 1, 0, 6, 4, 0, 0, 0, 0]);
}

/// An NLMSG_ERROR for message `seq`, capped, with the kernel's words and
/// an offset when given.
fn error_reply(order: Order, seq: u32, errno: i32, text: Option<&str>, offset: Option<u32>) -> Vec<u8> {
    let mut tlvs = Vec::new();
    if let Some(t) = text {
        let len = 4 + t.len() + 1;
        tlvs.extend_from_slice(&order.u16(len as u16));
        tlvs.extend_from_slice(&order.u16(1));
        tlvs.extend_from_slice(t.as_bytes());
        tlvs.push(0);
        tlvs.resize((tlvs.len() + 3) & !3, 0);
    }
    if let Some(o) = offset {
        tlvs.extend_from_slice(&order.u16(8));
        tlvs.extend_from_slice(&order.u16(2));
        tlvs.extend_from_slice(&order.u32(o));
    }
    let flags = 0x100 | if tlvs.is_empty() { 0 } else { 0x200 };
    let len = (16 + 4 + 16 + tlvs.len()) as u32;
    let mut b = header(order, len, 2, flags, seq);
    b.extend_from_slice(&order.u32((-errno) as u32));
    b.extend(header(order, 60, 0x0a06, 0xc01, seq));
    b.extend(tlvs);
    b
}

#[test]
fn replies_are_read_as_the_kernel_sends_them() {
    for order in [Order::Little, Order::Big] {
        let mut buf = error_reply(order, 12, nix::libc::ENOENT, Some("No such expression"), Some(84));
        buf.extend(error_reply(order, 13, nix::libc::EINVAL, None, None));
        // An ack, then a dump's NFT_MSG_NEWTABLE and its end.
        let mut ack = header(order, 36, 2, 0x100, 14);
        ack.extend_from_slice(&[0; 4]);
        ack.extend(header(order, 20, 0x10, 1, 14));
        buf.extend(ack);
        let mut table = header(order, 32, 0x0a00, 2, 15);
        // res_id: the generation's low 16 bits, network order.
        table.extend_from_slice(&[NFPROTO_IPV4, 0, 0x12, 0x34]);
        table.extend_from_slice(&order.u16(12));
        table.extend_from_slice(&order.u16(NFTA_TABLE_NAME));
        table.extend_from_slice(b"filter\0\0");
        buf.extend(table);
        buf.extend(header(order, 20, 3, 2, 15));
        buf.extend_from_slice(&[0; 4]);
        let mut got = Vec::new();
        replies(&buf, order, &mut |r| got.push(r)).unwrap();
        let attrs = [&order.u16(12)[..], &order.u16(NFTA_TABLE_NAME), b"filter\0\0"].concat();
        assert_eq!(
            got,
            [
                Reply::Error { seq: 12, errno: 2, text: Some("No such expression"), offset: Some(84) },
                Reply::Error { seq: 13, errno: 22, text: None, offset: None },
                Reply::Ack { seq: 14 },
                Reply::Nft { seq: 15, kind: NFT_MSG_NEWTABLE, family: NFPROTO_IPV4, generation: 0x1234, attrs: &attrs },
                Reply::Done { seq: 15 },
            ],
            "{order:?}"
        );
    }
}

#[test]
fn replies_the_kernel_never_sends_are_malformed() {
    let o = Order::HOST;
    let good = error_reply(o, 5, nix::libc::EPERM, None, None);
    let mut cut = good.clone();
    cut.truncate(good.len() - 1);
    let mut long = good.clone();
    long[0] = long[0].wrapping_add(8);
    let short_error = {
        let mut b = header(o, 24, 2, 0, 5);
        b.extend_from_slice(&o.u32(-1i32 as u32));
        b.extend_from_slice(&[0; 4]);
        b
    };
    let other_subsystem = {
        let mut b = header(o, 20, 0x0b00, 0, 5);
        b.extend_from_slice(&[0; 4]);
        b
    };
    // The most negative code has no positive errno.
    let min = {
        let mut b = good.clone();
        b[16..20].copy_from_slice(&o.u32(i32::MIN as u32));
        b
    };
    let bad_attr = {
        let mut b = header(o, 28, 0x0a00, 2, 5);
        b.extend_from_slice(&[2, 0, 0, 0]);
        b.extend_from_slice(&o.u16(40));
        b.extend_from_slice(&o.u16(1));
        b.extend_from_slice(&[0; 4]);
        b
    };
    for (what, buf) in [
        ("cut", cut),
        ("too long", long),
        ("short error", short_error),
        ("other subsystem", other_subsystem),
        ("i32::MIN", min),
        ("bad attribute", bad_attr),
        ("a stray byte", vec![0]),
    ] {
        assert_eq!(replies(&buf, o, &mut |_| {}), Err(Malformed), "{what}");
    }
}

#[test]
fn an_answer_ends_at_its_fence_and_refuses_strangers() {
    let o = Order::HOST;
    let fence = |seq| {
        let mut b = header(o, 28, 0x0a0f, 0, seq);
        b.extend_from_slice(&[0; 4]);
        b.extend_from_slice(&o.u16(8));
        b.extend_from_slice(&o.u16(1));
        b.extend_from_slice(&[0, 0, 0, 9]);
        b
    };
    // Success: no error, then the fence.
    let mut a = Answer::new(10, 20, 21);
    a.read(&fence(21), o).unwrap();
    assert!(a.done && a.refused.is_none());
    // Two errors, the first kept, then the fence in the same datagram.
    let mut a = Answer::new(10, 20, 21);
    let mut buf = error_reply(o, 15, nix::libc::ENOENT, Some("x"), None);
    buf.extend(error_reply(o, 16, nix::libc::ENOENT, None, None));
    buf.extend(fence(21));
    a.read(&buf, o).unwrap();
    assert_eq!(a.refused, Some((15, nix::libc::ENOENT, Some("x".into()), None)));
    assert!(a.done);
    // A commit error against the BATCH_BEGIN (the first number) counts.
    let mut a = Answer::new(10, 20, 21);
    a.read(&error_reply(o, 10, nix::libc::EPERM, None, None), o).unwrap();
    assert!(!a.done && a.refused.is_some());
    // Another sequence number, a dump message, or a reply after the fence.
    for buf in [error_reply(o, 30, nix::libc::EPERM, None, None), fence(15), [fence(21), fence(21)].concat()] {
        assert_eq!(Answer::new(10, 20, 21).read(&buf, o), Err(Malformed));
    }
    // Sequence numbers that wrap.
    let mut a = Answer::new(u32::MAX - 1, 1, 2);
    a.read(&[error_reply(o, 0, nix::libc::ENOENT, None, None), fence(2)].concat(), o).unwrap();
    assert_eq!(a.refused.map(|r| r.0), Some(0));
}

#[test]
fn an_extended_ack_offset_names_the_expression() {
    let mut w = Writer::new(Order::HOST, 1);
    let seq = w.msg(NFT_MSG_NEWRULE, NFPROTO_INET, NLM_F_CREATE | NLM_F_APPEND);
    w.put_str(NFTA_RULE_TABLE, "nasboot");
    w.put_str(NFTA_RULE_CHAIN, "wan");
    let list = w.nest(NFTA_RULE_EXPRESSIONS);
    w.expr(&Expr::Limit { rate: 10, unit: 60, burst: 5 });
    let log_at = w.buf.len();
    w.expr(&Expr::Log { prefix: "x" });
    w.end(list);
    let sent = w.finish();
    let msg = sent.message(seq).unwrap();
    assert_eq!(expr_at(msg, log_at as u32, Order::HOST), Some("log"));
    // An attribute inside it names it too; the rule's own attributes none.
    assert_eq!(expr_at(msg, log_at as u32 + 8, Order::HOST), Some("log"));
    assert_eq!(expr_at(msg, log_at as u32 - 4, Order::HOST), Some("limit"));
    assert_eq!(expr_at(msg, 24, Order::HOST), None);
    assert_eq!(expr_at(msg, 9999, Order::HOST), None);
    assert_eq!(expr_at(&msg[..10], 24, Order::HOST), None);
}

#[test]
fn a_dumped_object_is_replayed_without_its_handle_and_counts() {
    let o = Order::HOST;
    let mut dump = Writer::new(o, 1);
    dump.msg(NFT_MSG_NEWCHAIN, NFPROTO_INET, 0);
    dump.put_str(NFTA_CHAIN_TABLE, "nasboot");
    dump.put(NFTA_CHAIN_HANDLE, &[0, 0, 0, 0, 0, 0, 0, 3]);
    dump.put_str(NFTA_CHAIN_NAME, "input");
    let h = dump.nest(NFTA_CHAIN_HOOK);
    dump.put_be32(NFTA_HOOK_HOOKNUM, NF_INET_LOCAL_IN);
    dump.put_be32(NFTA_HOOK_PRIORITY, 0);
    dump.end(h);
    dump.put_be32(NFTA_CHAIN_POLICY, NF_DROP);
    dump.put_str(NFTA_CHAIN_TYPE, "filter");
    dump.put_be32(NFTA_CHAIN_USE, 4);
    dump.put_be32(NFTA_CHAIN_FLAGS, NFT_CHAIN_BASE);
    let d = dump.finish();
    let attrs = &d.bytes[NLMSG_HDRLEN + NFGENMSG_LEN..];
    let mut w = Writer::batch(o, 1);
    assert!(replay(&mut w, NFT_MSG_NEWCHAIN, NFPROTO_INET, attrs, o, 0));
    assert!(!replay(&mut w, NFT_MSG_GETGEN, NFPROTO_INET, attrs, o, 0));
    let sent = w.finish_batch();
    let msg = sent.message(2).unwrap();
    let len = u32::from_ne_bytes(msg[..4].try_into().unwrap()) as usize;
    let mut kept = Vec::new();
    each_attr(&msg[NLMSG_HDRLEN + NFGENMSG_LEN..len], o, &mut |k, _| {
        kept.push(k);
        Ok(())
    })
    .unwrap();
    assert_eq!(kept, [NFTA_CHAIN_TABLE, NFTA_CHAIN_NAME, NFTA_CHAIN_HOOK, NFTA_CHAIN_POLICY, NFTA_CHAIN_TYPE]);
    // The hook kept whole, nested flag and all.
    assert_eq!(find(&msg[NLMSG_HDRLEN + NFGENMSG_LEN..len], o, NFTA_CHAIN_HOOK), find(attrs, o, NFTA_CHAIN_HOOK));
    assert_eq!(u16::from_ne_bytes([msg[6], msg[7]]), NLM_F_REQUEST | NLM_F_CREATE);
}

#[test]
fn a_replayed_set_gets_the_id_the_kernel_requires() {
    let o = Order::HOST;
    let mut dump = Writer::new(o, 1);
    dump.msg(NFT_MSG_NEWSET, NFPROTO_INET, 0);
    dump.put_str(NFTA_SET_TABLE, "nasboot");
    dump.put_str(NFTA_SET_NAME, "lan_tcp");
    dump.put(NFTA_SET_HANDLE, &[0, 0, 0, 0, 0, 0, 0, 5]);
    dump.put_be32(NFTA_SET_KEY_TYPE, TYPE_INET_SERVICE);
    let d = dump.finish();
    let mut w = Writer::new(o, 1);
    assert!(replay(&mut w, NFT_MSG_NEWSET, NFPROTO_INET, &d.bytes[NLMSG_HDRLEN + NFGENMSG_LEN..], o, 7));
    let sent = w.finish();
    let attrs = &sent.bytes[NLMSG_HDRLEN + NFGENMSG_LEN..];
    assert_eq!(find(attrs, o, NFTA_SET_ID), Some(&7u32.to_be_bytes()[..]));
    assert_eq!(find(attrs, o, NFTA_SET_HANDLE), None);
}

#[test]
fn a_replayed_exthdr_write_leaves_out_the_flags_its_init_refuses() {
    // The kernel dumps NFTA_EXTHDR_FLAGS for a TCP option write, and
    // refuses the attribute when the write is added (EINVAL).
    let o = Order::HOST;
    let mut dump = Writer::new(o, 1);
    dump.msg(NFT_MSG_NEWRULE, NFPROTO_INET, 0);
    dump.put_str(NFTA_RULE_TABLE, "nasboot");
    dump.put_str(NFTA_RULE_CHAIN, "forward");
    dump.put(NFTA_RULE_HANDLE, &[0, 0, 0, 0, 0, 0, 0, 14]);
    let l = dump.nest(NFTA_RULE_EXPRESSIONS);
    dump.expr(&Expr::ExthdrWrite { ty: 2, offset: 2, len: 2 });
    dump.expr(&Expr::Exthdr { ty: 44, offset: 2, len: 2 });
    dump.end(l);
    let with_flags = {
        // The dumped write: its attributes plus NFTA_EXTHDR_FLAGS = 0.
        let d = dump.finish();
        let mut b = d.bytes[NLMSG_HDRLEN + NFGENMSG_LEN..].to_vec();
        let list = find(&b, o, NFTA_RULE_EXPRESSIONS).unwrap().to_vec();
        let mut w = Writer::new(o, 1);
        w.msg(NFT_MSG_NEWRULE, NFPROTO_INET, 0);
        w.put_str(NFTA_RULE_TABLE, "nasboot");
        w.put_str(NFTA_RULE_CHAIN, "forward");
        let l = w.nest(NFTA_RULE_EXPRESSIONS);
        let mut first = true;
        each_attr(&list, o, &mut |_, elem| {
            let e = w.nest(NFTA_LIST_ELEM);
            w.put_str(NFTA_EXPR_NAME, find(elem, o, NFTA_EXPR_NAME).map(str_value).unwrap());
            let d = w.nest(NFTA_EXPR_DATA);
            let data = find(elem, o, NFTA_EXPR_DATA).unwrap();
            w.buf.extend_from_slice(data);
            if first {
                w.put_be32(NFTA_EXTHDR_FLAGS, 0);
                first = false;
            }
            w.end(d);
            w.end(e);
            Ok(())
        })
        .unwrap();
        w.end(l);
        b = w.finish().bytes[NLMSG_HDRLEN + NFGENMSG_LEN..].to_vec();
        b
    };
    let mut w = Writer::new(o, 1);
    assert!(replay(&mut w, NFT_MSG_NEWRULE, NFPROTO_INET, &with_flags, o, 0));
    let sent = w.finish();
    let list = find(&sent.bytes[NLMSG_HDRLEN + NFGENMSG_LEN..], o, NFTA_RULE_EXPRESSIONS).unwrap();
    let mut flags = Vec::new();
    each_attr(list, o, &mut |_, elem| {
        flags.push(find(find(elem, o, NFTA_EXPR_DATA).unwrap(), o, NFTA_EXTHDR_FLAGS).is_some());
        Ok(())
    })
    .unwrap();
    // The write without FLAGS; the IPv6 header load keeps its own.
    assert_eq!(flags, [false, true]);
    assert_eq!(find(&sent.bytes[NLMSG_HDRLEN + NFGENMSG_LEN..], o, NFTA_RULE_HANDLE), None, "no handle");
}
