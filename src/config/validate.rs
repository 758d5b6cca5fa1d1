//! Every rule that spans several values, in one place: interfaces,
//! firewall, exports and nfsd, Samba, watchdog, storage. Runs after the
//! decoder has checked each value into its newtype; past this, the code trusts the
//! profile. [`board_paths`] is the one rule that asks the board (do the
//! exported paths exist), run by `cmd::load` once the seams are there.

use std::fmt;
use std::net::IpAddr;
use std::path::Path;

use super::firewall::{Backend, Hook, Profile as FwProfile, Service};
use super::net::{Interface, LinkKind, Method, Role};
use super::nfs::{Export, NfsVersion, Samba, Squash};
use super::{ConfigError, Profile, Source};

/// Something suspicious but allowed (an error under `--strict`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning(pub ConfigError);

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (warning)", self.0)
    }
}

/// Check the whole profile. The first error stops validation.
#[inline(never)]
pub(crate) fn validate(p: &Profile, src: &Source<'_>) -> Result<Vec<Warning>, ConfigError> {
    let mut warnings = Vec::new();
    if let Some(s) = p.board.confirm {
        if !(1..=3600).contains(&s) {
            return Err(src.error(span_in(src, "board", "confirm"), "board.confirm", format!("confirm is 1 to 3600 seconds, not {s}")));
        }
    }
    interfaces(p, src)?;
    firewall(p, src, &mut warnings)?;
    exports(p, src, &mut warnings)?;
    nfs(p, src, &mut warnings)?;
    watchdog(p, src, &mut warnings)?;
    storage(p, src)?;
    Ok(warnings)
}

/// Whether `name` is a port of a bridge the profile defines.
pub(crate) fn is_bridge_port(p: &Profile, name: &crate::config::types::IfName) -> bool {
    p.interface.iter().any(|b| b.kind == LinkKind::Bridge && b.ports.iter().any(|x| x.get_ref() == name))
}

/// Bridges and VLANs: the keys of each kind, ports that are not bridges
/// and belong to one bridge only, VLAN ids and lower devices.
fn links(p: &Profile, src: &Source<'_>) -> Result<(), ConfigError> {
    let kind_of = |n: &crate::config::types::IfName| p.interface.iter().find(|o| o.name.get_ref() == n).map(|o| o.kind);
    for (i, iface) in p.interface.iter().enumerate() {
        let key = |k: &str| format!("interface[{i}].{k}");
        let name = iface.name.get_ref();
        let only = |k: &str, kind: LinkKind| {
            src.error(Some(iface.name.span()), &key(k), format!("`{name}` is kind = \"{}\"; only kind = \"{kind}\" has `{k}`", iface.kind))
        };
        if iface.kind != LinkKind::Bridge {
            if let Some(port) = iface.ports.first() {
                return Err(src.error(
                    Some(port.span()),
                    &key("ports"),
                    format!("`{name}` is kind = \"{}\"; only kind = \"bridge\" has ports", iface.kind),
                ));
            }
            if iface.stp.is_some() {
                return Err(only("stp", LinkKind::Bridge));
            }
        }
        if iface.kind != LinkKind::Vlan {
            if let Some(l) = &iface.link {
                return Err(src.error(
                    Some(l.span()),
                    &key("link"),
                    format!("`{name}` is kind = \"{}\"; only kind = \"vlan\" has `link`", iface.kind),
                ));
            }
            if iface.id.is_some() {
                return Err(only("id", LinkKind::Vlan));
            }
        }
        match iface.kind {
            LinkKind::Nic => {}
            LinkKind::Bridge => bridge_ports(p, i, iface, src, &kind_of)?,
            LinkKind::Vlan => {
                let Some(link) = &iface.link else {
                    return Err(src.error(
                        Some(iface.name.span()),
                        &key("link"),
                        format!("VLAN `{name}` needs `link`, the device it is tagged on"),
                    ));
                };
                let Some(id) = &iface.id else {
                    return Err(src.error(Some(iface.name.span()), &key("id"), format!("VLAN `{name}` needs `id`, 1 to 4094")));
                };
                if link.get_ref() == name {
                    return Err(src.error(Some(link.span()), &key("link"), format!("VLAN `{name}` cannot be tagged on itself")));
                }
                let twin = p.interface[..i].iter().position(|o| {
                    o.kind == LinkKind::Vlan
                        && o.link.as_ref().map(|l| l.get_ref()) == Some(link.get_ref())
                        && o.id.as_ref().map(|x| *x.get_ref()) == Some(*id.get_ref())
                });
                if let Some(j) = twin {
                    return Err(src.error(
                        Some(id.span()),
                        &key("id"),
                        format!("VLAN {} on `{}` is already interface[{j}]", id.get_ref(), link.get_ref()),
                    ));
                }
            }
        }
    }
    Ok(())
}

