//! The exact bytes of each traffic-control message nasboot sends, in
//! the order of the target the tests run on: host order for every field
//! but the filter's protocol (network order). These run on the host and,
//! under qemu-user, on powerpc, mips and sparc64, which pins both orders.

use super::*;

fn h16(v: u16) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}
fn h32(v: u32) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}
fn h64(v: u64) -> Vec<u8> {
    v.to_ne_bytes().to_vec()
}
/// An attribute header.
fn nla(len: u16, kind: u16) -> Vec<u8> {
    [h16(len), h16(kind)].concat()
}
fn head(index: u32, handle: u32, parent: u32, info: &[u8]) -> Vec<u8> {
    [vec![0; 4], h32(index), h32(handle), h32(parent), info.to_vec()].concat()
}

fn cake() -> Cake {
    Cake { rate: 2850 * 125, overhead: 18, framing: Framing::Atm, ingress: true, diffserv: CAKE_BESTEFFORT }
}

#[test]
fn cake_qdisc_bytes() {
    let mut m = Vec::new();
    qdisc(&mut m, 3, TC_H_ROOT, OURS, &Qdisc::Cake(cake()));
    let want = [
        head(3, 0x4e42_0000, 0xffff_ffff, &h32(0)),
        nla(9, 1),
        b"cake\0\0\0\0".to_vec(),
        nla(48, 2),
        [nla(12, 2), h64(356_250)].concat(),
        [nla(8, 3), h32(3)].concat(),
        [nla(8, 4), h32(1)].concat(),
        [nla(8, 6), h32(18)].concat(),
        [nla(8, 15), h32(1)].concat(),
    ]
    .concat();
    assert_eq!(m, want);
    // A negative overhead is a two's complement s32.
    let mut m = Vec::new();
    qdisc(&mut m, 3, TC_H_ROOT, OURS, &Qdisc::Cake(Cake { overhead: -4, ..cake() }));
    assert!(m.windows(8).any(|w| w == [nla(8, 6), (-4i32).to_ne_bytes().to_vec()].concat()));
}

#[test]
fn htb_fq_codel_and_ingress_qdisc_bytes() {
    let mut m = Vec::new();
    qdisc(&mut m, 2, TC_H_ROOT, OURS, &Qdisc::Htb);
    let glob = [h32(3), h32(10), h32(1), h32(0), h32(0)].concat();
    assert_eq!(m, [head(2, 0x4e42_0000, 0xffff_ffff, &h32(0)), nla(8, 1), b"htb\0".to_vec(), nla(28, 2), nla(24, 2), glob].concat());
    let mut m = Vec::new();
    qdisc(&mut m, 2, OURS | 1, OURS_LEAF, &Qdisc::FqCodel);
    assert_eq!(m, [head(2, 0x4e43_0000, 0x4e42_0001, &h32(0)), nla(13, 1), b"fq_codel\0\0\0\0".to_vec(), nla(4, 2)].concat());
    let mut m = Vec::new();
    qdisc(&mut m, 2, TC_H_INGRESS, INGRESS_HANDLE, &Qdisc::Ingress);
    assert_eq!(m, [head(2, 0xffff_0000, 0xffff_fff1, &h32(0)), nla(12, 1), b"ingress\0".to_vec()].concat());
}

#[test]
fn htb_class_bytes() {
    let mut m = Vec::new();
    // 8000 kbit/s = 1,000,000 B/s; burst 1600 + 1000 B = 2.6 ms = 40625 ticks.
    let r = HtbRate { rate: 1_000_000, overhead: 44, atm: true };
    htb_class(&mut m, 2, OURS, OURS | 1, &r);
    let spec = [vec![0, 2], h16(44), vec![0; 4], h32(1_000_000)].concat();
    let opt = [spec.clone(), spec, h32(40_625), h32(40_625), h32(0), h32(0), h32(0)].concat();
    assert_eq!(opt.len(), 44);
    assert_eq!(m, [head(2, 0x4e42_0001, 0x4e42_0000, &h32(0)), nla(8, 1), b"htb\0".to_vec(), nla(52, 2), nla(48, 1), opt].concat());
    // Ethernet framing: link layer 1, so that no rate table is needed.
    let mut m = Vec::new();
    htb_class(&mut m, 2, OURS, OURS | 1, &HtbRate { atm: false, ..r });
    assert_eq!(m[TCMSG_LEN + 8 + 8 + 1], 1);
}

