//! The ethtool knobs of an interface: observe, plan, apply. Reads only
//! the knobs the profile sets. A knob the driver lacks (EOPNOTSUPP) is a
//! note in the plan and a warning at apply, never a failure; ring sizes
//! above the driver's maximum (ETHTOOL_GRINGPARAM) are clamped to it with
//! a note. Any other error is a partial failure naming interface and knob.

use std::fmt;
use std::io;

use super::ethtool::{self, LinkMode, Offload, Pause, Rings};
use super::{on_off, Errno, Error, Shown};
use crate::config::net::{Duplex, Ethtool, Interface};
use crate::config::types::IfName;
use crate::seam::Seams;
use crate::sys::ethtool::{DUPLEX_FULL, DUPLEX_HALF};

/// One ethtool change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Rings { name: IfName, rx: Option<u32>, tx: Option<u32>, from: Option<Rings> },
    Offload { name: IfName, offload: Offload, on: bool, from: Option<bool> },
    Coalesce { name: IfName, rx_usecs: Option<u32>, tx_usecs: Option<u32>, from: Option<(u32, u32)> },
    Pause { name: IfName, to: Pause, from: Option<Pause> },
    LinkMode { name: IfName, speed: Option<u32>, duplex: Option<Duplex>, autoneg: Option<bool>, from: Option<LinkMode> },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Rings { name, rx, tx, from } => {
                write!(f, "{name}: ring")?;
                if let Some(rx) = rx {
                    match from {
                        Some(r) => write!(f, " rx {} -> {rx}", r.rx)?,
                        None => write!(f, " rx -> {rx}")?,
                    }
                }
                if let Some(tx) = tx {
                    match from {
                        Some(r) => write!(f, " tx {} -> {tx}", r.tx)?,
                        None => write!(f, " tx -> {tx}")?,
                    }
                }
                Ok(())
            }
            Action::Offload { name, offload, on, from } => match from {
                Some(old) => write!(f, "{name}: {offload} {} -> {}", on_off(*old), on_off(*on)),
                None => write!(f, "{name}: {offload} -> {}", on_off(*on)),
            },
            Action::Coalesce { name, rx_usecs, tx_usecs, from } => {
                write!(f, "{name}: coalesce")?;
                if let Some(rx) = rx_usecs {
                    match from {
                        Some((old, _)) => write!(f, " rx-usecs {old} -> {rx}")?,
                        None => write!(f, " rx-usecs -> {rx}")?,
                    }
                }
                if let Some(tx) = tx_usecs {
                    match from {
                        Some((_, old)) => write!(f, " tx-usecs {old} -> {tx}")?,
                        None => write!(f, " tx-usecs -> {tx}")?,
                    }
                }
                Ok(())
            }
            Action::Pause { name, to, from } => match from {
                Some(old) => write!(f, "{name}: pause {old} -> {to}"),
                None => write!(f, "{name}: pause -> {to}"),
            },
            Action::LinkMode { name, speed, duplex, autoneg, from } => {
                write!(f, "{name}: link")?;
                if let Some(s) = speed {
                    write!(f, " speed {s}")?;
                }
                if let Some(d) = duplex {
                    write!(f, " duplex {}", if *d == Duplex::Full { "full" } else { "half" })?;
                }
                if let Some(a) = autoneg {
                    write!(f, " autoneg {}", on_off(*a))?;
                }
                if let Some(old) = from {
                    write!(f, " (now {old})")?;
                }
                Ok(())
            }
        }
    }
}

/// The current values of the knobs the profile sets (None: not asked).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub rings: Option<Result<Rings, Errno>>,
    pub offloads: Vec<(Offload, Result<Option<ethtool::OffloadState>, Errno>)>,
    pub coalesce: Option<Result<(u32, u32), Errno>>,
    pub pause: Option<Result<Pause, Errno>>,
    pub link_mode: Option<Result<LinkMode, Errno>>,
}

fn errno<T>(r: io::Result<T>) -> Result<T, Errno> {
    r.map_err(|e| Errno::of(&e))
}

