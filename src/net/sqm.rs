//! Smart queue management on a WAN (`[interface.sqm]`): the upload
//! shaped by the WAN's root qdisc, the download by an IFB device that the
//! WAN's ingress qdisc feeds (a u32 match-all filter with a mirred
//! redirect), all through rtnetlink, never `tc`. The layout is
//! sqm-scripts' (`piece_of_cake`, and `simple` for fq_codel under HTB):
//!
//! - cake (the default): `root handle 4e42: cake bandwidth R besteffort
//!   overhead N [atm|ptm]`, and the same with `ingress` on `ifb4<wan>`;
//! - fq_codel under HTB, where the kernel has no sch_cake (`qdisc =
//!   "auto"` picks it from the module list; `plan` says so): `root handle
//!   4e42: htb default 1`, class `4e42:1` at the rate (its overhead and
//!   ATM cells; PTM's 64b/65b as a rate 1/65 lower; a negative overhead
//!   as 0), and `fq_codel` as its leaf `4e43:`.
//!
//! nasboot's own: a root qdisc with handle `4e42:`, and an IFB with the
//! alias `nasboot` (as its bridges). It changes or removes nothing else:
//! a root qdisc of another's on the WAN is refused, not replaced. The
//! ingress qdisc of a WAN is taken as nasboot's while its IFB is.
//!
//! Each WAN's changes are one step: when the kernel refuses one, what
//! the step had set is taken back, so a link is never left half shaped
//! (a download redirected to an IFB without its shaper, say).

use std::fmt;

use super::{Errno, Error};
use crate::config::net::{LinkLayer, Role, Sqm, SqmQdisc};
use crate::config::types::IfName;
use crate::config::Profile;
use crate::kmod::{self, Has, Kmods};
use crate::seam::netif::{Cake, Framing, HtbRate, Kind, LinkInfo, NewLink, Qdisc, TcKind, TcList, TcObject, TcOp, OURS};
use crate::seam::Seams;
use crate::sys::tc::{CAKE_BESTEFFORT, INGRESS_HANDLE, OURS as HANDLE, OURS_LEAF, TC_H_INGRESS, TC_H_ROOT};

/// The class every packet goes to under nasboot's HTB.
const CLASS: u32 = HANDLE | 1;

/// The IFB that shapes `wan`'s download: `ifb4` and the WAN's name, as
/// sqm-scripts names it, cut to the kernel's 15 bytes.
pub(crate) fn ifb_name(wan: &IfName) -> IfName {
    let mut s = format!("ifb4{wan}");
    s.truncate(15);
    s.parse().expect("ifb4 and an interface name, cut to 15 bytes, is a name")
}

/// A kernel module SQM may need: a qdisc, or a piece of the download's
/// path (the IFB, the redirect action, its classifier, the ingress qdisc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Module {
    Cake,
    FqCodel,
    Htb,
    Ifb,
    Mirred,
    U32,
    Ingress,
}

impl Module {
    /// Every module, in the order the kernel is asked about them.
    const ALL: [Module; 7] = [Module::Cake, Module::FqCodel, Module::Htb, Module::Ifb, Module::Mirred, Module::U32, Module::Ingress];
    /// What shaping the download needs besides its shaper.
    const DOWNLOAD: [Module; 4] = [Module::Ifb, Module::Mirred, Module::U32, Module::Ingress];
    /// The shaper's qdiscs: cake alone, or fq_codel under HTB.
    const CAKE: &'static [Module] = &[Module::Cake];
    const FQ_CODEL_HTB: &'static [Module] = &[Module::FqCodel, Module::Htb];

    /// The module's file name, without `.ko`.
    fn module(self) -> &'static str {
        match self {
            Module::Cake => "sch_cake",
            Module::FqCodel => "sch_fq_codel",
            Module::Htb => "sch_htb",
            Module::Ifb => "ifb",
            Module::Mirred => "act_mirred",
            Module::U32 => "cls_u32",
            Module::Ingress => "sch_ingress",
        }
    }

    /// Where the module sits under /lib/modules/RELEASE/kernel.
    fn dir(self) -> &'static str {
        match self {
            Module::Ifb => kmod::NET_DRIVERS,
            _ => kmod::SCHED,
        }
    }
}

/// What the kernel has of each [`Module`]; Unknown for one not asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Modules([(Module, Has); 7]);

