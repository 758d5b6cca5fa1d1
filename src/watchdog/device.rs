//! [`Device`]: an open Linux watchdog device behind the
//! [`WatchdogDevice`] seam (real, dry-run or fake): what the driver told
//! us, the timeout really in use, the petting fallbacks. Every operation
//! returns its error; the daemon's `Dog` trait is
//! implemented on it in `daemon.rs`.
//!
//! Follows drivers/watchdog/watchdog_dev.c: one opener at a time (EBUSY),
//! any write pets, a 'V' arms release-on-close, WDIOC_SETTIMEOUT pets and
//! writes back the timeout used, EINVAL outside the driver's limits.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use nix::libc;

use crate::paths;
use crate::seam::watchdog::{Support, WatchdogDevice, WatchdogPort};
use crate::seam::Files;
use crate::sys::watchdog::{self as ioctl, WDIOF_CARDRESET, WDIOF_MAGICCLOSE, WDIOF_SETTIMEOUT, WDIOS_DISABLECARD, WDIOS_ENABLECARD};

/// Timeouts tried, nearest first, when the driver rejects the one asked
/// for and sysfs does not give its limits (watchdog 5.x falls back to
/// 3/5/10 s; ath79 stops near 21 s, mpc8xxx starts at its hardware period).
pub(crate) const KNOWN_TIMEOUTS: [u32; 11] = [1, 2, 3, 5, 10, 15, 20, 30, 60, 120, 300];

/// Why a device could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// Another process holds it (one opener at a time).
    Busy {
        path: PathBuf,
        holder: Option<(u32, String)>,
    },
    /// None of the candidates exists.
    Missing {
        tried: String,
    },
    /// It is no watchdog: WDIOC_GETSUPPORT gave ENOTTY. Nothing was written.
    NotWatchdog {
        path: PathBuf,
    },
    /// An inherited WDTFD was not usable.
    Adopt {
        fd: i32,
        error: io::Error,
    },
    Other {
        path: PathBuf,
        error: io::Error,
    },
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Busy { path, holder: Some((pid, comm)) } => {
                write!(f, "{}: busy: process {pid} ({comm}) holds it open; only one process may pet a watchdog", path.display())
            }
            OpenError::Busy { path, holder: None } => write!(
                f,
                "{}: busy: another process holds it open (not found in /proc); only one process may pet a watchdog",
                path.display()
            ),
            OpenError::Missing { tried } => write!(f, "no watchdog device: tried {tried} (is the driver loaded?)"),
            OpenError::NotWatchdog { path } => {
                write!(f, "{}: not a watchdog device (WDIOC_GETSUPPORT: inappropriate ioctl); closed without writing", path.display())
            }
            OpenError::Adopt { fd, error } if error.raw_os_error() == Some(libc::ENOTTY) => write!(
                f,
                "WDTFD={fd}: cannot adopt the inherited watchdog descriptor: it is not a watchdog (WDIOC_GETSUPPORT: {error}); left untouched"
            ),
            OpenError::Adopt { fd, error } => write!(f, "WDTFD={fd}: cannot adopt the inherited watchdog descriptor: {error}"),
            OpenError::Other { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for OpenError {
    /// The system call's error, where there was one.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OpenError::Adopt { error, .. } | OpenError::Other { error, .. } => Some(error),
            OpenError::Busy { .. } | OpenError::Missing { .. } | OpenError::NotWatchdog { .. } => None,
        }
    }
}

impl crate::exit::ExitStatus for OpenError {
    /// 1: the device could not be had (`nasboot watchdog`'s documented status).
    fn exit_status(&self) -> crate::exit::Status {
        crate::exit::Status::Failure
    }
}

/// What the driver told us at setup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// WDIOC_GETSUPPORT, when the driver answered.
    pub support: Option<Support>,
    /// The errno that kept us from querying (ENOSYS under qemu-user).
    pub query_errno: Option<i32>,
    /// WDIOF_* bits of the last boot (WDIOC_GETBOOTSTATUS or sysfs).
    pub bootstatus: Option<u32>,
    /// sysfs nowayout: the watchdog can never be stopped.
    pub nowayout: Option<bool>,
    pub min_timeout: Option<u32>,
    pub max_timeout: Option<u32>,
}

impl Info {
    /// The watchdog reset this board (WDIOF_CARDRESET in the boot status).
    pub fn card_reset(&self) -> Option<bool> {
        self.bootstatus.map(|b| b & WDIOF_CARDRESET != 0)
    }

