//! The running kernel's modules, as far as the board tells: whether one is
//! there (loaded, built in, or a file modprobe can load). Asked by the
//! firewall (a router's flowtable and NAT, and which of a batch's modules
//! are built in) and by SQM (its qdiscs and the download's redirect).
//!
//! The kernel itself answers only for a loaded module, or a built-in one
//! with parameters (/sys/module); for the rest the board's module tree
//! answers (/lib/modules/RELEASE): a module file where Debian and
//! Buildroot install it (kernel/SUBDIR, plain or compressed) or where
//! OpenWrt does (the directory itself, flat); else modules.builtin and
//! modules.dep, read only then, and once (Debian's modules.dep lists
//! every module of the kernel, a cost at boot on a slow board).

use std::path::Path;

use crate::paths;
use crate::seam::Seams;

/// Whether the kernel has a module, as far as the board tells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Has {
    Yes,
    No,
    /// No module list to ask (no /lib/modules for this kernel, or no
    /// modules.builtin in it): a built-in module without parameters shows
    /// nowhere else, so its absence proves nothing. Tried, and the
    /// kernel's answer reported.
    #[default]
    Unknown,
}

impl Has {
    /// Some(true) or Some(false) where the board tells, else None.
    pub(crate) fn known(self) -> Option<bool> {
        match self {
            Has::Yes => Some(true),
            Has::No => Some(false),
            Has::Unknown => None,
        }
    }
}

/// Where a kind of module sits under /lib/modules/RELEASE/kernel.
pub(crate) const NETFILTER: &str = "net/netfilter";
pub(crate) const SCHED: &str = "net/sched";
pub(crate) const NET_DRIVERS: &str = "drivers/net";

/// The running kernel's module tree, its lists read at most once.
pub(crate) struct Kmods {
    /// /lib/modules/RELEASE (None: the release is not known).
    dir: Option<String>,
    /// Whether that directory is there, once asked (the built big-endian
    /// boards have none: one `stat`, not ten, says so).
    there: Option<bool>,
    /// modules.builtin (None: not readable), once read.
    builtin: Option<Option<Vec<u8>>>,
    /// modules.dep, once read (empty: not readable).
    dep: Option<Vec<u8>>,
}

impl Kmods {
    /// `release`: the kernel's (`kernel.osrelease`), if known.
    pub(crate) fn new(release: Option<&str>) -> Self {
        let dir = release.map(str::trim).filter(|r| !r.is_empty()).map(|r| format!("{}/{r}", paths::LIB_MODULES));
        Kmods { dir, there: None, builtin: None, dep: None }
    }

    /// A module loaded, or built in with parameters (/sys/module): one
    /// `stat`, and no module tree.
    pub(crate) fn loaded(seams: &mut Seams<'_>, name: &str) -> bool {
        seams.files.exists(Path::new(&format!("{}/{name}", paths::SYS_MODULE)))
    }

    /// Whether modules.builtin names `name` (false where it cannot be read).
    pub(crate) fn builtin(&mut self, seams: &mut Seams<'_>, name: &str) -> bool {
        let dir = &self.dir;
        let list = self
            .builtin
            .get_or_insert_with(|| dir.as_ref().and_then(|d| seams.files.read(Path::new(&format!("{d}/modules.builtin"))).ok()));
        list.as_deref().is_some_and(|l| names(l, name))
    }

    /// Whether the kernel has module `name`, which a distribution installs
    /// under kernel/`subdir` ([`NETFILTER`], [`SCHED`], [`NET_DRIVERS`]).
    pub(crate) fn has(&mut self, seams: &mut Seams<'_>, name: &str, subdir: &str) -> Has {
        if Self::loaded(seams, name) {
            return Has::Yes;
        }
        let Some(dir) = self.dir.clone() else { return Has::Unknown };
        if !*self.there.get_or_insert_with(|| seams.files.exists(Path::new(&dir))) {
            return Has::Unknown;
        }
        let files = [format!("{dir}/kernel/{subdir}/{name}.ko"), format!("{dir}/{name}.ko")];
        if files.iter().any(|f| ["", ".xz", ".zst", ".gz"].iter().any(|z| seams.files.exists(Path::new(&format!("{f}{z}"))))) {
            return Has::Yes;
        }
        if self.builtin(seams, name) {
            return Has::Yes;
        }
        let dep = self.dep.get_or_insert_with(|| seams.files.read(Path::new(&format!("{dir}/modules.dep"))).unwrap_or_default());
        if names(dep, name) {
            Has::Yes
        } else if matches!(self.builtin, Some(Some(_))) {
            Has::No
        } else {
            Has::Unknown
        }
    }
}

