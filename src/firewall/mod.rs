//! The firewall: one model from the profile ([`model`]); for nftables
//! the rule set built once as data ([`rules`]) and written out by two
//! emitters, the `nft -f` text ([`nft`]) and one nf_tables batch
//! ([`netlink`]); the iptables-restore renderer ([`iptables`]); a backend
//! and loader choice ([`backend`]) and a careful loader ([`apply`],
//! [`load`], [`native`], with the kernel modules a batch needs loaded
//! first, [`modules`], and the seal that tells a settled rule set,
//! [`seal`]), whose failures are an [`Error`] (`error.rs`).
//!
//! # Profiles
//!
//! - `stateless` (the default): never engages connection tracking. No
//!   `ct`/`state` match, no NAT, no helper, so on Linux 4.10 and newer the
//!   namespace never pays for conntrack (it is switched on lazily), and on
//!   older kernels it pays only if someone else loads the module. The input
//!   chain (policy drop) accepts a LAN open to everything with one compare
//!   rule first (`iifname "eth1" accept`: one rule, no set lookup, which is
//!   an indirect call per packet), then loopback, then dispatches the other
//!   zones on the input interface with one verdict map
//!   (`iifname vmap { "eth0" : jump wan }`).
//!   - LAN: everything, or the listed services (named port sets), the LAN's
//!     pings, and the same reply rules as the WAN.
//!   - WAN: the listed WAN services, then the replies to connections the
//!     box opened, which use local ports from the kernel's ephemeral range
//!     (`local_port_range`, set as `net.ipv4.ip_local_port_range`; no
//!     pinned service listens there, [`listeners`] names any that does):
//!     TCP to that range unless SYN-only (so no new inbound connection,
//!     and ACK/FIN/Xmas probes of a service port are dropped unanswered);
//!     UDP from DNS (53) and NTP (123) servers to that range; DHCP 67 ->
//!     68 and DHCPv6 547 -> 546; ICMP echo-reply, destination-unreachable
//!     (fragmentation-needed included: path MTU discovery), time-exceeded;
//!     ICMPv6 echo-reply, destination-unreachable, packet-too-big,
//!     time-exceeded and neighbour discovery 133-136. Every TCP and UDP
//!     rule reads ports (and TCP flags) from the packet, so a first
//!     fragment too short to hold them matches none. Non-first fragments
//!     go on to reassembly (IPv6 fragments reach the input hook one by
//!     one without conntrack). Then a rate-limited log (`log_rate` a
//!     minute) and drop.
//!   - `hook = "ingress"` (nftables; Linux 5.10): the same zone chains,
//!     reached from one chain on each WAN (and restricted LAN) interface's
//!     `inet` ingress hook instead of the input chain, and no input chain
//!     at all. The input hook itself, with no rule in it, costs LAN
//!     traffic 5-10% of its throughput (scripts/bench-firewall); a LAN
//!     open to everything then crosses no hook. Fragments are not
//!     reassembled at ingress: the first meets the rules, the others
//!     (`ip frag-off`, IPv6 `frag frag-off` non-zero) are let on to
//!     reassembly, which cannot finish without the first; an IPv4 TCP
//!     fragment at offset 8 bytes (which could rewrite the first one's
//!     flags, RFC 1858) is dropped. The price: an
//!     interface the profile does not name is not filtered (the input
//!     chain's policy drop caught it), and on Linux 6.1 (Debian 12's,
//!     the boards') the named ones must exist when the rule set loads
//!     (else the kernel refuses it and the fallback loads); newer kernels
//!     (6.18) keep the hook of a missing device until it appears.
//!   - `hook = "auto"` (the default): the ingress hooks where, on the
//!     links present at this apply, they filter everything the input
//!     chain would ([`auto_ingress`]); the input chain otherwise. An
//!     interface created later (a USB NIC, a WAN device created again) is
//!     not covered until the next apply, which then picks the input chain
//!     (or hooks the new device).
//! - `stateful`: the WAN accepts established/related and drops invalid;
//!   LAN traffic is marked `notrack` in raw-priority (-300) chains
//!   (nftables) or `-t raw -j CT --notrack` (iptables), so storage traffic
//!   skips the conntrack lookups.
//! - `off`: nasboot removes its own rules (nftables: its tables; iptables:
//!   INPUT/FORWARD policy ACCEPT, flushed, its chains deleted).
//!
//! `forward = true` routes the LAN to the WAN with masquerade. That needs
//! connection tracking (the NAT and the replies coming back), in both
//! profiles; LAN traffic addressed to the box itself is still marked
//! notrack (`fib daddr type local` / `-m addrtype --dst-type LOCAL`). The
//! kernel must also forward: set `net.ipv4.ip_forward = 1` (and
//! `net.ipv6.conf.all.forwarding`) under `[sysctl]`. Without `forward`,
//! the forward chain has policy drop: a NAS routes nothing.
//!
//! # Loading
//!
//! nftables: one transaction, no check pass (the kernel commits a batch
//! whole or not at all, so its verdict is the check). Where the kernel
//! answers on its nf_tables netlink socket, nasboot encodes the rule set
//! itself ([`rules`] -> [`netlink`]) and sends it as one batch through the
//! `Nftables` seam ([`native`]): no process at all, and no nft binary
//! needed on the board. Where it cannot (qemu-user refuses the socket; a
//! kernel without nf_tables), or with `loader = "nft"`, `nft -f -` loads
//! the same rule set's text ([`nft`]); `plan` and `apply` say which and
//! why ([`Via`]). A batch the kernel refuses is traced back to the rule,
//! chain, set or flowtable that caused it, with its profile key and, where
//! the kernel lacks an expression's module, the feature.
//!
//! An apply whose rule set nasboot loaded through netlink and nobody has
//! touched since loads nothing (a reload would cost a slow board's
//! settled apply, scripts/bench-fwload, and drop the flowtable's offloaded
//! flows): the batch seals the table with its own digest, the ruleset
//! generation its commit makes and its hook devices ([`seal::Seal`]), and
//! the observation finds the rule set loaded as it was when the table
//! carries the digest of the batch the plan would
//! send, the kernel is still at that generation (every commit moves it
//! on, so nothing at all was committed since: an element added, a policy
//! changed, another table), and every device the batch hooks is still in
//! the dumped hooks (a device that goes away leaves without a commit).
//! Anything else, a kernel before 5.13 (no table userdata) or a table
//! loaded by nft, and the rule set is loaded again, as before.
//!
//! iptables: `iptables-restore --test --noflush` (and `ip6tables-restore`)
//! then the same without `--test`, both families checked before either
//! loads. If the configured rule set is rejected, the built-in fallback is
//! loaded (loopback and the LAN interfaces accepted, everything else
//! dropped, nothing forwarded), with the same backend or, failing that,
//! the other one, and the step fails (exit 1): the box is never left open
//! when the profile asked for a firewall. A missing `nft` or
//! `iptables-restore` on the tool path is a clear error that changes
//! nothing (the previous rule set is kept). See [`apply`] for `--confirm`.
//!
//! # At boot, with a profile that cannot be read
//!
//! [`emergency`] gives the rule set for that case, and
//! [`load::load_emergency`] loads it: loopback, replies to connections the
//! box opened (this engages conntrack: acceptable in an emergency), the
//! essential ICMP/ICMPv6 (neighbour discovery), and nothing else. No
//! interface is known to be LAN then, so no LAN is opened; the serial
//! console is the way in. `nasboot firewall lock-down` runs it without
//! reading the profile, for boot scripts when `nasboot check` exits 2.

