//! The `nasboot` binary: parse the command line, pick the seams (real or
//! dry-run), run the command, exit with its status.
//!
//! `#![no_main]`: nasboot has its own C `main` instead of std's start-up
//! (`lang_start`). That start-up installs a stack-overflow guard for the
//! main thread, which asks glibc for the stack's bounds; glibc finds them
//! by parsing /proc/self/maps with sscanf, and that links glibc's whole
//! scanf and strtod family into a static binary, more than the size
//! budget allows (`scripts/build` prints the sizes), for a message that
//! `panic = immediate-abort` never prints anyway. What
//! the rest of that start-up does for a boot-time tool is done in `main`
//! below: standard descriptors guaranteed open, SIGPIPE ignored, stdout
//! flushed at the end. The arguments are read from `main`'s own argv:
//! std's `args()` is filled before `main` by glibc only (musl hands
//! nothing to the init functions, so it is empty there).
#![no_main]

use std::ffi::{c_char, c_int};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, IntoRawFd};

use nasboot::{DryRunFiles, DryRunNetif, DryRunNftables, DryRunRunner, DryRunSysctl, DryRunWatchdogPort};
use nasboot::{Io, Seams, Status};
use nasboot::{RealFiles, RealNetif, RealNftables, RealRunner, RealSysctl, RealWatchdogPort, Root};

/// Size classes that are kept, not given back to the kernel at each free
/// (src/heap.rs).
#[global_allocator]
static GLOBAL: nasboot::Global = nasboot::Global;

/// C's allocator for the static musl builds: what musl allocates itself
/// (a directory stream, a spawn's file actions, the environment) comes
/// from the same heap, and musl's own allocator (mallocng) stays out of
/// the binary. musl calls `__libc_malloc` and
/// `__libc_free` where it must not call a replaced `malloc`
/// (posix_spawn's file actions); here they are the same functions, so a
/// block is always freed by the allocator that gave it. A musl member
/// that still defined one of these would fail the link (a duplicate
/// definition), not go unnoticed. glibc (SPARC) keeps its own.
#[cfg(target_env = "musl")]
mod c_allocator {
    use std::ffi::c_void;

    #[no_mangle]
    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        // SAFETY: C's contract, passed on.
        unsafe { nasboot::c_malloc(size).cast() }
    }

    #[no_mangle]
    unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
        // SAFETY: C's contract, passed on.
        unsafe { nasboot::c_calloc(n, size).cast() }
    }

    #[no_mangle]
    unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: C's contract, passed on.
        unsafe { nasboot::c_realloc(p.cast(), size).cast() }
    }

    #[no_mangle]
    unsafe extern "C" fn free(p: *mut c_void) {
        // SAFETY: C's contract, passed on.
        unsafe { nasboot::c_free(p.cast()) }
    }

    #[no_mangle]
    unsafe extern "C" fn __libc_malloc(size: usize) -> *mut c_void {
        // SAFETY: C's contract, passed on.
        unsafe { malloc(size) }
    }

    #[no_mangle]
    unsafe extern "C" fn __libc_free(p: *mut c_void) {
        // SAFETY: C's contract, passed on.
        unsafe { free(p) }
    }
}

#[no_mangle]
pub extern "C" fn main(argc: c_int, argv: *const *const c_char) -> c_int {
    standard_fds_open();
    ignore_sigpipe();
    if let Some(release) = kernel_below_floor() {
        let (a, b, c) = KERNEL_FLOOR;
        let _ = writeln!(
            io::stderr(),
            "nasboot: this build needs Linux {a}.{b}.{c} or later, and this kernel is {release} (the static musl builds for MIPS and powerpc start on 2.6.19 and 2.6.16)"
        );
        return c_int::from(Status::Failure.code());
    }
    let status = run(args(argc, argv));
    let _ = io::stdout().flush();
    c_int::from(status)
}

/// Descriptors 0, 1 and 2 must be open before anything else is: a boot
/// script or a supervisor may start nasboot with one closed, and the first
/// file opened would then take its number, so that log lines land in an
/// exports file. One `poll` finds the closed ones (POLLNVAL), as std's
/// start-up does; each is filled with /dev/null (open returns the lowest
/// free number, and without close-on-exec, as the tools nasboot runs
/// inherit them). When all three are open, as at every boot, that is one
/// system call, not an open and a close of /dev/null on every start
/// (scripts/bench-board-startup times a start on the emulated boards).
fn standard_fds_open() {
    use nix::fcntl::{open, OFlag};
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    use nix::sys::stat::Mode;
    use std::os::fd::BorrowedFd;
    // SAFETY: the numbers are only polled, never read, written or closed
    // through these borrows; a closed one gives POLLNVAL.
    let mut fds = [0, 1, 2].map(|fd| PollFd::new(unsafe { BorrowedFd::borrow_raw(fd) }, PollFlags::empty()));
    let all_open =
        poll(&mut fds, PollTimeout::ZERO).is_ok_and(|_| fds.iter().all(|p| p.revents().is_some_and(|r| !r.contains(PollFlags::POLLNVAL))));
    if all_open {
        return;
    }
    while let Ok(null) = open("/dev/null", OFlag::O_RDWR, Mode::empty()) {
        if null.as_raw_fd() > 2 {
            break; // 0..=2 are open now; this one closes on drop
        }
        let _ = null.into_raw_fd(); // keep it: it is now stdin, stdout or stderr
    }
}

