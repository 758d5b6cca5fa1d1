//! The firewall: one model, two backends (nftables, iptables-restore).

use std::fmt;

use crate::apply::StepError;
use crate::config::Profile;
use crate::seam::Seams;

/// Load a rule set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Load { backend: &'static str, text: String },
}

impl Action {
    pub fn rendered(&self) -> Option<(String, &str)> {
        match self {
            Action::Load { backend, text } => Some((format!("{backend} rule set"), text)),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Load { backend, text } => write!(f, "load the {backend} rule set ({} lines)", text.lines().count()),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {}

pub fn observe(_p: &Profile, _seams: &mut Seams<'_>) -> Observed {
    Observed {}
}

pub fn plan(_p: &Profile, _now: &Observed) -> Vec<Action> {
    Vec::new()
}

pub fn apply(a: &Action, _seams: &mut Seams<'_>) -> Result<(), StepError> {
    match a {
        Action::Load { backend, .. } => Err(StepError::fatal(*backend, "not implemented yet")),
    }
}
