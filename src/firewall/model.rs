//! One firewall model, built from the profile, that both renderers read.
//!
//! The model is what the rule set means, independent of the backend:
//! which interfaces are LAN and WAN, which TCP and UDP ports each zone may
//! open, whether connection tracking is used, whether the box routes the
//! LAN to the WAN, and the log rate. Ports are sorted and deduplicated, so
//! the rendered text does not depend on the order of the profile's lists.

use crate::config::firewall::{FlowOffload, Hook, Profile as FwProfile, Proto, Service, MAX_PORT_FORWARDS};
use crate::config::net::Role;
use crate::config::types::{Endpoint, IfName, IpNet, PortRange};
use crate::config::{Profile, MAX_INTERFACES};

/// Ports one zone may open, per protocol: the services' ports plus the
/// custom ones (at most 16 services x 3 ports + 32 custom ports).
pub(crate) const MAX_ZONE_PORTS: usize = 96;

/// A sorted set of ports.
pub(crate) type Ports = heapless::Vec<u16, MAX_ZONE_PORTS>;
/// The interfaces of one zone, in profile order.
pub(crate) type Ifaces = heapless::Vec<IfName, MAX_INTERFACES>;

/// UDP source ports whose replies the stateless profile lets in (DNS, NTP),
/// to the local port range only.
pub(crate) const REPLY_UDP_SPORTS: [u16; 2] = [53, 123];
/// DHCP server to client (IPv4): source 67, destination 68.
pub(crate) const DHCP4: (u16, u16) = (67, 68);
/// DHCPv6 server to client: source 547, destination 546.
pub(crate) const DHCP6: (u16, u16) = (547, 546);

/// Which kind of rule set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// No connection tracking anywhere (unless `forward` asks for NAT).
    Stateless,
    /// Connection tracking on the WAN; LAN traffic is marked notrack.
    Stateful,
    /// None of nasboot's rules: the renderers remove what nasboot loaded.
    Off,
}

/// What one zone may open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Zone {
    /// Everything (the LAN default): one accept, no port matching.
    pub all: bool,
    pub tcp: Ports,
    pub udp: Ports,
}

/// One port forward: `proto` connections to `wan_port` on the box go to
/// `to`, a host in the LAN network `lan_net`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Dnat {
    pub proto: Proto,
    pub wan_port: u16,
    pub to: Endpoint,
    pub lan_net: IpNet,
}

/// The whole firewall, ready to render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Model {
    pub kind: Kind,
    pub lan_ifaces: Ifaces,
    pub wan_ifaces: Ifaces,
    pub lan: Zone,
    pub wan: Zone,
    /// Log dropped WAN packets, at most this many a minute.
    pub log_rate: Option<u32>,
    /// Route the LAN to the WAN with masquerade (IPv4) and plain
    /// forwarding (IPv6); replies come back through connection tracking.
    pub forward: bool,
    /// Established TCP and UDP flows forwarded through a software
    /// flowtable over the LAN and WAN devices (nftables; `forward` only).
    pub flowtable: bool,
    /// Port forwards (`forward` only).
    pub dnat: heapless::Vec<Dnat, MAX_PORT_FORWARDS>,
    /// LAN clients reach the port forwards at the box's WAN address too.
    pub reflection: bool,
    /// Stateless zones filtered on their interfaces' ingress hooks instead
    /// of one input chain (nftables; `firewall.hook = "ingress"`).
    pub ingress: bool,
    /// The kernel's ephemeral ports: without connection tracking, replies
    /// to the box's own connections are let in to these ports only.
    pub reply_ports: PortRange,
}

impl Model {
    /// Whether any rule needs connection tracking (ct state, notrack, NAT).
    pub(crate) fn uses_conntrack(&self) -> bool {
        self.kind == Kind::Stateful || (self.kind != Kind::Off && self.forward)
    }

    /// Whether LAN traffic is marked notrack in a raw-priority chain: when
    /// conntrack is engaged at all, storage traffic should skip it.
    pub(crate) fn notrack_lan(&self) -> bool {
        self.uses_conntrack() && !self.lan_ifaces.is_empty()
    }
}

fn add(ports: &mut Ports, p: u16) {
    if let Err(at) = ports.binary_search(&p) {
        // Capacity: MAX_ZONE_PORTS covers every service and custom port.
        let _ = ports.insert(at, p);
    }
}

/// The fixed ports of one named service: (tcp, udp). NFS also opens the
/// pinned mountd, statd and lockd ports on both.
pub(crate) fn service_ports(s: Service) -> (&'static [u16], &'static [u16]) {
    match s {
        Service::All => (&[], &[]),
        Service::Ssh => (&[22], &[]),
        Service::Http => (&[80], &[]),
        Service::Https => (&[443], &[]),
        Service::Nfs => (&[111, 2049], &[111, 2049]),
        Service::Smb => (&[139, 445], &[]),
        Service::Dns => (&[53], &[53]),
        Service::Ntp => (&[], &[123]),
    }
}