    /// Why an orderly stop may not stop the hardware, if we can tell.
    pub fn cannot_stop(&self) -> Option<&'static str> {
        if self.nowayout == Some(true) {
            return Some("nowayout is set: the kernel will not stop it, the board resets unless something keeps petting");
        }
        let Some(s) = self.support.as_ref() else {
            return self.query_errno.map(|_| "the driver could not be queried, so whether it stopped is unknown");
        };
        if s.identity().contains("mpc8xxx") {
            return Some("mpc8xxx_wdt can never be stopped once enabled; after close the kernel keeps petting it");
        }
        if s.options & WDIOF_MAGICCLOSE == 0 {
            return Some("the driver has no magic close: closing may not stop it");
        }
        None
    }
}

impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.support, self.query_errno) {
            (Some(s), _) => {
                write!(f, "\"{}\" firmware {} options ", s.identity(), s.firmware_version)?;
                ioctl::option_names(s.options, f)?;
            }
            (None, Some(e)) => write!(f, "the driver could not be queried ({}); petting with write()", io::Error::from_raw_os_error(e))?,
            (None, None) => f.write_str("the driver was not queried")?,
        }
        match self.card_reset() {
            Some(true) => f.write_str("; the watchdog reset this board (CARDRESET)")?,
            Some(false) => f.write_str("; last boot was not a watchdog reset")?,
            None => f.write_str("; boot status unknown")?,
        }
        if let (Some(lo), Some(hi)) = (self.min_timeout, self.max_timeout) {
            write!(f, "; limits {lo}..{hi} s")?;
        }
        if self.nowayout == Some(true) {
            f.write_str("; nowayout")?;
        }
        Ok(())
    }
}

/// An open watchdog device.
pub struct Device {
    dev: Box<dyn WatchdogDevice>,
    /// The device path (or `WDTFD=<fd>`), for messages.
    pub path: PathBuf,
    pub info: Info,
    /// The timeout in use, as the driver reported it.
    timeout: Option<u32>,
    /// WDIOC_KEEPALIVE is not available: pet with write().
    write_only: bool,
    /// Consecutive failed apply-time pets, to log the first and then every 60th.
    failures: u32,
    /// An orderly stop was done.
    disabled: bool,
}

fn is_no_ioctl(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTTY | libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP))
}

/// Open the profile's device, or /dev/watchdog0 then /dev/watchdog.
pub(crate) fn open(port: &mut dyn WatchdogPort, device: Option<&Path>) -> Result<Device, OpenError> {
    let candidates: &[&str] = &paths::WATCHDOG_DEVICES;
    let mut tried = String::new();
    let one;
    let list: Vec<&Path> = match device {
        Some(d) => {
            one = [d];
            one.to_vec()
        }
        None => candidates.iter().map(Path::new).collect(),
    };
    for path in list {
        match port.open(path) {
            Ok(dev) => return Ok(Device::new(dev, path.to_path_buf())),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                return Err(OpenError::Busy { path: path.to_path_buf(), holder: port.holder(path) });
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if !tried.is_empty() {
                    tried.push_str(", ");
                }
                tried.push_str(&path.display().to_string());
            }
            Err(error) => return Err(OpenError::Other { path: path.to_path_buf(), error }),
        }
    }
    Err(OpenError::Missing { tried })
}

/// A `WDTFD` value that names no descriptor to adopt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BadWdtfd {
    /// Not a number.
    NotANumber(String),
    /// 0, 1 or 2: a hand-over never passes standard input, output or error.
    Standard(i32),
}

impl fmt::Display for BadWdtfd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadWdtfd::NotANumber(v) => write!(f, "WDTFD=\"{}\" is not a file descriptor number", v.escape_debug()),
            BadWdtfd::Standard(fd) => {
                let which = ["standard input", "standard output", "standard error"][*fd as usize];
                write!(f, "WDTFD={fd} is {which}, not a watchdog descriptor handed over (those are 3 and above)")
            }
        }
    }
}

impl std::error::Error for BadWdtfd {}

impl crate::exit::ExitStatus for BadWdtfd {
    /// 2: bad input, nothing was touched.
    fn exit_status(&self) -> crate::exit::Status {
        crate::exit::Status::Usage
    }
}

