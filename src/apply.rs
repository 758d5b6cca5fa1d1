//! Carrying out a plan through the seams, in order, petting the watchdog
//! between steps. A step that fails is reported with its subject (the
//! interface and knob, the file, the tool) and the rest carries on; the
//! firewall module installs its own fallback when its rule set fails.

use crate::exit::{ExitStatus, Status};
use crate::plan::{Action, Plan};
use crate::seam::Seams;
pub(crate) use crate::step::StepError;
use crate::{firewall, net, share, storage, sysctl, watchdog};

/// What an apply did.
pub(crate) struct Report {
    pub status: Status,
    pub errors: Vec<StepError>,
    /// The watchdog, if the plan opened one; still armed.
    pub watchdog: Option<watchdog::Armed>,
}

/// Apply every action in order.
pub(crate) fn apply(plan: &Plan, seams: &mut Seams<'_>) -> Report {
    let mut report = Report { status: Status::Ok, errors: Vec::new(), watchdog: None };
    apply_more(plan, &mut report, seams);
    report
}

/// Apply every action in order, adding to `report` (and petting the
/// watchdog it holds).
pub(crate) fn apply_more(plan: &Plan, report: &mut Report, seams: &mut Seams<'_>) {
    for action in &plan.actions {
        if let Some(dog) = report.watchdog.as_mut() {
            dog.pet();
        }
        log::info!("{}: {}", action.phase(), action);
        let result = match action {
            Action::Watchdog(a) => match watchdog::apply(a, seams) {
                Ok(armed) => {
                    report.watchdog = armed;
                    Ok(())
                }
                Err(e) => Err(e),
            },
            Action::Sysctl(a) => sysctl::apply(a, seams),
            Action::Firewall(a) => firewall::apply(a, seams),
            Action::Net(a) => net::apply(a, seams),
            Action::Storage(a) => storage::apply(a, seams),
            Action::Nfs(a) => share::apply(a, seams),
        };
        if let Err(e) = result {
            // Shown once, by the caller's summary (cmd::apply); inline only at -vv.
            log::debug!("failed: {e}");
            report.status = report.status.worst(e.exit_status());
            report.errors.push(e);
        }
    }
    if let Some(dog) = report.watchdog.as_mut() {
        dog.pet();
    }
}
