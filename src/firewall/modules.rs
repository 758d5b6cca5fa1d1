//! Which kernel modules a batch needs ([`Module`], [`Modules`]), and
//! loading them before it goes ([`preload`]; whether one is there at all
//! is `crate::kmod`'s).
//!
//! Where nf_tables and its expressions are modules (Debian's and
//! OpenWrt's kernels), the first batch after power-on makes the kernel
//! load them one at a time: for each expression it has not met, a
//! modprobe process for the family-specific alias (which finds nothing
//! for most), a second for the plain one, and the batch replayed after
//! each. On a slow board a process and a replay per module is most of
//! the first apply's time, where the module loads themselves are the
//! kernel's work and stay (scripts/bench-fwload --cold measures both
//! ways). So nasboot names the modules itself, in one process. The
//! kernel's interface for loading a module (`finit_module`) leaves the
//! dependencies, options and blacklists of modprobe.d to user space, and
//! the kernel itself runs modprobe for them: nasboot runs the one the
//! kernel would (`kernel.modprobe`). The tool paths (`nft -f`,
//! iptables-restore) leave the modules to the kernel's requests, as those
//! tools do.

use std::path::Path;
use std::time::Duration;

use crate::kmod::Kmods;
use crate::paths;
use crate::seam::{Cmd, Seams};
use crate::sys::nftnl::Expr;

/// How long the one modprobe may take: a router's modules, loaded on the
/// slowest board (scripts/bench-fwload --cold), with room to spare.
const MODPROBE_TIMEOUT: Duration = Duration::from_secs(120);

/// Load the modules `needed` with one modprobe (`kernel.modprobe -a -q
/// --`) before the batch that needs them goes, unless the last of each
/// kind it needs is loaded ([`Modules::last_of_each_kind`]: one to three
/// `stat`s of /sys/module, all a warm kernel costs: reading all of
/// /proc/modules instead is slower on a slow board, scripts/bench-fwload).
/// A kernel whose netfilter is built in but that has modules pays the
/// module loader's setting and modules.builtin too, and runs nothing.
/// Best effort: whatever it leaves missing, the kernel loads itself as
/// the batch asks (or refuses the batch, which names what is missing), so
/// its failure is logged, never returned.
pub(crate) fn preload(needed: Modules, seams: &mut Seams<'_>) {
    if needed.last_of_each_kind().all(|n| Kmods::loaded(seams, n)) {
        return;
    }
    // No modules at all (the built big-endian boards' kernels).
    if !seams.files.exists(Path::new(paths::PROC_MODULES)) {
        return;
    }
    let modprobe = match seams.sysctl.get("kernel.modprobe") {
        Ok(p) if !p.trim().is_empty() => p.trim().to_string(),
        // The module loader off: the kernel loads nothing either.
        _ => return,
    };
    // Built-in ones: named to modprobe they would cost it a lookup each,
    // or an error. Loaded ones it passes over.
    let release = seams.sysctl.get("kernel.osrelease").ok();
    let mut kmods = Kmods::new(release.as_deref());
    let names: Vec<&'static str> = needed.names().filter(|n| !kmods.builtin(seams, n)).collect();
    if names.is_empty() {
        return;
    }
    let mut args = vec!["-a", "-q", "--"];
    args.extend(&names);
    let cmd = Cmd { program: &modprobe, args: &args, stdin: None, timeout: MODPROBE_TIMEOUT };
    match seams.runner.run(&cmd) {
        Ok(out) if out.success() => {
            log::info!("nf_tables: loaded the kernel modules the rule set needs with one {modprobe}: {}", names.join(" "))
        }
        Ok(out) => log::info!("nf_tables: {} {}; the kernel loads what is missing itself", cmd.display(), out.ended()),
        Err(e) => log::info!("nf_tables: {modprobe}: {e}; the kernel loads the modules itself"),
    }
}

