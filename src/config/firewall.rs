//! `[firewall]`: which profile, which backend, which services.

use super::decode::{decode_enum, Decode, Error, Fields, Value};
use super::Spanned;

use super::types::{Endpoint, Port, PortRange};

/// The sysctl of the kernel's ephemeral port range, IPv4 and IPv6 alike,
/// which `local_port_range` sets.
pub(crate) const LOCAL_PORT_RANGE: &str = "net.ipv4.ip_local_port_range";

/// Services per zone, and custom ports per zone.
pub(crate) const MAX_SERVICES: usize = 16;
pub(crate) const MAX_PORTS: usize = 32;
/// Port forwards.
pub(crate) const MAX_PORT_FORWARDS: usize = 16;

/// The software fast path for forwarded flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowOffload {
    /// A flowtable over the LAN and WAN devices where the kernel has
    /// nf_flow_table and the nft tool knows flowtables; otherwise plain
    /// stateful forwarding, with a note in `plan`.
    #[default]
    Auto,
    /// Every forwarded packet through the forward chain.
    Off,
}

/// A transport protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Proto {
    Tcp,
    Udp,
}

decode_enum!(FlowOffload { "auto" => Auto, "off" => Off });
decode_enum!(Proto { "tcp" => Tcp, "udp" => Udp });
decode_enum!(Profile { "stateless" => Stateless, "stateful" => Stateful, "off" => Off });
decode_enum!(Backend { "auto" => Auto, "nftables" => Nftables, "iptables" => Iptables });
decode_enum!(Loader { "auto" => Auto, "nft" => Nft });
decode_enum!(Hook { "auto" => Auto, "input" => Input, "ingress" => Ingress });
decode_enum!(Service {
    "all" => All,
    "ssh" => Ssh,
    "http" => Http,
    "https" => Https,
    "nfs" => Nfs,
    "smb" => Smb,
    "dns" => Dns,
    "ntp" => Ntp,
});

impl std::fmt::Display for Proto {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
        })
    }
}

/// `[[firewall.port_forward]]`: connections to `wan_port` on the WAN
/// address go to `to`, a host on the LAN (DNAT and a forward accept).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortForward {
    pub proto: Proto,
    pub wan_port: Spanned<Port>,
    pub to: Spanned<Endpoint>,
}

/// The firewall profile.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// Default-deny WAN without connection tracking (the NAS default).
    #[default]
    Stateless,
    /// Connection tracking on the WAN; LAN traffic marked notrack.
    Stateful,
    /// No rules at all.
    Off,
}

/// The profile's own word: `stateless`, `stateful`, `off`.
impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Profile::Stateless => "stateless",
            Profile::Stateful => "stateful",
            Profile::Off => "off",
        })
    }
}

/// The backend; `auto` picks from what the kernel offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    #[default]
    Auto,
    Nftables,
    Iptables,
}

/// How an nftables rule set reaches the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Loader {
    /// nasboot's own nf_tables messages, one batch over netlink, where
    /// the kernel takes them; the `nft` tool where it cannot (qemu-user,
    /// a kernel without nf_tables), and `plan` says why.
    #[default]
    Auto,
    /// The `nft` tool (`nft -f -`), always.
    Nft,
}

/// Where the stateless profile filters (nftables only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Hook {
    /// `Ingress` when it filters everything `Input` would, else `Input`:
    /// the stateless profile on nftables, Linux 5.10 or newer, every
    /// interface but loopback named as LAN or WAN, and every WAN (and
    /// restricted LAN) interface present and Ethernet-like (not ppp or a
    /// tunnel, which come and go). Decided at each apply from the links
    /// then present (`firewall::auto_ingress`).
    #[default]
    Auto,
    /// One input chain, policy drop, dispatching on the input interface:
    /// every packet for the box, from any interface (an unknown one is
    /// dropped), costs the hook.
    Input,
    /// A chain on each WAN interface's ingress hook (Linux 5.10): a LAN
    /// open to everything crosses no hook at all. Interfaces the profile
    /// does not name are not filtered.
    Ingress,
}

