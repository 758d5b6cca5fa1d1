//! Traffic control over rtnetlink (include/uapi/linux/rtnetlink.h's
//! `struct tcmsg`, pkt_sched.h, pkt_cls.h, tc_act/tc_mirred.h,
//! gen_stats.h): the qdiscs, the HTB class and the u32 filter with its
//! mirred action that nasboot's SQM sets, and what a dump says of them.
//!
//! Host order everywhere (netlink(7)) except the filter's protocol,
//! which the kernel reads in network order (`tcm_info`'s low 16 bits are
//! `htons(ETH_P_ALL)`). Rates: cake takes bytes/s as a u64, HTB a u32
//! bytes/s in `struct tc_ratespec` (enough for 10 Gbit/s).

use super::rtnl::{attr, attr_str, attrs, begin_nest, end_nest, str_value, u32_value};

pub(crate) const RTM_NEWQDISC: u16 = 36;
pub(crate) const RTM_DELQDISC: u16 = 37;
pub(crate) const RTM_GETQDISC: u16 = 38;
pub(crate) const RTM_NEWTCLASS: u16 = 40;
pub(crate) const RTM_GETTCLASS: u16 = 42;
pub(crate) const RTM_NEWTFILTER: u16 = 44;
pub(crate) const RTM_GETTFILTER: u16 = 46;

/// sizeof(struct tcmsg): family u8, pad u8, pad u16, ifindex i32,
/// handle u32, parent u32, info u32.
pub(crate) const TCMSG_LEN: usize = 20;

/// The root of a device's egress (TC_H_ROOT) and its ingress hook
/// (TC_H_INGRESS); the ingress qdisc's handle, `ffff:`.
pub(crate) const TC_H_ROOT: u32 = 0xFFFF_FFFF;
pub(crate) const TC_H_INGRESS: u32 = 0xFFFF_FFF1;
pub(crate) const INGRESS_HANDLE: u32 = 0xFFFF_0000;
/// The handle major of every qdisc nasboot makes, `4e42:` ("NB"): what
/// marks a root qdisc as nasboot's own. Its fq_codel leaf is `4e43:`.
pub(crate) const OURS: u32 = 0x4E42_0000;
pub(crate) const OURS_LEAF: u32 = 0x4E43_0000;
/// The priority of nasboot's redirect filter on the ingress qdisc.
pub(crate) const REDIRECT_PRIO: u16 = 10;
/// ETH_P_ALL (if_ether.h).
const ETH_P_ALL: u16 = 0x0003;

// TCA_* (rtnetlink.h).
const TCA_KIND: u16 = 1;
const TCA_OPTIONS: u16 = 2;
const TCA_STATS2: u16 = 7;
// TCA_STATS_* (gen_stats.h).
const TCA_STATS_BASIC: u16 = 1;
const TCA_STATS_QUEUE: u16 = 3;
const TCA_STATS_APP: u16 = 4;
// TCA_CAKE_* (pkt_sched.h).
const TCA_CAKE_BASE_RATE64: u16 = 2;
const TCA_CAKE_DIFFSERV_MODE: u16 = 3;
const TCA_CAKE_ATM: u16 = 4;
const TCA_CAKE_OVERHEAD: u16 = 6;
const TCA_CAKE_INGRESS: u16 = 15;
const TCA_CAKE_STATS_TIN_STATS: u16 = 10;
const TCA_CAKE_TIN_STATS_ECN_MARKED_PACKETS: u16 = 8;
/// CAKE_DIFFSERV_BESTEFFORT: one tin, as sqm-scripts' piece_of_cake.
pub(crate) const CAKE_BESTEFFORT: u32 = 3;
// TCA_HTB_* (pkt_sched.h).
const TCA_HTB_PARMS: u16 = 1;
const TCA_HTB_INIT: u16 = 2;
/// TC_HTB_PROTOVER, and iproute2's default rate-to-quantum divisor.
const HTB_VERSION: u32 = 3;
const HTB_R2Q: u32 = 10;
// The u32 classifier and the actions (pkt_cls.h, tc_mirred.h).
const TCA_U32_SEL: u16 = 5;
const TCA_U32_ACT: u16 = 7;
const TC_U32_TERMINAL: u8 = 1;
/// The actions list nests each action under its order, from 1 (as
/// iproute2's `tca_action_prio`, at most TCA_ACT_MAX_PRIO): nasboot's
/// one action is the first.
const TCA_ACT_FIRST: u16 = 1;
const TCA_ACT_KIND: u16 = 1;
const TCA_ACT_OPTIONS: u16 = 2;
const TCA_MIRRED_PARMS: u16 = 2;
const TC_ACT_STOLEN: u32 = 4;
const TCA_EGRESS_REDIR: u32 = 1;
// CAKE_ATM_* (pkt_sched.h): cake's framing.
const CAKE_ATM_NONE: u32 = 0;
const CAKE_ATM_ATM: u32 = 1;
const CAKE_ATM_PTM: u32 = 2;
// TC_LINKLAYER_* (pkt_sched.h): a rate's link layer.
const TC_LINKLAYER_ETHERNET: u8 = 1;
const TC_LINKLAYER_ATM: u8 = 2;
/// The nanoseconds of one psched tick (PSCHED_SHIFT 6): HTB's buffers.
const PSCHED_TICK_NS: u64 = 64;