/// Whether a module list (modules.builtin, modules.dep: paths, plain or
/// compressed) names module `name`.
fn names(list: &[u8], name: &str) -> bool {
    let needle = format!("/{name}.ko");
    list.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seam::fake::FakeBoard;

    const DIR: &str = "/lib/modules/6.1.0-50-4kc-malta";

    fn board(files: &[(&str, &[u8])]) -> FakeBoard {
        let mut b = FakeBoard::new();
        for (f, text) in files {
            b.files.files.insert(f.into(), text.to_vec());
        }
        b
    }

    #[test]
    fn the_kernel_answers_for_a_loaded_module_and_the_tree_for_the_rest() {
        let mut b = board(&[
            ("/sys/module/nf_nat", b""),
            (&format!("{DIR}/kernel/net/netfilter/nft_flow_offload.ko.xz"), b""),
            (&format!("{DIR}/sch_cake.ko"), b""),
            (&format!("{DIR}/modules.builtin"), b"kernel/net/sched/sch_fq_codel.ko\n"),
            (&format!("{DIR}/modules.dep"), b"kernel/net/ipv4/netfilter/nf_nat_ipv4.ko.zst: kernel/net/netfilter/nf_nat.ko.zst\n"),
        ]);
        let mut k = Kmods::new(Some("6.1.0-50-4kc-malta\n"));
        let s = &mut b.seams();
        assert_eq!(k.has(s, "nf_nat", NETFILTER), Has::Yes, "loaded");
        assert_eq!(k.has(s, "nft_flow_offload", NETFILTER), Has::Yes, "Debian's compressed file");
        assert_eq!(k.has(s, "sch_cake", SCHED), Has::Yes, "OpenWrt's flat directory");
        assert_eq!(k.has(s, "sch_fq_codel", SCHED), Has::Yes, "built in");
        assert_eq!(k.has(s, "nf_nat_ipv4", NETFILTER), Has::Yes, "in modules.dep only");
        assert_eq!(k.has(s, "sch_htb", SCHED), Has::No, "modules.builtin read, and nowhere");
        assert!(k.builtin(s, "sch_fq_codel") && !k.builtin(s, "sch_cake"));
        // A name inside a longer one is not it.
        assert_eq!(k.has(s, "nat", NETFILTER), Has::No);
        assert_eq!(Has::No.known(), Some(false));
    }

    #[test]
    fn without_modules_builtin_an_absent_module_is_unknown_and_the_lists_are_read_once() {
        let dep = format!("{DIR}/modules.dep");
        let mut b = board(&[(&dep, b"kernel/net/sched/sch_htb.ko:\n")]);
        let mut k = Kmods::new(Some("6.1.0-50-4kc-malta"));
        assert_eq!(k.has(&mut b.seams(), "sch_cake", SCHED), Has::Unknown);
        assert_eq!(k.has(&mut b.seams(), "sch_htb", SCHED), Has::Yes);
        assert!(!k.builtin(&mut b.seams(), "sch_htb"));
        assert_eq!(Has::Unknown.known(), None);
        // The lists as first read: a module added since is not seen.
        b.files.files.insert(dep.into(), b"kernel/net/sched/sch_cake.ko:\n".to_vec());
        b.files.files.insert(format!("{DIR}/modules.builtin").into(), b"kernel/net/sched/sch_cake.ko\n".to_vec());
        assert_eq!(k.has(&mut b.seams(), "sch_cake", SCHED), Has::Unknown);
        assert_eq!(Kmods::new(Some("6.1.0-50-4kc-malta")).has(&mut b.seams(), "sch_cake", SCHED), Has::Yes);
        // No directory for this kernel, or no release known: nothing to
        // ask but /sys/module.
        assert_eq!(Kmods::new(Some("6.1.0-51-4kc-malta")).has(&mut b.seams(), "sch_cake", SCHED), Has::Unknown);
        b.files.files.retain(|f, _| !f.starts_with(DIR));
        assert_eq!(Kmods::new(Some("6.1.0-50-4kc-malta")).has(&mut b.seams(), "sch_cake", SCHED), Has::Unknown);
        assert_eq!(Kmods::new(None).has(&mut b.seams(), "sch_cake", SCHED), Has::Unknown);
        assert_eq!(Kmods::new(Some(" \n")).dir, None);
    }
}
