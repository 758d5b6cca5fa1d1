//! `nasboot run`: apply, then keep the watchdog in the foreground (for
//! init scripts and procd).

use super::Io;
use crate::cli::Cli;
use crate::exit::Status;
use crate::seam::Seams;

pub fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let mut report = super::apply::apply_profile(cli, &loaded.profile, seams, io);
    match (report.watchdog.take(), &loaded.profile.watchdog) {
        (Some(dog), Some(w)) => {
            let interval = crate::watchdog::interval(w.timeout.0, w.interval.map(|i| i.0));
            crate::watchdog::serve(dog, interval).worst(report.status)
        }
        _ => report.status,
    }
}