pub(crate) mod backend;
mod error;
pub(crate) mod flows;
pub(crate) mod iptables;
pub(crate) mod listeners;
pub(crate) mod load;
pub(crate) mod model;
pub(crate) mod modules;
pub(crate) mod native;
pub(crate) mod netlink;
pub(crate) mod nft;
pub(crate) mod rules;
pub(crate) mod seal;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::fmt;

use crate::config::firewall::{FlowOffload, Hook, Profile as FwProfile};
use crate::config::net::Role;
use crate::config::types::IfName;
use crate::config::Profile;
use crate::kmod::{self, Kmods};
use crate::paths;
use crate::seam::netif::{LinkInfo, ARPHRD_ETHER, ARPHRD_LOOPBACK};
use crate::seam::{Cmd, Seams};
use std::time::Duration;

pub(crate) use backend::{Backend, Via};
pub(crate) use error::{Error, Then};
use iptables::Leftovers;
use model::{Ifaces, Kind, Model};

/// A rule set rendered for a backend, ready to load: its text and, for the
/// netlink loader, its native form ([`rules::Ruleset`] is the nftables rule
/// set as data, before it is rendered). For iptables the text holds two
/// files, IPv4 then IPv6 from `v6_at`; for nftables one file (the `inet`
/// family covers both).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Loadable {
    pub backend: Backend,
    pub text: String,
    pub v6_at: usize,
    /// iptables: load with `--noflush` (nasboot's own rule sets) or without
    /// (a full `iptables-save` copy, for a rollback).
    pub noflush: bool,
    /// nftables: what the loader sends through netlink (see [`Native`]).
    pub native: Native,
    /// nftables: through netlink, or with the nft tool.
    pub via: Via,
}