#[test]
fn redirect_filter_bytes() {
    let mut m = Vec::new();
    redirect(&mut m, 2, 9);
    // tcm_info: priority 10 in the high half, htons(ETH_P_ALL) in the low.
    let info: [u8; 4] = if cfg!(target_endian = "big") { [0, 10, 0, 3] } else { [0, 3, 10, 0] };
    let sel = [vec![1, 0, 1, 0], vec![0; 28]].concat();
    let mirred = [h32(0), h32(0), h32(4), h32(0), h32(0), h32(1), h32(9)].concat();
    let want = [
        head(2, 0, 0xffff_0000, &info),
        nla(8, 1),
        b"u32\0".to_vec(),
        nla(96, 2),
        nla(36, 5),
        sel,
        nla(56, 7),
        nla(52, 1),
        nla(11, 1),
        b"mirred\0\0".to_vec(),
        nla(36, 2),
        nla(32, 2),
        mirred,
    ]
    .concat();
    assert_eq!(m, want);
}

/// A dump's message: our own encoding, with TCA_STATS2 appended.
fn with_stats(mut m: Vec<u8>, app: &[u8]) -> Vec<u8> {
    let basic = [h64(123_456), h32(789), h32(0)].concat();
    let queue = [h32(1), h32(1514), h32(7), h32(0), h32(0)].concat();
    let len = 4 + 4 + basic.len() + 4 + queue.len() + 4 + app.len();
    m.extend([nla(len as u16, 7), nla(20, 1), basic, nla(24, 3), queue, nla(4 + app.len() as u16, 4), app.to_vec()].concat());
    m
}

#[test]
fn dumps_read_back() {
    let mut m = Vec::new();
    qdisc(&mut m, 3, TC_H_ROOT, OURS, &Qdisc::Cake(cake()));
    // Two tins, 5 and 6 packets marked.
    let tin = |n: u32| [nla(12, 0), nla(8, 8), h32(n)].concat();
    let (t1, t2) = (tin(5), tin(6));
    let app = [nla(4 + 2 * 12, 10), t1, t2].concat();
    let o = object(&with_stats(m, &app), false).expect("reads");
    assert_eq!((o.index, o.handle, o.parent), (3, OURS, TC_H_ROOT));
    assert_eq!(o.kind, Kind::Cake(cake()));
    assert_eq!(o.stats, Stats { bytes: 123_456, packets: 789, drops: 7, backlog: 1514, marks: 11 });

    let mut m = Vec::new();
    qdisc(&mut m, 3, OURS | 1, OURS_LEAF, &Qdisc::FqCodel);
    let xstats = [h32(0), h32(1514), h32(2), h32(4), vec![0; 24]].concat();
    let o = object(&with_stats(m, &xstats), false).expect("reads");
    assert_eq!((o.kind, o.stats.marks), (Kind::FqCodel, 4));

    let r = HtbRate { rate: 356_250, overhead: 18, atm: false };
    let mut m = Vec::new();
    htb_class(&mut m, 3, OURS, OURS | 1, &r);
    assert_eq!(object(&m, true).map(|o| o.kind), Some(Kind::HtbClass(r)));
    assert_eq!(object(&m, false).map(|o| o.kind), Some(Kind::Htb));

    let mut m = Vec::new();
    redirect(&mut m, 3, 9);
    let o = object(&m, false).expect("reads");
    assert_eq!((o.kind, o.prio), (Kind::U32 { redirect: Some(9) }, 10));

    // Truncated: no tcmsg, or no kind.
    assert_eq!(object(&m[..TCMSG_LEN - 1], false), None);
    assert_eq!(object(&m[..TCMSG_LEN], false), None);
}