/// A kernel module a batch can need, where it is a module (Debian's and
/// OpenWrt's kernels build them so). Declared in the order the preload
/// names them to modprobe: nf_tables, then the stateless rule set's, then
/// what only a router's needs, the flowtable's last. nf_log_syslog, the
/// logger, came with Linux 5.12 (nf_log_ipv4 and nf_log_ipv6 before);
/// `modprobe -a` goes on past a name it cannot load, kmod's and
/// BusyBox's alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Module {
    NfTables,
    NftLimit,
    NfLogSyslog,
    NftLog,
    NftCt,
    NftFibInet,
    NftNat,
    NftMasq,
    NftChainNat,
    NfFlowTableInet,
    NftFlowOffload,
}

/// The kinds of module that come loaded together (see
/// [`Modules::last_of_each_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The logging rule's: the limit, the logger and the log expression.
    Logging,
    /// What a router's rule set adds: conntrack, fib and NAT.
    Router,
    /// The flowtable's.
    Flowtable,
}

impl Module {
    /// Every module, in the order of the declaration (checked below, at
    /// compile time): the order modprobe is given them.
    pub(crate) const ALL: [Module; 11] = [
        Module::NfTables,
        Module::NftLimit,
        Module::NfLogSyslog,
        Module::NftLog,
        Module::NftCt,
        Module::NftFibInet,
        Module::NftNat,
        Module::NftMasq,
        Module::NftChainNat,
        Module::NfFlowTableInet,
        Module::NftFlowOffload,
    ];

    /// The module's name, as modprobe and /sys/module know it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Module::NfTables => "nf_tables",
            Module::NftLimit => "nft_limit",
            Module::NfLogSyslog => "nf_log_syslog",
            Module::NftLog => "nft_log",
            Module::NftCt => "nft_ct",
            Module::NftFibInet => "nft_fib_inet",
            Module::NftNat => "nft_nat",
            Module::NftMasq => "nft_masq",
            Module::NftChainNat => "nft_chain_nat",
            Module::NfFlowTableInet => "nf_flow_table_inet",
            Module::NftFlowOffload => "nft_flow_offload",
        }
    }

    /// Its bit in a [`Modules`].
    fn bit(self) -> u16 {
        1 << self as u16
    }

    /// The kind it comes loaded with; none for nf_tables itself.
    pub(crate) fn kind(self) -> Option<Kind> {
        match self {
            Module::NfTables => None,
            Module::NftLimit | Module::NfLogSyslog | Module::NftLog => Some(Kind::Logging),
            Module::NftCt | Module::NftFibInet | Module::NftNat | Module::NftMasq | Module::NftChainNat => Some(Kind::Router),
            Module::NfFlowTableInet | Module::NftFlowOffload => Some(Kind::Flowtable),
        }
    }

    /// What expression `e` needs beyond nf_tables (whose core holds meta,
    /// cmp, payload, bitwise, lookup, immediate, exthdr, rt and
    /// byteorder).
    pub(crate) fn of(e: &Expr<'_>) -> &'static [Module] {
        match e {
            Expr::Limit { .. } => &[Module::NftLimit],
            // The expression, and the logger it asks the kernel for.
            Expr::Log { .. } => &[Module::NfLogSyslog, Module::NftLog],
            Expr::Ct { .. } | Expr::Notrack => &[Module::NftCt],
            Expr::Fib { .. } => &[Module::NftFibInet],
            Expr::Dnat { .. } => &[Module::NftNat],
            Expr::Masq => &[Module::NftMasq],
            Expr::FlowOffload { .. } => &[Module::NftFlowOffload],
            _ => &[],
        }
    }
}

// [`Module::ALL`] is the declaration's order: reordering one without the
// other does not compile.
const _: () = {
    let mut i = 0;
    while i < Module::ALL.len() {
        assert!(Module::ALL[i] as usize == i, "Module::ALL is not in the declaration's order");
        i += 1;
    }
};

/// The module that holds the expression named `expr` (as the kernel
/// names it in an extended ack), for messages.
pub(crate) fn holding(expr: &str) -> &'static str {
    match expr {
        "fib" => "nft_fib_inet and nft_fib_ipv4",
        "flow_offload" => "nft_flow_offload",
        "log" => "nft_log",
        "limit" => "nft_limit",
        "ct" | "notrack" => "nft_ct",
        "masq" => "nft_masq",
        "nat" => "nft_nat",
        _ => "nf_tables",
    }
}

