//! The running kernel's netfilter modules: whether one is there
//! ([`Installed`], for a router's flowtable and NAT), and loading the ones
//! a batch needs before it goes ([`preload`]).
//!
//! Where nf_tables and its expressions are modules (Debian's and
//! OpenWrt's kernels), the first batch after power-on makes the kernel
//! load them one at a time: for each expression it has not met, a
//! modprobe process for the family-specific alias (which finds nothing
//! for most), a second for the plain one, and the batch replayed after
//! each. On the emulated 24K board that was 142 processes and 17.1 s of
//! guest time for the router's first `firewall apply`, where with one
//! modprobe of the same modules first it is 7 processes and 7.6 s; for
//! the stateless profile 21 and 4.1 s against 7 and 3.1 s (the module
//! loads themselves are the kernel's work, and stay; scripts/README.md,
//! "Loading the firewall", on a cold kernel). So nasboot names the
//! modules itself, in one process. The kernel's interface for loading a module
//! (`finit_module`) leaves the dependencies, options and blacklists of
//! modprobe.d to user space, and the kernel itself runs modprobe for
//! them: nasboot runs the one the kernel would (`kernel.modprobe`). The
//! tool paths (`nft -f`, iptables-restore) leave the modules to the
//! kernel's requests, as those tools do.

use std::path::Path;
use std::time::Duration;

use crate::paths;
use crate::seam::{Cmd, Seams};
use crate::sys::nftnl::Modules;

/// The running kernel's modules, asked for a router's netfilter modules:
/// its /lib/modules directory and modules.builtin, read once, and only
/// for a module that is not loaded (on a board whose rule set is in
/// force, every one is: /sys/module answers).
pub(crate) struct Installed<'r> {
    release: Option<&'r str>,
    /// The /lib/modules directory for this kernel (None: there is none)
    /// and its modules.builtin, once read.
    lists: Option<(Option<String>, String)>,
}

impl<'r> Installed<'r> {
    pub(crate) fn new(release: Option<&'r str>) -> Self {
        Installed { release, lists: None }
    }

    fn lists(&mut self, seams: &mut Seams<'_>) -> &(Option<String>, String) {
        let release = self.release;
        self.lists.get_or_insert_with(|| {
            let dir = release.map(|r| format!("{}/{}", paths::LIB_MODULES, r.trim())).filter(|d| seams.files.exists(Path::new(d)));
            let builtin = dir.as_ref().and_then(|d| seams.files.read(Path::new(&format!("{d}/modules.builtin"))).ok()).unwrap_or_default();
            (dir, String::from_utf8_lossy(&builtin).into_owned())
        })
    }

    /// Whether `name` is built into the kernel, per modules.builtin.
    fn builtin(&mut self, seams: &mut Seams<'_>, name: &str) -> bool {
        let ko = format!("/{name}.ko");
        self.lists(seams).1.lines().any(|l| l.ends_with(&ko))
    }

    /// Whether netfilter module `name` is there: loaded, or built in with
    /// a /sys/module entry; built in per modules.builtin; or a module file
    /// where Debian (kernel/net/netfilter/) or OpenWrt (flat) installs it.
    /// None when there is no /lib/modules directory to ask.
    pub(crate) fn has(&mut self, seams: &mut Seams<'_>, name: &str) -> Option<bool> {
        if loaded(seams, name) || self.builtin(seams, name) {
            return Some(true);
        }
        let dir = self.lists(seams).0.as_ref()?;
        let ko = format!("/{name}.ko");
        let files = [format!("{dir}/kernel/net/netfilter{ko}"), format!("{dir}{ko}")];
        Some(files.iter().any(|f| ["", ".xz", ".zst", ".gz"].iter().any(|z| seams.files.exists(Path::new(&format!("{f}{z}"))))))
    }
}

/// A module loaded (or built in with a /sys/module entry).
fn loaded(seams: &mut Seams<'_>, name: &str) -> bool {
    seams.files.exists(Path::new(&format!("{}/{name}", paths::SYS_MODULE)))
}

/// How long the one modprobe may take: the router's modules took some 9 s
/// of guest time on the emulated 24K.
const MODPROBE_TIMEOUT: Duration = Duration::from_secs(120);

/// Load the modules `needed` with one modprobe (`kernel.modprobe -a -q
/// --`) before the batch that needs them goes, unless the last of each
/// kind it needs is loaded ([`Modules::last_of_each_kind`]: one to three
/// `stat`s of /sys/module, all a warm kernel costs; a build that read
/// /proc/modules instead loaded 7 to 17 ms slower on the emulated 24K).
/// A kernel whose netfilter is built in but that has modules pays the
/// module loader's setting and modules.builtin too, and runs nothing.
/// Best effort: whatever it leaves missing, the kernel loads itself as
/// the batch asks (or refuses the batch, which names what is missing), so
/// its failure is logged, never returned.
pub(crate) fn preload(needed: Modules, seams: &mut Seams<'_>) {
    if needed.last_of_each_kind().all(|n| loaded(seams, n)) {
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
    let mut installed = Installed::new(release.as_deref());
    let names: Vec<&'static str> = needed.names().filter(|n| !installed.builtin(seams, n)).collect();
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
