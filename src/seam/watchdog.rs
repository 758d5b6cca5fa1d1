//! The watchdog device seam: opening a device and the operations the
//! kernel's watchdog API offers (include/uapi/linux/watchdog.h,
//! Documentation/watchdog/watchdog-api.rst). Each method is one system
//! call; the policy (fallbacks, clamping, logging) lives in
//! `crate::watchdog::device`.

use std::io;
use std::os::fd::RawFd;
use std::path::Path;

/// `struct watchdog_info`, decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Support {
    /// WDIOF_* bits the driver supports.
    pub options: u32,
    pub firmware_version: u32,
    /// NUL-padded driver name, e.g. "Software Watchdog".
    pub identity: [u8; 32],
}

impl Support {
    /// The identity up to its first NUL, lossily.
    pub fn identity(&self) -> &str {
        let end = self.identity.iter().position(|b| *b == 0).unwrap_or(self.identity.len());
        let bytes = &self.identity[..end];
        match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""),
        }
    }
}

/// An open watchdog device.
pub trait WatchdogDevice {
    /// WDIOC_GETSUPPORT.
    fn get_support(&mut self) -> io::Result<Support>;
    /// WDIOC_GETBOOTSTATUS: WDIOF_* bits for why the board last booted.
    fn get_bootstatus(&mut self) -> io::Result<u32>;
    /// WDIOC_SETTIMEOUT; returns the value the driver wrote back (the
    /// timeout it really uses).
    fn set_timeout(&mut self, secs: u32) -> io::Result<u32>;
    /// WDIOC_GETTIMEOUT.
    fn get_timeout(&mut self) -> io::Result<u32>;
    /// WDIOC_SETOPTIONS (WDIOS_DISABLECARD, WDIOS_ENABLECARD).
    fn set_options(&mut self, options: u32) -> io::Result<()>;
    /// WDIOC_KEEPALIVE only; the write() fallback is the caller's choice.
    fn keepalive(&mut self) -> io::Result<()>;
    /// write(); any write pets, `b"V"` arms the magic close.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Replace this process with `argv`, the device's descriptor inherited
    /// and named in the environment as `WDTFD=<fd>` (OpenWrt procd's
    /// convention). Returns only on failure.
    fn exec_handover(&mut self, argv: &[&str]) -> io::Error;
}

/// Opening watchdog devices.
pub trait WatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>>;
    /// Take over a descriptor inherited from the previous holder (`WDTFD`,
    /// 3 or above): it must be open (EBADF) and answer WDIOC_GETSUPPORT
    /// like a watchdog (ENOTTY: not one, left untouched); then it is owned
    /// and closed on exec.
    fn adopt(&mut self, fd: RawFd) -> io::Result<Box<dyn WatchdogDevice>>;
    /// Who holds `path` open (pid, command name), when /proc tells; for
    /// the EBUSY message.
    fn holder(&mut self, path: &Path) -> Option<(u32, String)>;
}