/// How a link frames packets: cake's `atm` mode (CAKE_ATM_NONE, _ATM,
/// _PTM) and an HTB rate's link layer (TC_LINKLAYER_ETHERNET, _ATM).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Framing {
    #[default]
    Ethernet,
    Atm,
    Ptm,
}

impl Framing {
    fn cake(self) -> u32 {
        match self {
            Framing::Ethernet => CAKE_ATM_NONE,
            Framing::Atm => CAKE_ATM_ATM,
            Framing::Ptm => CAKE_ATM_PTM,
        }
    }
}

/// A cake qdisc: rate, overhead, framing, and whether it shapes the
/// download (`ingress`: it counts the packets it drops as received).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cake {
    /// Bytes per second.
    pub rate: u64,
    pub overhead: i32,
    pub framing: Framing,
    pub ingress: bool,
    /// CAKE_DIFFSERV_*; nasboot sets [`CAKE_BESTEFFORT`].
    pub diffserv: u32,
}

/// An HTB class's rate and ceiling: bytes per second, the per-packet
/// overhead and ATM cells (HTB has no PTM: the rate is lowered by 1/65).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtbRate {
    pub rate: u32,
    pub overhead: u16,
    pub atm: bool,
}

/// A qdisc as nasboot sets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qdisc {
    Cake(Cake),
    /// HTB with every unclassified packet to class `:1`.
    Htb,
    /// fq_codel with the kernel's defaults.
    FqCodel,
    Ingress,
}

/// What a dump says a qdisc, class or filter is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Cake(Cake),
    Htb,
    HtbClass(HtbRate),
    FqCodel,
    Ingress,
    /// A u32 filter; its mirred redirect's target, if it has one.
    U32 {
        redirect: Option<u32>,
    },
    Other(heapless::String<16>),
}

/// The counters of a qdisc (TCA_STATS2), the ECN marks from its xstats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub bytes: u64,
    pub packets: u32,
    pub drops: u32,
    pub backlog: u32,
    pub marks: u32,
}

/// One qdisc, class or filter from a dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcObject {
    pub index: u32,
    pub handle: u32,
    pub parent: u32,
    /// A filter's priority (the high half of tcm_info).
    pub prio: u16,
    pub kind: Kind,
    pub stats: Stats,
}

/// A `struct tcmsg`, family AF_UNSPEC.
pub(crate) fn tcmsg(out: &mut Vec<u8>, index: u32, handle: u32, parent: u32, info: u32) {
    out.extend_from_slice(&[0; 4]);
    for v in [index, handle, parent, info] {
        out.extend_from_slice(&v.to_ne_bytes());
    }
}

/// The RTM_NEWQDISC body of `q` on device `index`.
pub(crate) fn qdisc(out: &mut Vec<u8>, index: u32, parent: u32, handle: u32, q: &Qdisc) {
    tcmsg(out, index, handle, parent, 0);
    let kind = match q {
        Qdisc::Cake(_) => "cake",
        Qdisc::Htb => "htb",
        Qdisc::FqCodel => "fq_codel",
        Qdisc::Ingress => "ingress",
    };
    attr_str(out, TCA_KIND, kind);
    match q {
        Qdisc::Cake(c) => {
            let n = begin_nest(out, TCA_OPTIONS);
            attr(out, TCA_CAKE_BASE_RATE64, &c.rate.to_ne_bytes());
            attr(out, TCA_CAKE_DIFFSERV_MODE, &c.diffserv.to_ne_bytes());
            attr(out, TCA_CAKE_ATM, &c.framing.cake().to_ne_bytes());
            attr(out, TCA_CAKE_OVERHEAD, &c.overhead.to_ne_bytes());
            attr(out, TCA_CAKE_INGRESS, &u32::from(c.ingress).to_ne_bytes());
            end_nest(out, n);
        }
        Qdisc::Htb => {
            // struct tc_htb_glob: version, rate2quantum, defcls, debug,
            // direct_pkts.
            let n = begin_nest(out, TCA_OPTIONS);
            let mut g = Vec::with_capacity(20);
            for v in [HTB_VERSION, HTB_R2Q, 1, 0, 0] {
                g.extend_from_slice(&v.to_ne_bytes());
            }
            attr(out, TCA_HTB_INIT, &g);
            end_nest(out, n);
        }
        Qdisc::FqCodel => {
            let n = begin_nest(out, TCA_OPTIONS);
            end_nest(out, n);
        }
        Qdisc::Ingress => {}
    }
}

