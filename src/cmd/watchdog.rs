//! `nasboot watchdog`: the watchdog manager alone, in the foreground.
//!
//! Opens the profile's device (default /dev/watchdog0, then
//! /dev/watchdog), or adopts the descriptor named by `WDTFD` when a
//! previous holder handed it over. Exit status: 0 after an orderly stop
//! (SIGTERM/SIGINT, magic close written); 1 when the device is missing,
//! busy (the holder is named), not a watchdog, or when it stopped after
//! giving up on a failed health check; 2 for a bad profile, a profile
//! without `[watchdog]` or a bad `WDTFD`.

use std::path::Path;

use super::Io;
use crate::cli::Cli;
use crate::config::watchdog::Watchdog as Config;
use crate::exit::{ExitStatus, Status};
use crate::seam::Seams;
use crate::watchdog::{device, history, Device};

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    match start(cli, seams, io) {
        Ok((dog, cfg, safe)) => crate::watchdog::serve(dog, &cfg, seams, Path::new(&cli.config), safe),
        Err(status) => status,
    }
}

/// Load the profile and open the device. Kept out of line so the large
/// profile values live in this frame, which is gone (and its stack pages
/// released) once the daemon runs.
#[inline(never)]
fn start(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Result<(Device, Box<Config>, bool), Status> {
    let loaded = super::load(cli, seams, io)?;
    if loaded.profile.watchdog.is_none() {
        let _ = writeln!(io.err, "nasboot: {}: the profile has no [watchdog] section", cli.config.display());
        return Err(Status::Usage);
    }
    let history::Prepared { profile, safe } = history::prepare(loaded.profile, seams.files, crate::watchdog::unix_now());
    if safe {
        let _ = writeln!(io.err, "nasboot: boot loop: the safe profile is in force (watchdog without health checks)");
    }
    let cfg = profile.watchdog.clone().expect("checked above");
    let opened = match std::env::var("WDTFD") {
        Ok(v) => {
            let fd = device::wdtfd(&v).map_err(|e| {
                let _ = writeln!(io.err, "nasboot: {e}");
                e.exit_status()
            })?;
            let adopted = device::adopt(seams.watchdog, fd);
            if adopted.is_ok() {
                // Consumed, as procd's watchdog.c unsets it: the commands
                // this process runs (repairs, the next hand-over) must not
                // see a number that is no longer theirs.
                std::env::remove_var("WDTFD");
            }
            adopted
        }
        Err(_) => device::open(seams.watchdog, cfg.device.as_ref().map(|d| d.as_path())),
    };
    match opened.and_then(|d| crate::watchdog::setup(d, cfg.timeout.0, seams)) {
        Ok(dog) => {
            let _ = writeln!(io.err, "nasboot: watchdog {}: {}", dog.path.display(), dog.info);
            Ok((dog, cfg, safe))
        }
        Err(e) => {
            let _ = writeln!(io.err, "nasboot: {e}");
            Err(e.exit_status())
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cmd::tests::run_on;
    use crate::exit::Status;
    use crate::seam::fake::FakeBoard;

    const PROFILE: &[u8] = b"[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n[watchdog]\ntimeout = 8\nboot_loop_resets = 2\n";

    fn board() -> FakeBoard {
        let mut b = FakeBoard::new();
        b.files.files.insert("/etc/nasboot.toml".into(), PROFILE.to_vec());
        b.files.files.insert("/proc/sys/kernel/random/boot_id".into(), b"0123abcd-0000\n".to_vec());
        b.watchdog.devices.insert("/dev/watchdog0".into());
        b
    }

    #[test]
    fn busy_device_exits_1_naming_the_holder() {
        let mut b = board();
        b.watchdog.busy = Some((812, "watchdog".into()));
        let (status, _, err) = run_on(&mut b, &["watchdog"]);
        assert_eq!(status, Status::Failure);
        assert!(err.contains("/dev/watchdog0: busy: process 812 (watchdog) holds it open"), "{err}");
    }

    #[test]
    fn not_a_watchdog_is_refused_without_writing() {
        let mut b = board();
        b.watchdog.driver.borrow_mut().ioctl_errno = Some(nix::libc::ENOTTY);
        let (status, _, err) = run_on(&mut b, &["watchdog"]);
        assert_eq!(status, Status::Failure);
        assert!(err.contains("not a watchdog device"), "{err}");
        assert_eq!(b.effects(), ["replace /var/lib/nasboot/resets", "open /dev/watchdog0", "close /dev/watchdog0"]);
    }

    #[test]
    fn no_watchdog_section_exits_2() {
        let mut b = board();
        b.files.files.insert("/etc/nasboot.toml".into(), b"[board]\nname = \"t\"\n".to_vec());
        let (status, _, err) = run_on(&mut b, &["watchdog"]);
        assert_eq!(status, Status::Usage);
        assert!(err.contains("the profile has no [watchdog] section"), "{err}");
        assert!(b.effects().is_empty());
    }

    #[test]
    fn apply_arms_pets_and_magic_closes() {
        let mut b = board();
        let (status, _, err) = run_on(&mut b, &["apply"]);
        assert_eq!(status, Status::Ok, "{err}");
        let eff = b.effects();
        let dog: Vec<&str> = eff.iter().map(String::as_str).filter(|e| e.contains("watchdog0")).collect();
        assert_eq!(dog[..4], ["open /dev/watchdog0", "write /dev/watchdog0 \"\\0\"", "settimeout /dev/watchdog0 8", "pet /dev/watchdog0"]);
        assert_eq!(dog[dog.len() - 3..], ["write /dev/watchdog0 \"V\"", "setoptions /dev/watchdog0 1", "close /dev/watchdog0"]);
        assert!(b.watchdog.driver.borrow().stopped);
    }

    #[test]
    fn run_in_a_boot_loop_applies_the_safe_profile() {
        let mut b = board();
        b.files.files.insert(
            crate::paths::RESET_HISTORY.into(),
            format!("aaaa {0} unknown unclean\nbbbb {0} unknown running\n", crate::watchdog::unix_now()).into_bytes(),
        );
        b.watchdog.busy = Some((1, "init".into()));
        let (status, _, err) = run_on(&mut b, &["run"]);
        assert!(err.contains("boot loop: applying the safe profile"), "{err}");
        assert_eq!(status, Status::Failure, "busy device: {err}");
    }
}