pub(crate) fn observe(iface: &Interface, seams: &mut Seams<'_>) -> Observed {
    let Some(want) = &iface.ethtool else { return Observed::default() };
    let name = iface.name.get_ref();
    let nif = &mut *seams.netif;
    let mut o = Observed::default();
    if want.rx_ring.is_some() || want.tx_ring.is_some() {
        o.rings = Some(errno(ethtool::get_rings(nif, name)));
    }
    let offloads: Vec<Offload> = Offload::ALL.into_iter().filter(|off| off.wanted(want).is_some()).collect();
    if !offloads.is_empty() {
        let table = match ethtool::get_features(nif, name) {
            Ok(t) => Ok(Some(t)),
            Err(e) if ethtool::unsupported(&e) => Ok(None),
            Err(e) => Err(Errno::of(&e)),
        };
        for off in offloads {
            let state = match &table {
                Ok(t) => errno(ethtool::get_offload(nif, name, t.as_ref(), off)),
                Err(e) => Err(*e),
            };
            o.offloads.push((off, state));
        }
    }
    if want.rx_usecs.is_some() || want.tx_usecs.is_some() {
        o.coalesce = Some(errno(ethtool::get_coalesce(nif, name)));
    }
    if want.pause_autoneg.is_some() || want.pause_rx.is_some() || want.pause_tx.is_some() {
        o.pause = Some(errno(ethtool::get_pause(nif, name)));
    }
    if want.speed.is_some() || want.duplex.is_some() || want.autoneg.is_some() {
        o.link_mode = Some(errno(ethtool::get_link_mode(nif, name)));
    }
    o
}

/// A knob the driver lacks; anything else unreadable still gets an action
/// (whose failure is then reported).
fn lacking(notes: &mut Vec<String>, name: &IfName, knob: &str, e: &Errno) -> bool {
    if e.unsupported() {
        notes.push(format!("{name} {knob}: not supported by the driver ({e}); skipped"));
        return true;
    }
    if e.0 == nix::libc::ENOSYS {
        notes.push(format!("{name} {knob}: SIOCETHTOOL is not available here ({e}); qemu-user does not translate every ethtool command"));
    }
    false
}

fn plan_rings(name: &IfName, want: &Ethtool, now: &Result<Rings, Errno>, notes: &mut Vec<String>) -> Option<Action> {
    let cur = match now {
        Err(e) if lacking(notes, name, "ring", e) => return None,
        Err(_) => None,
        Ok(r) => Some(*r),
    };
    let clamp = |want: Option<u32>, max: Option<u32>, knob: &str, notes: &mut Vec<String>| {
        want.map(|w| match max {
            Some(m) if m > 0 && w > m => {
                notes.push(format!("{name} {knob}: {w} is above the driver's maximum {m}; clamped to {m}"));
                m
            }
            _ => w,
        })
    };
    let rx = clamp(want.rx_ring, cur.map(|r| r.rx_max), "rx_ring", notes).filter(|v| cur.is_none_or(|r| r.rx != *v));
    let tx = clamp(want.tx_ring, cur.map(|r| r.tx_max), "tx_ring", notes).filter(|v| cur.is_none_or(|r| r.tx != *v));
    (rx.is_some() || tx.is_some()).then(|| Action::Rings { name: name.clone(), rx, tx, from: cur })
}

