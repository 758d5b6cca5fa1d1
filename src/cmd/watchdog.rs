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
use crate::exit::Status;
use crate::seam::Seams;
use crate::config::watchdog::Watchdog as Config;
use crate::watchdog::{device, history, LinuxWatchdog};

pub fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    match start(cli, seams, io) {
        Ok((dog, cfg, safe)) => crate::watchdog::serve(dog, &cfg, seams, Path::new(&cli.config), safe),
        Err(status) => status,
    }
}

/// Load the profile and open the device. Kept out of line so the large
/// profile values live in this frame, which is gone (and its stack pages
/// released) once the daemon runs.
#[inline(never)]
fn start(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Result<(LinuxWatchdog, Box<Config>, bool), Status> {
    let loaded = super::load(cli, seams, io)?;
    if loaded.profile.watchdog.is_none() {
        let _ = writeln!(io.err, "nasboot: {}: the profile has no [watchdog] section", cli.config.display());
        return Err(Status::Usage);
    }
    let profile = history::prepare(&loaded.profile, seams.files, crate::watchdog::unix_now());
    let safe = profile != loaded.profile;
    let cfg = profile.watchdog.clone().expect("checked above");
    let opened = match std::env::var("WDTFD") {
        Ok(v) => match v.trim().parse::<i32>() {
            Ok(fd) if fd >= 0 => device::adopt(seams.watchdog, fd),
            _ => {
                let _ = writeln!(io.err, "nasboot: WDTFD={v:?} is not a file descriptor number");
                return Err(Status::Usage);
            }
        },
        Err(_) => device::open(seams.watchdog, cfg.device.as_ref().map(|d| d.as_path())),
    };
    match opened.and_then(|d| crate::watchdog::setup(d, cfg.timeout.0, seams)) {
        Ok(dog) => {
            let _ = writeln!(io.err, "nasboot: watchdog {}: {}", dog.path.display(), dog.info);
            Ok((dog, cfg, safe))
        }
        Err(e) => {
            let _ = writeln!(io.err, "nasboot: {e}");
            Err(Status::Failure)
        }
    }
}
