//! `nasboot run`: apply, then keep the watchdog in the foreground (for
//! init scripts and procd). In a boot loop (see `watchdog::history`) the
//! safe profile is applied instead.

use super::Io;
use crate::cli::Cli;
use crate::exit::Status;
use crate::seam::Seams;
use crate::watchdog::history;

pub fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let profile = history::prepare(&loaded.profile, seams.files, crate::watchdog::unix_now());
    let safe = profile != loaded.profile;
    if safe {
        let _ = writeln!(io.err, "nasboot: boot loop: applying the safe profile (LAN only, no exports)");
    }
    let mut report = super::apply::apply_profile(cli, &profile, seams, io);
    match (report.watchdog.take(), &profile.watchdog) {
        (Some(dog), Some(w)) => crate::watchdog::serve(dog, w, seams, &cli.config, safe).worst(report.status),
        (None, Some(_)) if report.errors.is_empty() => {
            let _ = writeln!(io.err, "nasboot: the watchdog device is held by another process; not petting it");
            report.status.worst(Status::Failure)
        }
        _ => report.status,
    }
}