/// A `struct tc_ratespec`: cell_log u8, linklayer u8, overhead u16,
/// cell_align i16, mpu u16, rate u32. A link layer given (not
/// TC_LINKLAYER_UNAWARE) tells the kernel that no rate table follows.
fn ratespec(out: &mut Vec<u8>, r: &HtbRate) {
    out.extend_from_slice(&[0, if r.atm { TC_LINKLAYER_ATM } else { TC_LINKLAYER_ETHERNET }]);
    out.extend_from_slice(&r.overhead.to_ne_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&r.rate.to_ne_bytes());
}

/// The RTM_NEWTCLASS body of HTB class `classid` at rate and ceiling
/// `r`: a burst of one MTU-sized packet and 1 ms at the rate, as
/// iproute2's default (rate / HZ + MTU), given in psched ticks.
pub(crate) fn htb_class(out: &mut Vec<u8>, index: u32, parent: u32, classid: u32, r: &HtbRate) {
    tcmsg(out, index, classid, parent, 0);
    attr_str(out, TCA_KIND, "htb");
    let n = begin_nest(out, TCA_OPTIONS);
    let burst = 1600 + u64::from(r.rate) / 1000;
    let ticks = (burst * 1_000_000_000 / u64::from(r.rate.max(1)) / PSCHED_TICK_NS).min(u64::from(u32::MAX)) as u32;
    // struct tc_htb_opt: rate, ceil, buffer, cbuffer, quantum (0: the
    // kernel's rate / r2q), level, prio.
    let mut o = Vec::with_capacity(44);
    ratespec(&mut o, r);
    ratespec(&mut o, r);
    for v in [ticks, ticks, 0, 0, 0] {
        o.extend_from_slice(&v.to_ne_bytes());
    }
    attr(out, TCA_HTB_PARMS, &o);
    end_nest(out, n);
}

/// The RTM_NEWTFILTER body of a u32 filter on `index`'s ingress qdisc
/// that matches every packet (one key, mask 0) and redirects it to the
/// egress of device `to` (mirred, TC_ACT_STOLEN), as `tc filter add dev
/// IF parent ffff: protocol all prio 10 u32 match u32 0 0 action mirred
/// egress redirect dev TO`.
pub(crate) fn redirect(out: &mut Vec<u8>, index: u32, to: u32) {
    let proto = u16::from_ne_bytes(ETH_P_ALL.to_be_bytes());
    tcmsg(out, index, 0, INGRESS_HANDLE, u32::from(REDIRECT_PRIO) << 16 | u32::from(proto));
    attr_str(out, TCA_KIND, "u32");
    let n = begin_nest(out, TCA_OPTIONS);
    // struct tc_u32_sel: flags, offshift, nkeys, pad, offmask (be16),
    // off, offoff, hoff (16 bits each), hmask (be32); then one struct
    // tc_u32_key: mask, val (be32), off, offmask (int), all zero.
    let mut sel = vec![TC_U32_TERMINAL, 0, 1, 0];
    sel.resize(32, 0);
    attr(out, TCA_U32_SEL, &sel);
    let acts = begin_nest(out, TCA_U32_ACT);
    let first = begin_nest(out, TCA_ACT_FIRST);
    attr_str(out, TCA_ACT_KIND, "mirred");
    let opts = begin_nest(out, TCA_ACT_OPTIONS);
    // struct tc_mirred: index, capab, action, refcnt, bindcnt, eaction,
    // ifindex.
    let mut m = Vec::with_capacity(28);
    for v in [0, 0, TC_ACT_STOLEN, 0, 0, TCA_EGRESS_REDIR, to] {
        m.extend_from_slice(&v.to_ne_bytes());
    }
    attr(out, TCA_MIRRED_PARMS, &m);
    end_nest(out, opts);
    end_nest(out, first);
    end_nest(out, acts);
    end_nest(out, n);
}

fn u64_value(v: &[u8]) -> Option<u64> {
    Some(u64::from_ne_bytes(v.get(..8)?.try_into().ok()?))
}