/// Named services.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Service {
    /// Everything (LAN only).
    All,
    Ssh,
    Http,
    Https,
    /// portmapper 111, nfsd 2049, and mountd, statd and lockd on their
    /// pinned ports (`mountd_port`, `statd_port`, `lockd_port`).
    Nfs,
    /// 139 and 445.
    Smb,
    Dns,
    Ntp,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Firewall {
    pub profile: Profile,
    pub backend: Backend,
    /// How nftables rule sets are loaded (see `Loader`).
    pub loader: Loader,
    /// What the LAN may reach. Default: everything.
    pub lan_services: heapless::Vec<Service, MAX_SERVICES>,
    pub lan_tcp_ports: heapless::Vec<Port, MAX_PORTS>,
    pub lan_udp_ports: heapless::Vec<Port, MAX_PORTS>,
    /// What the WAN may reach (new connections). Default: nothing.
    pub wan_services: heapless::Vec<Service, MAX_SERVICES>,
    pub wan_tcp_ports: heapless::Vec<Port, MAX_PORTS>,
    pub wan_udp_ports: heapless::Vec<Port, MAX_PORTS>,
    /// The port mountd is pinned to (Debian: RPCMOUNTDOPTS="--port N").
    pub mountd_port: Port,
    /// The port rpc.statd (NSM) is pinned to (nfs.conf `[statd] port`).
    pub statd_port: Port,
    /// The port lockd (NLM) is pinned to, TCP and UDP (nfs.conf `[lockd]`).
    pub lockd_port: Port,
    /// The kernel's ephemeral ports (`net.ipv4.ip_local_port_range`, set
    /// to this by the stateless profile): the only ports that replies to
    /// the box's own connections are let in on without connection
    /// tracking. Every pinned service port must lie outside it.
    pub local_port_range: PortRange,
    /// Rate-limited logging of dropped WAN packets.
    pub log: bool,
    /// Log at most this many packets a minute.
    pub log_rate: u32,
    /// Route LAN to WAN with masquerade. Needs connection tracking.
    pub forward: bool,
    /// Where the stateless profile hooks in (see `Hook`).
    pub hook: Hook,
    /// The flowtable fast path for forwarded flows (nftables only).
    pub flow_offload: FlowOffload,
    /// Port forwards, for LAN clients too: a LAN client that connects to
    /// the WAN address reaches the forwarded host (NAT reflection, as
    /// OpenWrt's fw4 does by default).
    pub nat_reflection: bool,
    pub port_forward: heapless::Vec<PortForward, MAX_PORT_FORWARDS>,
}

impl Default for Firewall {
    fn default() -> Self {
        Firewall {
            profile: Profile::default(),
            backend: Backend::default(),
            loader: Loader::default(),
            lan_services: lan_all(),
            lan_tcp_ports: heapless::Vec::new(),
            lan_udp_ports: heapless::Vec::new(),
            wan_services: heapless::Vec::new(),
            wan_tcp_ports: heapless::Vec::new(),
            wan_udp_ports: heapless::Vec::new(),
            mountd_port: mountd_default(),
            statd_port: statd_default(),
            lockd_port: lockd_default(),
            local_port_range: local_port_range_default(),
            log: true,
            log_rate: log_rate_default(),
            forward: false,
            hook: Hook::default(),
            flow_offload: FlowOffload::default(),
            nat_reflection: true,
            port_forward: heapless::Vec::new(),
        }
    }
}

impl Decode for PortForward {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(v, "struct PortForward", &["proto", "wan_port", "to"])?;
        Ok(PortForward { proto: f.req("proto")?, wan_port: f.req("wan_port")?, to: f.req("to")? })
    }
}

impl Decode for Firewall {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(
            v,
            "struct Firewall",
            &[
                "profile",
                "backend",
                "loader",
                "lan_services",
                "lan_tcp_ports",
                "lan_udp_ports",
                "wan_services",
                "wan_tcp_ports",
                "wan_udp_ports",
                "mountd_port",
                "statd_port",
                "lockd_port",
                "local_port_range",
                "log",
                "log_rate",
                "forward",
                "hook",
                "flow_offload",
                "nat_reflection",
                "port_forward",
            ],
        )?;
        Ok(Firewall {
            profile: f.or_default("profile")?,
            backend: f.or_default("backend")?,
            loader: f.or_default("loader")?,
            lan_services: f.or("lan_services", lan_all())?,
            lan_tcp_ports: f.or_default("lan_tcp_ports")?,
            lan_udp_ports: f.or_default("lan_udp_ports")?,
            wan_services: f.or_default("wan_services")?,
            wan_tcp_ports: f.or_default("wan_tcp_ports")?,
            wan_udp_ports: f.or_default("wan_udp_ports")?,
            mountd_port: f.or("mountd_port", mountd_default())?,
            statd_port: f.or("statd_port", statd_default())?,
            lockd_port: f.or("lockd_port", lockd_default())?,
            local_port_range: f.or("local_port_range", local_port_range_default())?,
            log: f.or("log", true)?,
            log_rate: f.or("log_rate", log_rate_default())?,
            forward: f.or_default("forward")?,
            hook: f.or_default("hook")?,
            flow_offload: f.or_default("flow_offload")?,
            nat_reflection: f.or("nat_reflection", true)?,
            port_forward: f.or_default("port_forward")?,
        })
    }
}

impl Firewall {
    /// Whether the ingress hooks can carry this firewall: the stateless
    /// profile without forwarding (the others need connection tracking,
    /// which the ingress hook does not see; validation refuses an explicit
    /// `hook = "ingress"` for them).
    pub fn ingress_fits(&self) -> bool {
        self.profile == Profile::Stateless && !self.forward
    }
}

fn lan_all() -> heapless::Vec<Service, MAX_SERVICES> {
    let mut v = heapless::Vec::new();
    v.push(Service::All).expect("capacity");
    v
}

fn mountd_default() -> Port {
    Port::new(32767).expect("nonzero")
}

/// Below the kernel's default ephemeral range, beside mountd's 32767.
fn statd_default() -> Port {
    Port::new(32765).expect("nonzero")
}

fn lockd_default() -> Port {
    Port::new(32764).expect("nonzero")
}

fn local_port_range_default() -> PortRange {
    PortRange::LINUX_DEFAULT
}

fn log_rate_default() -> u32 {
    10
}
