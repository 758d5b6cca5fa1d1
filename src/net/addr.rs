//! Addresses and routes through rtnetlink (rtnetlink(7)): RTM_GETADDR and
//! RTM_GETROUTE dumps to observe, RTM_NEWADDR and RTM_NEWROUTE (replace)
//! to change. IPv4 addresses get their broadcast address. Addresses that
//! are on the interface but not in the profile are left alone (the IPv6
//! link-local address, a DHCP lease, an address set by hand): nasboot
//! adds what is missing and never removes.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::{Errno, Error};
use crate::config::net::{Interface, Method};
use crate::config::types::{IfName, IpNet};
use crate::seam::netif::{LinkState, RouteEntry};
use crate::seam::Seams;

/// The metric the kernel gives an IPv6 route added with none.
pub(crate) const IPV6_DEFAULT_METRIC: u32 = 1024;

/// An address or route change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Add { name: IfName, index: u32, addr: IpNet },
    Route { name: IfName, route: RouteEntry, gateway: bool, from: Option<RouteEntry> },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Add { name, addr, .. } => write!(f, "{name}: add address {addr}"),
            Action::Route { name, route, gateway, from } => {
                if *gateway {
                    write!(f, "{name}: default gateway ")?;
                    match from.as_ref().and_then(|r| r.via) {
                        Some(old) => write!(f, "{old} -> ")?,
                        None => f.write_str("-> ")?,
                    }
                    write!(f, "{}", route.via.map_or("on-link".to_string(), |v| v.to_string()))?;
                } else {
                    write!(f, "{name}: route {}", route.dst)?;
                    if let Some(v) = route.via {
                        write!(f, " via {v}")?;
                    }
                }
                if route.metric != 0 && route.metric != IPV6_DEFAULT_METRIC {
                    write!(f, " metric {}", route.metric)?;
                }
                Ok(())
            }
        }
    }
}

/// Add the profile's addresses that are missing. With method = "dhcp"
/// only IPv6 addresses are static (validation refuses IPv4 ones); with
/// "manual" the link gets no addresses.
pub(crate) fn plan_addresses(iface: &Interface, now: &LinkState, have: &Result<Vec<IpNet>, Errno>) -> Vec<Action> {
    if iface.method == Method::Manual {
        return Vec::new();
    }
    let empty = Vec::new();
    let have = have.as_ref().unwrap_or(&empty);
    iface
        .address
        .iter()
        .map(|a| *a.get_ref())
        .filter(|a| !have.contains(a))
        .map(|addr| Action::Add { name: iface.name.get_ref().clone(), index: now.index, addr })
        .collect()
}

/// The routes an interface wants: its static routes, then its gateways.
pub(crate) fn wanted_routes(iface: &Interface, index: u32) -> Vec<(RouteEntry, bool)> {
    let metric = |v4: bool, m: Option<u32>| m.unwrap_or(if v4 { 0 } else { IPV6_DEFAULT_METRIC });
    let mut out = Vec::new();
    for r in &iface.route {
        let to = r.to.get_ref();
        let dst = IpNet { addr: to.network(), prefix: to.prefix };
        let via = r.via.as_ref().map(|v| *v.get_ref());
        out.push((RouteEntry { dst, via, oif: index, metric: metric(to.is_v4(), r.metric) }, false));
    }
    if let Some(gw) = &iface.gateway {
        let dst = IpNet { addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED), prefix: 0 };
        out.push((RouteEntry { dst, via: Some(IpAddr::V4(*gw.get_ref())), oif: index, metric: 0 }, true));
    }
    if let Some(gw) = &iface.gateway6 {
        let dst = IpNet { addr: IpAddr::V6(Ipv6Addr::UNSPECIFIED), prefix: 0 };
        out.push((RouteEntry { dst, via: Some(IpAddr::V6(*gw.get_ref())), oif: index, metric: IPV6_DEFAULT_METRIC }, true));
    }
    out
}

/// Routes that are not in the table exactly (same destination, gateway,
/// interface and metric) are replaced.
pub(crate) fn plan_routes(iface: &Interface, now: &LinkState, have: &Result<Vec<RouteEntry>, Errno>) -> Vec<Action> {
    let empty = Vec::new();
    let have = have.as_ref().unwrap_or(&empty);
    wanted_routes(iface, now.index)
        .into_iter()
        .filter(|(r, _)| !have.contains(r))
        .map(|(route, gateway)| {
            let from = have.iter().find(|o| o.dst == route.dst && o.metric == route.metric).cloned();
            Action::Route { name: iface.name.get_ref().clone(), route, gateway, from }
        })
        .collect()
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    match a {
        Action::Add { name, index, addr } => match seams.netif.add_address(*index, addr) {
            Err(e) if e.raw_os_error() == Some(nix::libc::EEXIST) => Ok(()),
            other => other.map_err(|source| Error::Address { name: name.clone(), addr: *addr, source }),
        },
        Action::Route { name, route, gateway, .. } => seams.netif.replace_route(route).map_err(|source| Error::Route {
            name: name.clone(),
            dst: route.dst,
            gateway: *gateway,
            source,
        }),
    }
}
