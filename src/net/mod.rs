//! NICs: links, addresses, routes and ethtool settings, straight through
//! the kernel (no `ip`, no `ethtool`, no shell): socket ioctls for the
//! link (so 2.6 and 3.x kernels work), rtnetlink for addresses and
//! routes, SIOCETHTOOL for the driver's knobs.
//!
//! Same shape as every subsystem: [`observe`] reads the current state of
//! each profile interface (reads only), [`plan`] compares it with the
//! profile and emits only the differing actions (an interface whose MTU
//! is right is not touched, a link is bounced only to change its MAC),
//! [`apply`] carries out one action. A failing knob is a partial error
//! naming the interface and the knob; the rest carries on.
//!
//! Per interface the actions come in this order: its sysctls (accept_ra
//! before the link comes up), link settings (down -> mac -> ... -> up
//! only when the MAC changes), ethtool knobs, admin up, carrier wait,
//! addresses, DHCP, routes and gateways.
//!
//! Files: `link.rs` (flags, MTU, txqueuelen, MAC, promisc), `tuning.rs`
//! (plan/apply of the ethtool knobs), `ethtool.rs` (read-modify-write and
//! the legacy fallbacks over the seam's typed ethtool operations; the
//! structures are in `crate::sys::ethtool`), `carrier.rs`, `addr.rs`
//! (addresses and routes), `dhcp.rs`, `virt.rs` (bridges and VLANs),
//! `error.rs` ([`Error`], what a step fails with). The per-interface
//! sysctls (accept_ra and the `[interface.sysctl]` map) are
//! `crate::sysctl::interface`.

pub(crate) mod addr;
pub(crate) mod carrier;
pub(crate) mod dhcp;
mod error;
pub(crate) mod ethtool;
pub(crate) mod link;
pub(crate) mod sqm;
pub(crate) mod tuning;
pub(crate) mod virt;

#[cfg(test)]
mod tests;

use std::fmt;
use std::io;

use crate::config::net::Interface;
use crate::config::types::{IfName, IpNet};
use crate::config::Profile;
use crate::seam::netif::{LinkState, RouteEntry};
use crate::seam::Seams;

pub(crate) use error::{Error, VirtOp};

/// An errno kept in the observed state (io::Error is neither Clone nor Eq).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Errno(pub i32);

impl Errno {
    pub(crate) fn of(e: &io::Error) -> Errno {
        Errno(e.raw_os_error().unwrap_or(nix::libc::EIO))
    }
    pub(crate) fn error(self) -> io::Error {
        io::Error::from_raw_os_error(self.0)
    }
    /// The driver has no such knob.
    pub(crate) fn unsupported(self) -> bool {
        ethtool::unsupported(&self.error())
    }
}

impl fmt::Display for Errno {
    /// "Operation not supported (EOPNOTSUPP)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = nix::errno::Errno::from_raw(self.0);
        // `&e`: the name through `<&Errno as Debug>`, the instance nix's
        // own Display uses; `e` would link a second copy of the match over
        // every errno name.
        write!(f, "{} ({:?})", e.desc(), &e)
    }
}

/// An io::Error told by its errno, "Invalid argument (EINVAL)", when it
/// has one.
pub(crate) struct Shown<'a>(pub &'a io::Error);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.raw_os_error() {
            Some(c) => Errno(c).fmt(f),
            None => self.0.fmt(f),
        }
    }
}

/// One change to one interface (or a route through it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// The interface does not exist: reported, nothing else is done for it.
    Missing {
        name: IfName,
    },
    Sysctl(crate::sysctl::Action),
    Link(link::Action),
    Ethtool(tuning::Action),
    Carrier(carrier::Action),
    Addr(addr::Action),
    Dhcp(dhcp::Action),
    /// Bridges and VLANs: created, removed, ports (before the firewall).
    Virt(virt::Action),
    /// A WAN's shaping (after the links).
    Sqm(sqm::Action),
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Missing { name } => write!(f, "{name}: no such interface; nothing will be applied to it"),
            Action::Sysctl(a) => a.fmt(f),
            Action::Link(a) => a.fmt(f),
            Action::Ethtool(a) => a.fmt(f),
            Action::Carrier(a) => a.fmt(f),
            Action::Addr(a) => a.fmt(f),
            Action::Dhcp(a) => a.fmt(f),
            Action::Virt(a) => a.fmt(f),
            Action::Sqm(a) => a.fmt(f),
        }
    }
}

