//! NFS: the export set (/etc/exports) and nfsd knobs.

pub mod client;

use std::fmt;

use crate::apply::StepError;
use crate::config::Profile;
use crate::seam::Seams;

/// One NFS change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    WriteFile { path: String, text: String },
}

impl Action {
    pub fn rendered(&self) -> Option<(String, &str)> {
        match self {
            Action::WriteFile { path, text } => Some((path.clone(), text)),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::WriteFile { path, text } => write!(f, "write {path} ({} bytes)", text.len()),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observed {}

pub fn observe(_p: &Profile, _seams: &mut Seams<'_>) -> Observed {
    Observed {}
}

/// The actions, and notes for the operator.
pub fn plan(_p: &Profile, _now: &Observed) -> (Vec<Action>, Vec<String>) {
    (Vec::new(), Vec::new())
}

pub fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), StepError> {
    match a {
        Action::WriteFile { path, text } => seams
            .files
            .replace(std::path::Path::new(path), text.as_bytes())
            .map(|_| ())
            .map_err(|e| StepError::fatal(path.as_str(), e)),
    }
}