/// An nftables rule set as the netlink loader takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Native {
    /// No native form: the text is what loads (iptables, or a copy nft
    /// listed as text).
    TextOnly,
    /// nasboot's own rules, encoded at load (`netlink.rs`).
    Rules(Box<rules::Ruleset>),
    /// What was loaded before, as the kernel dumped it (`--confirm`).
    Saved(crate::sys::nftnl::Sent),
}

impl Loadable {
    /// The nftables file, or the iptables-restore (IPv4) file.
    pub(crate) fn v4(&self) -> &str {
        &self.text[..self.v6_at]
    }
    /// The ip6tables-restore file (empty for nftables).
    pub(crate) fn v6(&self) -> &str {
        &self.text[self.v6_at..]
    }
}

/// Render the model for a backend. Pure.
pub(crate) fn render(m: &Model, backend: Backend, now: &Observed) -> Loadable {
    let mut text = String::with_capacity(2048);
    match backend {
        Backend::Nftables => nft_rule_set(rules::build(m), text, now.via),
        Backend::Iptables => {
            let v6_at = iptables::render(m, now.left4, now.left6, &mut text).expect("writing to a String");
            Loadable { backend, text, v6_at, noflush: true, native: Native::TextOnly, via: now.via }
        }
    }
}

/// An nftables rule set: its text, and the rules for the netlink loader.
fn nft_rule_set(rs: rules::Ruleset, mut text: String, via: Via) -> Loadable {
    nft::render(&rs, &mut text).expect("writing to a String");
    Loadable { backend: Backend::Nftables, v6_at: text.len(), text, noflush: true, native: Native::Rules(Box::new(rs)), via }
}

/// The fallback rule set: loopback and `lan` accepted, all else dropped.
pub(crate) fn fallback(lan: &Ifaces, backend: Backend, via: Via) -> Loadable {
    let mut text = String::with_capacity(512);
    match backend {
        Backend::Nftables => nft_rule_set(rules::fallback(lan), text, via),
        Backend::Iptables => {
            let v6_at = iptables::render_fallback(lan, &mut text).expect("writing to a String");
            Loadable { backend, text, v6_at, noflush: true, native: Native::TextOnly, via }
        }
    }
}

/// The emergency rule set, for a profile that cannot be read (see the
/// module documentation).
pub(crate) fn emergency(backend: Backend, via: Via) -> Loadable {
    let mut text = String::with_capacity(512);
    match backend {
        Backend::Nftables => nft_rule_set(rules::emergency(), text, via),
        Backend::Iptables => {
            let v6_at = iptables::render_emergency(&mut text).expect("writing to a String");
            Loadable { backend, text, v6_at, noflush: true, native: Native::TextOnly, via }
        }
    }
}

/// Load a rule set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Load {
        rules: Loadable,
        /// The LAN interfaces the fallback accepts; None for the `off`
        /// profile, which needs no fallback.
        fallback_lan: Option<Ifaces>,
        /// When `hook = "auto"` took the ingress hooks: the input chain's
        /// rule set, loaded in their place if the tool refuses them (nft
        /// before 0.9.7 has no `inet` ingress hook, whatever the kernel).
        /// When `flow_offload = "auto"` could not tell whether the kernel
        /// has the flowtable: the rule set without it.
        instead: Option<Instead>,
        /// Set once `rules` (or `instead`) loaded, never before: the
        /// forwarding sysctls of a router, so that the box forwards only
        /// with its forward chain in place.
        then: Vec<crate::sysctl::Action>,
    },
}