/// The descriptor number in a `WDTFD` value (as procd's watchdog.c
/// reads it), refusing the standard descriptors.
pub(crate) fn wdtfd(value: &str) -> Result<i32, BadWdtfd> {
    match value.trim().parse::<i32>() {
        Ok(fd @ 0..=2) => Err(BadWdtfd::Standard(fd)),
        Ok(fd) if fd > 2 => Ok(fd),
        _ => Err(BadWdtfd::NotANumber(value.to_string())),
    }
}

/// Take over a descriptor handed on in `WDTFD`.
pub(crate) fn adopt(port: &mut dyn WatchdogPort, fd: i32) -> Result<Device, OpenError> {
    port.adopt(fd).map(|dev| Device::new(dev, PathBuf::from(format!("WDTFD={fd}")))).map_err(|error| OpenError::Adopt { fd, error })
}

/// The sysfs class directory of a device path: /dev/watchdogN is
/// watchdogN; the legacy /dev/watchdog is watchdog0.
pub(crate) fn sysfs_dir(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let name = if name.starts_with("watchdog") && name.len() > "watchdog".len() { name } else { "watchdog0" };
    Path::new(paths::SYS_CLASS_WATCHDOG).join(name)
}

pub(crate) fn read_u32(files: &mut dyn Files, path: &Path) -> Option<u32> {
    let b = files.read(path).ok()?;
    let s = std::str::from_utf8(&b).ok()?.trim();
    s.strip_prefix("0x").map_or_else(|| s.parse().ok(), |h| u32::from_str_radix(h, 16).ok())
}

/// The timeouts to try, nearest to the request first: the request clamped
/// to the known limits, then [`KNOWN_TIMEOUTS`] within them.
pub(crate) fn timeout_candidates(requested: u32, min: Option<u32>, max: Option<u32>) -> heapless::Vec<u32, 12> {
    let lo = min.unwrap_or(1).max(1);
    let hi = max.unwrap_or(u32::MAX).max(lo);
    let first = requested.clamp(lo, hi);
    let mut out: heapless::Vec<u32, 12> = heapless::Vec::new();
    let _ = out.push(first);
    let mut rest: heapless::Vec<u32, 11> = KNOWN_TIMEOUTS.iter().copied().filter(|t| *t != first && (lo..=hi).contains(t)).collect();
    rest.sort_unstable_by_key(|t| (t.abs_diff(first), *t));
    for t in rest {
        let _ = out.push(t);
    }
    out
}

impl Device {
    pub fn new(dev: Box<dyn WatchdogDevice>, path: PathBuf) -> Device {
        Device { dev, path, info: Info::default(), timeout: None, write_only: false, failures: 0, disabled: false }
    }

    /// The timeout the driver uses, when it told us.
    pub fn timeout(&self) -> Option<u32> {
        self.timeout
    }

    /// Whether pets go through write() because the ioctl is unavailable.
    pub fn write_only(&self) -> bool {
        self.write_only
    }

    /// The raw device, for what the traits do not cover.
    pub fn device(&mut self) -> &mut dyn WatchdogDevice {
        &mut *self.dev
    }

    /// Query the driver (identity, options, boot status, limits). ENOTTY
    /// means this is not a watchdog; nothing was written to it.
    pub fn query(&mut self, files: &mut dyn Files) -> Result<(), OpenError> {
        let dir = sysfs_dir(&self.path);
        match self.dev.get_support() {
            Ok(s) => self.info.support = Some(s),
            Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => {
                return Err(OpenError::NotWatchdog { path: self.path.clone() });
            }
            Err(e) => {
                self.info.query_errno = Some(e.raw_os_error().unwrap_or(libc::ENOSYS));
                self.write_only = true;
            }
        }
        self.info.bootstatus = match self.dev.get_bootstatus() {
            Ok(b) => Some(b),
            Err(_) => read_u32(files, &dir.join("bootstatus")),
        };
        self.info.nowayout = read_u32(files, &dir.join("nowayout")).map(|n| n != 0);
        if self.info.support.is_some() {
            self.timeout = self.dev.get_timeout().ok();
        }
        Ok(())
    }

    /// The driver's timeout limits, from sysfs (the watchdog class's
    /// `min_timeout` and `max_timeout`; absent for a driver outside it).
    fn read_limits(&mut self, files: &mut dyn Files) {
        let dir = sysfs_dir(&self.path);
        self.info.min_timeout = read_u32(files, &dir.join("min_timeout"));
        self.info.max_timeout = read_u32(files, &dir.join("max_timeout"));
    }

