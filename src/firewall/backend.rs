//! Which backend loads the rule set: nftables or iptables-restore.
//!
//! Order of precedence: `--backend` on the command line (copied into the
//! profile by `cmd::load`), then `[firewall] backend`, then the automatic
//! choice below.
//!
//! Automatic choice, from what the board offers:
//!
//! 1. nftables when the kernel is 3.14 or newer (the `inet` family, which
//!    carries IPv4 and IPv6 in one table, arrived in 3.14) and nasboot can
//!    load it: the kernel answers on its nf_tables netlink socket, or `nft`
//!    is on PATH. On 4.10 and newer this is also the kernel that keeps
//!    conntrack off until a rule asks for it, which is what the stateless
//!    profile is for. A kernel release that cannot be read (under
//!    `--root`) counts as new enough.
//! 2. otherwise iptables-restore, when it is on PATH (the only choice on
//!    2.6 kernels such as the Bubba 2's).
//! 3. otherwise nft if it is on PATH at all, and else the backend the
//!    kernel would want; applying then fails with a clear "not on PATH"
//!    error and keeps the previous rule set.

use std::fmt;

/// A backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// One nf_tables transaction: nasboot's own batch over netlink, or
    /// `nft -f -` ([`Via`]).
    Nftables,
    /// `iptables-restore` and `ip6tables-restore`, one commit per table.
    Iptables,
}

impl Backend {
    /// The other one, for the last-resort fallback.
    pub(crate) fn other(self) -> Backend {
        match self {
            Backend::Nftables => Backend::Iptables,
            Backend::Iptables => Backend::Nftables,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Nftables => "nftables",
            Backend::Iptables => "iptables",
        })
    }
}

/// The kernel's major and minor version from `/proc/sys/kernel/osrelease`
/// ("6.1.0-50-4kc-malta", "2.6.39.4").
pub(crate) fn kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The first kernel with the `inet` family's ingress hook.
pub(crate) const INET_INGRESS: (u32, u32) = (5, 10);
/// The first kernel with the nftables `inet` family.
pub(crate) const NFT_INET: (u32, u32) = (3, 14);

/// What the board offers, as observed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Offer {
    pub kernel: Option<(u32, u32)>,
    pub nft: bool,
    /// None when the kernel answers on the nf_tables netlink socket;
    /// otherwise the errno it refused it with.
    pub netlink: Option<i32>,
    pub iptables_restore: bool,
}

/// What the board offers, with the tools on PATH looked for only where
/// they decide something: a lookup is a `statx` per PATH directory, each
/// a cost on a slow board's boot, and a board whose kernel takes nf_tables
/// over netlink needs neither tool. `nft` is looked for where netlink was
/// refused or the loader is `nft`; `iptables-restore` where the backend
/// could come out as iptables. A tool not looked for is recorded as
/// absent, and nothing reads it then: `via` and `choose` give the same
/// answers as with every tool looked for (tested below).
pub(crate) fn offer(
    kernel: Option<(u32, u32)>,
    netlink: Option<i32>,
    setting: crate::config::firewall::Backend,
    loader: crate::config::firewall::Loader,
    mut on_path: impl FnMut(&str) -> bool,
) -> Offer {
    let nft = (netlink.is_some() || loader == crate::config::firewall::Loader::Nft) && on_path("nft");
    let mut o = Offer { kernel, nft, netlink, iptables_restore: false };
    let nftables_either_way = [false, true].iter().all(|&ipt| choose(setting, Offer { iptables_restore: ipt, ..o }) == Backend::Nftables);
    o.iptables_restore = !nftables_either_way && on_path("iptables-restore");
    o
}

/// How an nftables rule set reaches the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Via {
    /// One batch over NETLINK_NETFILTER, by nasboot itself.
    #[default]
    Netlink,
    /// `nft -f -`, and why.
    Tool(Why),
}

/// Why the nft tool loads the rule set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Why {
    /// `loader = "nft"`.
    Asked,
    /// The kernel refused the socket or the request with this errno.
    Refused(i32),
}

impl fmt::Display for Via {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Via::Netlink => f.write_str("through netlink"),
            Via::Tool(Why::Asked) => f.write_str("with nft (loader = \"nft\")"),
            Via::Tool(Why::Refused(e)) if *e == nix::libc::EPROTONOSUPPORT => {
                f.write_str("with nft: the kernel refused the nf_tables netlink socket (qemu-user, or no nfnetlink)")
            }
            Via::Tool(Why::Refused(e)) => {
                write!(f, "with nft: the kernel has no nf_tables netlink ({})", std::io::Error::from_raw_os_error(*e))
            }
        }
    }
}

/// The loader for a `loader` setting and what the kernel answered.
pub(crate) fn via(setting: crate::config::firewall::Loader, o: Offer) -> Via {
    match (setting, o.netlink) {
        (crate::config::firewall::Loader::Nft, _) => Via::Tool(Why::Asked),
        (_, None) => Via::Netlink,
        (_, Some(e)) => Via::Tool(Why::Refused(e)),
    }
}

