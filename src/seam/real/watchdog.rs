//! Watchdog devices under /dev (relocated under `--root`): the ioctls of
//! include/uapi/linux/watchdog.h with the request numbers computed in
//! `crate::sys::watchdog` (right on every architecture, 32-bit sparc
//! included).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use nix::libc;

use super::Root;
use crate::seam::watchdog::{Support, WatchdogDevice, WatchdogPort};
use crate::sys::watchdog::{self as ioctl, WatchdogInfo};

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
pub(crate) struct RealWatchdog {
    file: File,
}

impl RealWatchdog {
    fn ioctl<T>(&mut self, request: u32, arg: &mut T) -> io::Result<()> {
        ioctl(self.file.as_raw_fd(), request, arg)
    }

    fn int_ioctl(&mut self, request: u32, value: u32) -> io::Result<u32> {
        let mut v = value as libc::c_int;
        self.ioctl(request, &mut v)?;
        Ok(v as u32)
    }
}

impl WatchdogDevice for RealWatchdog {
    fn get_support(&mut self) -> io::Result<Support> {
        let mut info = WatchdogInfo::default();
        self.ioctl(ioctl::WDIOC_GETSUPPORT, &mut info)?;
        Ok(Support { options: info.options, firmware_version: info.firmware_version, identity: info.identity })
    }

    fn get_bootstatus(&mut self) -> io::Result<u32> {
        self.int_ioctl(ioctl::WDIOC_GETBOOTSTATUS, 0)
    }

    fn set_timeout(&mut self, secs: u32) -> io::Result<u32> {
        self.int_ioctl(ioctl::WDIOC_SETTIMEOUT, secs)
    }

    fn get_timeout(&mut self) -> io::Result<u32> {
        self.int_ioctl(ioctl::WDIOC_GETTIMEOUT, 0)
    }

    fn set_options(&mut self, options: u32) -> io::Result<()> {
        self.int_ioctl(ioctl::WDIOC_SETOPTIONS, options).map(|_| ())
    }

    fn keepalive(&mut self) -> io::Result<()> {
        self.int_ioctl(ioctl::WDIOC_KEEPALIVE, 0).map(|_| ())
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }

    fn exec_handover(&mut self, argv: &[&str]) -> io::Error {
        let Some((program, args)) = argv.split_first() else {
            return io::Error::new(io::ErrorKind::InvalidInput, "empty hand-over command");
        };
        let fd = self.file.as_raw_fd();
        if let Err(e) = set_cloexec(fd, false) {
            return e;
        }
        let e = super::spawn::exec_with(program, args, "WDTFD", &fd.to_string());
        // Still here: exec failed; keep the descriptor private again.
        let _ = set_cloexec(fd, true);
        io::Error::new(e.kind(), format!("{program}: {e}"))
    }
}

/// ioctl(fd, request, arg) with a watchdog request number, whose size
/// field is that of `T`. The request type is c_ulong on glibc and c_int
/// on musl (`libc::Ioctl`); the number is the same bits.
fn ioctl<T>(fd: RawFd, request: u32, arg: &mut T) -> io::Result<()> {
    // SAFETY: `arg` is a valid, exclusively borrowed T whose size is the
    // one encoded in `request` (the WDIOC_* numbers of sys::watchdog); a
    // descriptor that is not open only gives EBADF.
    let r = unsafe { libc::ioctl(fd, request as libc::Ioctl, arg as *mut T) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn set_cloexec(fd: i32, on: bool) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own; no pointers.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let flags = if on { flags | libc::FD_CLOEXEC } else { flags & !libc::FD_CLOEXEC };
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl WatchdogPort for RealWatchdogPort {
    fn open(&mut self, path: &Path) -> io::Result<Box<dyn WatchdogDevice>> {
        let file = OpenOptions::new().write(true).open(self.root.at(path))?;
        Ok(Box::new(RealWatchdog { file }))
    }

    fn adopt(&mut self, fd: RawFd) -> io::Result<Box<dyn WatchdogDevice>> {
        if fd <= 2 {
            // Standard input, output or error: never a hand-over.
            return Err(io::Error::from_raw_os_error(libc::EBADF));
        }
        // Fails with EBADF unless the descriptor is open; then keep it
        // from leaking into the commands we run.
        set_cloexec(fd, true)?;
        // A watchdog answers WDIOC_GETSUPPORT; anything else (a file, a
        // pipe, a terminal) says ENOTTY and is left alone. Other errors
        // (ENOSYS under qemu-user) cannot tell, as at open.
        let mut info = WatchdogInfo::default();
        match ioctl(fd, ioctl::WDIOC_GETSUPPORT, &mut info) {
            Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => return Err(e),
            _ => {}
        }
        // SAFETY: WDTFD handed this open descriptor to this process to own;
        // it is consumed once (the caller removes WDTFD), so nothing else
        // in the process owns it.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Box::new(RealWatchdog { file: File::from(owned) }))
    }

    fn holder(&mut self, path: &Path) -> Option<(u32, String)> {
        let proc_dir = self.root.at(Path::new("/proc"));
        let me = std::process::id();
        let mut fallback = None;
        for entry in std::fs::read_dir(&proc_dir).ok()?.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            if pid == me {
                continue;
            }
            let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
            for fd in fds.flatten() {
                let Ok(target) = std::fs::read_link(fd.path()) else { continue };
                let comm = || std::fs::read_to_string(entry.path().join("comm")).map(|s| s.trim().to_string()).unwrap_or_default();
                if target == path || target == self.root.at(path) {
                    return Some((pid, comm()));
                }
                // /dev/watchdog and /dev/watchdogN share one "open" bit.
                if fallback.is_none() && target.starts_with("/dev") && is_watchdog_node(&target) {
                    fallback = Some((pid, comm()));
                }
            }
        }
        fallback
    }
}

fn is_watchdog_node(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("watchdog"))
}
