//! `nasboot watchdog`: the watchdog manager alone, in the foreground.


use super::Io;
use crate::cli::Cli;
use crate::exit::Status;
use crate::seam::Seams;

pub fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let Some(action) = crate::watchdog::plan(&loaded.profile).into_iter().next() else {
        let _ = writeln!(io.err, "nasboot: {}: the profile has no [watchdog] section", cli.config.display());
        return Status::Usage;
    };
    match crate::watchdog::apply(&action, seams) {
        Ok(Some(dog)) => crate::watchdog::serve(dog, action.interval),
        Ok(None) => {
            let _ = writeln!(io.err, "nasboot: the watchdog device is held by another process");
            Status::Failure
        }
        Err(e) => {
            let _ = writeln!(io.err, "nasboot: {e}");
            Status::Failure
        }
    }
}
