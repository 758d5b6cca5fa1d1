//! The hardware watchdog: opened first at apply, petted between steps,
//! and kept by `nasboot run` for as long as the board runs.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::apply::StepError;
use crate::config::Profile;
use crate::paths;
use crate::seam::watchdog::WatchdogDevice;
use crate::seam::Seams;

/// Open and arm the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// The profile's device, or None for /dev/watchdog0 then /dev/watchdog.
    pub device: Option<String>,
    pub timeout: u32,
    pub interval: u32,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dev = self.device.clone().unwrap_or_else(|| paths::WATCHDOG_DEVICES.join(" or "));
        write!(f, "open {dev}, timeout {} s, pet every {} s", self.timeout, self.interval)
    }
}

/// The pet interval: the profile's, at most timeout/2 and at least 1 s.
pub fn interval(timeout: u32, wanted: Option<u32>) -> u32 {
    let max = (timeout / 2).max(1);
    wanted.unwrap_or(max).clamp(1, max)
}

pub fn plan(p: &Profile) -> Vec<Action> {
    p.watchdog
        .iter()
        .map(|w| Action {
            device: w.device.as_ref().map(|d| d.to_string()),
            timeout: w.timeout.0,
            interval: interval(w.timeout.0, w.interval.map(|i| i.0)),
        })
        .collect()
}

/// An open, armed device.
pub struct Armed {
    dev: Box<dyn WatchdogDevice>,
    pub path: PathBuf,
}

impl Armed {
    /// Pet; a failure is logged, the next pet tries again.
    pub fn pet(&mut self) {
        if let Err(e) = self.dev.keepalive() {
            log::warn!("{}: pet failed: {e}", self.path.display());
        }
    }

    /// Orderly stop: the magic close ('V') so closing does not reset the board.
    pub fn close(mut self) -> io::Result<()> {
        self.dev.write(b"V")
    }
}

/// Open the first device that exists. EBUSY means another process (a
/// running `nasboot run`) already pets it: that is not an error for `apply`.
pub fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<Option<Armed>, StepError> {
    let candidates: Vec<&str> = match &a.device {
        Some(d) => vec![d.as_str()],
        None => paths::WATCHDOG_DEVICES.to_vec(),
    };
    let mut last = None;
    for path in candidates {
        match seams.watchdog.open(Path::new(path)) {
            Ok(dev) => {
                let mut armed = Armed { dev, path: PathBuf::from(path) };
                armed.pet();
                return Ok(Some(armed));
            }
            Err(e) if e.raw_os_error() == Some(nix::libc::EBUSY) => {
                log::info!("{path}: held by another process; it keeps petting");
                return Ok(None);
            }
            Err(e) => last = Some((path, e)),
        }
    }
    let (path, e) = last.expect("at least one candidate");
    Err(StepError::fatal(path, e))
}

/// Keep petting in the foreground. (The full daemon, with signals and
/// health checks, replaces this loop.)
pub fn serve(mut dog: Armed, interval: u32) -> crate::exit::Status {
    loop {
        dog.pet();
        std::thread::sleep(std::time::Duration::from_secs(u64::from(interval)));
    }
}
