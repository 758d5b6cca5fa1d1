//! Link settings through socket ioctls (netdevice(7)): administrative
//! state and promiscuous mode (SIOCSIFFLAGS), MTU (SIOCSIFMTU),
//! txqueuelen (SIOCSIFTXQLEN), MAC (SIOCSIFHWADDR). These work on every
//! kernel from 2.6 on, unlike RTM_NEWLINK's IFLA_* attributes.

use std::fmt;

use super::{on_off, Error};
use crate::config::net::Interface;
use crate::config::types::{IfName, MacAddr};
use crate::seam::netif::LinkState;
use crate::seam::Seams;

/// One link change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Up { name: IfName, up: bool },
    Mtu { name: IfName, from: u32, to: u32 },
    TxQueueLen { name: IfName, from: u32, to: u32 },
    Mac { name: IfName, from: MacAddr, to: MacAddr },
    Promisc { name: IfName, on: bool },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Up { name, up } => write!(f, "{name}: set {}", if *up { "up" } else { "down" }),
            Action::Mtu { name, from, to } => write!(f, "{name}: mtu {from} -> {to}"),
            Action::TxQueueLen { name, from, to } => write!(f, "{name}: txqueuelen {from} -> {to}"),
            Action::Mac { name, from, to } => write!(f, "{name}: mac {from} -> {to}"),
            Action::Promisc { name, on } => write!(f, "{name}: promisc {}", on_off(*on)),
        }
    }
}

/// The link part of an interface's plan.
#[derive(Debug, Default)]
pub(crate) struct Planned {
    /// Before the ethtool knobs: down (for a MAC change), MAC, MTU,
    /// txqueuelen, promisc.
    pub before: Vec<Action>,
    /// After them: up or down.
    pub after: Vec<Action>,
    /// The link goes down and up again (MAC change on a link that was up).
    pub bounced: bool,
}

pub(crate) fn plan(iface: &Interface, now: &LinkState) -> Planned {
    let name = iface.name.get_ref();
    let mut p = Planned::default();
    if let Some(mac) = iface.mac {
        if mac.0 != now.mac {
            // Most drivers refuse a new MAC on a running link (EBUSY).
            if now.up {
                p.before.push(Action::Up { name: name.clone(), up: false });
                p.bounced = true;
            }
            p.before.push(Action::Mac { name: name.clone(), from: MacAddr(now.mac), to: mac });
        }
    }
    if let Some(mtu) = iface.mtu {
        if mtu.0 != now.mtu {
            p.before.push(Action::Mtu { name: name.clone(), from: now.mtu, to: mtu.0 });
        }
    }
    if let Some(q) = iface.txqueuelen {
        if q != now.txqueuelen {
            p.before.push(Action::TxQueueLen { name: name.clone(), from: now.txqueuelen, to: q });
        }
    }
    if iface.promisc != now.promisc {
        p.before.push(Action::Promisc { name: name.clone(), on: iface.promisc });
    }
    if iface.up && (!now.up || p.bounced) {
        p.after.push(Action::Up { name: name.clone(), up: true });
    } else if !iface.up && now.up {
        p.after.push(Action::Up { name: name.clone(), up: false });
    }
    p
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    let nif = &mut *seams.netif;
    match a {
        Action::Up { name, up } => nif.set_up(name, *up).map_err(|source| Error::Up { name: name.clone(), source }),
        Action::Mtu { name, to, .. } => nif.set_mtu(name, *to).map_err(|source| Error::Mtu { name: name.clone(), to: *to, source }),
        Action::TxQueueLen { name, to, .. } => {
            nif.set_txqueuelen(name, *to).map_err(|source| Error::TxQueueLen { name: name.clone(), to: *to, source })
        }
        Action::Mac { name, to, .. } => nif.set_mac(name, to.0).map_err(|source| Error::Mac { name: name.clone(), to: *to, source }),
        Action::Promisc { name, on } => nif.set_promisc(name, *on).map_err(|source| Error::Promisc { name: name.clone(), on: *on, source }),
    }
}