fn bridge_ports(
    p: &Profile,
    i: usize,
    iface: &Interface,
    src: &Source<'_>,
    kind_of: &dyn Fn(&crate::config::types::IfName) -> Option<LinkKind>,
) -> Result<(), ConfigError> {
    let name = iface.name.get_ref();
    for (k, port) in iface.ports.iter().enumerate() {
        let key = format!("interface[{i}].ports[{k}]");
        let pn = port.get_ref();
        if pn == name || kind_of(pn) == Some(LinkKind::Bridge) {
            return Err(src.error(Some(port.span()), &key, format!("`{pn}` is a bridge; a bridge cannot be a port of `{name}`")));
        }
        let again_here = iface.ports[..k].iter().any(|o| o.get_ref() == pn);
        let other = p.interface[..i].iter().find(|o| o.kind == LinkKind::Bridge && o.ports.iter().any(|x| x.get_ref() == pn));
        if again_here || other.is_some() {
            let owner = other.map_or(name, |o| o.name.get_ref());
            return Err(src.error(Some(port.span()), &key, format!("`{pn}` is already a port of `{owner}`; a link can be a port once")));
        }
        if let Some(o) = p.interface.iter().find(|o| o.name.get_ref() == pn) {
            let why = if !o.address.is_empty() {
                Some("addresses")
            } else if o.method == Method::Dhcp {
                Some("method = \"dhcp\"")
            } else if o.role != Role::None {
                Some("a role")
            } else if o.gateway.is_some() || o.gateway6.is_some() || !o.route.is_empty() {
                Some("routes")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(src.error(
                    Some(port.span()),
                    &key,
                    format!("`{pn}` is a port of `{name}` and cannot have {why} of its own; give them to `{name}`"),
                ));
            }
        }
    }
    Ok(())
}

