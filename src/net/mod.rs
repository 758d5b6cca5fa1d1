//! NICs: links, addresses, routes and ethtool settings, straight through
//! the kernel (no `ip`, no `ethtool`).

use std::fmt;

use crate::apply::StepError;
use crate::config::types::IfName;
use crate::config::Profile;
use crate::seam::netif::LinkState;
use crate::seam::Seams;

/// One change to one interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// The interface does not exist: reported, nothing else is done for it.
    Missing { name: IfName },
    SetUp { name: IfName, up: bool },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Missing { name } => write!(f, "{name}: no such interface"),
            Action::SetUp { name, up } => write!(f, "{name}: set {}", if *up { "up" } else { "down" }),
        }
    }
}

/// Each profile interface's current state (None: absent or unreadable).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {
    pub links: Vec<(IfName, Option<LinkState>)>,
}

pub fn observe(p: &Profile, seams: &mut Seams<'_>) -> Observed {
    let links = p
        .interface
        .iter()
        .map(|i| {
            let name = i.name.get_ref().clone();
            let state = seams.netif.link(&name).unwrap_or(None);
            (name, state)
        })
        .collect();
    Observed { links }
}

pub fn plan(p: &Profile, now: &Observed) -> Vec<Action> {
    let mut out = Vec::new();
    for iface in &p.interface {
        let name = iface.name.get_ref();
        let state = now.links.iter().find(|(n, _)| n == name).and_then(|(_, s)| s.as_ref());
        let Some(state) = state else {
            out.push(Action::Missing { name: name.clone() });
            continue;
        };
        if state.up != iface.up {
            out.push(Action::SetUp { name: name.clone(), up: iface.up });
        }
    }
    out
}

pub fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), StepError> {
    match a {
        Action::Missing { name } => Err(StepError::partial(name.as_str(), "no such interface; skipped")),
        Action::SetUp { name, up } => seams.netif.set_up(name, *up).map_err(|e| StepError::partial(format!("{name} up"), e)),
    }
}