/// What to load when the tool or kernel refuses a rule set that `auto`
/// chose, and what it is, for the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Instead {
    pub rules: Loadable,
    /// What it is, for the log: "the input chain instead (hook = \"auto\")".
    pub what: &'static str,
}

impl Action {
    pub(crate) fn rendered(&self) -> Option<(String, &str)> {
        match self {
            Action::Load { rules, .. } => Some((format!("{} rule set", rules.backend), &rules.text)),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Load { rules, then, .. } => {
                let hooks = if rules.text.contains("type filter hook ingress") { ", on the ingress hooks" } else { "" };
                let fast = if rules.text.contains("\tflowtable ft {") { ", with the flowtable" } else { "" };
                write!(f, "load the {} rule set ({} lines{hooks}{fast})", rules.backend, rules.text.lines().count())?;
                if rules.backend == Backend::Nftables {
                    write!(f, " {}", rules.via)?;
                }
                for a in then {
                    write!(f, ", then {a}")?;
                }
                Ok(())
            }
        }
    }
}

/// What the board offers the firewall.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub offer: backend::Offer,
    /// The kernel has IPv6 (`/proc/sys/net/ipv6`); read only with
    /// `forward`, for the forwarding sysctls (the iptables loader asks
    /// for itself: [`load::kernel_has_ipv6`]).
    pub ipv6: bool,
    /// iptables tables already loaded (for cleaning up raw and nat).
    pub left4: Leftovers,
    pub left6: Leftovers,
    /// Whether `left4` and `left6` list every iptables table there is:
    /// legacy iptables' tables are all in the running kernel's
    /// `ip_tables_names`; iptables-nft's are in nf_tables, known only when
    /// `nft list tables` answered (nft may be absent).
    pub tables_complete: bool,
    /// With `profile = "off"`: whether any of nasboot's rules are loaded
    /// (None: could not tell, so the "off" rule set is loaded to be sure).
    pub ours_loaded: Option<bool>,
    /// For `hook = "auto"`: every interface but loopback, with its link
    /// type (ARPHRD_*). None when not asked or not readable.
    pub links: Option<Vec<(IfName, u16)>>,
    /// Whether the kernel has the flowtable (`nft_flow_offload` loaded,
    /// built in or installed as a module); None when it cannot be told.
    /// Read only for `forward` with `flow_offload = "auto"`.
    pub flowtable: Option<bool>,
    /// The LAN and WAN interfaces that are not there yet (a bridge or
    /// VLAN `nasboot apply` has not made, a PPP link not up): the kernel
    /// refuses a flowtable over a device it does not have (ENOENT).
    /// Read only where `flowtable` may be loaded.
    pub absent: Vec<IfName>,
    /// Whether the kernel has NAT (`nf_nat`); read only with `forward`.
    pub nat: Option<bool>,
    /// The forwarding sysctls, read only with `forward`.
    pub forwarding: crate::sysctl::Observed,
    /// How nftables rule sets are loaded here.
    pub via: Via,
    /// The kernel's nf_tables tables, asked through netlink; None when it
    /// was not asked or could not be (see `offer.netlink`).
    pub nft_tables: Option<Vec<crate::seam::nftables::TableId>>,
    /// nasboot's rule set as its last load through netlink left it, when
    /// nothing has been committed since (see [`native::loaded`]).
    pub loaded: Option<native::Loaded>,
}