fn interfaces(p: &Profile, src: &Source<'_>) -> Result<(), ConfigError> {
    links(p, src)?;
    for (i, iface) in p.interface.iter().enumerate() {
        let key = |k: &str| format!("interface[{i}].{k}");
        let name = iface.name.get_ref();
        if let Some(j) = p.interface[..i].iter().position(|o| o.name.get_ref() == name) {
            return Err(src.error(
                Some(iface.name.span()),
                &key("name"),
                format!("interface `{name}` is already defined by interface[{j}]"),
            ));
        }
        if iface.method == Method::Dhcp && !iface.address.iter().all(|a| !a.get_ref().is_v4()) {
            let a = iface.address.iter().find(|a| a.get_ref().is_v4()).expect("found");
            return Err(src.error(
                Some(a.span()),
                &key("address"),
                format!("`{name}` uses method = \"dhcp\"; a static IPv4 address cannot be set too"),
            ));
        }
        for (k, a) in iface.address.iter().enumerate() {
            let dup_here = iface.address[..k].iter().any(|o| o.get_ref().addr == a.get_ref().addr);
            let dup_other = p.interface[..i].iter().any(|o| o.address.iter().any(|x| x.get_ref().addr == a.get_ref().addr));
            if dup_here || dup_other {
                return Err(src.error(
                    Some(a.span()),
                    &format!("interface[{i}].address[{k}]"),
                    format!("address {} is assigned twice", a.get_ref().addr),
                ));
            }
        }
        let on_link = |gw: IpAddr| iface.address.iter().any(|a| a.get_ref().contains(gw));
        if let Some(gw) = &iface.gateway {
            if iface.method == Method::Static && !on_link(IpAddr::V4(*gw.get_ref())) {
                return Err(src.error(
                    Some(gw.span()),
                    &key("gateway"),
                    format!("gateway {} is not inside any address of `{name}`: unreachable", gw.get_ref()),
                ));
            }
        }
        if let Some(gw) = &iface.gateway6 {
            let gw6 = IpAddr::V6(*gw.get_ref());
            let link_local = gw.get_ref().segments()[0] & 0xffc0 == 0xfe80;
            if !link_local && !on_link(gw6) {
                return Err(src.error(
                    Some(gw.span()),
                    &key("gateway6"),
                    format!("gateway6 {} is neither link-local nor inside an address of `{name}`", gw.get_ref()),
                ));
            }
        }
        for (r, route) in iface.route.iter().enumerate() {
            if let Some(via) = &route.via {
                if via.get_ref().is_ipv4() != route.to.get_ref().is_v4() {
                    return Err(src.error(
                        Some(via.span()),
                        &format!("interface[{i}].route[{r}].via"),
                        "the gateway and the destination are of different IP families",
                    ));
                }
                if iface.method == Method::Static && !on_link(*via.get_ref()) {
                    return Err(src.error(
                        Some(via.span()),
                        &format!("interface[{i}].route[{r}].via"),
                        format!("gateway {} is not inside any address of `{name}`: unreachable", via.get_ref()),
                    ));
                }
            }
        }
        for (k, _) in iface.sysctl.iter() {
            let ok = k.as_str().split_once('.').is_some_and(|(fam, rest)| matches!(fam, "ipv4" | "ipv6") && !rest.is_empty());
            if !ok {
                return Err(src.error(
                    Some(iface.name.span()),
                    &format!("interface[{i}].sysctl.{k}"),
                    format!("`{k}` is not relative to net.ipv4.conf.{name} or net.ipv6.conf.{name}: write e.g. \"ipv4.rp_filter\""),
                ));
            }
        }
        if let Some(e) = &iface.ethtool {
            if e.rx_ring == Some(0) || e.tx_ring == Some(0) {
                let k = if e.rx_ring == Some(0) { "rx_ring" } else { "tx_ring" };
                return Err(src.error(Some(iface.name.span()), &key(&format!("ethtool.{k}")), "a ring needs at least one entry"));
            }
        }
        if let Some(q) = &iface.sqm {
            if iface.role != Role::Wan {
                return Err(src.error(
                    Some(q.egress_kbit.span()),
                    &key("sqm"),
                    format!("`{name}` is not a WAN (role = \"wan\"): SQM shapes the link to the modem only"),
                ));
            }
        }
        if let Some(ra) = iface.accept_ra {
            if ra > 2 {
                return Err(src.error(Some(iface.name.span()), &key("accept_ra"), format!("accept_ra is 0, 1 or 2, not {ra}")));
            }
        }
    }
    Ok(())
}

