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
use crate::watchdog::{device, history};

pub fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    if loaded.profile.watchdog.is_none() {
        let _ = writeln!(io.err, "nasboot: {}: the profile has no [watchdog] section", cli.config.display());
        return Status::Usage;
    }
    let profile = history::prepare(&loaded.profile, seams.files, crate::watchdog::unix_now());
    let safe = profile != loaded.profile;
    let cfg = *profile.watchdog.clone().expect("checked above");
    let opened = match std::env::var("WDTFD") {
        Ok(v) => match v.trim().parse::<i32>() {
            Ok(fd) if fd >= 0 => device::adopt(seams.watchdog, fd),
            _ => {
                let _ = writeln!(io.err, "nasboot: WDTFD={v:?} is not a file descriptor number");
                return Status::Usage;
            }
        },
        Err(_) => device::open(seams.watchdog, cfg.device.as_ref().map(|d| d.as_path())),
    };
    let dog = match opened.and_then(|d| crate::watchdog::setup(d, cfg.timeout.0, seams)) {
        Ok(d) => d,
        Err(e) => {
            let _ = writeln!(io.err, "nasboot: {e}");
            return Status::Failure;
        }
    };
    let _ = writeln!(io.err, "nasboot: watchdog {}: {}", dog.path.display(), dog.info);
    crate::watchdog::serve(dog, &cfg, seams, Path::new(&cli.config), safe)
}
