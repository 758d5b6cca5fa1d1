//! `nasboot apply`: observe, plan, apply once. Re-applying changes only
//! what differs. A watchdog opened for the apply is closed with the magic
//! close at the end (`run` keeps it instead).

use super::Io;
use crate::apply::{self, Report};
use crate::cli::Cli;
use crate::config::Profile;
use crate::exit::Status;
use crate::plan;
use crate::seam::Seams;

/// Observe, plan and apply a loaded profile.
pub(crate) fn apply_profile(cli: &Cli, p: &Profile, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Report {
    let now = plan::observe(p, seams);
    let plan = plan::plan(p, &now);
    for n in &plan.notes {
        let _ = writeln!(io.err, "nasboot: note: {n}");
    }
    let report = apply::apply(&plan, seams);
    for e in &report.errors {
        let _ = writeln!(io.err, "nasboot: {e}");
    }
    if cli.verbosity >= 0 {
        let _ = writeln!(io.out, "applied {} action(s): {}", plan.actions.len(), report.status);
    }
    report
}

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let profile = crate::watchdog::history::prepare(loaded.profile, seams.files, crate::watchdog::unix_now()).profile;
    let mut report = apply_profile(cli, &profile, seams, io);
    if let Some(dog) = report.watchdog.take() {
        let path = dog.path.clone();
        if let Err(e) = dog.close() {
            let _ = writeln!(io.err, "nasboot: {}: magic close failed: {e}", path.display());
            return report.status.worst(Status::Failure);
        }
    }
    report.status
}