fn firewall(p: &Profile, src: &Source<'_>, warnings: &mut Vec<Warning>) -> Result<(), ConfigError> {
    let fw = &p.firewall;
    if fw.profile == FwProfile::Off {
        return Ok(());
    }
    for (i, iface) in p.interface.iter().enumerate() {
        if iface.role == Role::None && !is_bridge_port(p, iface.name.get_ref()) {
            return Err(src.error(
                Some(iface.name.span()),
                &format!("interface[{i}].role"),
                format!("interface `{}` is in no zone; with the firewall on, set role = \"lan\" or \"wan\"", iface.name.get_ref()),
            ));
        }
        let name = iface.name.get_ref().as_str();
        if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '@'))) {
            return Err(src.error(
                Some(iface.name.span()),
                &format!("interface[{i}].name"),
                format!(
                    "`{}` holds {c:?}, which firewall rules cannot match literally; \
                     with the firewall on, use letters, digits, `_`, `.`, `-` and `@`",
                    name.escape_debug()
                ),
            ));
        }
    }
    if fw.wan_services.contains(&Service::All) {
        return Err(src.error(
            span_in(src, "firewall", "wan_services"),
            "firewall.wan_services",
            "\"all\" is for the LAN only; list the WAN services one by one",
        ));
    }
    if fw.forward && !p.interface.iter().any(|i| i.role == Role::Wan) {
        return Err(src.error(span_in(src, "firewall", "forward"), "firewall.forward", "forwarding needs a WAN interface"));
    }
    port_forwards(p, src)?;
    if fw.hook == Hook::Ingress {
        let why = match (fw.profile, fw.backend, fw.forward) {
            (FwProfile::Stateful, _, _) => Some("the stateful profile tracks the WAN from the input hook"),
            (_, _, true) => Some("forwarding needs connection tracking, which the ingress hook does not see"),
            (_, Backend::Iptables, _) => Some("iptables has no ingress hook; use backend \"nftables\" or \"auto\""),
            _ => None,
        };
        if let Some(why) = why {
            return Err(src.error(
                span_in(src, "firewall", "hook"),
                "firewall.hook",
                format!("\"ingress\" is for the stateless profile on nftables: {why}"),
            ));
        }
    }
    if fw.lan_services.contains(&Service::All) && fw.lan_services.len() > 1 {
        warnings.push(Warning(src.error(
            span_in(src, "firewall", "lan_services"),
            "firewall.lan_services",
            "\"all\" already lets the LAN reach everything; the other services listed add nothing",
        )));
    }
    pinned_ports(p, src)?;
    if fw.log_rate == 0 || fw.log_rate > 6000 {
        return Err(src.error(
            span_in(src, "firewall", "log_rate"),
            "firewall.log_rate",
            format!("log_rate is 1 to 6000 packets a minute, not {}", fw.log_rate),
        ));
    }
    Ok(())
}

/// Port forwards: with `forward = true`, to a host inside a LAN subnet,
/// each WAN port (per protocol) once.
fn port_forwards(p: &Profile, src: &Source<'_>) -> Result<(), ConfigError> {
    let fw = &p.firewall;
    let lan = super::nfs::lan_networks(p);
    for (i, f) in fw.port_forward.iter().enumerate() {
        let key = |k: &str| format!("firewall.port_forward[{i}].{k}");
        if !fw.forward {
            return Err(src.error(Some(f.wan_port.span()), &key("wan_port"), "a port forward needs forward = true"));
        }
        let to = f.to.get_ref();
        if !lan.iter().any(|n| n.is_v4() && n.contains(IpAddr::V4(to.addr))) {
            return Err(src.error(
                Some(f.to.span()),
                &key("to"),
                format!("{} is in no LAN subnet (role = \"lan\" interfaces' static IPv4 addresses); forward to a LAN host", to.addr),
            ));
        }
        let port = f.wan_port.get_ref().get();
        if let Some(j) = fw.port_forward[..i].iter().position(|o| o.proto == f.proto && o.wan_port.get_ref().get() == port) {
            return Err(src.error(
                Some(f.wan_port.span()),
                &key("wan_port"),
                format!("{} port {port} is already forwarded by firewall.port_forward[{j}]", f.proto),
            ));
        }
    }
    Ok(())
}