/// Whether nasboot's tables (nftables) or chains (iptables) are loaded.
/// Asked only for `profile = "off"`, so that an "off" board settles:
/// re-applying then runs no tool at all. With legacy iptables, `tables`
/// (IPv4, IPv6) is what the kernel lists: a family with no filter table
/// has no chain of nasboot's, and its `*-save` does not run (each is a
/// process on a slow board, and it would create the empty table it asks
/// about, whose hooks then cost every packet).
pub(crate) fn ours_loaded(backend: Backend, now: &Observed, seams: &mut Seams<'_>) -> Option<bool> {
    if let (Backend::Nftables, Some(tables)) = (backend, &now.nft_tables) {
        return Some(tables.iter().any(|(family, name)| rules::ours(*family, name)));
    }
    let tables = now.iptables_tables();
    let probes: &[(&str, &[&str], &[&str])] = match backend {
        Backend::Nftables => &[("nft", &["list", "tables"], &["table inet nasboot", "table ip nasboot_nat"])],
        Backend::Iptables => &[("iptables-save", &["-t", "filter"], &[":nasboot-"]), ("ip6tables-save", &["-t", "filter"], &[":nasboot-"])],
    };
    for (i, (program, args, markers)) in probes.iter().enumerate() {
        if backend == Backend::Iptables && tables.is_some_and(|t| !t[i].filter) {
            continue;
        }
        let cmd = Cmd { program, args, stdin: None, timeout: Duration::from_secs(30) };
        let out = seams.runner.run(&cmd).ok().filter(|o| o.success())?;
        let text = String::from_utf8_lossy(&out.stdout);
        if text.lines().any(|l| markers.iter().any(|m| l.trim_start().starts_with(m))) {
            return Some(true);
        }
    }
    Some(false)
}

/// The iptables tables loaded (IPv4, IPv6), and whether that is all of
/// them (see [`Observed::tables_complete`]). Legacy iptables' are the
/// running kernel's `ip_tables_names` and `ip6_tables_names`: absent, no
/// table (ip_tables is not loaded); unreadable (not root), or relocated
/// under `--root` (not the running kernel's), not known. iptables-nft's
/// are in nf_tables, in the tables `dumped` lists.
fn iptables_loaded(legacy: bool, dumped: Option<&crate::seam::nftables::Tables>, seams: &mut Seams<'_>) -> (Leftovers, Leftovers, bool) {
    let relocated = seams.files.relocated();
    let mut names = |path: &str| match seams.files.read(std::path::Path::new(path)) {
        Ok(b) => (Leftovers::from_names(&String::from_utf8_lossy(&b)), !relocated),
        Err(e) => (Leftovers::default(), e.kind() == std::io::ErrorKind::NotFound && !relocated),
    };
    let ((mut left4, known4), (mut left6, known6)) = (names(paths::IP_TABLES_NAMES), names(paths::IP6_TABLES_NAMES));
    if known4 && known6 && (legacy || iptables_legacy(seams)) {
        return (left4, left6, true);
    }
    // iptables-nft keeps its tables in nf_tables, not in ip_tables_names:
    // with both lists read, every table is known. (Where netlink cannot
    // be had, under qemu-user, they stay unknown and both families are
    // asked, as when nothing could be read.)
    let Some(listed) = dumped else { return (left4, left6, false) };
    for (family, name) in &listed.ids {
        let left = match *family {
            crate::sys::nftnl::NFPROTO_IPV4 => &mut left4,
            crate::sys::nftnl::NFPROTO_IPV6 => &mut left6,
            _ => continue,
        };
        match name.as_str() {
            "filter" => left.filter = true,
            "raw" => left.raw = true,
            "nat" => left.nat = true,
            _ => {}
        }
    }
    (left4, left6, known4 && known6)
}

/// Whether the iptables on PATH is the legacy variant: its `iptables-save`
/// resolves to a binary without "nft" in its name (`xtables-legacy-multi`,
/// `iptables-legacy-save`, or the `xtables-multi` of iptables before 1.8,
/// which had no other), not to `xtables-nft-multi`.
fn iptables_legacy(seams: &mut Seams<'_>) -> bool {
    let target = seams.runner.resolve("iptables-save");
    target.as_deref().and_then(std::path::Path::file_name).is_some_and(|n| !n.to_string_lossy().contains("nft"))
}

impl Observed {
    /// The iptables tables, when they are all known (see `tables_complete`).
    pub(crate) fn iptables_tables(&self) -> Option<[Leftovers; 2]> {
        self.tables_complete.then_some([self.left4, self.left6])
    }
}