impl Default for Modules {
    fn default() -> Self {
        Modules(Module::ALL.map(|m| (m, Has::Unknown)))
    }
}

impl Modules {
    fn get(&self, m: Module) -> Has {
        self.0.iter().find(|(k, _)| *k == m).map_or(Has::Unknown, |(_, h)| *h)
    }
    fn set(&mut self, m: Module, has: Has) {
        if let Some((_, h)) = self.0.iter_mut().find(|(k, _)| *k == m) {
            *h = has;
        }
    }
}

/// The modules to ask the kernel about.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Need(u8);

impl Need {
    fn bit(m: Module) -> u8 {
        1 << m as u8
    }
    fn add(&mut self, ms: &[Module]) {
        ms.iter().for_each(|m| self.0 |= Need::bit(*m));
    }
    fn remove(&mut self, ms: &[Module]) {
        ms.iter().for_each(|m| self.0 &= !Need::bit(*m));
    }
    fn has(self, m: Module) -> bool {
        self.0 & Need::bit(m) != 0
    }
}

/// The board's traffic-control state, read when a profile interface has
/// `[interface.sqm]` or a link carries nasboot's shaping.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    /// Every device's qdiscs.
    pub qdiscs: Vec<TcObject>,
    /// The classes under nasboot's HTB qdiscs.
    pub classes: Vec<TcObject>,
    /// The filters on the ingress qdiscs.
    pub filters: Vec<TcObject>,
    /// What the kernel has of the modules the profile's SQM needs.
    pub modules: Modules,
    /// Each SQM WAN's link speed in Mb/s (ETHTOOL_GLINKSETTINGS), when
    /// the driver tells one.
    pub speeds: Vec<(IfName, u32)>,
    /// The qdisc dump failed (shown by the plan).
    pub error: Option<Errno>,
}

fn sqm_wans(p: &Profile) -> impl Iterator<Item = (&IfName, &Sqm)> {
    p.interface.iter().filter(|i| i.role == Role::Wan).filter_map(|i| i.sqm.as_ref().map(|s| (i.name.get_ref(), s)))
}

/// Read the qdiscs, and for the SQM WANs their classes, filters, link
/// speed and the modules the kernel can load. `links`: every link
/// (RTM_GETLINK, as `virt` read it).
pub(crate) fn observe(p: &Profile, links: &[LinkInfo], seams: &mut Seams<'_>) -> Observed {
    let mut out = Observed::default();
    let wanted = sqm_wans(p).count() > 0;
    let ours_ifb = links.iter().any(is_our_ifb);
    match seams.netif.tc_list(TcList::Qdiscs) {
        Ok(q) => out.qdiscs = q,
        Err(e) => out.error = Some(Errno::of(&e)),
    }
    if !wanted && !ours_ifb && !out.qdiscs.iter().any(|q| q.handle == HANDLE) {
        return out;
    }
    for q in out.qdiscs.iter().filter(|q| q.handle == HANDLE && matches!(q.kind, TcKind::Htb)) {
        out.classes.extend(seams.netif.tc_list(TcList::Classes(q.index)).unwrap_or_default());
    }
    for q in out.qdiscs.iter().filter(|q| q.handle == INGRESS_HANDLE) {
        out.filters.extend(seams.netif.tc_list(TcList::IngressFilters(q.index)).unwrap_or_default());
    }
    if wanted {
        out.modules = modules(seams, needed(p, Has::Unknown));
        if out.modules.get(Module::Cake) == Has::No {
            let mut need = needed(p, Has::No);
            need.remove(&Module::DOWNLOAD);
            let more = modules(seams, need);
            for m in Module::FQ_CODEL_HTB {
                out.modules.set(*m, more.get(*m));
            }
        }
        for (name, _) in sqm_wans(p) {
            if let Ok(m) = seams.netif.ethtool_link_settings(name) {
                // SPEED_UNKNOWN is -1; 0 is no speed either.
                if m.settings.speed != 0 && m.settings.speed != u32::MAX {
                    out.speeds.push((name.clone(), m.settings.speed));
                }
            }
        }
    }
    out
}

