//! Watchdog devices under /dev (relocated under `--root`).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use super::Root;
use crate::seam::watchdog::{WatchdogDevice, WatchdogPort};

/// Opens real watchdog devices.
pub struct RealWatchdogPort {
    root: Root,
}

impl RealWatchdogPort {
    pub fn new(root: Root) -> RealWatchdogPort {
        RealWatchdogPort { root }
    }
}

/// An open device.
pub struct RealWatchdog {
    file: File,
}

impl WatchdogDevice for RealWatchdog {
    fn keepalive(&mut self) -> io::Result<()> {
        self.file.write_all(b"\0")
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }
}

impl WatchdogPort for RealWatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>> {
        let file = OpenOptions::new().write(true).open(self.root.at(path))?;
        Ok(Box::new(RealWatchdog { file }))
    }
}
