//! `nasboot run`: apply, then keep the watchdog in the foreground (for
//! init scripts and procd). In a boot loop (see `watchdog::history`) the
//! safe profile is applied instead.

use super::Io;
use crate::apply::StepError;
use crate::cli::Cli;
use crate::config::watchdog::Watchdog as Config;
use crate::exit::Status;
use crate::seam::Seams;
use crate::watchdog::history;

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    match start(cli, seams, io) {
        Ok((Some(dog), Some(cfg), safe, status)) => crate::watchdog::serve(dog, &cfg, seams, &cli.config, safe).worst(status),
        Ok((None, Some(_), _, status)) => {
            let _ = writeln!(io.err, "nasboot: the watchdog device is held by another process; not petting it");
            status.worst(Status::Failure)
        }
        Ok((_, _, _, status)) | Err(status) => status,
    }
}

type Started = (Option<crate::watchdog::Armed>, Option<Box<Config>>, bool, Status);

/// Load and apply. Out of line so the large profile values live in this
/// frame, gone (and its stack pages released) once the daemon runs.
#[inline(never)]
fn start(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Result<Started, Status> {
    // Held for the apply only: released when this returns, before the
    // watchdog is served (for as long as the board runs).
    let _lock = super::lock(seams, io);
    let loaded = super::load(cli, seams, io)?;
    let history::Prepared { profile, safe } = history::prepare(loaded.profile, seams.files, crate::watchdog::unix_now());
    if safe {
        let _ = writeln!(io.err, "nasboot: boot loop: applying the safe profile (LAN only, no exports)");
    }
    let mut report = super::apply::apply_profile(cli, &profile, seams, io);
    let dog = report.watchdog.take();
    // A failed open was reported with the other errors: no second message.
    // Any other failed step leaves a device held elsewhere (EBUSY) to say.
    let open_failed = report.errors.iter().any(|e| matches!(e, StepError::Watchdog(_)));
    let cfg = if dog.is_none() && open_failed { None } else { profile.watchdog };
    Ok((dog, cfg, safe, report.status))
}