/// Which modules the kernel has ([`Kmods::has`]), asking only about
/// those the profile needs (`need`; the rest stay Unknown).
fn modules(seams: &mut Seams<'_>, need: Need) -> Modules {
    let mut out = Modules::default();
    let release = seams.sysctl.get("kernel.osrelease").ok();
    let mut kmods = Kmods::new(release.as_deref());
    for m in Module::ALL.into_iter().filter(|m| need.has(*m)) {
        out.set(m, kmods.has(seams, m.module(), m.dir()));
    }
    out
}

/// Which modules the profile's SQM needs asked about: the qdisc it
/// names (auto: cake, then fq_codel and HTB only if cake is missing),
/// and what the download needs.
fn needed(p: &Profile, cake: Has) -> Need {
    let mut need = Need::default();
    for (_, s) in sqm_wans(p) {
        match s.qdisc {
            SqmQdisc::Cake => need.add(Module::CAKE),
            SqmQdisc::Auto if cake == Has::Unknown => need.add(Module::CAKE),
            SqmQdisc::Auto if cake == Has::No => need.add(Module::FQ_CODEL_HTB),
            SqmQdisc::Auto => {}
            SqmQdisc::FqCodel => need.add(Module::FQ_CODEL_HTB),
        }
        if s.ingress_kbit.is_some() {
            need.add(&Module::DOWNLOAD);
        }
    }
    need
}

fn is_our_ifb(l: &LinkInfo) -> bool {
    l.alias.as_deref() == Some(OURS) && matches!(&l.kind, Kind::Other(k) if k == "ifb")
}

/// A shaper as nasboot sets it on a device's root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shaper {
    Cake(Cake),
    /// fq_codel under HTB at this rate.
    Htb(HtbRate),
}

impl fmt::Display for Shaper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shaper::Cake(c) => Qdisc::Cake(*c).fmt(f),
            Shaper::Htb(r) => write!(f, "fq_codel under htb at {}kbit", crate::seam::netif::kbit(r.rate.into())),
        }
    }
}

/// One change of an SQM step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Tc(TcOp),
    /// Create the IFB, down, with the alias `nasboot`.
    CreateIfb(IfName),
    Up(IfName),
    RemoveIfb(IfName),
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Tc(t) => t.fmt(f),
            Op::CreateIfb(n) => write!(f, "create {n} (ifb, nasboot's)"),
            Op::Up(n) => write!(f, "{n}: up"),
            Op::RemoveIfb(n) => write!(f, "remove {n} (nasboot's ifb)"),
        }
    }
}

/// One WAN's SQM step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Shape (or stop shaping) `dev`: the changes, in order.
    Set { dev: IfName, ops: Vec<Op> },
    /// The profile's SQM cannot be set on this board; `why` names the key.
    Refused { dev: IfName, why: String },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Set { dev, ops } => {
                write!(f, "{dev}: sqm:")?;
                for op in ops {
                    write!(f, "\n            {op}")?;
                }
                Ok(())
            }
            Action::Refused { dev, why } => write!(f, "{dev}: sqm: {why}; nothing will be shaped"),
        }
    }
}

/// The shaper for `kbit` in one direction.
fn shaper(s: &Sqm, kbit: u32, ingress: bool, cake: bool) -> Shaper {
    let bytes = u64::from(kbit) * 125;
    if cake {
        let framing = match s.link_layer {
            LinkLayer::Ethernet => Framing::Ethernet,
            LinkLayer::Atm => Framing::Atm,
            LinkLayer::Ptm => Framing::Ptm,
        };
        return Shaper::Cake(Cake { rate: bytes, overhead: s.overhead.0, framing, ingress, diffserv: CAKE_BESTEFFORT });
    }
    let bytes = if s.link_layer == LinkLayer::Ptm { bytes * 64 / 65 } else { bytes };
    Shaper::Htb(HtbRate { rate: bytes as u32, overhead: s.overhead.0.max(0) as u16, atm: s.link_layer == LinkLayer::Atm })
}