/// One profile interface as it is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IfObserved {
    pub name: IfName,
    /// None: no such interface.
    pub link: Option<LinkState>,
    /// Its addresses, both families.
    pub addrs: Result<Vec<IpNet>, Errno>,
    pub sysctl: crate::sysctl::Observed,
    pub ethtool: tuning::Observed,
    pub dhcp: dhcp::Observed,
}

/// Each profile interface's current state, and the main routing table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Observed {
    /// (name, state) per profile interface (None: absent or unreadable).
    pub links: Vec<(IfName, Option<LinkState>)>,
    pub ifaces: Vec<IfObserved>,
    pub routes: Result<Vec<RouteEntry>, Errno>,
    /// Every link's kind, master and alias (bridges and VLANs).
    pub virt: virt::Observed,
    /// The qdiscs, for SQM.
    pub sqm: sqm::Observed,
    /// Observed after the netdev steps ran (`cmd::apply`'s second pass):
    /// a bridge or VLAN still missing is missing, not about to be created.
    pub after_netdev: bool,
}

impl Default for Observed {
    fn default() -> Self {
        Observed {
            links: Vec::new(),
            ifaces: Vec::new(),
            routes: Ok(Vec::new()),
            virt: virt::Observed::default(),
            sqm: sqm::Observed::default(),
            after_netdev: false,
        }
    }
}

/// Read every profile interface's state (reads only).
pub(crate) fn observe(p: &Profile, seams: &mut Seams<'_>) -> Observed {
    // The link dump first: a link it does not list is absent, and is not
    // asked for by name. An interface ioctl on a name the kernel does not
    // know makes it try to load a module of that name: two modprobe runs
    // (`netdev-br-lan`, then `br-lan`), two process starts on the board
    // for each bridge or VLAN nasboot is about to create.
    let mut out = Observed { virt: virt::observe(seams), ..Observed::default() };
    // Every interface's addresses, asked for once, at the first link there is.
    let mut all_addrs: Option<Result<Vec<(u32, IpNet)>, Errno>> = None;
    for iface in p.interface.iter() {
        let name = iface.name.get_ref().clone();
        // Its state from the dump's message, which holds all that five
        // ioctls by name would read; by name only where the dump failed.
        let link = match &out.virt.links {
            Ok(all) => all.iter().find(|l| l.name == name).map(|l| l.state.clone()),
            Err(_) => seams.netif.link(&name).unwrap_or_else(|e| {
                log::warn!("{name}: cannot read the link: {e}");
                None
            }),
        };
        let mut o = IfObserved {
            name: name.clone(),
            link: link.clone(),
            addrs: Ok(Vec::new()),
            sysctl: crate::sysctl::Observed::default(),
            ethtool: tuning::Observed::default(),
            dhcp: dhcp::Observed::default(),
        };
        if let Some(l) = &link {
            let all = all_addrs.get_or_insert_with(|| seams.netif.addresses().map_err(|e| Errno::of(&e)));
            o.addrs = all.as_ref().map(|v| v.iter().filter(|(i, _)| *i == l.index).map(|(_, a)| *a).collect()).map_err(|e| *e);
            o.sysctl = crate::sysctl::observe(&crate::sysctl::interface::wanted(iface), seams);
            o.ethtool = tuning::observe(iface, seams);
            o.dhcp = dhcp::observe(iface, seams);
        }
        out.links.push((name, link));
        out.ifaces.push(o);
    }
    out.sqm = sqm::observe(p, out.virt.links.as_deref().unwrap_or_default(), seams);
    let wants_routes = p.interface.iter().any(|i| !i.route.is_empty() || i.gateway.is_some() || i.gateway6.is_some());
    if wants_routes {
        out.routes = seams.netif.routes().map_err(|e| Errno::of(&e));
    }
    out
}

