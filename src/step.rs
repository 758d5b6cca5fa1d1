//! A step of an apply that failed: what it was about and how bad it is.
//! Below every subsystem (they all return it; `apply` collects them); it
//! imports only the exit statuses.

use std::fmt;

use crate::exit::{ExitStatus, Status};

/// How bad a failed step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Severity {
    /// A knob did not take; the boot carries on (exit 3).
    Partial,
    /// The step could not be done at all (exit 1).
    Fatal,
}

/// A step that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StepError {
    /// What it was about: "eth0 mtu", "/etc/exports", "nft".
    pub subject: String,
    pub message: String,
    pub severity: Severity,
}

impl StepError {
    pub(crate) fn partial(subject: impl Into<String>, message: impl fmt::Display) -> StepError {
        StepError { subject: subject.into(), message: message.to_string(), severity: Severity::Partial }
    }
    pub(crate) fn fatal(subject: impl Into<String>, message: impl fmt::Display) -> StepError {
        StepError { subject: subject.into(), message: message.to_string(), severity: Severity::Fatal }
    }
}

impl fmt::Display for StepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.subject, self.message)
    }
}

impl std::error::Error for StepError {}

impl ExitStatus for StepError {
    /// Partial: 3, the rest of the boot carried on; fatal: 1.
    fn exit_status(&self) -> Status {
        match self.severity {
            Severity::Partial => Status::Partial,
            Severity::Fatal => Status::Failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_steps_exit_3_fatal_ones_1() {
        assert_eq!(StepError::partial("eth0 mtu", "EINVAL").exit_status().code(), 3);
        assert_eq!(StepError::fatal("nft", "exit status 1").exit_status().code(), 1);
    }
}