/// What shapes `index`'s root now: None for the kernel's default,
/// `Err(kind handle)` for a qdisc of another's.
fn current(index: u32, now: &Observed) -> Result<Option<Option<Shaper>>, String> {
    let Some(root) = now.qdiscs.iter().find(|q| q.index == index && q.parent == TC_H_ROOT && q.handle != 0) else {
        return Ok(None);
    };
    if root.handle != HANDLE {
        let kind = match &root.kind {
            TcKind::Other(k) => k.as_str(),
            TcKind::Cake(_) => "cake",
            TcKind::Htb | TcKind::HtbClass(_) => "htb",
            TcKind::FqCodel => "fq_codel",
            TcKind::Ingress | TcKind::U32 { .. } => "?",
        };
        return Err(format!("{kind} {}", crate::seam::netif::Handle(root.handle)));
    }
    Ok(Some(match root.kind {
        TcKind::Cake(c) => Some(Shaper::Cake(c)),
        TcKind::Htb => {
            let class = now.classes.iter().find_map(|o| match o.kind {
                TcKind::HtbClass(r) if o.index == index && o.handle == CLASS => Some(r),
                _ => None,
            });
            let leaf = now.qdiscs.iter().any(|q| q.index == index && q.parent == CLASS && q.kind == TcKind::FqCodel);
            class.filter(|_| leaf).map(Shaper::Htb)
        }
        // Ours, but not as nasboot leaves it: made again.
        _ => None,
    }))
}

/// The changes that put `want` on `dev`'s root, given what is there.
fn shape(dev: &IfName, want: Shaper, now: Option<Option<Shaper>>, ops: &mut Vec<Op>) {
    let q = |parent, handle, qdisc| Op::Tc(TcOp::Qdisc { dev: dev.clone(), parent, handle, qdisc });
    match (now, want) {
        (Some(Some(n)), w) if n == w => return,
        (Some(Some(Shaper::Htb(_))), Shaper::Htb(r)) => {
            ops.push(Op::Tc(TcOp::Class { dev: dev.clone(), parent: HANDLE, classid: CLASS, rate: r }));
            return;
        }
        (Some(Some(Shaper::Cake(_))), Shaper::Cake(_)) | (None, _) => {}
        // Another kind, or ours half made: the kernel changes no kind in
        // place.
        (Some(_), _) => ops.push(Op::Tc(TcOp::Delete { dev: dev.clone(), parent: TC_H_ROOT, handle: HANDLE })),
    }
    match want {
        Shaper::Cake(c) => ops.push(q(TC_H_ROOT, HANDLE, Qdisc::Cake(c))),
        Shaper::Htb(r) => {
            ops.push(q(TC_H_ROOT, HANDLE, Qdisc::Htb));
            ops.push(Op::Tc(TcOp::Class { dev: dev.clone(), parent: HANDLE, classid: CLASS, rate: r }));
            ops.push(q(CLASS, OURS_LEAF, Qdisc::FqCodel));
        }
    }
}

/// The actions, and the notes for a human. Pure.
pub(crate) fn plan(p: &Profile, links: &[LinkInfo], now: &Observed) -> (Vec<Action>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut kept: Vec<IfName> = Vec::new();
    for (dev, s) in sqm_wans(p) {
        let Some(index) = links.iter().find(|l| &l.name == dev).map(|l| l.state.index) else { continue };
        // Kept even when refused below: a refusal applies nothing, and
        // takes nothing away either.
        kept.push(dev.clone());
        if s.ingress_kbit.is_some() {
            kept.push(ifb_name(dev));
        }
        match wan(dev, index, s, links, now, &mut notes) {
            Ok(ops) if ops.is_empty() => {}
            Ok(ops) => out.push(Action::Set { dev: dev.clone(), ops }),
            Err(why) => out.push(Action::Refused { dev: dev.clone(), why }),
        }
    }
    out.extend(unasked(links, &kept, now));
    if let Some(e) = now.error.filter(|_| sqm_wans(p).count() > 0) {
        let why = if e.0 == nix::libc::EOPNOTSUPP { " (qemu-user passes no traffic-control messages)" } else { "" };
        notes.push(format!("cannot list the qdiscs (RTM_GETQDISC: {e}){why}; SQM is planned as if none were set"));
    }
    (out, notes)
}

/// One SQM WAN's changes (none when it is shaped as asked), or why its
/// SQM cannot be set, naming the key.
fn wan(dev: &IfName, index: u32, s: &Sqm, links: &[LinkInfo], now: &Observed, notes: &mut Vec<String>) -> Result<Vec<Op>, String> {
    let cake = choose(dev, s, &now.modules, notes)?;
    within_speed(s, now.speeds.iter().find(|(n, _)| n == dev).map(|(_, s)| *s))?;
    let root = current(index, now).map_err(|other| format!("its root qdisc is {other}, which nasboot did not make, and is left alone"))?;
    let mut ops = Vec::new();
    if let Some(k) = &s.ingress_kbit {
        download(dev, index, shaper(s, k.get_ref().0, true, cake), links, now, &mut ops)?;
    }
    shape(dev, shaper(s, s.egress_kbit.get_ref().0, false, cake), root, &mut ops);
    Ok(ops)
}

