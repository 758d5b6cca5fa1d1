//! Bridges and VLANs: the links nasboot creates (`kind = "bridge"`,
//! `kind = "vlan"`), through rtnetlink, never by a tool.
//!
//! [`observe`] dumps every link (RTM_GETLINK: name, kind, master, alias);
//! [`plan`] compares the dump with the profile:
//!
//! - a bridge or VLAN the profile names and the board lacks is created,
//!   down, with the alias `nasboot` (IFLA_IFALIAS), which marks it as
//!   nasboot's own; its addresses and the rest come from its
//!   `[[interface]]` like any link's, in the links phase;
//! - one that exists as the profile says is left alone; a bridge whose
//!   `stp` differs gets it set; a VLAN of nasboot's own with another id
//!   or lower device is deleted and created again (the kernel cannot
//!   change either);
//! - a link of that name that is something else and not nasboot's is
//!   never touched: the step fails and nothing is applied to it;
//! - each port is made a port of its bridge (IFLA_MASTER), and brought up
//!   when the profile has no `[[interface]]` of its own for it (a bridge
//!   forwards nothing over a port that is down); the same for a VLAN's
//!   lower device; a port of a nasboot bridge that the profile no longer
//!   lists is released;
//! - a bridge or VLAN with the alias `nasboot` that the profile no longer
//!   names is removed. Links nasboot did not create are never removed.
//!
//! These steps run before the firewall (`plan::Phase::Netdev`), so that a
//! flowtable or an ingress hook can name the new devices; the new links
//! stay down until the links phase, after the firewall. `cmd::apply`
//! observes again once they exist, so the rest of the plan works on the
//! links' real indices.

use std::fmt;

use super::{Errno, Error, VirtOp};
use crate::config::net::LinkKind;
use crate::config::types::IfName;
use crate::config::Profile;
use crate::seam::netif::{Kind, LinkInfo, NewLink, OURS};
use crate::seam::Seams;

/// What to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Virt {
    Bridge { stp: bool },
    Vlan { link: IfName, id: u16 },
}

impl fmt::Display for Virt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Virt::Bridge { stp } => write!(f, "bridge (stp {})", super::on_off(*stp)),
            Virt::Vlan { link, id } => write!(f, "vlan {id} on {link}"),
        }
    }
}

/// One change to the board's set of links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// A nasboot bridge or VLAN the profile no longer names.
    Remove {
        name: IfName,
    },
    Create {
        name: IfName,
        what: Virt,
    },
    /// A nasboot VLAN with another id or lower device: deleted, then created.
    Replace {
        name: IfName,
        what: Virt,
        was: String,
    },
    Stp {
        name: IfName,
        on: bool,
    },
    Enslave {
        port: IfName,
        bridge: IfName,
    },
    Release {
        port: IfName,
        bridge: IfName,
    },
    /// A port or lower device with no `[[interface]]` of its own, down.
    Up {
        name: IfName,
        why: IfName,
    },
    /// The name is taken by a link nasboot did not create.
    Foreign {
        name: IfName,
        is: String,
    },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Remove { name, .. } => write!(f, "{name}: remove (nasboot created it; the profile no longer names it)"),
            Action::Create { name, what } => write!(f, "{name}: create {what}"),
            Action::Replace { name, what, was, .. } => write!(f, "{name}: create again as {what} (it is {was})"),
            Action::Stp { name, on } => write!(f, "{name}: stp {}", super::on_off(*on)),
            Action::Enslave { port, bridge } => write!(f, "{port}: port of {bridge}"),
            Action::Release { port, bridge } => write!(f, "{port}: release from {bridge} (no longer one of its ports)"),
            Action::Up { name, why } => write!(f, "{name}: set up (for {why})"),
            Action::Foreign { name, is } => {
                write!(f, "{name}: exists as {is}, which nasboot did not create; nothing will be applied to it")
            }
        }
    }
}

/// Every link on the board: read at every apply, since a nasboot link the
/// profile no longer names is found only in the dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Observed {
    pub links: Result<Vec<LinkInfo>, Errno>,
}

impl Default for Observed {
    fn default() -> Self {
        Observed { links: Ok(Vec::new()) }
    }
}

pub(crate) fn observe(seams: &mut Seams<'_>) -> Observed {
    Observed { links: seams.netif.link_infos().map_err(|e| Errno::of(&e)) }
}

fn ours(l: &LinkInfo) -> bool {
    l.alias.as_deref() == Some(OURS) && matches!(l.kind, Kind::Bridge { .. } | Kind::Vlan { .. })
}

fn describe(l: &LinkInfo, links: &[LinkInfo]) -> String {
    let name_of = |i: u32| links.iter().find(|o| o.state.index == i).map_or_else(|| format!("#{i}"), |o| o.name.to_string());
    match &l.kind {
        Kind::Device => "a device".to_string(),
        Kind::Bridge { .. } => "a bridge".to_string(),
        Kind::Vlan { link, id } => format!("vlan {id} on {}", name_of(*link)),
        Kind::Other(k) => format!("a {k} link"),
    }
}

