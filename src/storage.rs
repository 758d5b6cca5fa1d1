//! Block devices: /sys/block/DEV/queue/read_ahead_kb. Read-ahead is the
//! "prefetch" that nearly doubled a small NAS's share reads (seed 002).

use std::fmt;
use std::path::PathBuf;

use crate::config::Profile;
use crate::paths;
use crate::seam::Seams;
use crate::step::StepError;

/// Set a device's read-ahead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    pub device: String,
    pub read_ahead_kb: u32,
    pub from: Option<u32>,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} read_ahead_kb = {}", self.device, self.read_ahead_kb)?;
        if let Some(old) = self.from {
            write!(f, " (now {old})")?;
        }
        Ok(())
    }
}

fn knob(device: &str) -> PathBuf {
    PathBuf::from(format!("{}/{}/queue/read_ahead_kb", paths::SYS_BLOCK, device))
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub read_ahead_kb: Vec<(String, Option<u32>)>,
}

pub(crate) fn observe(p: &Profile, seams: &mut Seams<'_>) -> Observed {
    let read_ahead_kb = p
        .storage
        .iter()
        .map(|s| {
            let dev = s.device.get_ref().to_string();
            let now = seams.files.read(&knob(&dev)).ok().and_then(|b| String::from_utf8_lossy(&b).trim().parse().ok());
            (dev, now)
        })
        .collect();
    Observed { read_ahead_kb }
}

pub(crate) fn plan(p: &Profile, now: &Observed) -> Vec<Action> {
    p.storage
        .iter()
        .filter_map(|s| {
            let kb = s.read_ahead_kb?;
            let device = s.device.get_ref().to_string();
            let from = now.read_ahead_kb.iter().find(|(d, _)| *d == device).and_then(|(_, v)| *v);
            (from != Some(kb)).then_some(Action { device, read_ahead_kb: kb, from })
        })
        .collect()
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), StepError> {
    let value = format!("{}\n", a.read_ahead_kb);
    seams.files.write_kernel(&knob(&a.device), value.as_bytes()).map_err(|e| StepError::partial(format!("{} read_ahead_kb", a.device), e))
}