/// `all_links`: every link, where the caller has already asked the kernel
/// (an RTM_GETLINK dump); None to have them asked here, if they matter.
pub(crate) fn observe(p: &Profile, all_links: Option<&[LinkInfo]>, seams: &mut Seams<'_>) -> Observed {
    let release = seams.sysctl.get("kernel.osrelease").ok();
    let kernel = release.as_deref().and_then(backend::kernel_version);
    let fw = &p.firewall;
    // The kernel's nf_tables, asked once through netlink: whether nasboot
    // can load nftables itself, and what tables there are. Not asked for
    // a board that uses legacy iptables: asking could load nf_tables.
    let legacy = fw.backend == crate::config::firewall::Backend::Iptables && iptables_legacy(seams);
    let (dumped, netlink) = match legacy {
        true => (None, Some(nix::libc::ENOPROTOOPT)),
        false => match seams.nft.tables() {
            Ok(t) => (Some(t), None),
            Err(e) => (None, Some(e.raw_os_error().unwrap_or(nix::libc::EIO))),
        },
    };
    let offer = backend::offer(kernel, netlink, fw.backend, fw.loader, |tool| seams.runner.which(tool).is_some());
    let backend = backend::choose(fw.backend, offer);
    // The iptables tables matter to the iptables backend only (what its
    // rule set cleans up, and whether `off` has anything to unload): an
    // nftables board does not read them (two /proc/net files a slow board
    // would read at every boot for nothing; scripts/bench-boot).
    let (left4, left6, tables_complete) = match backend {
        Backend::Iptables => iptables_loaded(legacy, dumped.as_ref(), seams),
        Backend::Nftables => (Leftovers::default(), Leftovers::default(), false),
    };
    let links = hook_links(p, offer, all_links, seams);
    let router = fw.forward && fw.profile != FwProfile::Off;
    let ipv6 = router && load::kernel_has_ipv6(seams);
    let (mut flowtable, mut nat, mut absent) = (None, None, Vec::new());
    if router {
        let mut kmods = Kmods::new(release.as_deref());
        if fw.flow_offload == FlowOffload::Auto && backend == Backend::Nftables {
            flowtable = kmods.has(seams, "nft_flow_offload", kmod::NETFILTER).known();
            if flowtable != Some(false) {
                absent = absent_devices(p, all_links, seams);
            }
        }
        nat = kmods.has(seams, "nf_nat", kmod::NETFILTER).known();
    }
    let forwarding = if router { crate::sysctl::observe(&forwarding_wanted(ipv6), seams) } else { crate::sysctl::Observed::default() };
    let via = backend::via(fw.loader, offer);
    // Only where nasboot's table is there to ask: never at boot.
    let loaded = match &dumped {
        Some(t) if backend == Backend::Nftables && via == Via::Netlink && fw.profile != FwProfile::Off => native::loaded(t, seams),
        _ => None,
    };
    let mut seen = Observed {
        offer,
        ipv6,
        left4,
        left6,
        tables_complete,
        ours_loaded: None,
        links,
        flowtable,
        absent,
        nat,
        forwarding,
        via,
        nft_tables: dumped.map(|t| t.ids),
        loaded,
    };
    if fw.profile == FwProfile::Off {
        seen.ours_loaded = ours_loaded(backend, &seen, seams);
    }
    seen
}

/// The sysctls that make a router: IPv4 forwarding, and IPv6 when the
/// kernel has it.
fn forwarding_wanted(ipv6: bool) -> Vec<(String, String)> {
    let mut out = vec![(FORWARD_V4.to_string(), "1".to_string())];
    if ipv6 {
        out.push((FORWARD_V6.to_string(), "1".to_string()));
    }
    out
}

pub(crate) const FORWARD_V4: &str = "net.ipv4.ip_forward";
/// Also turns accept_ra off where it is 1: a WAN that takes its IPv6
/// address from router advertisements needs `accept_ra = 2`.
pub(crate) const FORWARD_V6: &str = "net.ipv6.conf.all.forwarding";

/// For `hook = "auto"` where the ingress hooks could do: every interface
/// but loopback, from `all_links` (the network's link dump) or, without
/// it, a dump of its own.
fn hook_links(p: &Profile, offer: backend::Offer, all_links: Option<&[LinkInfo]>, seams: &mut Seams<'_>) -> Option<Vec<(IfName, u16)>> {
    let fw = &p.firewall;
    let backend = backend::choose(fw.backend, offer);
    (fw.hook == Hook::Auto && fw.ingress_fits() && backend == Backend::Nftables && offer.kernel >= Some(backend::INET_INGRESS))
        .then(|| given_or_dumped(all_links, seams).map(|all| links(&all)))
        .flatten()
}

