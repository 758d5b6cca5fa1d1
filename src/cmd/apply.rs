//! `nasboot apply`: observe, plan, apply once. Re-applying changes only
//! what differs. A watchdog opened for the apply is closed with the magic
//! close at the end (`run` keeps it instead).

use super::Io;
use crate::apply::{self, Report};
use crate::cli::Cli;
use crate::config::Profile;
use crate::exit::Status;
use crate::plan::{self, Phase};
use crate::seam::Seams;

/// Observe, plan and apply a loaded profile. When the plan creates or
/// removes bridges and VLANs, those steps (and the watchdog's) are applied
/// first, then the board is observed again and the rest planned, so that
/// it works on the new links' real indices and states (and is planned
/// once: the firewall's rule sets are the costly part of a plan).
pub(crate) fn apply_profile(cli: &Cli, p: &Profile, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Report {
    let now = plan::observe(p, seams);
    // A dry run creates nothing, so it goes through one whole plan, whose
    // new links are planned as they will be (index 0: not created yet).
    let head = plan::plan_head(p, &now);
    let (plan, report) = if !cli.dry_run && head.plan.actions.iter().any(|a| a.phase() == Phase::Netdev) {
        let mut report = apply::apply(&head.plan, seams);
        let now = plan::observe_again(p, now, seams);
        let mut again = plan::plan(p, &now);
        super::say_notes(&again.notes, io);
        again.actions.retain(|a| a.phase() > Phase::Netdev);
        apply::apply_more(&again, &mut report, seams);
        let mut plan = head.plan;
        plan.actions.extend(again.actions);
        (plan, report)
    } else {
        let plan = plan::plan_rest(p, &now, head);
        super::say_notes(&plan.notes, io);
        let report = apply::apply(&plan, seams);
        (plan, report)
    };
    for e in &report.errors {
        let _ = writeln!(io.err, "nasboot: {e}");
    }
    if cli.verbosity >= 0 {
        let _ = writeln!(io.out, "applied {} action(s): {}", plan.actions.len(), report.status);
    }
    report
}

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let _lock = super::lock(seams, io);
    // One stat when nothing is pending; a candidate past its deadline is
    // reverted before anything else.
    let pending = match super::confirm::at_start(cli, seams, io) {
        Ok(start) => start,
        Err(status) => return status,
    };
    if let Err(status) = super::confirm::clear_pending(cli, pending, seams, io) {
        return status;
    }
    if let Some(secs) = cli.confirm {
        return super::confirm::apply(cli, secs, seams, io);
    }
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    if let Some(secs) = loaded.profile.board.confirm {
        // `[board] confirm`: every apply is a candidate.
        return super::confirm::apply(cli, secs, seams, io);
    }
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