    /// WDIOC_SETTIMEOUT, stepping through [`KNOWN_TIMEOUTS`] on EINVAL.
    /// The request is asked as it is first; only when the driver refuses
    /// it are its limits read (`files`: from sysfs, two files that a slow
    /// board's boot pays for: scripts/bench-boot) and the request clamped to
    /// them: the kernel's watchdog core refuses a timeout outside them
    /// with EINVAL, so a request within them is taken without the reads.
    /// Returns the timeout in use (as the driver wrote it back), or None
    /// when the driver cannot be told.
    pub fn set_timeout(&mut self, requested: u32, mut files: Option<&mut dyn Files>) -> Option<u32> {
        if let Some(s) = &self.info.support {
            if s.options & WDIOF_SETTIMEOUT == 0 {
                log::warn!(
                    "{}: the driver cannot change its timeout (no SETTIMEOUT); keeping {}",
                    self.path.display(),
                    self.timeout.map_or("its default".to_string(), |t| format!("{t} s"))
                );
                return self.timeout;
            }
        } else if self.info.query_errno.is_some() {
            log::warn!(
                "{}: could not query the driver, so the timeout stays the driver's default (asked {requested} s)",
                self.path.display()
            );
            return None;
        }
        let mut candidates = timeout_candidates(requested, self.info.min_timeout, self.info.max_timeout);
        let mut i = 0;
        while let Some(&t) = candidates.get(i) {
            i += 1;
            match self.dev.set_timeout(t) {
                Ok(got) => {
                    if got != requested {
                        log::warn!("{}: asked for a {requested} s timeout, the driver uses {got} s", self.path.display());
                    }
                    self.timeout = Some(got);
                    return Some(got);
                }
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    log::info!("{}: the driver rejects a {t} s timeout", self.path.display());
                    if let Some(files) = files.take() {
                        self.read_limits(files);
                        candidates = timeout_candidates(requested, self.info.min_timeout, self.info.max_timeout);
                        candidates.retain(|c| *c != t);
                        i = 0;
                    }
                }
                Err(e) => {
                    log::warn!("{}: WDIOC_SETTIMEOUT: {e}; keeping the driver's timeout", self.path.display());
                    self.timeout = self.dev.get_timeout().ok();
                    return self.timeout;
                }
            }
        }
        log::warn!("{}: no timeout near {requested} s was accepted; keeping the driver's", self.path.display());
        self.timeout = self.dev.get_timeout().ok();
        self.timeout
    }

    /// Pet once: WDIOC_KEEPALIVE, or write() when the ioctl is not there
    /// (ENOTTY, ENOSYS under qemu-user, EINVAL). Allocation-free.
    pub fn feed(&mut self) -> io::Result<()> {
        if !self.write_only {
            match self.dev.keepalive() {
                Ok(()) => return Ok(()),
                Err(e) if is_no_ioctl(&e) => {
                    log::warn!("{}: WDIOC_KEEPALIVE: {e}; petting with write() from now on", self.path.display());
                    self.write_only = true;
                }
                Err(e) => return Err(e),
            }
        }
        // Not 'V': that would arm the release on close.
        self.dev.write(b"\0")
    }

    /// Clear a release-on-close left armed by the previous holder. The
    /// kernel's watchdog core clears its "magic character seen" flag only
    /// when it stops the watchdog at close, or on a write without 'V';
    /// after an orderly stop ('V' then WDIOS_DISABLECARD, as `nasboot
    /// apply` does before `nasboot run` opens the device) the watchdog is
    /// already stopped at close and the flag survives. A crash of the next
    /// holder would then stop the watchdog silently instead of resetting
    /// the board. One write without 'V' (a pet) clears it.
    pub fn clear_stale_release(&mut self) {
        if let Err(e) = self.dev.write(b"\0") {
            log::warn!("{}: write: {e}", self.path.display());
        }
    }

    /// WDIOC_SETOPTIONS where the driver answered WDIOC_GETSUPPORT; a
    /// driver without it (ENOTTY, EINVAL...) is left to the magic close.
    fn set_card(&mut self, option: u32) -> io::Result<()> {
        if self.info.support.is_none() {
            return Ok(());
        }
        match self.dev.set_options(option) {
            Err(e) if !is_no_ioctl(&e) => Err(e),
            _ => Ok(()),
        }
    }

    /// Orderly stop: 'V' (release on close), then WDIOS_DISABLECARD where
    /// the driver has it. Returns why it may not have stopped, if known.
    pub fn stop(&mut self) -> io::Result<Option<&'static str>> {
        self.disabled = true;
        self.dev.write(b"V")?;
        if let Err(e) = self.set_card(WDIOS_DISABLECARD) {
            log::warn!("{}: WDIOS_DISABLECARD: {e}", self.path.display());
            return Ok(Some("WDIOS_DISABLECARD failed: only the magic close can stop it"));
        }
        Ok(self.info.cannot_stop())
    }

    /// (Re-)arm with a timeout: WDIOS_ENABLECARD, then WDIOC_SETTIMEOUT
    /// (which pets; clamped to the limits if setup read them), then a pet.
    pub fn rearm(&mut self, secs: u32) -> io::Result<()> {
        self.disabled = false;
        self.set_card(WDIOS_ENABLECARD)?;
        self.set_timeout(secs, None);
        self.feed()
    }

    /// Whether an orderly stop was done.
    pub fn stopped(&self) -> bool {
        self.disabled
    }

    /// Exec `argv` with the descriptor inherited as `WDTFD`. Returns only on failure.
    pub fn handover(&mut self, argv: &[&str]) -> io::Error {
        self.dev.exec_handover(argv)
    }

    /// The apply-time pet: failures are logged (the first, then every
    /// 60th in a row), the next pet tries again.
    pub fn pet(&mut self) {
        let result = self.feed();
        self.count("pet", result);
    }

    /// Consecutive failed operations reported through [`Device::pet`] (and
    /// embedded-hal's traits); a success resets it.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Report `what`'s result as [`counted`] does, with this device's count.
    pub(crate) fn count(&mut self, what: &str, result: io::Result<()>) -> bool {
        counted(&self.path, what, result, &mut self.failures)
    }

    /// Orderly close for `apply`: magic close, then close.
    pub fn close(mut self) -> io::Result<()> {
        if let Some(why) = self.stop()? {
            log::warn!("{}: {why}", self.path.display());
        }
        Ok(())
    }
}
/// An operation's result (`what`: "pet"...), reported: the first failure
/// of a run, then every 60th (the next one tries again); `failures` counts
/// the run. Allocation-free.
pub(crate) fn counted(path: &Path, what: &str, result: io::Result<()>, failures: &mut u32) -> bool {
    match result {
        Ok(()) => {
            *failures = 0;
            true
        }
        Err(e) => {
            if *failures % 60 == 0 {
                log::error!("{}: {what} failed ({} in a row): {e}", path.display(), *failures + 1);
            }
            *failures = failures.saturating_add(1);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seam::fake::FakeBoard;

    fn board() -> FakeBoard {
        let mut b = FakeBoard::new();
        b.watchdog.devices.insert("/dev/watchdog0".into());
        b.watchdog.devices.insert("/dev/watchdog".into());
        b
    }

    #[test]
    fn wdtfd_refuses_the_standard_descriptors_and_non_numbers() {
        assert_eq!(wdtfd(" 3\n"), Ok(3));
        assert_eq!(wdtfd("1"), Err(BadWdtfd::Standard(1)));
        assert_eq!(
            wdtfd("1").unwrap_err().to_string(),
            "WDTFD=1 is standard output, not a watchdog descriptor handed over (those are 3 and above)"
        );
        assert_eq!(wdtfd("0"), Err(BadWdtfd::Standard(0)));
        assert_eq!(wdtfd("-4"), Err(BadWdtfd::NotANumber("-4".into())));
        assert_eq!(wdtfd("abc").unwrap_err().to_string(), "WDTFD=\"abc\" is not a file descriptor number");
    }

    #[test]
    fn an_inherited_descriptor_that_is_no_watchdog_is_refused() {
        let mut b = board();
        b.watchdog.inherited.insert(5);
        b.watchdog.driver.borrow_mut().ioctl_errno = Some(libc::ENOTTY);
        let e = adopt(&mut b.watchdog, 5).err().unwrap();
        assert!(matches!(&e, OpenError::Adopt { fd: 5, error } if error.raw_os_error() == Some(libc::ENOTTY)), "{e}");
        let shown = e.to_string();
        assert!(shown.contains(": it is not a watchdog (WDIOC_GETSUPPORT: ") && shown.ends_with("); left untouched"), "{shown}");
        assert!(b.effects().is_empty(), "nothing adopted, nothing written");
    }

    #[test]
    fn candidates_clamp_then_step_nearest_first() {
        assert_eq!(timeout_candidates(30, Some(1), Some(21)).as_slice(), &[21, 20, 15, 10, 5, 3, 2, 1]);
        assert_eq!(timeout_candidates(5, Some(10), None)[..3], [10, 15, 20]);
        assert_eq!(timeout_candidates(30, None, None)[..4], [30, 20, 15, 10]);
    }

    #[test]
    fn opens_watchdog0_then_watchdog() {
        let mut b = FakeBoard::new();
        b.watchdog.devices.insert("/dev/watchdog".into());
        let dog = open(&mut b.watchdog, None).unwrap();
        assert_eq!(dog.path, Path::new("/dev/watchdog"));
        let mut b = FakeBoard::new();
        let e = open(&mut b.watchdog, None).err().unwrap();
        assert_eq!(e.to_string(), "no watchdog device: tried /dev/watchdog0, /dev/watchdog (is the driver loaded?)");
    }

    #[test]
    fn busy_names_the_holder() {
        let mut b = board();
        b.watchdog.busy = Some((321, "watchdog".into()));
        let e = open(&mut b.watchdog, Some(Path::new("/dev/watchdog0"))).err().unwrap();
        assert_eq!(e.to_string(), "/dev/watchdog0: busy: process 321 (watchdog) holds it open; only one process may pet a watchdog");
    }

    #[test]
    fn cardreset_and_sysfs_limits_are_read() {
        let mut b = board();
        b.watchdog.driver.borrow_mut().bootstatus = WDIOF_CARDRESET;
        // The kernel's watchdog core refuses what is outside the limits
        // sysfs shows.
        b.watchdog.driver.borrow_mut().max_timeout = 21;
        b.files.files.insert("/sys/class/watchdog/watchdog0/max_timeout".into(), b"21\n".to_vec());
        b.files.files.insert("/sys/class/watchdog/watchdog0/nowayout".into(), b"1\n".to_vec());
        let mut dog = open(&mut b.watchdog, None).unwrap();
        dog.query(&mut b.files).unwrap();
        assert_eq!(dog.info.card_reset(), Some(true));
        // The limits are read only once the driver refuses the request.
        assert_eq!(dog.info.max_timeout, None);
        let shown = dog.info.to_string();
        assert!(shown.contains("\"Software Watchdog\""), "{shown}");
        assert!(shown.contains("SETTIMEOUT|MAGICCLOSE|KEEPALIVEPING"), "{shown}");
        assert!(shown.contains("the watchdog reset this board (CARDRESET)"), "{shown}");
        assert_eq!(dog.set_timeout(30, Some(&mut b.files)), Some(21));
        assert_eq!(dog.info.max_timeout, Some(21));
        assert!(dog.info.cannot_stop().unwrap().contains("nowayout"));
    }

    /// A request within the driver's limits is taken as asked, and the
    /// limits are never read (two sysfs files at every boot).
    #[test]
    fn a_timeout_within_the_limits_reads_no_limits() {
        let mut b = board();
        b.watchdog.driver.borrow_mut().max_timeout = 21;
        b.files.files.insert("/sys/class/watchdog/watchdog0/max_timeout".into(), b"21\n".to_vec());
        let mut dog = open(&mut b.watchdog, None).unwrap();
        dog.query(&mut b.files).unwrap();
        assert_eq!(dog.set_timeout(20, Some(&mut b.files)), Some(20));
        assert_eq!(dog.info.max_timeout, None);
        assert_eq!(b.effects().iter().filter(|e| e.starts_with("settimeout")).count(), 1, "{:?}", b.effects());
    }

    #[test]
    fn einval_steps_to_a_timeout_the_driver_takes() {
        // ath79: 1..=21 s, no sysfs class.
        let mut b = board();
        b.watchdog.driver.borrow_mut().max_timeout = 21;
        let mut dog = open(&mut b.watchdog, None).unwrap();
        dog.query(&mut b.files).unwrap();
        assert_eq!(dog.set_timeout(30, Some(&mut b.files)), Some(20));
        // mpc8xxx: nothing under its hardware period (10 s).
        let mut b = board();
        b.watchdog.driver.borrow_mut().min_timeout = 10;
        let mut dog = open(&mut b.watchdog, None).unwrap();
        dog.query(&mut b.files).unwrap();
        assert_eq!(dog.set_timeout(5, Some(&mut b.files)), Some(10));
        let eff = b.effects();
        assert!(eff.contains(&"settimeout /dev/watchdog0 5 EINVAL".to_string()), "{eff:?}");
        assert_eq!(eff.last().unwrap(), "settimeout /dev/watchdog0 10");
    }

    #[test]
    fn enosys_falls_back_to_write_and_says_so() {
        let mut b = board();
        b.watchdog.driver.borrow_mut().ioctl_errno = Some(libc::ENOSYS);
        let mut dog = open(&mut b.watchdog, None).unwrap();
        dog.query(&mut b.files).unwrap();
        assert!(dog.write_only());
        assert!(dog.info.to_string().contains("could not be queried"), "{}", dog.info);
        assert_eq!(dog.set_timeout(10, Some(&mut b.files)), None);
        dog.feed().unwrap();
        dog.feed().unwrap();
        assert_eq!(b.watchdog.driver.borrow().pets, 2);
        assert_eq!(b.effects().last().unwrap(), "write /dev/watchdog0 \"\\0\"");
        assert_eq!(dog.stop().unwrap(), Some("the driver could not be queried, so whether it stopped is unknown"));
        assert_eq!(b.effects().last().unwrap(), "write /dev/watchdog0 \"V\"");
    }

    #[test]
    fn keepalive_einval_switches_to_write_once() {
        let mut b = board();
        let mut dog = open(&mut b.watchdog, None).unwrap();
        dog.query(&mut b.files).unwrap();
        dog.feed().unwrap();
        b.watchdog.driver.borrow_mut().ioctl_errno = Some(libc::EINVAL);
        dog.feed().unwrap();
        assert!(dog.write_only());
        assert_eq!(b.watchdog.driver.borrow().pets, 2);
    }

    #[test]
    fn enotty_is_not_a_watchdog_and_nothing_is_written() {
        let mut b = board();
        b.watchdog.driver.borrow_mut().ioctl_errno = Some(libc::ENOTTY);
        let mut dog = open(&mut b.watchdog, None).unwrap();
        let e = dog.query(&mut b.files).err().unwrap();
        assert!(matches!(e, OpenError::NotWatchdog { .. }), "{e}");
        drop(dog);
        assert_eq!(b.effects(), ["open /dev/watchdog0", "close /dev/watchdog0"]);
    }

    /// Open, arm for 5 s, then the orderly stop ('V', DISABLECARD) and close.
    fn armed_then_stopped(b: &mut FakeBoard) {
        let mut dog = open(&mut b.watchdog, None).unwrap();
        dog.query(&mut b.files).unwrap();
        dog.rearm(5).unwrap();
        assert_eq!(dog.stop().unwrap(), None);
    }

    #[test]
    fn disable_is_the_magic_close() {
        let mut b = board();
        armed_then_stopped(&mut b);
        let d = b.watchdog.driver.borrow();
        assert!(d.stopped);
        assert_eq!(d.timeout, 5);
        assert_eq!(
            b.effects(),
            [
                "open /dev/watchdog0",
                "setoptions /dev/watchdog0 2",
                "settimeout /dev/watchdog0 5",
                "pet /dev/watchdog0",
                "write /dev/watchdog0 \"V\"",
                "setoptions /dev/watchdog0 1",
                "close /dev/watchdog0"
            ]
        );
    }

    #[test]
    fn a_crash_after_an_orderly_stop_still_resets() {
        // `nasboot apply` stops the watchdog in order ('V', DISABLECARD),
        // then `nasboot run` opens it: the kernel's release flag from that
        // 'V' must not let a crash of the daemon stop the watchdog.
        let mut b = board();
        armed_then_stopped(&mut b);
        assert!(b.watchdog.driver.borrow().expect_close, "the fake keeps the flag, as the kernel does");
        let dog = crate::watchdog::setup(open(&mut b.watchdog, None).unwrap(), 5, &mut b.seams()).unwrap();
        drop(dog); // the daemon dies: no magic close
        let d = b.watchdog.driver.borrow();
        assert!(!d.stopped, "a crash must leave the watchdog running so that it resets the board");
        assert!(!d.expect_close);
    }
}