/// The NFS daemons' pinned ports are distinct, and with the stateless
/// profile every port a service listens on for the LAN lies outside
/// `local_port_range`: the WAN chain lets UDP from DNS and NTP servers
/// (source port 53 or 123) in to that range, as replies to the box's own
/// queries, so a service inside it would be reachable from the WAN.
fn pinned_ports(p: &Profile, src: &Source<'_>) -> Result<(), ConfigError> {
    let fw = &p.firewall;
    let pinned = [("mountd_port", fw.mountd_port.get()), ("statd_port", fw.statd_port.get()), ("lockd_port", fw.lockd_port.get())];
    for (i, (key, port)) in pinned.iter().enumerate() {
        if [111, 2049].contains(port) {
            let m = format!("{key} = {port} is a fixed NFS port (rpcbind 111, nfsd 2049); pick another");
            return Err(src.error(span_in(src, "firewall", key), &format!("firewall.{key}"), m));
        }
        if let Some((other, _)) = pinned[..i].iter().find(|(_, o)| o == port) {
            let m = format!("{key} = {port} is already firewall.{other}; each NFS daemon needs its own port");
            return Err(src.error(span_in(src, "firewall", key), &format!("firewall.{key}"), m));
        }
    }
    if fw.profile != FwProfile::Stateless {
        return Ok(());
    }
    if let Some((k, _)) = p.sysctl.set.iter().find(|(k, _)| k.as_str() == super::firewall::LOCAL_PORT_RANGE) {
        return Err(src.error(
            span_in(src, "sysctl.set", &format!("\"{}\"", k.as_str())),
            &format!("sysctl.set.\"{}\"", k.as_str()),
            "the stateless firewall sets this from firewall.local_port_range, which its rules follow: set firewall.local_port_range instead",
        ));
    }
    let range = fw.local_port_range;
    let inside = |key: &str, port: u16| {
        let m = format!(
            "port {port} lies in local_port_range {range}, where UDP from source port 53 or 123 \
             is let in from the WAN as replies; move it below {} or narrow the range",
            range.lo()
        );
        src.error(span_in(src, "firewall", key), &format!("firewall.{key}"), m)
    };
    for (key, port) in pinned {
        if range.contains(port) {
            return Err(inside(key, port));
        }
    }
    if range.contains(2049) {
        return Err(inside("local_port_range", 2049));
    }
    for (key, ports) in [("lan_tcp_ports", &fw.lan_tcp_ports), ("lan_udp_ports", &fw.lan_udp_ports)] {
        if let Some(port) = ports.iter().find(|x| range.contains(x.get())) {
            return Err(inside(key, port.get()));
        }
    }
    Ok(())
}

fn exports(p: &Profile, src: &Source<'_>, warnings: &mut Vec<Warning>) -> Result<(), ConfigError> {
    for (i, e) in p.nfs.export.iter().enumerate() {
        for (c, client) in e.clients.iter().enumerate() {
            let key = format!("nfs.export[{i}].clients[{c}]");
            super::types::Client::parse(client.get_ref()).map_err(|m| src.error(Some(client.span()), &key, m.to_string()))?;
            let dup = p.nfs.export[..=i].iter().enumerate().any(|(j, o)| {
                o.path.get_ref() == e.path.get_ref()
                    && o.clients.iter().enumerate().any(|(d, oc)| (j < i || d < c) && oc.get_ref() == client.get_ref())
            });
            if dup {
                return Err(src.error(
                    Some(client.span()),
                    &key,
                    format!("{} is exported to `{}` twice", e.path.get_ref(), client.get_ref()),
                ));
            }
        }
        if e.rw && e.squash == Squash::All && e.anonuid.is_none() {
            warnings.push(Warning(src.error(
                Some(e.path.span()),
                &format!("nfs.export[{i}].anonuid"),
                format!("{} is rw with all_squash but no anonuid: writes land as nobody (65534)", e.path.get_ref()),
            )));
        }
        if !e.sync {
            warnings.push(Warning(src.error(
                Some(e.path.span()),
                &format!("nfs.export[{i}].sync"),
                format!("{} is async: a server crash can lose data clients believe written", e.path.get_ref()),
            )));
        }
    }
    if let Some(t) = p.nfs.threads {
        if t == 0 || t > 256 {
            return Err(src.error(span_in(src, "nfs", "threads"), "nfs.threads", format!("threads is 1 to 256, not {t}")));
        }
    }
    if let Some(b) = p.nfs.max_block_size {
        if !(4096..=1_048_576).contains(&b) || b % 1024 != 0 {
            return Err(src.error(
                span_in(src, "nfs", "max_block_size"),
                "nfs.max_block_size",
                format!("max_block_size is a multiple of 1024 from 4096 to 1048576, not {b}"),
            ));
        }
    }
    Ok(())
}

