//! Loading the netfilter modules a batch needs before it goes
//! ([`preload`]; whether one is there at all is `crate::kmod`'s).
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

use crate::kmod::Kmods;
use crate::paths;
use crate::seam::{Cmd, Seams};
use crate::sys::nftnl::Modules;

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
