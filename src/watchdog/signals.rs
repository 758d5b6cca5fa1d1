//! Signals without handlers or globals: the daemon blocks SIGHUP, SIGINT,
//! SIGTERM, SIGUSR1 and SIGUSR2 with sigprocmask(2) and takes them with
//! sigtimedwait(2), whose timeout is the time to the next pet, so an idle
//! daemon wakes up exactly once per interval. Children started through
//! the Runner get the default mask back (std resets it before exec).
//!
//! Also the real-time knobs: mlockall(2) and SCHED_RR (sched_setscheduler(2)).

use std::io;

use nix::libc;
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::time::{clock_gettime, ClockId};

use super::daemon::Sig;

/// The blocked signals; the old mask comes back on drop.
pub(crate) struct Signals {
    set: SigSet,
    old: SigSet,
}

impl Signals {
    pub(crate) fn block() -> io::Result<Signals> {
        let mut set = SigSet::empty();
        for s in [Signal::SIGHUP, Signal::SIGINT, Signal::SIGTERM, Signal::SIGUSR1, Signal::SIGUSR2] {
            set.add(s);
        }
        let mut old = SigSet::empty();
        nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old)).map_err(io::Error::from)?;
        Ok(Signals { set, old })
    }

    /// Wait up to `timeout_ms` for one of the signals. Allocation-free.
    pub(crate) fn wait(&self, timeout_ms: u64) -> Option<Sig> {
        // A relative timeout of at most an interval (seconds), never a wall
        // clock time: the libc crate's 32-bit musl `time_t` (and the time32
        // sigtimedwait it links on 32-bit musl targets) holds it whatever
        // the year, so the deprecation (musl 1.2's 64-bit time_t) is safe
        // to allow here, and only here.
        #[allow(deprecated)]
        let secs = (timeout_ms / 1000) as libc::time_t;
        let ts = libc::timespec { tv_sec: secs, tv_nsec: ((timeout_ms % 1000) * 1_000_000) as libc::c_long };
        // SAFETY: valid sigset and timespec; the siginfo pointer may be null.
        let signo = unsafe { libc::sigtimedwait(self.set.as_ref(), std::ptr::null_mut(), &ts) };
        match signo {
            libc::SIGHUP => Some(Sig::Reload),
            libc::SIGINT | libc::SIGTERM => Some(Sig::Stop),
            libc::SIGUSR1 => Some(Sig::Status),
            libc::SIGUSR2 => Some(Sig::Handover),
            _ => None, // EAGAIN: the timeout; EINTR: a stop/continue
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&self.old), None);
    }
}

/// Milliseconds on CLOCK_BOOTTIME (keeps counting across suspend).
pub(crate) fn now_ms() -> u64 {
    clock_gettime(ClockId::CLOCK_BOOTTIME)
        .or_else(|_| clock_gettime(ClockId::CLOCK_MONOTONIC))
        .map(|t| t.tv_sec() as u64 * 1000 + t.tv_nsec() as u64 / 1_000_000)
        .unwrap_or(0)
}

/// mlockall(MCL_CURRENT | MCL_FUTURE).
pub(crate) fn lock_memory() -> io::Result<()> {
    use nix::sys::mman::{mlockall, MlockAllFlags};
    mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE).map_err(io::Error::from)
}

/// SCHED_RR at `priority` (1..=99) for this process.
///
/// The system call itself: musl's sched_setscheduler(3) always fails with
/// ENOSYS (the call sets one thread's policy, not a process's, and nasboot
/// runs one thread).
pub(crate) fn realtime(priority: u8) -> io::Result<()> {
    // SAFETY: all-zero is a valid sched_param (musl's has more fields than
    // sched_priority, which the kernel alone reads).
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = libc::c_int::from(priority);
    // SAFETY: pid 0 is this process; `param` is valid.
    if unsafe { libc::syscall(libc::SYS_sched_setscheduler, 0, libc::SCHED_RR, &param as *const libc::sched_param) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