/// Rules for `[nfs]` and `[samba]` that span several values.
fn nfs(p: &Profile, src: &Source<'_>, warnings: &mut Vec<Warning>) -> Result<(), ConfigError> {
    let lan_nets = super::nfs::lan_networks(p);
    for (i, e) in p.nfs.export.iter().enumerate() {
        let b = e.path.get_ref().as_str().as_bytes();
        let octal = |x: &u8| (b'0'..=b'7').contains(x);
        if b.windows(4).any(|w| w[0] == b'\\' && w[1..].iter().all(octal)) {
            // exportfs reads it right from /etc/exports but writes it to
            // etab with only the backslash escaped, and reading etab back
            // decodes the digits too: mountd would export another path.
            return Err(src.error(
                Some(e.path.span()),
                &format!("nfs.export[{i}].path"),
                format!(
                    "{} holds a backslash and three octal digits, which nfs-utils' etab turns into another \
                     path; rename the directory",
                    e.path.get_ref()
                ),
            ));
        }
        if e.clients.is_empty() && lan_nets.is_empty() {
            return Err(src.error(
                Some(e.path.span()),
                &format!("nfs.export[{i}].clients"),
                format!(
                    "{} lists no clients and there is no role = \"lan\" interface with a static address to \
                     default to; list them, e.g. clients = [\"192.168.1.0/24\"]",
                    e.path.get_ref()
                ),
            ));
        }
        // The same path to the same client twice, counting the LAN
        // default and equal networks written differently (10.0.0.7/24).
        let effective = |x: &Export| -> Vec<String> {
            if x.clients.is_empty() {
                lan_nets.iter().map(|n| format!("{}/{}", n.addr, n.prefix)).collect()
            } else {
                x.clients
                    .iter()
                    .map(|c| super::types::Client::parse(c.get_ref()).map_or_else(|_| c.get_ref().to_string(), |c| c.to_string()))
                    .collect()
            }
        };
        let mine = effective(e);
        if let Some(c) = (1..mine.len()).find(|&c| mine[..c].contains(&mine[c])) {
            let sp = &e.clients[c];
            return Err(src.error(
                Some(sp.span()),
                &format!("nfs.export[{i}].clients[{c}]"),
                format!("{} is exported to `{}` twice (written differently)", e.path.get_ref(), mine[c]),
            ));
        }
        for (j, o) in p.nfs.export[..i].iter().enumerate() {
            if o.path.get_ref() != e.path.get_ref() {
                continue;
            }
            let theirs = effective(o);
            if let Some(c) = mine.iter().position(|m| theirs.contains(m)) {
                let (span, key) = match e.clients.get(c) {
                    Some(sp) => (sp.span(), format!("nfs.export[{i}].clients[{c}]")),
                    None => (e.path.span(), format!("nfs.export[{i}].clients")),
                };
                return Err(src.error(
                    Some(span),
                    &key,
                    format!("{} is exported to `{}` twice (also by nfs.export[{j}])", e.path.get_ref(), mine[c]),
                ));
            }
        }
        if e.no_wdelay && !e.sync {
            warnings.push(Warning(src.error(
                Some(e.path.span()),
                &format!("nfs.export[{i}].no_wdelay"),
                format!("{} is async: no_wdelay has no effect without sync (exports(5))", e.path.get_ref()),
            )));
        }
    }
    if let Some(v) = &p.nfs.versions {
        let span = span_in(src, "nfs", "versions");
        if v.is_empty() {
            return Err(src.error(span, "nfs.versions", "list at least one version, e.g. [\"3\"]"));
        }
        let minor = v.iter().any(|x| matches!(x, NfsVersion::V4_1 | NfsVersion::V4_2));
        if minor && !v.contains(&NfsVersion::V4) {
            return Err(src.error(span, "nfs.versions", "4.1 and 4.2 need \"4\" in the list too"));
        }
    }
    if let Some(s) = &p.samba {
        samba(p, s, src)?;
    }
    Ok(())
}