fn zone(services: &[Service], tcp: &[crate::config::types::Port], udp: &[crate::config::types::Port], nfs_pinned: [u16; 3]) -> Zone {
    let mut z = Zone { all: services.contains(&Service::All), ..Zone::default() };
    if z.all {
        return z;
    }
    for s in services {
        let (t, u) = service_ports(*s);
        t.iter().for_each(|p| add(&mut z.tcp, *p));
        u.iter().for_each(|p| add(&mut z.udp, *p));
        if *s == Service::Nfs {
            for p in nfs_pinned {
                add(&mut z.tcp, p);
                add(&mut z.udp, p);
            }
        }
    }
    tcp.iter().for_each(|p| add(&mut z.tcp, p.get()));
    udp.iter().for_each(|p| add(&mut z.udp, p.get()));
    z
}

/// Build the model from a validated profile.
pub(crate) fn from_profile(p: &Profile) -> Model {
    let fw = &p.firewall;
    let mut lan_ifaces = Ifaces::new();
    let mut wan_ifaces = Ifaces::new();
    for i in p.interface.iter() {
        let list = match i.role {
            Role::Lan => &mut lan_ifaces,
            Role::Wan => &mut wan_ifaces,
            Role::None => continue,
        };
        let _ = list.push(i.name.get_ref().clone());
    }
    let nfs_pinned = [fw.mountd_port.get(), fw.statd_port.get(), fw.lockd_port.get()];
    let forward = fw.forward && fw.profile != FwProfile::Off;
    let lan_nets = crate::config::nfs::lan_networks(p);
    let mut dnat = heapless::Vec::new();
    for f in fw.port_forward.iter().filter(|_| forward) {
        let to = *f.to.get_ref();
        // Validation put every target inside a LAN network.
        if let Some(net) = lan_nets.iter().find(|n| n.contains(std::net::IpAddr::V4(to.addr))) {
            let _ = dnat.push(Dnat { proto: f.proto, wan_port: f.wan_port.get_ref().get(), to, lan_net: *net });
        }
    }
    Model {
        kind: match fw.profile {
            FwProfile::Stateless => Kind::Stateless,
            FwProfile::Stateful => Kind::Stateful,
            FwProfile::Off => Kind::Off,
        },
        lan_ifaces,
        wan_ifaces,
        lan: zone(&fw.lan_services, &fw.lan_tcp_ports, &fw.lan_udp_ports, nfs_pinned),
        wan: zone(&fw.wan_services, &fw.wan_tcp_ports, &fw.wan_udp_ports, nfs_pinned),
        log_rate: fw.log.then_some(fw.log_rate),
        forward,
        flowtable: forward && fw.flow_offload == FlowOffload::Auto,
        reflection: fw.nat_reflection && !dnat.is_empty(),
        dnat,
        ingress: fw.hook == Hook::Ingress && fw.ingress_fits(),
        reply_ports: fw.local_port_range,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_bytes;

    #[test]
    fn services_become_sorted_unique_ports() {
        let l = parse_bytes(
            "t.toml",
            b"[board]\nname = \"t\"\n[firewall]\nlan_services = [\"smb\", \"nfs\", \"ssh\", \"dns\"]\nlan_tcp_ports = [22, 8080]\nlan_udp_ports = [5353]\nmountd_port = 4002\nstatd_port = 4003\nlockd_port = 4001\n",
        )
        .unwrap();
        let m = from_profile(&l.profile);
        assert!(!m.lan.all);
        assert_eq!(m.lan.tcp.as_slice(), &[22, 53, 111, 139, 445, 2049, 4001, 4002, 4003, 8080]);
        assert_eq!(m.lan.udp.as_slice(), &[53, 111, 2049, 4001, 4002, 4003, 5353]);
        assert_eq!(m.wan, Zone::default());
        assert_eq!(m.log_rate, Some(10));
        assert!(!m.uses_conntrack());
    }

    #[test]
    fn every_service_and_custom_port_fits() {
        let mut text = String::from("[board]\nname = \"t\"\n[firewall]\nlan_services = [\"ssh\", \"http\", \"https\", \"nfs\", \"smb\", \"dns\", \"ntp\"]\nlan_tcp_ports = [");
        for i in 0..31 {
            text.push_str(&format!("{}, ", 10000 + i));
        }
        text.push_str("1]\n");
        let m = from_profile(&parse_bytes("t.toml", text.as_bytes()).unwrap().profile);
        assert_eq!(m.lan.tcp.len(), 32 + 11);
    }
}