/// A closed pipe must give EPIPE (which the logger and the watchdog
/// daemon ignore), not kill the process: a supervisor's dead log reader
/// must not stop the watchdog. Children get the default back (std resets
/// SIGPIPE in every child it spawns).
fn ignore_sigpipe() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: SIG_IGN installs no handler code, so nothing can run in
    // signal context; nothing else in the process sets SIGPIPE.
    let _ = unsafe { signal(Signal::SIGPIPE, SigHandler::SigIgn) };
}

/// The oldest kernel this build starts on. glibc 2.36 (Debian 12, built for
/// 3.2) assumes the system calls of 3.2. musl falls back where a newer call
/// is missing (statx, clock_gettime64, pipe2, O_CLOEXEC); what nasboot then
/// calls that has no fallback is linkat(2) (2.6.16, keeping `PATH.bak`) and,
/// on MIPS, set_thread_area(2) for the thread pointer (2.6.19), without
/// which musl cannot start.
const KERNEL_FLOOR: (u32, u32, u32) = if cfg!(not(target_env = "musl")) {
    (3, 2, 0)
} else if cfg!(target_arch = "mips") {
    (2, 6, 19)
} else {
    (2, 6, 16)
};

/// The kernel's release when it is older than `KERNEL_FLOOR`, so that an
/// old board gets a message instead of a failure deep in some step.
fn kernel_below_floor() -> Option<String> {
    let release = nasboot::kernel_release()?;
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse::<u32>().ok()?; // not a version: no verdict
    let mut next = || parts.next().and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    let have = (major, next(), next());
    (have < KERNEL_FLOOR).then_some(release)
}

/// The arguments after the program name, from the C `main`'s argv.
fn args(argc: c_int, argv: *const *const c_char) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    let n = usize::try_from(argc).unwrap_or(0);
    (1..n)
        .map(|i| {
            // SAFETY: the C runtime passes argc valid NUL-terminated strings.
            let arg = unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) };
            std::ffi::OsStr::from_bytes(arg.to_bytes()).to_os_string()
        })
        .collect()
}

fn run(args: Vec<std::ffi::OsString>) -> u8 {
    let cli = match nasboot::parse_args(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(io::stderr(), "nasboot: {e}");
            return Status::Usage.code();
        }
    };
    let level = match cli.verbosity {
        i8::MIN..=-1 => log::LevelFilter::Error,
        0 => log::LevelFilter::Warn,
        1 => log::LevelFilter::Info,
        _ => log::LevelFilter::Debug,
    };
    nasboot::init_logger(level);

    if cli.confirm.is_some() && !cli.dry_run {
        // `firewall apply --confirm` must outlive a dropped SSH session to
        // roll back (firewall::load).
        nasboot::ignore_hangup();
    }
    let root = Root::new(cli.root.clone());
    let stdout = io::stdout();
    let stderr = io::stderr();
    let mut out = stdout.lock();
    // A message is written in pieces (its Display's); held to its newline,
    // each line goes out in one write(2), as the logger's do, so lines
    // from several processes sharing a log do not interleave.
    let mut err = nasboot::Lines::new(stderr.lock());
    let mut io = Io { out: &mut out, err: &mut err };
    let status = if cli.dry_run {
        let mut files = DryRunFiles::new(root.clone());
        let mut sysctl = DryRunSysctl::new(root);
        let mut runner = DryRunRunner::default();
        let mut netif = DryRunNetif::default();
        let mut nft = DryRunNftables::default();
        let mut watchdog = DryRunWatchdogPort;
        let mut seams = Seams {
            files: &mut files,
            sysctl: &mut sysctl,
            runner: &mut runner,
            netif: &mut netif,
            nft: &mut nft,
            watchdog: &mut watchdog,
        };
        nasboot::dispatch(&cli, &mut seams, &mut io)
    } else {
        let mut files = RealFiles::new(root.clone());
        let mut sysctl = RealSysctl::new(root.clone());
        let mut runner = RealRunner;
        let mut netif = RealNetif::new();
        let mut nft = RealNftables::new();
        let mut watchdog = RealWatchdogPort::new(root);
        let mut seams = Seams {
            files: &mut files,
            sysctl: &mut sysctl,
            runner: &mut runner,
            netif: &mut netif,
            nft: &mut nft,
            watchdog: &mut watchdog,
        };
        nasboot::dispatch(&cli, &mut seams, &mut io)
    };
    status.code()
}
