//! The hardware watchdog: opened first at apply, petted between steps,
//! and kept by `nasboot run` / `nasboot watchdog` for as long as the board
//! runs.
//!
//! - `crate::sys::watchdog`: the request numbers per architecture (include/uapi/linux/watchdog.h);
//! - [`device`]: [`Device`](device::Device), the open device: timeout
//!   clamping, petting fallbacks, the orderly stop;
//! - [`daemon`]: the petting loop, generic over its fallible `Dog` trait;
//! - `hal` (feature `embedded-hal`): embedded-hal 0.2's watchdog traits
//!   for the device, errors logged and counted;
//! - [`health`]: checks and the repair policy;
//! - [`history`]: reset history across boots and boot-loop backoff;
//! - [`signals`]: sigprocmask + sigtimedwait, mlockall, SCHED_RR.
//!
//! Hand-over (like OpenWrt procd): on SIGUSR2 the daemon execs
//! `handover_command` with the open descriptor inherited and its number
//! in `WDTFD`; `nasboot watchdog` started with `WDTFD` in its environment
//! adopts that descriptor instead of opening the device, so petting never
//! stops across an upgrade.

pub(crate) mod daemon;
pub(crate) mod device;
#[cfg(feature = "embedded-hal")]
pub mod hal;
pub(crate) mod health;
pub(crate) mod history;
pub(crate) mod memory;
pub(crate) mod signals;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::watchdog::Watchdog as Config;
use crate::config::Profile;
use crate::exit::{ExitStatus, Status};
use crate::paths;
use crate::seam::Seams;

pub use device::Device;

/// An open, armed device (what `apply` hands to `run`).
pub(crate) type Armed = Device;

/// Open and arm the device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
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
pub(crate) fn interval(timeout: u32, wanted: Option<u32>) -> u32 {
    let max = (timeout / 2).max(1);
    wanted.unwrap_or(max).clamp(1, max)
}

pub(crate) fn plan(p: &Profile) -> Vec<Action> {
    p.watchdog
        .iter()
        .map(|w| Action {
            device: w.device.as_ref().map(|d| d.to_string()),
            timeout: w.timeout.0,
            interval: interval(w.timeout.0, w.interval.map(|i| i.0)),
        })
        .collect()
}

/// Query the driver, log what it says, set the timeout. On ENOTTY (not a
/// watchdog) nothing was written and the device is closed.
pub(crate) fn setup(mut dog: Device, timeout: u32, seams: &mut Seams<'_>) -> Result<Device, device::OpenError> {
    dog.query(seams.files)?;
    log::info!("{}: {}", dog.path.display(), dog.info);
    if dog.info.card_reset() == Some(true) {
        log::warn!("{}: the watchdog reset this board (CARDRESET)", dog.path.display());
    }
    if let Some(e) = dog.info.query_errno {
        log::warn!(
            "{}: the driver could not be queried ({}): petting with write(), timeout and boot status unknown",
            dog.path.display(),
            std::io::Error::from_raw_os_error(e)
        );
    }
    if let Some(why) = dog.info.cannot_stop() {
        log::warn!("{}: {why}", dog.path.display());
    }
    dog.clear_stale_release();
    let got = dog.set_timeout(timeout, Some(seams.files));
    log::info!("{}: timeout {}", dog.path.display(), got.map_or("unknown (driver default)".to_string(), |t| format!("{t} s")));
    Ok(dog)
}

/// Why `apply` could not arm the watchdog.
#[derive(Debug)]
pub(crate) enum Error {
    /// Opening or setting up the device failed. `device` is the
    /// profile's; None for /dev/watchdog0 then /dev/watchdog.
    Open { device: Option<String>, source: device::OpenError },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // paths::WATCHDOG_DEVICES, as the plan names them.
            Error::Open { device, source } => write!(f, "{}: {source}", device.as_deref().unwrap_or("/dev/watchdog0 or /dev/watchdog")),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Open { source, .. } => Some(source),
        }
    }
}

