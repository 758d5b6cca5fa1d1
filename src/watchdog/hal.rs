//! embedded-hal 0.2's watchdog traits for the Linux watchdog [`Device`],
//! for code written against them (feature `embedded-hal`, off in every
//! shipped build; nasboot's own daemon uses the fallible `Dog` trait).
//!
//! The traits cannot return an error, so every failure is logged and
//! counted here, as the apply-time pet does: the first of a run, then
//! every 60th; [`Device::failures`] gives the count, and a success
//! resets it.
//!
//! - [`Watchdog::feed`]: WDIOC_KEEPALIVE, or write() where the ioctl is
//!   missing;
//! - [`WatchdogEnable::start`]: WDIOS_ENABLECARD, the nearest timeout
//!   the driver accepts (WDIOC_SETTIMEOUT), a pet;
//! - [`WatchdogDisable::disable`]: the magic close ('V', then
//!   WDIOS_DISABLECARD where the driver has it). A driver built with
//!   nowayout cannot stop: that is logged too, and counted.

use std::path::Path;

use embedded_hal::watchdog::{Watchdog, WatchdogDisable, WatchdogEnable};

pub use super::device::{Device, OpenError};
use crate::seam::real::{files::RealFiles, watchdog::RealWatchdogPort, Root};

/// Open and query a Linux watchdog: `path`, or /dev/watchdog0 then
/// /dev/watchdog. The kernel starts the watchdog at open, with the
/// driver's timeout; [`WatchdogEnable::start`] sets ours.
pub fn open(path: Option<&Path>) -> Result<Device, OpenError> {
    let mut dog = super::device::open(&mut RealWatchdogPort::new(Root::new(None)), path)?;
    dog.query(&mut RealFiles::new(Root::new(None)))?;
    Ok(dog)
}

/// A watchdog timeout in whole seconds, as the Linux API takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seconds(pub u32);

impl From<u32> for Seconds {
    fn from(secs: u32) -> Seconds {
        Seconds(secs)
    }
}

impl Watchdog for Device {
    fn feed(&mut self) {
        self.pet();
    }
}

impl WatchdogEnable for Device {
    type Time = Seconds;

    fn start<T: Into<Seconds>>(&mut self, period: T) {
        let result = self.rearm(period.into().0);
        self.count("start", result);
    }
}

impl WatchdogDisable for Device {
    fn disable(&mut self) {
        match self.stop() {
            Ok(None) => self.count("magic close", Ok(())),
            Ok(Some(why)) => self.count("magic close", Err(std::io::Error::other(why))),
            Err(e) => self.count("magic close", Err(e)),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seam::fake::FakeBoard;

    fn armed(b: &mut FakeBoard) -> Device {
        b.watchdog.devices.insert("/dev/watchdog0".into());
        let mut dog = super::super::device::open(&mut b.watchdog, None).unwrap();
        dog.query(&mut b.files).unwrap();
        dog
    }

    #[test]
    fn start_feed_disable_drive_the_device() {
        let mut b = FakeBoard::new();
        let mut dog = armed(&mut b);
        WatchdogEnable::start(&mut dog, 7u32);
        assert_eq!(b.watchdog.driver.borrow().timeout, 7);
        let before = b.watchdog.driver.borrow().pets;
        Watchdog::feed(&mut dog);
        assert_eq!(b.watchdog.driver.borrow().pets, before + 1);
        assert_eq!(b.effects().last().unwrap(), "pet /dev/watchdog0");
        WatchdogDisable::disable(&mut dog);
        assert!(b.watchdog.driver.borrow().stopped, "the magic close stopped it");
        assert!(dog.stopped());
        assert_eq!(dog.failures(), 0);
        drop(dog);
        let effects = b.effects();
        let tail: Vec<&str> = effects.iter().rev().take(3).rev().map(String::as_str).collect();
        assert_eq!(tail, ["write /dev/watchdog0 \"V\"", "setoptions /dev/watchdog0 1", "close /dev/watchdog0"]);
    }

    #[test]
    fn failures_are_counted_and_a_success_resets_them() {
        let mut b = FakeBoard::new();
        let mut dog = armed(&mut b);
        WatchdogEnable::start(&mut dog, Seconds(5));
        {
            let mut d = b.watchdog.driver.borrow_mut();
            d.ioctl_errno = Some(nix::libc::EIO);
            d.write_errno = Some(nix::libc::EIO);
        }
        Watchdog::feed(&mut dog);
        Watchdog::feed(&mut dog);
        assert_eq!(dog.failures(), 2);
        WatchdogDisable::disable(&mut dog);
        assert_eq!(dog.failures(), 3, "a magic close that could not be written counts");
        {
            let mut d = b.watchdog.driver.borrow_mut();
            d.ioctl_errno = None;
            d.write_errno = None;
        }
        Watchdog::feed(&mut dog);
        assert_eq!(dog.failures(), 0);
    }

    #[test]
    fn a_driver_that_cannot_stop_is_counted_as_a_failed_disable() {
        let mut b = FakeBoard::new();
        // The Bubba 2's mpc8xxx_wdt: once enabled it never stops.
        let mut identity = [0u8; 32];
        identity[..11].copy_from_slice(b"mpc8xxx_wdt");
        b.watchdog.driver.borrow_mut().support.identity = identity;
        let mut dog = armed(&mut b);
        WatchdogEnable::start(&mut dog, Seconds(5));
        WatchdogDisable::disable(&mut dog);
        assert_eq!(dog.failures(), 1, "{:?}", dog.info.cannot_stop());
    }
}
