//! `nasboot run`: apply, then keep the watchdog in the foreground (for
//! procd and systemd), or with `--background` in a child once the apply is
//! in force (for init scripts: see `background`). In a boot loop (see
//! `watchdog::history`) the safe profile is applied instead.

use super::background::{self, Pidfile, Side};
use super::Io;
use crate::apply::StepError;
use crate::cli::Cli;
use crate::config::watchdog::Watchdog as Config;
use crate::exit::Status;
use crate::seam::Seams;
use crate::watchdog::history;

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    match start(cli, seams, io) {
        Ok((Some(dog), Some(cfg), safe, status)) => {
            if cli.background {
                match go_to_background(cli, io) {
                    // The parent's copy of the device closes without the
                    // magic close: the child's keeps the watchdog armed.
                    Ok(Some(parent)) => return status.worst(parent),
                    Ok(None) => {}
                    Err(e) => {
                        let _ = writeln!(io.err, "nasboot: cannot go on in the background: {e}; the watchdog is closed");
                        let _ = dog.close();
                        return status.worst(Status::Failure);
                    }
                }
            }
            crate::watchdog::serve(dog, &cfg, seams, &cli.config, safe).worst(status)
        }
        Ok((None, Some(_), _, status)) => {
            let _ = writeln!(io.err, "nasboot: the watchdog device is held by another process; not petting it");
            status.worst(Status::Failure)
        }
        Ok((_, _, _, status)) | Err(status) => status,
    }
}

/// The fork of `--background`: None in the child (the daemon goes on),
/// the parent's own status to return otherwise. An error: nothing was
/// forked.
fn go_to_background(cli: &Cli, io: &mut Io<'_>) -> std::io::Result<Option<Status>> {
    let pidfile = match &cli.pidfile {
        Some(p) => Some(Pidfile::create(p).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))?),
        None => None,
    };
    // Nothing held in a buffer may be written twice, once by each side.
    let _ = io.out.flush();
    let _ = io.err.flush();
    match background::detach(pidfile, cli.log.as_deref())? {
        Side::Child => Ok(None),
        Side::Parent { pid, pidfile: Ok(()) } => {
            if cli.verbosity > 0 {
                let _ = writeln!(io.err, "nasboot: the watchdog daemon goes on as pid {pid}");
            }
            Ok(Some(Status::Ok))
        }
        Side::Parent { pid, pidfile: Err(e) } => {
            let p = cli.pidfile.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
            let _ = writeln!(io.err, "nasboot: {p}: the daemon's pid {pid} was not written: {e}; it runs all the same");
            Ok(Some(Status::Failure))
        }
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
    // A candidate past its deadline, or from before a reset, is reverted
    // first (one stat when none is pending): the boot never brings up an
    // unconfirmed candidate. An unusable journal: the safe profile.
    let unusable = matches!(super::confirm::at_start(cli, seams, io), Err(Status::Usage));
    let loaded = super::load(cli, seams, io)?;
    let loaded = if unusable {
        let _ = writeln!(
            io.err,
            "nasboot: the confirm journal could not be used: coming up in the safe profile (LAN-only firewall, no exports)"
        );
        crate::config::Loaded { profile: history::safe_profile(loaded.profile), ..loaded }
    } else {
        loaded
    };
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