impl ExitStatus for Error {
    /// 1: the board runs unguarded.
    fn exit_status(&self) -> Status {
        Status::Failure
    }
}

/// Open the first device that exists and set it up. EBUSY means another
/// process (a running `nasboot watchdog`) already pets it: not an error
/// for `apply`.
pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<Option<Armed>, Error> {
    let failed = |source| Error::Open { device: a.device.clone(), source };
    let dog = match device::open(seams.watchdog, a.device.as_deref().map(Path::new)) {
        Ok(d) => d,
        Err(e @ device::OpenError::Busy { .. }) => {
            log::info!("{e}; it keeps petting");
            return Ok(None);
        }
        Err(e) => return Err(failed(e)),
    };
    let mut dog = setup(dog, a.timeout, seams).map_err(failed)?;
    dog.pet();
    Ok(Some(dog))
}

/// The daemon's host on a real (or dry-run) board: signals, the clock,
/// checks through the seams, the profile file for reloads.
pub(crate) struct BoardHost<'s, 'a> {
    pub seams: &'s mut Seams<'a>,
    pub signals: signals::Signals,
    pub checker: health::Checker,
    /// The profile file (board path), re-read on SIGHUP.
    pub config: PathBuf,
    /// Apply the boot-loop transform on reload too.
    pub safe: bool,
    /// mlockall / SCHED_RR, applied once settled.
    pub realtime: Option<Box<Config>>,
    /// The reverts this daemon holds (`run`'s), if any.
    pub hold: Option<&'s mut dyn Hold>,
}