pub(crate) fn plan(iface: &Interface, now: &Observed, notes: &mut Vec<String>) -> Vec<Action> {
    let Some(want) = &iface.ethtool else { return Vec::new() };
    let name = iface.name.get_ref();
    let mut out = Vec::new();
    if let Some(r) = &now.rings {
        out.extend(plan_rings(name, want, r, notes));
    }
    for (off, state) in &now.offloads {
        let Some(on) = off.wanted(want) else { continue };
        match state {
            Err(e) if lacking(notes, name, off.key(), e) => {}
            Err(_) => out.push(Action::Offload { name: name.clone(), offload: *off, on, from: None }),
            Ok(None) => notes.push(format!("{name} {off}: this kernel has no such feature; skipped")),
            Ok(Some(s)) if s.on == Some(on) => {}
            Ok(Some(s)) if !s.changeable => {
                notes.push(format!("{name} {off}: fixed by the driver, cannot turn it {}; skipped", on_off(on)))
            }
            Ok(Some(s)) => out.push(Action::Offload { name: name.clone(), offload: *off, on, from: s.on }),
        }
    }
    if let Some(c) = &now.coalesce {
        let cur = match c {
            Err(e) if lacking(notes, name, "coalesce", e) => None,
            Err(_) => Some(None),
            Ok(v) => Some(Some(*v)),
        };
        if let Some(cur) = cur {
            let rx = want.rx_usecs.filter(|v| cur.is_none_or(|(r, _)| r != *v));
            let tx = want.tx_usecs.filter(|v| cur.is_none_or(|(_, t)| t != *v));
            if rx.is_some() || tx.is_some() {
                out.push(Action::Coalesce { name: name.clone(), rx_usecs: rx, tx_usecs: tx, from: cur });
            }
        }
    }
    if let Some(p) = &now.pause {
        let cur = match p {
            Err(e) if lacking(notes, name, "pause", e) => None,
            Err(_) => Some(None),
            Ok(v) => Some(Some(*v)),
        };
        if let Some(cur) = cur {
            let base = cur.unwrap_or_default();
            let to = Pause {
                autoneg: want.pause_autoneg.unwrap_or(base.autoneg),
                rx: want.pause_rx.unwrap_or(base.rx),
                tx: want.pause_tx.unwrap_or(base.tx),
            };
            if cur != Some(to) {
                out.push(Action::Pause { name: name.clone(), to, from: cur });
            }
        }
    }
    if let Some(l) = &now.link_mode {
        let cur = match l {
            Err(e) if lacking(notes, name, "link settings", e) => None,
            Err(_) => Some(None),
            Ok(v) => Some(Some(*v)),
        };
        if let Some(cur) = cur {
            let dup = |d: Duplex| if d == Duplex::Full { DUPLEX_FULL } else { DUPLEX_HALF };
            let differs = cur.is_none_or(|m: LinkMode| {
                want.speed.is_some_and(|s| s != m.speed)
                    || want.duplex.is_some_and(|d| dup(d) != m.duplex)
                    || want.autoneg.is_some_and(|a| a != m.autoneg)
            });
            if differs {
                out.push(Action::LinkMode { name: name.clone(), speed: want.speed, duplex: want.duplex, autoneg: want.autoneg, from: cur });
            }
        }
    }
    out
}

fn knob(a: &Action) -> (&IfName, &'static str) {
    match a {
        Action::Rings { name, .. } => (name, "ring"),
        Action::Offload { name, offload, .. } => (name, offload.key()),
        Action::Coalesce { name, .. } => (name, "coalesce"),
        Action::Pause { name, .. } => (name, "pause"),
        Action::LinkMode { name, .. } => (name, "link settings"),
    }
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    let nif = &mut *seams.netif;
    let r = match a {
        Action::Rings { name, rx, tx, .. } => ethtool::set_rings(nif, name, *rx, *tx),
        Action::Offload { name, offload, on, .. } => ethtool::set_offload(nif, name, *offload, *on),
        Action::Coalesce { name, rx_usecs, tx_usecs, .. } => ethtool::set_coalesce(nif, name, *rx_usecs, *tx_usecs),
        Action::Pause { name, to, .. } => ethtool::set_pause(nif, name, *to),
        Action::LinkMode { name, speed, duplex, autoneg, .. } => ethtool::set_link_mode(nif, name, *speed, *duplex, *autoneg),
    };
    match r {
        Ok(()) => Ok(()),
        Err(e) if ethtool::unsupported(&e) => {
            let (name, k) = knob(a);
            log::warn!("{name} {k}: not supported by the driver ({}); skipped", Shown(&e));
            Ok(())
        }
        Err(source) => {
            let (name, knob) = knob(a);
            Err(Error::Ethtool { name: name.clone(), knob, source })
        }
    }
}