fn find(buf: &[u8], kind: u16) -> Option<&[u8]> {
    attrs(buf).find(|(k, _)| *k == kind).map(|(_, v)| v)
}

/// One RTM_NEWQDISC, RTM_NEWTCLASS or RTM_NEWTFILTER payload, read.
/// `class`: the message is a class (an HTB class has its rate). None
/// when the payload is shorter than its tcmsg or has no kind. Pure
/// (fuzzed with the rest of the rtnetlink reader).
pub(crate) fn object(payload: &[u8], class: bool) -> Option<TcObject> {
    let head = payload.get(..TCMSG_LEN)?;
    let word = |at: usize| u32_value(&head[at..]);
    let body = &payload[TCMSG_LEN..];
    let options = find(body, TCA_OPTIONS).unwrap_or(&[]);
    let kind = match str_value(find(body, TCA_KIND)?) {
        "cake" => Kind::Cake(Cake {
            rate: find(options, TCA_CAKE_BASE_RATE64).and_then(u64_value).unwrap_or(0),
            overhead: find(options, TCA_CAKE_OVERHEAD).and_then(u32_value).unwrap_or(0) as i32,
            framing: match find(options, TCA_CAKE_ATM).and_then(u32_value) {
                Some(CAKE_ATM_ATM) => Framing::Atm,
                Some(CAKE_ATM_PTM) => Framing::Ptm,
                _ => Framing::Ethernet,
            },
            ingress: find(options, TCA_CAKE_INGRESS).and_then(u32_value).is_some_and(|v| v != 0),
            diffserv: find(options, TCA_CAKE_DIFFSERV_MODE).and_then(u32_value).unwrap_or(0),
        }),
        "htb" if class => {
            let p = find(options, TCA_HTB_PARMS)?;
            Kind::HtbClass(HtbRate {
                rate: p.get(8..12).and_then(u32_value)?,
                overhead: u16::from_ne_bytes([*p.get(2)?, *p.get(3)?]),
                atm: *p.get(1)? == TC_LINKLAYER_ATM,
            })
        }
        "htb" => Kind::Htb,
        "fq_codel" => Kind::FqCodel,
        "ingress" => Kind::Ingress,
        "u32" => {
            let first = find(options, TCA_U32_ACT).and_then(|a| attrs(a).next()).map(|(_, v)| v).unwrap_or(&[]);
            let mirred = find(first, TCA_ACT_KIND).is_some_and(|k| str_value(k) == "mirred");
            let parms = find(find(first, TCA_ACT_OPTIONS).unwrap_or(&[]), TCA_MIRRED_PARMS);
            Kind::U32 { redirect: parms.filter(|_| mirred).and_then(|p| p.get(24..28)).and_then(u32_value) }
        }
        other => Kind::Other(heapless::String::try_from(other.get(..other.len().min(16)).unwrap_or("?")).unwrap_or_default()),
    };
    let mut stats = Stats::default();
    if let Some(s) = find(body, TCA_STATS2) {
        if let Some(b) = find(s, TCA_STATS_BASIC) {
            stats.bytes = u64_value(b).unwrap_or(0);
            stats.packets = b.get(8..12).and_then(u32_value).unwrap_or(0);
        }
        // struct gnet_stats_queue: qlen, backlog, drops, requeues, overlimits.
        if let Some(q) = find(s, TCA_STATS_QUEUE) {
            stats.backlog = q.get(4..8).and_then(u32_value).unwrap_or(0);
            stats.drops = q.get(8..12).and_then(u32_value).unwrap_or(0);
        }
        let app = find(s, TCA_STATS_APP).unwrap_or(&[]);
        stats.marks = match kind {
            // Nested per tin; each tin's marked packets.
            Kind::Cake(_) => attrs(find(app, TCA_CAKE_STATS_TIN_STATS).unwrap_or(&[]))
                .filter_map(|(_, tin)| find(tin, TCA_CAKE_TIN_STATS_ECN_MARKED_PACKETS).and_then(u32_value))
                .fold(0u32, u32::wrapping_add),
            // struct tc_fq_codel_xstats: type (0: the qdisc's), then
            // maxpacket, drop_overlimit, ecn_mark...
            Kind::FqCodel if app.get(..4).and_then(u32_value) == Some(0) => app.get(12..16).and_then(u32_value).unwrap_or(0),
            _ => 0,
        };
    }
    Some(TcObject { index: word(4)?, handle: word(8)?, parent: word(12)?, prio: (word(16)? >> 16) as u16, kind, stats })
}

#[cfg(test)]
mod tests;