/// The links `apply` and `run` dumped already, else one RTM_GETLINK dump
/// of the observation's own (None where it fails).
fn given_or_dumped<'a>(all_links: Option<&'a [LinkInfo]>, seams: &mut Seams<'_>) -> Option<Cow<'a, [LinkInfo]>> {
    match all_links {
        Some(all) => Some(Cow::Borrowed(all)),
        None => seams.netif.link_infos().ok().map(Cow::Owned),
    }
}

/// The LAN and WAN interfaces of `p` that are not there, by the links
/// already dumped where there are (`nasboot apply`, `run`), else by one
/// RTM_GETLINK dump (a standalone `firewall apply`). Not by an interface
/// ioctl: for a name it does not know the kernel runs modprobe
/// `netdev-NAME`, then `NAME` (`dev_load`), two processes a missing
/// device. None is missing where the dump fails.
fn absent_devices(p: &Profile, all_links: Option<&[LinkInfo]>, seams: &mut Seams<'_>) -> Vec<IfName> {
    let Some(all) = given_or_dumped(all_links, seams) else { return Vec::new() };
    let ours = p.interface.iter().filter(|i| i.role != Role::None).map(|i| i.name.get_ref());
    ours.filter(|n| !all.iter().any(|l| &l.name == *n)).cloned().collect()
}

/// After bridges and VLANs were created or removed (`plan::observe_again`):
/// what the links change in `seen`. Only the hook links, where no rule
/// set of nasboot's was found loaded; else all of it again, for the
/// devices its hooks are bound to may have changed.
pub(crate) fn observe_again(p: &Profile, seen: &mut Observed, all_links: Option<&[LinkInfo]>, seams: &mut Seams<'_>) {
    if seen.loaded.is_some() {
        *seen = observe(p, all_links, seams);
    } else {
        seen.links = hook_links(p, seen.offer, all_links, seams);
        if !seen.absent.is_empty() {
            seen.absent = absent_devices(p, all_links, seams);
        }
    }
}

/// Every interface but loopback, with its link type.
fn links(all: &[LinkInfo]) -> Vec<(IfName, u16)> {
    all.iter().filter(|l| l.state.hwtype != ARPHRD_LOOPBACK).map(|l| (l.name.clone(), l.state.hwtype)).collect()
}

/// `hook = "auto"`: whether the ingress hooks filter everything the input
/// chain would, on the links present now. They do when every interface
/// but loopback is LAN or WAN (one the profile does not name, or names
/// without a role, gets no chain: the input chain's policy drop would have
/// covered it) and every interface that gets a chain (the WAN, a
/// restricted LAN) is present and Ethernet-like: a chain is hooked to the
/// device present at load time, and a ppp or tun device comes and goes.
/// Otherwise, and without Linux 5.10 (`links` is then None), the input
/// chain. Pure.
pub(crate) fn auto_ingress(m: &Model, backend: Backend, now: &Observed) -> bool {
    let Some(links) = now.links.as_deref() else { return false };
    let filtered = |n: &IfName| m.wan_ifaces.contains(n) || (!m.lan.all && m.lan_ifaces.contains(n));
    backend == Backend::Nftables
        && links.iter().all(|(n, hw)| (m.lan_ifaces.contains(n) || m.wan_ifaces.contains(n)) && (*hw == ARPHRD_ETHER || !filtered(n)))
        && m.wan_ifaces.iter().chain(&m.lan_ifaces).filter(|n| filtered(n)).all(|n| links.iter().any(|(l, _)| l == n))
}

/// The backend the profile gets on this board.
pub(crate) fn backend_for(p: &Profile, now: &Observed) -> Backend {
    backend::choose(p.firewall.backend, now.offer)
}