/// A set of [`Module`]s: the kernel loads each when a batch first asks
/// for what it holds, with a modprobe process per request, an
/// expression's family-specific alias asked first (a process that finds
/// nothing), and the batch replayed after each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Modules(u16);

impl Modules {
    #[must_use]
    pub(crate) fn with(self, m: Module) -> Modules {
        Modules(self.0 | m.bit())
    }

    /// These and what expression `e` needs.
    #[must_use]
    pub(crate) fn with_expr(self, e: &Expr<'_>) -> Modules {
        Module::of(e).iter().fold(self, |m, one| m.with(*one))
    }

    pub(crate) fn contains(self, m: Module) -> bool {
        self.0 & m.bit() != 0
    }

    /// For each kind of module the batch needs, the last it needs of that
    /// kind: one loaded, the kind's others are as a rule too, loaded with
    /// it by a batch like this one. A kind can come loaded alone: the
    /// flowtable's at boot (tests/routerboard.sh), the logging rule's by a
    /// stateless rule set before a router's.
    pub(crate) fn last_of_each_kind(self) -> impl Iterator<Item = &'static str> {
        [Kind::Logging, Kind::Router, Kind::Flowtable]
            .into_iter()
            .filter_map(move |k| Module::ALL.into_iter().rev().find(|m| m.kind() == Some(k) && self.contains(*m)).map(Module::name))
    }

    /// The names, in [`Module::ALL`]'s order.
    pub(crate) fn names(self) -> impl Iterator<Item = &'static str> {
        Module::ALL.into_iter().filter(move |m| self.contains(*m)).map(Module::name)
    }
}

#[cfg(test)]
mod tests {
    use super::{Module, Modules};
    use crate::sys::nftnl::Expr;

    fn of(es: &[Expr<'_>]) -> Modules {
        es.iter().fold(Modules::default().with(Module::NfTables), |m, e| m.with_expr(e))
    }

    #[test]
    fn a_batch_names_the_modules_its_expressions_chains_and_flowtable_need() {
        assert_eq!(of(&[]).names().collect::<Vec<_>>(), ["nf_tables"]);
        let m = of(&[Expr::Meta { key: 1 }, Expr::Limit { rate: 10, unit: 60, burst: 5 }, Expr::Log { prefix: "x" }, Expr::Notrack])
            .with(Module::NfFlowTableInet);
        assert_eq!(m.names().collect::<Vec<_>>(), ["nf_tables", "nft_limit", "nf_log_syslog", "nft_log", "nft_ct", "nf_flow_table_inet"]);
        let all = [Expr::Masq, Expr::Dnat { family: 2 }, Expr::Fib { flags: 0, result: 0 }, Expr::FlowOffload { table: "t" }]
            .iter()
            .fold(m.with(Module::NftChainNat), |m, e| m.with_expr(e));
        assert_eq!(all.names().count(), Module::ALL.len());
    }

    #[test]
    fn the_last_module_of_each_kind_stands_for_its_kind() {
        let last = |es: &[Expr<'_>]| of(es).last_of_each_kind().collect::<Vec<_>>();
        // Stateless: the logging rule's only.
        assert_eq!(last(&[Expr::Limit { rate: 1, unit: 60, burst: 5 }, Expr::Log { prefix: "x" }]), ["nft_log"]);
        // A router without logging or flowtable: conntrack's and NAT's.
        assert_eq!(last(&[Expr::Ct { key: 0 }, Expr::Masq]), ["nft_masq"]);
        assert_eq!(
            last(&[Expr::Ct { key: 0 }, Expr::Masq, Expr::Log { prefix: "x" }, Expr::FlowOffload { table: "t" }]),
            ["nft_log", "nft_masq", "nft_flow_offload"]
        );
        assert_eq!(last(&[Expr::Meta { key: 1 }]), Vec::<&str>::new());
    }
}
