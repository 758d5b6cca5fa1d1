//! The fake [`WatchdogPort`]: a watchdog driver's ioctls and its magic close.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::Journal;
use crate::seam::watchdog::{Support, WatchdogDevice, WatchdogPort};

/// How a fake watchdog driver behaves (default: like softdog).
#[derive(Clone, Debug)]
pub(crate) struct FakeDriver {
    pub support: Support,
    pub bootstatus: u32,
    /// SETTIMEOUT outside min..=max gives EINVAL.
    pub min_timeout: u32,
    pub max_timeout: u32,
    /// The timeout in use.
    pub timeout: u32,
    /// Every ioctl fails with this errno (ENOSYS under qemu-user, ENOTTY
    /// for a file that is no watchdog).
    pub ioctl_errno: Option<i32>,
    /// write() fails with this errno.
    pub write_errno: Option<i32>,
    /// Stopped by DISABLECARD or by a close after 'V'.
    pub stopped: bool,
    /// The kernel's "magic character seen" flag (_WDOG_ALLOW_RELEASE):
    /// every write clears it, then sets it if the bytes hold a 'V'; a
    /// close clears it only when it stops an active watchdog, so after
    /// 'V' plus DISABLECARD it outlives the descriptor, as in
    /// drivers/watchdog/watchdog_dev.c.
    pub expect_close: bool,
    /// Pets so far (KEEPALIVE or write).
    pub pets: u32,
}

impl Default for FakeDriver {
    fn default() -> Self {
        let mut identity = [0u8; 32];
        identity[..17].copy_from_slice(b"Software Watchdog");
        FakeDriver {
            support: Support { options: 0x8180, firmware_version: 0, identity },
            bootstatus: 0,
            min_timeout: 1,
            max_timeout: 65535,
            timeout: 60,
            ioctl_errno: None,
            write_errno: None,
            stopped: false,
            expect_close: false,
            pets: 0,
        }
    }
}

pub(crate) type SharedDriver = Rc<RefCell<FakeDriver>>;

#[derive(Default)]
pub(crate) struct FakeWatchdogPort {
    /// Devices that exist.
    pub devices: BTreeSet<PathBuf>,
    pub journal: Journal,
    /// The driver behind every device.
    pub driver: SharedDriver,
    /// Opening gives EBUSY; `holder` names this process.
    pub busy: Option<(u32, String)>,
    /// Descriptors that `adopt` accepts.
    pub inherited: BTreeSet<i32>,
}

pub(crate) struct FakeWatchdog {
    pub path: PathBuf,
    pub journal: Journal,
    pub driver: SharedDriver,
}

impl FakeWatchdog {
    fn ioctl(&self) -> io::Result<std::cell::RefMut<'_, FakeDriver>> {
        let d = self.driver.borrow_mut();
        match d.ioctl_errno {
            Some(e) => Err(io::Error::from_raw_os_error(e)),
            None => Ok(d),
        }
    }
    fn log(&self, what: String) {
        self.journal.borrow_mut().push(what);
    }
}

impl WatchdogDevice for FakeWatchdog {
    fn get_support(&mut self) -> io::Result<Support> {
        Ok(self.ioctl()?.support)
    }
    fn get_bootstatus(&mut self) -> io::Result<u32> {
        Ok(self.ioctl()?.bootstatus)
    }
    fn set_timeout(&mut self, secs: u32) -> io::Result<u32> {
        let mut d = self.ioctl()?;
        if secs < d.min_timeout || secs > d.max_timeout {
            drop(d);
            self.log(format!("settimeout {} {secs} EINVAL", self.path.display()));
            return Err(io::Error::from_raw_os_error(nix::libc::EINVAL));
        }
        d.timeout = secs;
        d.pets += 1;
        drop(d);
        self.log(format!("settimeout {} {secs}", self.path.display()));
        Ok(secs)
    }
    fn get_timeout(&mut self) -> io::Result<u32> {
        Ok(self.ioctl()?.timeout)
    }
    fn set_options(&mut self, options: u32) -> io::Result<()> {
        let mut d = self.ioctl()?;
        if options & 1 != 0 {
            d.stopped = true;
        }
        if options & 2 != 0 {
            d.stopped = false;
        }
        drop(d);
        self.log(format!("setoptions {} {options}", self.path.display()));
        Ok(())
    }
    fn keepalive(&mut self) -> io::Result<()> {
        self.ioctl()?.pets += 1;
        self.log(format!("pet {}", self.path.display()));
        Ok(())
    }
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut d = self.driver.borrow_mut();
        if let Some(e) = d.write_errno {
            return Err(io::Error::from_raw_os_error(e));
        }
        d.pets += 1;
        d.expect_close = bytes.contains(&b'V');
        drop(d);
        self.log(format!("write {} {:?}", self.path.display(), String::from_utf8_lossy(bytes)));
        Ok(())
    }
    fn exec_handover(&mut self, argv: &[&str]) -> io::Error {
        self.log(format!("exec WDTFD=3 {}", argv.join(" ")));
        io::Error::from_raw_os_error(nix::libc::ENOENT)
    }
}

impl Drop for FakeWatchdog {
    fn drop(&mut self) {
        let mut d = self.driver.borrow_mut();
        if !d.stopped && d.expect_close {
            d.stopped = true;
            d.expect_close = false;
        }
        drop(d);
        self.log(format!("close {}", self.path.display()));
    }
}

impl WatchdogPort for FakeWatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>> {
        if !self.devices.contains(path) {
            return Err(io::Error::from(io::ErrorKind::NotFound));
        }
        if self.busy.is_some() {
            return Err(io::Error::from_raw_os_error(nix::libc::EBUSY));
        }
        self.journal.borrow_mut().push(format!("open {}", path.display()));
        self.driver.borrow_mut().stopped = false;
        Ok(Box::new(FakeWatchdog { path: path.to_path_buf(), journal: self.journal.clone(), driver: self.driver.clone() }))
    }
    fn adopt(&mut self, fd: i32) -> io::Result<Box<dyn WatchdogDevice>> {
        if !self.inherited.contains(&fd) {
            return Err(io::Error::from_raw_os_error(nix::libc::EBADF));
        }
        if let Some(e @ nix::libc::ENOTTY) = self.driver.borrow().ioctl_errno {
            return Err(io::Error::from_raw_os_error(e));
        }
        self.journal.borrow_mut().push(format!("adopt {fd}"));
        Ok(Box::new(FakeWatchdog { path: PathBuf::from(format!("fd{fd}")), journal: self.journal.clone(), driver: self.driver.clone() }))
    }
    fn holder(&mut self, _path: &Path) -> Option<(u32, String)> {
        self.busy.clone()
    }
}
