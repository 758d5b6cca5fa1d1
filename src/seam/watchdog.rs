//! The watchdog device seam: opening a device and the few operations the
//! kernel's watchdog API offers (include/uapi/linux/watchdog.h).

use std::io;
use std::path::Path;

/// An open watchdog device.
pub trait WatchdogDevice {
    /// Pet it (WDIOC_KEEPALIVE, or a write when that is unsupported).
    fn keepalive(&mut self) -> io::Result<()>;
    /// Write bytes to the device; `b"V"` arms the magic close.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;
}

/// Opening watchdog devices.
pub trait WatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>>;
}