fn samba(p: &Profile, s: &Samba, src: &Source<'_>) -> Result<(), ConfigError> {
    if s.interfaces.is_empty() && !p.interface.iter().any(|i| i.role == Role::Lan) {
        return Err(src.error(
            span_in(src, "samba", "interfaces"),
            "samba.interfaces",
            "no interfaces given and no role = \"lan\" interface to default to; Samba is only bound to the LAN",
        ));
    }
    for (k, name) in s.interfaces.iter().enumerate() {
        if !p.interface.iter().any(|i| i.name.get_ref() == name.get_ref()) {
            return Err(src.error(
                Some(name.span()),
                &format!("samba.interfaces[{k}]"),
                format!("`{}` is not an [[interface]] of this profile", name.get_ref()),
            ));
        }
    }
    if let Some(w) = &s.workgroup {
        let ok = !w.get_ref().is_empty() && w.get_ref().chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !ok {
            return Err(src.error(
                Some(w.span()),
                "samba.workgroup",
                format!("workgroup `{}` may only hold letters, digits, `_`, `-` and `.`", w.get_ref().escape_debug()),
            ));
        }
    }
    if s.min_receivefile_size > 131_072 {
        return Err(src.error(
            span_in(src, "samba", "min_receivefile_size"),
            "samba.min_receivefile_size",
            format!("min_receivefile_size is 0 to 131072 (Samba caps it at 128 KiB), not {}", s.min_receivefile_size),
        ));
    }
    for (i, sh) in s.share.iter().enumerate() {
        let key = |k: &str| format!("samba.share[{i}].{k}");
        let name = sh.name.get_ref().as_str();
        if ["global", "homes", "printers", "print$", "ipc$"].iter().any(|r| r.eq_ignore_ascii_case(name)) {
            return Err(src.error(Some(sh.name.span()), &key("name"), format!("`{name}` is a reserved smb.conf section")));
        }
        if s.share[..i].iter().any(|o| o.name.get_ref().as_str().eq_ignore_ascii_case(name)) {
            return Err(src.error(Some(sh.name.span()), &key("name"), format!("share `{name}` is defined twice")));
        }
        let path = sh.path.get_ref().as_str();
        if path.contains('%') || path.ends_with(char::is_whitespace) {
            return Err(src.error(
                Some(sh.path.span()),
                &key("path"),
                format!("`{path}`: smb.conf expands `%` and trims trailing blanks; rename the directory"),
            ));
        }
        if let Some(c) = &sh.comment {
            if c.get_ref().chars().any(|ch| ch.is_control() || ch == '%') {
                return Err(src.error(Some(c.span()), &key("comment"), "a comment cannot hold control characters or `%`"));
            }
        }
    }
    Ok(())
}

fn watchdog(p: &Profile, src: &Source<'_>, warnings: &mut Vec<Warning>) -> Result<(), ConfigError> {
    let Some(w) = &p.watchdog else { return Ok(()) };
    if let Some(iv) = w.interval {
        if iv.0 >= w.timeout.0 {
            return Err(src.error(
                span_in(src, "watchdog", "interval"),
                "watchdog.interval",
                format!("interval {} s is not shorter than the timeout {} s", iv.0, w.timeout.0),
            ));
        }
        if iv.0 > w.timeout.0 / 2 {
            warnings.push(Warning(src.error(
                span_in(src, "watchdog", "interval"),
                "watchdog.interval",
                format!("interval {} s is over timeout/2; it will be clamped to {} s", iv.0, (w.timeout.0 / 2).max(1)),
            )));
        }
    }
    let err = |key: &str, msg: String| src.error(span_in(src, "watchdog", key), &format!("watchdog.{key}"), msg);
    match (&w.temperature_sensor, w.max_temperature) {
        (Some(_), None) => return Err(err("temperature_sensor", "temperature_sensor needs max_temperature (°C)".into())),
        (None, Some(_)) => return Err(err("max_temperature", "max_temperature needs temperature_sensor".into())),
        (_, Some(t)) if t == 0 || t > 200 => return Err(err("max_temperature", format!("max_temperature is 1 to 200 °C, not {t}"))),
        _ => {}
    }
    if w.heartbeat_max_age.is_some() && w.heartbeat_file.is_none() {
        return Err(err("heartbeat_max_age", "heartbeat_max_age needs heartbeat_file".into()));
    }
    if let Some(p) = w.rt_priority {
        if !(1..=99).contains(&p) {
            return Err(err("rt_priority", format!("rt_priority is 1 to 99 (SCHED_RR), not {p}")));
        }
    }
    if let Some(win) = w.boot_loop_window {
        if !(60..=604_800).contains(&win) {
            return Err(err("boot_loop_window", format!("boot_loop_window is 60 to 604800 seconds, not {win}")));
        }
    }
    for key in ["test_command", "repair_command", "handover_command"] {
        let argv = match key {
            "test_command" => &w.test_command,
            "repair_command" => &w.repair_command,
            _ => &w.handover_command,
        };
        if argv.first().is_some_and(|p| p.trim().is_empty()) {
            return Err(err(key, format!("{key} starts with an empty program name")));
        }
    }
    if !w.repair_command.is_empty() && !w.has_checks() {
        warnings.push(Warning(err("repair_command", "repair_command is set but no health check is".into())));
    }
    Ok(())
}