/// Whether cake shapes `dev` (else fq_codel under HTB), with a note on
/// what `qdisc = "auto"` chose; refused when the kernel has no module
/// for the qdisc, or for shaping the download.
fn choose(dev: &IfName, s: &Sqm, has: &Modules, notes: &mut Vec<String>) -> Result<bool, String> {
    let cake = match s.qdisc {
        SqmQdisc::Cake => true,
        SqmQdisc::FqCodel => false,
        SqmQdisc::Auto => has.get(Module::Cake) != Has::No,
    };
    if s.qdisc == SqmQdisc::Auto && !cake {
        notes.push(format!("{dev}: sqm: the kernel has no sch_cake, so fq_codel under HTB shapes (qdisc = \"auto\")"));
    }
    if s.qdisc == SqmQdisc::Auto && has.get(Module::Cake) == Has::Unknown {
        notes.push(format!("{dev}: sqm: no module list tells whether the kernel has sch_cake; cake is tried"));
    }
    let (qdisc, modules) = if cake { ("cake", Module::CAKE) } else { ("fq_codel", Module::FQ_CODEL_HTB) };
    if let Some(m) = modules.iter().find(|m| has.get(**m) == Has::No) {
        return Err(format!("qdisc = \"{qdisc}\": the kernel has no {}", m.module()));
    }
    if let Some(m) = Module::DOWNLOAD.iter().find(|m| has.get(**m) == Has::No).filter(|_| s.ingress_kbit.is_some()) {
        return Err(format!(
            "ingress_kbit: the kernel has no {}, which shaping the download needs (drop ingress_kbit to shape the upload only)",
            m.module()
        ));
    }
    Ok(cake)
}

/// Refused when a rate is above the link's speed (`mbit`, when the
/// driver tells one).
fn within_speed(s: &Sqm, mbit: Option<u32>) -> Result<(), String> {
    let rates = [("egress_kbit", Some(s.egress_kbit.get_ref().0)), ("ingress_kbit", s.ingress_kbit.as_ref().map(|k| k.get_ref().0))];
    match rates.iter().find_map(|(k, r)| Some((*k, (*r)?, mbit?)).filter(|(_, r, sp)| u64::from(*r) > u64::from(*sp) * 1000)) {
        Some((key, kbit, mbit)) => Err(format!("{key} = {kbit} is above the link's speed, {mbit} Mb/s")),
        None => Ok(()),
    }
}

/// The changes that shape `dev`'s download with `want`: its IFB made
/// and up, shaped, and fed by `dev`'s ingress qdisc through the redirect
/// filter. Refused when the IFB or the ingress qdisc is another's.
fn download(dev: &IfName, index: u32, want: Shaper, links: &[LinkInfo], now: &Observed, ops: &mut Vec<Op>) -> Result<(), String> {
    let ifb = ifb_name(dev);
    let link = links.iter().find(|l| l.name == ifb);
    match link {
        Some(l) if !is_our_ifb(l) => return Err(format!("ingress_kbit: {ifb} exists and is not nasboot's")),
        Some(_) => {}
        None => ops.push(Op::CreateIfb(ifb.clone())),
    }
    if !link.is_some_and(|l| l.state.up) {
        ops.push(Op::Up(ifb.clone()));
    }
    let ifb_root = match link {
        Some(l) => current(l.state.index, now).unwrap_or(Some(None)),
        None => None,
    };
    shape(&ifb, want, ifb_root, ops);
    let ingress = now.qdiscs.iter().any(|q| q.index == index && q.parent == TC_H_INGRESS);
    let redirected = link.is_some_and(|l| {
        now.filters
            .iter()
            .any(|f| f.index == index && f.prio == crate::sys::tc::REDIRECT_PRIO && f.kind == TcKind::U32 { redirect: Some(l.state.index) })
    });
    if !redirected {
        if ingress {
            if link.is_none() {
                return Err(format!("ingress_kbit: {dev} has an ingress qdisc nasboot did not make"));
            }
            // Ours, with its filter gone: made again.
            ops.push(Op::Tc(TcOp::Delete { dev: dev.clone(), parent: TC_H_INGRESS, handle: INGRESS_HANDLE }));
        }
        ops.push(Op::Tc(TcOp::Qdisc { dev: dev.clone(), parent: TC_H_INGRESS, handle: INGRESS_HANDLE, qdisc: Qdisc::Ingress }));
        ops.push(Op::Tc(TcOp::Redirect { dev: dev.clone(), to: ifb }));
    }
    Ok(())
}

