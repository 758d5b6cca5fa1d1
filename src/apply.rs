//! Carrying out a plan through the seams, in order, petting the watchdog
//! between steps. A step that fails is reported with its subject (the
//! interface and knob, the file, the tool) and the rest carries on; the
//! firewall module installs its own fallback when its rule set fails.

use std::fmt;

use crate::exit::{ExitStatus, Status};
use crate::plan::{Action, Plan};
use crate::seam::Seams;
use crate::{firewall, net, share, storage, sysctl, watchdog};

/// A step that failed: each subsystem's own error, wrapped so that one
/// report holds them all. Display, `source()` and the exit status are the
/// subsystem's: this adds no text and no level of its own. The caller
/// (`cmd::apply`) shows each once, "SUBJECT: MESSAGE".
#[derive(Debug)]
pub(crate) enum StepError {
    Watchdog(watchdog::Error),
    Sysctl(sysctl::Error),
    Firewall(firewall::Error),
    Net(net::Error),
    Storage(storage::Error),
    Share(share::Error),
}

impl StepError {
    fn inner(&self) -> &(dyn std::error::Error + 'static) {
        match self {
            StepError::Watchdog(e) => e,
            StepError::Sysctl(e) => e,
            StepError::Firewall(e) => e,
            StepError::Net(e) => e,
            StepError::Storage(e) => e,
            StepError::Share(e) => e,
        }
    }
}

impl fmt::Display for StepError {
    /// A match, not `self.inner()`: through `&dyn Error` every error
    /// type's vtable, Debug included, stays in the binary (`scripts/build`
    /// prints its size).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepError::Watchdog(e) => e.fmt(f),
            StepError::Sysctl(e) => e.fmt(f),
            StepError::Firewall(e) => e.fmt(f),
            StepError::Net(e) => e.fmt(f),
            StepError::Storage(e) => e.fmt(f),
            StepError::Share(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for StepError {
    /// The subsystem error's own source.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner().source()
    }
}

impl ExitStatus for StepError {
    fn exit_status(&self) -> Status {
        match self {
            StepError::Watchdog(e) => e.exit_status(),
            StepError::Sysctl(e) => e.exit_status(),
            StepError::Firewall(e) => e.exit_status(),
            StepError::Net(e) => e.exit_status(),
            StepError::Storage(e) => e.exit_status(),
            StepError::Share(e) => e.exit_status(),
        }
    }
}

macro_rules! from {
    ($($variant:ident($t:ty)),*) => {$(
        impl From<$t> for StepError {
            fn from(e: $t) -> StepError {
                StepError::$variant(e)
            }
        }
    )*};
}

from!(
    Watchdog(watchdog::Error),
    Sysctl(sysctl::Error),
    Firewall(firewall::Error),
    Net(net::Error),
    Storage(storage::Error),
    Share(share::Error)
);

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
        let result: Result<(), StepError> = match action {
            Action::Watchdog(a) => match watchdog::apply(a, seams) {
                Ok(armed) => {
                    report.watchdog = armed;
                    Ok(())
                }
                Err(e) => Err(e.into()),
            },
            Action::Sysctl(a) => sysctl::apply(a, seams).map_err(Into::into),
            Action::Firewall(a) => firewall::apply(a, seams).map_err(Into::into),
            Action::Net(a) => net::apply(a, seams).map_err(Into::into),
            Action::Storage(a) => storage::apply(a, seams).map_err(Into::into),
            Action::Nfs(a) => share::apply(a, seams).map_err(Into::into),
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

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    #[test]
    fn a_step_error_shows_and_exits_as_its_subsystem_error() {
        let e: StepError =
            storage::Error::ReadAhead { device: "sda".into(), source: io::Error::from_raw_os_error(nix::libc::EINVAL) }.into();
        assert!(matches!(e, StepError::Storage(storage::Error::ReadAhead { .. })));
        assert_eq!(e.to_string(), format!("sda read_ahead_kb: {}", io::Error::from_raw_os_error(nix::libc::EINVAL)));
        assert_eq!(e.exit_status().code(), 3);
        let cause = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<io::Error>()).and_then(io::Error::raw_os_error);
        assert_eq!(cause, Some(nix::libc::EINVAL));
        let e: StepError = firewall::Error::NotWaiting.into();
        assert_eq!(e.exit_status().code(), 1);
    }
}