/// The automatic choice (see the module documentation).
pub(crate) fn auto(o: Offer) -> Backend {
    let new_kernel = o.kernel.map(|k| k >= NFT_INET);
    match (new_kernel, o.nft || o.netlink.is_none(), o.iptables_restore) {
        (Some(true) | None, true, _) => Backend::Nftables,
        (_, _, true) => Backend::Iptables,
        (_, true, false) => Backend::Nftables,
        (Some(false), false, false) => Backend::Iptables,
        (_, false, false) => Backend::Nftables,
    }
}

/// The backend for a profile setting.
pub(crate) fn choose(setting: crate::config::firewall::Backend, o: Offer) -> Backend {
    use crate::config::firewall::Backend as B;
    match setting {
        B::Nftables => Backend::Nftables,
        B::Iptables => Backend::Iptables,
        B::Auto => auto(o),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_releases() {
        assert_eq!(kernel_version("6.1.0-50-4kc-malta\n"), Some((6, 1)));
        assert_eq!(kernel_version("2.6.39.4"), Some((2, 6)));
        assert_eq!(kernel_version("3.14"), Some((3, 14)));
        assert_eq!(kernel_version("garbage"), None);
    }

    #[test]
    fn auto_choice_table() {
        let o =
            |k: Option<(u32, u32)>, nft, ipt| Offer { kernel: k, nft, netlink: Some(nix::libc::EPROTONOSUPPORT), iptables_restore: ipt };
        let cases = [
            (o(Some((6, 1)), true, true), Backend::Nftables),
            (o(Some((6, 1)), false, true), Backend::Iptables),
            (o(Some((2, 6)), true, true), Backend::Iptables),
            (o(Some((3, 13)), true, false), Backend::Nftables),
            (o(None, true, true), Backend::Nftables),
            (o(None, false, true), Backend::Iptables),
            (o(None, true, false), Backend::Nftables),
            (o(Some((2, 6)), false, false), Backend::Iptables),
            (o(Some((5, 10)), false, false), Backend::Nftables),
        ];
        for (offer, want) in cases {
            assert_eq!(auto(offer), want, "{offer:?}");
        }
        // The kernel's own socket counts as nft: no tool needed.
        let netlink = Offer { kernel: Some((6, 1)), nft: false, netlink: None, iptables_restore: true };
        assert_eq!(auto(netlink), Backend::Nftables);
        assert_eq!(auto(Offer { kernel: Some((2, 6)), ..netlink }), Backend::Iptables);
    }

    #[test]
    fn tools_are_looked_for_only_where_they_decide() {
        use crate::config::firewall::{Backend as B, Loader};
        let refused = Some(nix::libc::EPROTONOSUPPORT);
        for kernel in [None, Some((2, 6)), Some((3, 13)), Some((6, 1))] {
            for netlink in [None, refused] {
                for setting in [B::Auto, B::Nftables, B::Iptables] {
                    for loader in [Loader::Auto, Loader::Nft] {
                        for (nft, ipt) in [(false, false), (false, true), (true, false), (true, true)] {
                            let mut asked = Vec::new();
                            let lazy = offer(kernel, netlink, setting, loader, |t| {
                                asked.push(t.to_string());
                                if t == "nft" {
                                    nft
                                } else {
                                    ipt
                                }
                            });
                            let eager = Offer { kernel, nft, netlink, iptables_restore: ipt };
                            let case = format!("{kernel:?} {netlink:?} {setting:?} {loader:?} nft={nft} ipt={ipt}: asked {asked:?}");
                            let backend = choose(setting, eager);
                            assert_eq!(choose(setting, lazy), backend, "{case}");
                            assert_eq!(via(loader, lazy), via(loader, eager), "{case}");
                            // What plan reads of the chosen backend's tool.
                            match (backend, via(loader, eager)) {
                                (Backend::Nftables, Via::Tool(_)) => assert_eq!(lazy.nft, nft, "{case}"),
                                (Backend::Nftables, Via::Netlink) => {}
                                (Backend::Iptables, _) => assert_eq!(lazy.iptables_restore, ipt, "{case}"),
                            }
                        }
                    }
                }
            }
        }
        // A board whose kernel takes the batch looks for no tool at all.
        let mut asked = 0;
        offer(Some((6, 1)), None, B::Auto, Loader::Auto, |_| {
            asked += 1;
            true
        });
        assert_eq!(asked, 0);
    }

    #[test]
    fn the_tool_loads_only_where_netlink_cannot_or_when_asked() {
        use crate::config::firewall::Loader;
        let ok = Offer { kernel: Some((6, 1)), nft: true, netlink: None, iptables_restore: false };
        assert_eq!(via(Loader::Auto, ok), Via::Netlink);
        assert_eq!(via(Loader::Nft, ok), Via::Tool(Why::Asked));
        let qemu = Offer { netlink: Some(nix::libc::EPROTONOSUPPORT), ..ok };
        assert_eq!(via(Loader::Auto, qemu), Via::Tool(Why::Refused(nix::libc::EPROTONOSUPPORT)));
        assert_eq!(
            via(Loader::Auto, qemu).to_string(),
            "with nft: the kernel refused the nf_tables netlink socket (qemu-user, or no nfnetlink)"
        );
    }
}