pub(crate) fn plan(p: &Profile, now: &Observed) -> Vec<Action> {
    let mut m = model::from_profile(p);
    let backend = backend_for(p, now);
    // A device missing now: the rule set without the flowtable, which the
    // next apply (`run`, the hotplug handler) adds once it is there.
    if backend == Backend::Iptables || now.flowtable == Some(false) || !now.absent.is_empty() {
        m.flowtable = false;
    }
    let auto = auto_ingress(&m, backend, now);
    m.ingress |= auto;
    let tool_present = match backend {
        Backend::Nftables => now.offer.nft || now.via == Via::Netlink,
        Backend::Iptables => now.offer.iptables_restore,
    };
    if m.kind == Kind::Off && (!tool_present || now.ours_loaded == Some(false)) {
        return Vec::new();
    }
    let then = if m.forward {
        crate::sysctl::plan(&crate::sysctl::Scope::Global, forwarding_wanted(now.ipv6), &now.forwarding)
    } else {
        Vec::new()
    };
    // The same rule set, loaded by nasboot and untouched since: nothing to
    // do (with the forwarding sysctls as they should be). Told from the
    // rules alone, before any text is rendered: a settled boot renders
    // none (the text of the router's rule set and of its input-chain
    // alternative are work a slow board would pay at every settled apply;
    // scripts/bench-fwload).
    let mut built = None;
    if let (Backend::Nftables, Via::Netlink, Some(loaded), true) = (backend, now.via, &now.loaded, then.is_empty()) {
        let rs = rules::build(&m);
        if native::unchanged(&rs, loaded) {
            return Vec::new();
        }
        built = Some(rs);
    }
    let rules = match built {
        Some(rs) => nft_rule_set(rs, String::with_capacity(2048), now.via),
        None => render(&m, backend, now),
    };
    let mut instead = auto.then(|| {
        m.ingress = false;
        let input = render(&m, backend, now);
        m.ingress = true;
        Instead { rules: input, what: "the input chain instead (hook = \"auto\")" }
    });
    if m.flowtable && now.flowtable.is_none() {
        // Cannot tell: try the flowtable, and have plain forwarding ready.
        let mut plain = m.clone();
        plain.flowtable = false;
        instead = Some(Instead {
            rules: render(&plain, backend, now),
            what: "the rule set without the flowtable instead (flow_offload = \"auto\")",
        });
    }
    let fallback_lan = (m.kind != Kind::Off).then(|| m.lan_ifaces.clone());
    vec![Action::Load { rules, fallback_lan, instead, then }]
}

/// What the firewall's plan wants a human to know: a router without its
/// fast path, and why.
pub(crate) fn notes(p: &Profile, now: &Observed) -> Vec<String> {
    let fw = &p.firewall;
    let mut out = Vec::new();
    if !(fw.forward && fw.profile != FwProfile::Off) {
        return out;
    }
    if now.nat == Some(false) {
        out.push("forward = true: this kernel has no NAT (nf_nat), so the rule set will be refused and the LAN-only fallback loaded, which forwards nothing".to_string());
    }
    if fw.flow_offload == FlowOffload::Off {
        return out;
    }
    if backend_for(p, now) == Backend::Iptables {
        out.push("flow_offload = \"auto\": iptables has no flowtable, so every forwarded packet crosses the FORWARD chain; use backend = \"nftables\" for the fast path".to_string());
    } else if now.flowtable == Some(false) {
        out.push(
            "flow_offload = \"auto\": this kernel has no nft_flow_offload (nf_flow_table), so forwarding goes without the flowtable"
                .to_string(),
        );
    } else if !now.absent.is_empty() {
        let names: Vec<&str> = now.absent.iter().map(|n| n.as_str()).collect();
        out.push(format!(
            "flow_offload = \"auto\": {} not there yet, so forwarding goes without the flowtable until an apply finds {} (nasboot run, or the hotplug handler)",
            names.join(", ") + if names.len() == 1 { " is" } else { " are" },
            if names.len() == 1 { "it" } else { "them" }
        ));
    }
    out
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    match a {
        Action::Load { rules, fallback_lan, instead, then } => {
            load::load(rules, instead.as_ref(), fallback_lan.as_ref(), seams)?;
            then.iter().try_for_each(|a| crate::sysctl::apply(a, seams).map_err(Error::Sysctl))
        }
    }
}