/// The plan's actions and the notes for a human (knobs the driver lacks,
/// clamped ring sizes).
fn plan_all(p: &Profile, now: &Observed) -> (Vec<Action>, Vec<String>) {
    let (virt, created) = virt::plan(p, &now.virt);
    let mut out: Vec<Action> = virt.into_iter().map(Action::Virt).collect();
    let mut notes = Vec::new();
    if let Err(e) = &now.virt.links {
        if p.interface.iter().any(|i| i.kind != crate::config::net::LinkKind::Nic) {
            notes.push(format!("cannot list the links (RTM_GETLINK: {e}), so no bridge or VLAN is created or removed"));
        }
    }
    // A link about to be created: planned as it will be, down, with no
    // addresses (apply observes again once it exists).
    let new_link = LinkState { mtu: 1500, txqueuelen: 1000, hwtype: crate::seam::netif::ARPHRD_ETHER, ..LinkState::default() };
    for iface in p.interface.iter() {
        let name = iface.name.get_ref();
        let foreign = out.iter().any(|a| matches!(a, Action::Virt(virt::Action::Foreign { name: n, .. }) if n == name));
        if foreign {
            continue;
        }
        let o = now.ifaces.iter().find(|o| &o.name == name);
        if created.contains(name) && !now.after_netdev {
            let fresh = IfObserved {
                name: name.clone(),
                link: Some(new_link.clone()),
                addrs: Ok(Vec::new()),
                sysctl: crate::sysctl::Observed::default(),
                ethtool: tuning::Observed::default(),
                dhcp: dhcp::Observed::default(),
            };
            plan_iface(iface, &fresh, &new_link, &now.routes, &mut out, &mut notes);
            continue;
        }
        let Some((o, state)) = o.and_then(|o| o.link.as_ref().map(|l| (o, l))) else {
            out.push(Action::Missing { name: name.clone() });
            continue;
        };
        plan_iface(iface, o, state, &now.routes, &mut out, &mut notes);
    }
    let (sqm, sqm_notes) = sqm::plan(p, now.virt.links.as_deref().unwrap_or_default(), &now.sqm);
    out.extend(sqm.into_iter().map(Action::Sqm));
    notes.extend(sqm_notes);
    (out, notes)
}

fn plan_iface(
    iface: &Interface,
    o: &IfObserved,
    state: &LinkState,
    routes: &Result<Vec<RouteEntry>, Errno>,
    out: &mut Vec<Action>,
    notes: &mut Vec<String>,
) {
    out.extend(
        crate::sysctl::plan(
            &crate::sysctl::Scope::Interface(iface.name.get_ref().clone()),
            crate::sysctl::interface::wanted(iface),
            &o.sysctl,
        )
        .into_iter()
        .map(Action::Sysctl),
    );
    let link = link::plan(iface, state);
    out.extend(link.before.into_iter().map(Action::Link));
    out.extend(tuning::plan(iface, &o.ethtool, notes).into_iter().map(Action::Ethtool));
    out.extend(link.after.into_iter().map(Action::Link));
    out.extend(carrier::plan(iface, state, link.bounced).into_iter().map(Action::Carrier));
    out.extend(addr::plan_addresses(iface, state, &o.addrs).into_iter().map(Action::Addr));
    out.extend(dhcp::plan(iface, &o.dhcp).into_iter().map(Action::Dhcp));
    if iface.up {
        out.extend(addr::plan_routes(iface, state, routes).into_iter().map(Action::Addr));
    } else if !iface.route.is_empty() || iface.gateway.is_some() || iface.gateway6.is_some() {
        notes.push(format!("{}: up = false, so its routes and gateways are not installed", iface.name.get_ref()));
    }
}

/// The actions, in order. Pure.
pub(crate) fn plan(p: &Profile, now: &Observed) -> Vec<Action> {
    plan_all(p, now).0
}

/// What the plan wants a human to know. Pure.
pub(crate) fn notes(p: &Profile, now: &Observed) -> Vec<String> {
    plan_all(p, now).1
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    match a {
        Action::Missing { name } => Err(Error::Missing { name: name.clone() }),
        Action::Sysctl(a) => crate::sysctl::apply(a, seams).map_err(Error::Sysctl),
        Action::Link(a) => link::apply(a, seams),
        Action::Ethtool(a) => tuning::apply(a, seams),
        Action::Carrier(a) => carrier::apply(a, seams),
        Action::Addr(a) => addr::apply(a, seams),
        Action::Dhcp(a) => dhcp::apply(a, seams),
        Action::Virt(a) => virt::apply(a, seams),
        Action::Sqm(a) => sqm::apply(a, seams),
    }
}

/// "on" or "off", for plans and messages about boolean knobs.
pub(crate) fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}