/// The plan: the actions in order (removals, bridges, VLANs, STP, ports,
/// ups) and the names of the links it creates, which the rest of the plan
/// treats as present and down.
pub(crate) fn plan(p: &Profile, now: &Observed) -> (Vec<Action>, Vec<IfName>) {
    let mut out = Vec::new();
    let mut created = Vec::new();
    let Ok(links) = &now.links else { return (out, created) };
    let find = |n: &IfName| links.iter().find(|l| &l.name == n);
    let named = |n: &IfName, k: LinkKind| p.interface.iter().any(|i| i.name.get_ref() == n && i.kind == k);
    // nasboot's own links that the profile no longer names, VLANs first
    // (a VLAN may sit on a bridge that goes too).
    let mut stale: Vec<&LinkInfo> = links
        .iter()
        .filter(|l| ours(l))
        .filter(|l| !named(&l.name, if matches!(l.kind, Kind::Bridge { .. }) { LinkKind::Bridge } else { LinkKind::Vlan }))
        .collect();
    stale.sort_by_key(|l| matches!(l.kind, Kind::Bridge { .. }));
    out.extend(stale.iter().map(|l| Action::Remove { name: l.name.clone() }));
    let mut stp = Vec::new();
    for want in [LinkKind::Bridge, LinkKind::Vlan] {
        for iface in p.interface.iter().filter(|i| i.kind == want) {
            let name = iface.name.get_ref().clone();
            let what = match want {
                LinkKind::Bridge => Virt::Bridge { stp: iface.stp.unwrap_or(false) },
                _ => Virt::Vlan {
                    link: iface.link.as_ref().expect("validated").get_ref().clone(),
                    id: iface.id.as_ref().expect("validated").get_ref().get(),
                },
            };
            let Some(have) = find(&name).filter(|l| !stale.iter().any(|s| s.state.index == l.state.index)) else {
                out.push(Action::Create { name: name.clone(), what });
                created.push(name);
                continue;
            };
            let same = match (&what, &have.kind) {
                (Virt::Bridge { stp: want }, Kind::Bridge { stp: is }) => {
                    if want != is {
                        stp.push(Action::Stp { name: name.clone(), on: *want });
                    }
                    true
                }
                (Virt::Vlan { link, id }, Kind::Vlan { link: l, id: i }) => {
                    id == i && links.iter().any(|o| o.state.index == *l && &o.name == link)
                }
                _ => false,
            };
            if same {
                continue;
            }
            let was = describe(have, links);
            if ours(have) {
                out.push(Action::Replace { name: name.clone(), what, was });
                created.push(name);
            } else {
                out.push(Action::Foreign { name, is: was });
            }
        }
    }
    out.extend(stp);
    let mut ups = Vec::new();
    for bridge in p.interface.iter().filter(|i| i.kind == LinkKind::Bridge) {
        let bname = bridge.name.get_ref();
        if out.iter().any(|a| matches!(a, Action::Foreign { name, .. } if name == bname)) {
            continue;
        }
        let bindex = find(bname).filter(|_| !created.contains(bname)).map(|l| l.state.index);
        for port in &bridge.ports {
            let port = port.get_ref();
            let have = find(port);
            if bindex.is_none() || have.is_none_or(|l| l.master != bindex) || created.contains(port) {
                out.push(Action::Enslave { port: port.clone(), bridge: bname.clone() });
            }
            let own = p.interface.iter().any(|i| i.name.get_ref() == port);
            if !own && (have.is_none_or(|l| !l.state.up) || created.contains(port)) {
                ups.push(Action::Up { name: port.clone(), why: bname.clone() });
            }
        }
        if let Some(bi) = bindex.filter(|_| find(bname).is_some_and(ours)) {
            for l in links.iter().filter(|l| l.master == Some(bi) && !bridge.ports.iter().any(|x| x.get_ref() == &l.name)) {
                out.push(Action::Release { port: l.name.clone(), bridge: bname.clone() });
            }
        }
    }
    for vlan in p.interface.iter().filter(|i| i.kind == LinkKind::Vlan) {
        let link = vlan.link.as_ref().expect("validated").get_ref();
        if !p.interface.iter().any(|i| i.name.get_ref() == link) && find(link).is_none_or(|l| !l.state.up) {
            ups.push(Action::Up { name: link.clone(), why: vlan.name.get_ref().clone() });
        }
    }
    out.extend(ups);
    (out, created)
}

fn create(seams: &mut Seams<'_>, name: &IfName, what: &Virt) -> Result<(), Error> {
    let new = match what {
        Virt::Bridge { stp } => NewLink::Bridge { name: name.clone(), stp: *stp },
        Virt::Vlan { link, id } => NewLink::Vlan { name: name.clone(), link: link.clone(), id: *id },
    };
    seams.netif.create_link(&new).map_err(|source| Error::Create { name: name.clone(), what: what.clone(), source })
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    let fail = |name: &IfName, op: VirtOp, source| Error::Virt { name: name.clone(), op, source };
    let nif = &mut *seams.netif;
    match a {
        Action::Remove { name } => nif.delete_link(name).map_err(|e| fail(name, VirtOp::Remove, e)),
        Action::Create { name, what } => create(seams, name, what),
        Action::Replace { name, what, .. } => {
            nif.delete_link(name).map_err(|e| fail(name, VirtOp::RemoveOld, e))?;
            create(seams, name, what)
        }
        Action::Stp { name, on } => nif.set_bridge_stp(name, *on).map_err(|e| fail(name, VirtOp::Stp, e)),
        Action::Enslave { port, bridge } => {
            nif.set_master(port, Some(bridge)).map_err(|e| fail(port, VirtOp::Enslave { bridge: bridge.clone() }, e))
        }
        Action::Release { port, bridge } => {
            nif.set_master(port, None).map_err(|e| fail(port, VirtOp::Release { bridge: bridge.clone() }, e))
        }
        Action::Up { name, .. } => nif.set_up(name, true).map_err(|e| fail(name, VirtOp::Up, e)),
        Action::Foreign { name, is } => Err(Error::Foreign { name: name.clone(), is: is.clone() }),
    }
}
