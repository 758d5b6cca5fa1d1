//! The plan: an ordered list of actions, built purely from the profile and
//! a snapshot of the board's current state. The order is part of the
//! design and `nasboot plan` prints exactly this order:
//!
//! 1. the watchdog is opened first, and petted between all later steps;
//! 2. sysctls;
//! 3. the firewall, before any link comes up, so the WAN is never open;
//! 4. links, addresses and routes;
//! 5. storage and NFS.

use std::fmt;

use crate::config::Profile;
use crate::seam::Seams;
use crate::{firewall, net, share, storage, sysctl, watchdog};

/// The phases, in apply order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    Watchdog,
    Netdev,
    Sysctl,
    Firewall,
    Links,
    Storage,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Phase::Watchdog => "watchdog",
            Phase::Netdev => "netdev",
            Phase::Sysctl => "sysctl",
            Phase::Firewall => "firewall",
            Phase::Links => "links",
            Phase::Storage => "storage",
        })
    }
}

/// One change to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Watchdog(watchdog::Action),
    Sysctl(sysctl::Action),
    // Boxed: a rule set and its fallbacks are far larger than any other step.
    Firewall(Box<firewall::Action>),
    Net(net::Action),
    Storage(storage::Action),
    Nfs(share::Action),
}

impl Action {
    pub(crate) fn phase(&self) -> Phase {
        match self {
            Action::Watchdog(_) => Phase::Watchdog,
            Action::Sysctl(_) => Phase::Sysctl,
            Action::Firewall(_) => Phase::Firewall,
            Action::Net(net::Action::Virt(_)) => Phase::Netdev,
            Action::Net(_) => Phase::Links,
            Action::Storage(_) | Action::Nfs(_) => Phase::Storage,
        }
    }

    /// A file this action writes, as (title, text), for `plan` to show.
    pub(crate) fn rendered(&self) -> Option<(String, &str)> {
        match self {
            Action::Firewall(a) => a.rendered(),
            Action::Nfs(a) => a.rendered(),
            _ => None,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Watchdog(a) => a.fmt(f),
            Action::Sysctl(a) => a.fmt(f),
            Action::Firewall(a) => a.fmt(f),
            Action::Net(a) => a.fmt(f),
            Action::Storage(a) => a.fmt(f),
            Action::Nfs(a) => a.fmt(f),
        }
    }
}

/// The board's current state, as far as the plan needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub sysctl: sysctl::Observed,
    pub net: net::Observed,
    pub storage: storage::Observed,
    pub nfs: share::Observed,
    pub firewall: firewall::Observed,
}

/// Read the current state through the seams (reads only).
pub(crate) fn observe(p: &Profile, seams: &mut Seams<'_>) -> Observed {
    let sysctl = sysctl::observe(&sysctl::global::wanted(p), seams);
    let net = net::observe(p, seams);
    let storage = storage::observe(p, seams);
    let nfs = share::observe(p, seams);
    // The firewall's hooks look at the links the network's dump listed.
    let firewall = firewall::observe(p, net.virt.links.as_deref().ok(), seams);
    Observed { sysctl, net, storage, nfs, firewall }
}

/// After the netdev steps (bridges and VLANs created, removed, their ports
/// set): what they change, observed again. The network, and what the
/// firewall takes from its links (`firewall::observe_again`); the global
/// sysctls, the storage and the NFS server are as `before` found them.
pub(crate) fn observe_again(p: &Profile, mut before: Observed, seams: &mut Seams<'_>) -> Observed {
    before.net = net::observe(p, seams);
    before.net.after_netdev = true;
    firewall::observe_again(p, &mut before.firewall, before.net.virt.links.as_deref().ok(), seams);
    before
}

/// Things the plan wants a human to know (e.g. "nfsd is running, so
/// versions cannot change until it is stopped").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    pub actions: Vec<Action>,
    pub notes: Vec<String>,
}

/// The watchdog's actions and the netdev phase's (the bridges, VLANs and
/// IFBs to create or remove): what `apply` does before it observes the
/// board again, when there are netdev steps, without the rest of a plan
/// that would be made again then (the firewall's rule sets above all);
/// with the network's other actions kept for [`plan_rest`].
pub(crate) struct Head {
    pub plan: Plan,
    links: Vec<net::Action>,
}

/// The plan's head ([`Head`]). Pure.
pub(crate) fn plan_head(p: &Profile, now: &Observed) -> Head {
    let mut plan = Plan::default();
    plan.actions.extend(watchdog::plan(p).into_iter().map(Action::Watchdog));
    let (netdev, links): (Vec<_>, Vec<_>) = net::plan(p, &now.net).into_iter().partition(|a| matches!(a, net::Action::Virt(_)));
    plan.actions.extend(netdev.into_iter().map(Action::Net));
    Head { plan, links }
}

/// The rest of the plan after its head, on the same observation. Pure.
pub(crate) fn plan_rest(p: &Profile, now: &Observed, head: Head) -> Plan {
    let Head { plan: mut out, links } = head;
    out.actions.extend(sysctl::plan(&sysctl::Scope::Global, sysctl::global::wanted(p), &now.sysctl).into_iter().map(Action::Sysctl));
    out.actions.extend(firewall::plan(p, &now.firewall).into_iter().map(|a| Action::Firewall(Box::new(a))));
    out.notes.extend(firewall::notes(p, &now.firewall));
    out.actions.extend(links.into_iter().map(Action::Net));
    out.notes.extend(net::notes(p, &now.net));
    out.actions.extend(storage::plan(p, &now.storage).into_iter().map(Action::Storage));
    let (nfs_actions, nfs_notes) = share::plan(p, &now.nfs);
    out.actions.extend(nfs_actions.into_iter().map(Action::Nfs));
    out.notes.extend(nfs_notes);
    debug_assert!(out.actions.windows(2).all(|w| w[0].phase() <= w[1].phase()));
    out
}

/// Build the plan. Pure: the same profile and state give the same plan.
pub(crate) fn plan(p: &Profile, now: &Observed) -> Plan {
    plan_rest(p, now, plan_head(p, now))
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.actions.is_empty() {
            writeln!(f, "nothing to do: the board matches the profile")?;
        }
        for (i, a) in self.actions.iter().enumerate() {
            writeln!(f, "{:>3}. {:<8}  {}", i + 1, a.phase(), a)?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        for a in &self.actions {
            if let Some((title, text)) = a.rendered() {
                writeln!(f, "\n--- {title} ---")?;
                f.write_str(text)?;
                if !text.ends_with('\n') {
                    writeln!(f)?;
                }
            }
        }
        Ok(())
    }
}