/// The steps that take away nasboot's shaping the profile no longer asks
/// for, on every link not `kept`: its IFB (with the WAN's ingress qdisc
/// that fed it), or its root qdisc.
fn unasked(links: &[LinkInfo], kept: &[IfName], now: &Observed) -> Vec<Action> {
    let mut out = Vec::new();
    for l in links {
        let ifb_kept = kept.contains(&l.name);
        let mut ops = Vec::new();
        if is_our_ifb(l) && !ifb_kept {
            let wan = l.name.as_str().strip_prefix("ifb4").and_then(|w| links.iter().find(|o| o.name.as_str() == w));
            if let Some(w) = wan.filter(|w| now.qdiscs.iter().any(|q| q.index == w.state.index && q.parent == TC_H_INGRESS)) {
                ops.push(Op::Tc(TcOp::Delete { dev: w.name.clone(), parent: TC_H_INGRESS, handle: INGRESS_HANDLE }));
            }
            ops.push(Op::RemoveIfb(l.name.clone()));
        } else if !ifb_kept && now.qdiscs.iter().any(|q| q.index == l.state.index && q.parent == TC_H_ROOT && q.handle == HANDLE) {
            ops.push(Op::Tc(TcOp::Delete { dev: l.name.clone(), parent: TC_H_ROOT, handle: HANDLE }));
        }
        if !ops.is_empty() {
            out.push(Action::Set { dev: l.name.clone(), ops });
        }
    }
    out
}

/// Carry out one step; on a refusal, take back what it had set.
pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    let (dev, ops) = match a {
        Action::Refused { dev, why } => return Err(Error::Sqm { name: dev.clone(), why: why.clone() }),
        Action::Set { dev, ops } => (dev, ops),
    };
    let nif = &mut *seams.netif;
    for (i, op) in ops.iter().enumerate() {
        let done = match op {
            Op::Tc(t) => nif.tc_set(t),
            Op::CreateIfb(n) => nif.create_link(&NewLink::Ifb { name: n.clone() }),
            Op::Up(n) => nif.set_up(n, true),
            Op::RemoveIfb(n) => nif.delete_link(n),
        };
        if let Err(source) = done {
            for undo in ops[..i].iter().rev() {
                let undone = match undo {
                    Op::Tc(TcOp::Qdisc { dev, parent, handle, .. }) if *parent == TC_H_ROOT || *parent == TC_H_INGRESS => {
                        nif.tc_set(&TcOp::Delete { dev: dev.clone(), parent: *parent, handle: *handle })
                    }
                    Op::CreateIfb(n) => nif.delete_link(n),
                    _ => Ok(()),
                };
                if let Err(e) = undone {
                    log::warn!("{dev}: sqm: cannot take back `{undo}`: {}", super::Shown(&e));
                }
            }
            return Err(Error::Tc { name: dev.clone(), op: op.to_string(), source });
        }
    }
    Ok(())
}

/// `status`'s lines: each of nasboot's shapers with its counters.
pub(crate) fn status(links: &[LinkInfo], now: &Observed, out: &mut dyn fmt::Write) -> fmt::Result {
    for q in now.qdiscs.iter().filter(|q| q.handle == HANDLE || (q.handle == OURS_LEAF && q.kind == TcKind::FqCodel)) {
        let name = links.iter().find(|l| l.state.index == q.index).map_or("?", |l| l.name.as_str());
        let what = match &q.kind {
            TcKind::Cake(c) => Qdisc::Cake(*c).to_string(),
            TcKind::Htb => "htb".to_string(),
            TcKind::FqCodel => "fq_codel".to_string(),
            _ => continue,
        };
        let s = q.stats;
        writeln!(
            out,
            "  sqm {name}: {what}: sent {} B {} pkt, dropped {}, marked {}, backlog {} B",
            s.bytes, s.packets, s.drops, s.marks, s.backlog
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