/// The revert of a candidate (`apply --confirm`), held by the daemon
/// where it runs: see [`daemon::Host::candidate`] (`cmd::run` has it).
pub(crate) trait Hold {
    fn candidate(&mut self, seams: &mut Seams<'_>) -> daemon::Held;
}

impl daemon::Host for BoardHost<'_, '_> {
    fn now_ms(&mut self) -> u64 {
        signals::now_ms()
    }
    fn wait(&mut self, timeout_ms: u64) -> Option<daemon::Sig> {
        self.signals.wait(timeout_ms)
    }
    fn check(&mut self, cfg: &Config) -> Result<(), health::Failure> {
        let now = crate::sys::time::wall_clock().unwrap_or_default();
        self.checker.check(cfg, self.seams.files, self.seams.runner, now)
    }
    fn repair(&mut self, cfg: &Config) -> bool {
        health::repair(cfg, self.seams.runner)
    }
    fn reload(&mut self) -> Option<Config> {
        reload(self.seams, &self.config, self.safe).map(|b| *b)
    }
    fn give_up(&mut self, _why: &health::Failure) {
        history::update(self.seams.files, |h| h.set_end(history::End::GaveUp));
        nix::unistd::sync();
    }
    fn stopped(&mut self) {
        history::update(self.seams.files, |h| h.set_end(history::End::Clean));
    }
    fn candidate(&mut self) -> daemon::Held {
        let seams = &mut *self.seams;
        self.hold.as_mut().map_or(daemon::Held::Nothing, |h| h.candidate(seams))
    }
    fn settled(&mut self) {
        // Give start-up's pages back, then lock what is left.
        memory::trim();
        if let Some(cfg) = self.realtime.take() {
            realtime(&cfg);
        }
    }
}

/// Re-read the profile (SIGHUP). Out of line: parsing needs large stack
/// frames, which must not become part of the daemon loop's frame.
#[inline(never)]
fn reload(seams: &mut Seams<'_>, config: &Path, safe: bool) -> Option<Box<Config>> {
    let file = config.display().to_string();
    let loaded = seams
        .files
        .read(config)
        .map_err(|e| format!("{file}: cannot read the profile: {e}"))
        .and_then(|b| crate::config::parse_bytes(&file, &b).map_err(|e| e.to_string()));
    match loaded {
        Ok(l) => {
            let p = if safe { history::safe_profile(l.profile) } else { l.profile };
            if p.watchdog.is_none() {
                log::error!("reload: {file} has no [watchdog] section now; keeping the running settings");
            }
            p.watchdog
        }
        Err(e) => {
            log::error!("reload failed, keeping the running profile: {e}");
            None
        }
    }
}

/// mlockall and SCHED_RR as the profile asks; failures are logged.
pub(crate) fn realtime(cfg: &Config) {
    if cfg.mlock {
        match signals::lock_memory() {
            Ok(()) => log::info!("memory locked (mlockall)"),
            Err(e) => log::warn!("mlockall: {e}"),
        }
    }
    if let Some(p) = cfg.rt_priority {
        match signals::realtime(p) {
            Ok(()) => log::info!("SCHED_RR priority {p}"),
            Err(e) => log::warn!("SCHED_RR priority {p}: {e}"),
        }
    }
}

/// Seconds since the epoch, for the reset history.
pub(crate) fn unix_now() -> u64 {
    crate::sys::time::wall_clock().map_or(0, |d| d.as_secs())
}

/// Keep petting in the foreground until SIGTERM/SIGINT (exit 0 after the
/// magic close). Used by `run` and `watchdog`.
pub(crate) fn serve(dog: Armed, cfg: &Config, seams: &mut Seams<'_>, config: &Path, safe: bool) -> crate::exit::Status {
    serve_holding(dog, cfg, seams, config, safe, None)
}

/// [`serve`], holding the reverts of candidates (`run`).
pub(crate) fn serve_holding<'s>(
    mut dog: Armed,
    cfg: &Config,
    seams: &'s mut Seams<'_>,
    config: &Path,
    safe: bool,
    hold: Option<&'s mut dyn Hold>,
) -> crate::exit::Status {
    // Signals first: a SIGTERM from now on is an orderly stop.
    let signals = match signals::Signals::block() {
        Ok(s) => s,
        Err(e) => {
            log::error!("cannot block signals: {e}; magic close and exit");
            daemon::disable(&mut dog);
            return crate::exit::Status::Failure;
        }
    };
    let card_reset = dog.info.card_reset();
    history::update(seams.files, |h| h.set_cause(card_reset));
    let mut host = BoardHost {
        seams,
        signals,
        checker: health::Checker::default(),
        config: config.to_path_buf(),
        safe,
        realtime: Some(Box::new(cfg.clone())),
        hold,
    };
    let out = daemon::serve(&mut dog, &mut host, cfg.clone());
    drop(dog);
    match out {
        daemon::Outcome::Stopped => crate::exit::Status::Ok,
        daemon::Outcome::StoppedAfterGivingUp => crate::exit::Status::Failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seam::fake::FakeBoard;

    #[test]
    fn apply_names_the_devices_tried_and_keeps_the_open_error() {
        let mut b = FakeBoard::new();
        let a = Action { device: None, timeout: 8, interval: 4 };
        let Err(e) = apply(&a, &mut b.seams()) else { panic!("armed without a device") };
        assert!(matches!(&e, Error::Open { device: None, source: device::OpenError::Missing { .. } }), "{e}");
        assert_eq!(
            e.to_string(),
            "/dev/watchdog0 or /dev/watchdog: no watchdog device: tried /dev/watchdog0, /dev/watchdog (is the driver loaded?)"
        );
        assert_eq!(e.exit_status(), Status::Failure);
        // Not a watchdog: the profile's device names it.
        let mut b = FakeBoard::new();
        b.watchdog.devices.insert("/dev/wdt".into());
        b.watchdog.driver.borrow_mut().ioctl_errno = Some(nix::libc::ENOTTY);
        let a = Action { device: Some("/dev/wdt".into()), ..a };
        let Err(e) = apply(&a, &mut b.seams()) else { panic!("armed a non-watchdog") };
        assert!(matches!(&e, Error::Open { device: Some(d), source: device::OpenError::NotWatchdog { .. } } if d == "/dev/wdt"), "{e}");
    }
}