fn storage(p: &Profile, src: &Source<'_>) -> Result<(), ConfigError> {
    for (i, s) in p.storage.iter().enumerate() {
        if p.storage[..i].iter().any(|o| o.device.get_ref() == s.device.get_ref()) {
            return Err(src.error(
                Some(s.device.span()),
                &format!("storage[{i}].device"),
                format!("device `{}` is listed twice", s.device.get_ref()),
            ));
        }
        if let Some(kb) = s.read_ahead_kb {
            if kb > 65536 {
                return Err(src.error(
                    Some(s.device.span()),
                    &format!("storage[{i}].read_ahead_kb"),
                    format!("read_ahead_kb {kb} is over 65536"),
                ));
            }
        }
    }
    Ok(())
}

/// What is at a path on the board, for [`board_paths`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnBoard {
    Missing,
    Dir,
    /// A file, a device, anything but a directory.
    Other,
}

/// Export and share paths missing on the board (`at` asks it): warnings,
/// or an error when `[nfs] strict = true`. `nasboot --strict` turns the
/// warnings into errors too (cmd::load). A share path that is there but
/// is not a directory is an error (an export may be a file; a share may
/// not). The one rule that needs the board, so it runs after parsing,
/// from `cmd::load`.
pub(crate) fn board_paths(p: &Profile, src: &Source<'_>, at: &mut dyn FnMut(&Path) -> OnBoard) -> Result<Vec<Warning>, ConfigError> {
    let mut found = Vec::new();
    for (i, e) in p.nfs.export.iter().enumerate() {
        found.push((format!("nfs.export[{i}].path"), e.path.span(), e.path.get_ref().clone(), false));
    }
    if let Some(s) = &p.samba {
        for (i, sh) in s.share.iter().enumerate() {
            found.push((format!("samba.share[{i}].path"), sh.path.span(), sh.path.get_ref().clone(), true));
        }
    }
    let mut warnings = Vec::new();
    for (key, span, path, dir) in found {
        match at(path.as_path()) {
            OnBoard::Dir => continue,
            OnBoard::Other if !dir => continue,
            OnBoard::Other => {
                return Err(src.error(Some(span), &key, format!("{path} is not a directory; a share is a directory")));
            }
            OnBoard::Missing => {}
        }
        let e = src.error(Some(span), &key, format!("{path} does not exist on this board"));
        if p.nfs.strict {
            return Err(e);
        }
        warnings.push(Warning(e));
    }
    Ok(warnings)
}

/// Where `key =` stands inside the `[table]` section, for values that
/// carry no span of their own. Falls back to the section header, then to
/// the top of the file.
pub(crate) fn span_in(src: &Source<'_>, table: &str, key: &str) -> Option<std::ops::Range<usize>> {
    let header = format!("[{table}]");
    let mut offset = 0;
    let mut inside = false;
    let mut header_at = None;
    for line in src.text.split_inclusive('\n') {
        let t = line.trim_start();
        let lead = line.len() - t.len();
        if t.starts_with('[') {
            inside = t.trim_end().starts_with(&header);
            if inside && header_at.is_none() {
                header_at = Some(offset + lead..offset + lead + header.len());
            }
        } else if inside {
            if let Some(rest) = t.strip_prefix(key) {
                if rest.trim_start().starts_with('=') {
                    return Some(offset + lead..offset + lead + key.len());
                }
            }
        }
        offset += line.len();
    }
    header_at
}
