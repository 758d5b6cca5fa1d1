//! The side-effect seams. Every change nasboot makes to a board goes
//! through one of these narrow traits, passed in from main:
//!
//! | seam | what | real | dry-run | fake |
//! |---|---|---|---|---|
//! | [`Files`] | configuration files, kernel files under /proc and /sys | `real::files` | `dryrun` | `fake` |
//! | [`Sysctl`] | /proc/sys | `real::sysctl` | `dryrun` | `fake` |
//! | [`Runner`] | running a tool, argv only, never a shell | `real::runner` | `dryrun` | `fake` |
//! | [`netif::Netif`] | interface ioctls and rtnetlink | `real::netif` | `dryrun` | `fake` |
//! | [`nftables::Nftables`] | nf_tables over NETLINK_NETFILTER | `real::nfnl` | `dryrun` | `fake` |
//! | [`watchdog::WatchdogPort`] | the watchdog device | `real::watchdog` | `dryrun` | `fake` |
//!
//! The real implementations relocate every path under `--root`. The
//! dry-run ones read the real system but only print what they would
//! change. The recording fakes (tests only) keep state in memory and list
//! every effect, so tests can assert that nothing was applied.

pub(crate) mod dryrun;
#[cfg(any(test, feature = "fuzz"))]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod fake;
pub(crate) mod netif;
pub(crate) mod nftables;
pub(crate) mod real;
pub(crate) mod watchdog;

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What [`Files::replace`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replaced {
    /// The file already held exactly these bytes; nothing was written.
    Unchanged,
    /// There was no file; it was created.
    Created,
    /// The old file was kept as a backup (`PATH.bak`) and replaced.
    BackedUp,
}

/// An exclusive lock taken with [`Files::lock`], held until dropped.
#[must_use = "the lock is released when this is dropped"]
pub struct Lock(#[allow(dead_code)] Option<Box<dyn std::any::Any>>);

impl Lock {
    /// No lock held (a dry run, which changes nothing).
    pub fn none() -> Lock {
        Lock(None)
    }
    /// Hold `what` (an open file under `flock`, a fake's record) until dropped.
    pub fn holding(what: Box<dyn std::any::Any>) -> Lock {
        Lock(Some(what))
    }
}

/// Files. Paths are the board's absolute paths; implementations relocate them.
pub trait Files {
    /// Read a whole file (`NotFound` when absent).
    fn read(&mut self, path: &Path) -> io::Result<Vec<u8>>;
    /// Read a whole file into `buf` (cleared first), reusing its capacity:
    /// the watchdog's per-tick /proc reads allocate nothing once `buf` is
    /// large enough. The default reads a fresh copy.
    fn read_into(&mut self, path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.clear();
        buf.extend_from_slice(&self.read(path)?);
        Ok(())
    }
    /// Whether a path exists.
    fn exists(&mut self, path: &Path) -> bool;
    /// Whether a path is a directory (symlinks followed).
    fn is_dir(&mut self, path: &Path) -> bool;
    /// Replace a configuration file atomically: temporary file, fsync,
    /// rename, fsync of the directory; the previous copy is kept as
    /// `PATH.bak`. Identical content is not written at all.
    fn replace(&mut self, path: &Path, data: &[u8]) -> io::Result<Replaced>;
    /// Rename `from` over `to` and fsync the directory: atomic, and
    /// durable once it returns. The default refuses (a seam without it).
    fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let _ = (from, to);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
    /// Write a kernel control file in place (/proc, /sys): one write().
    fn write_kernel(&mut self, path: &Path, data: &[u8]) -> io::Result<()>;
    /// A file's modification time since the epoch (heartbeat files; a
    /// time before 1970 reads as the epoch).
    fn modified(&mut self, path: &Path) -> io::Result<std::time::Duration> {
        let _ = path;
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
    /// Whether paths are relocated under `--root` (an image or a sandbox),
    /// so tools that read fixed host paths must not run.
    fn relocated(&self) -> bool {
        false
    }
    /// Take an exclusive lock on `path` (created, with its directory, if
    /// absent): `flock(2)`, so it goes with the process, however it ends.
    /// With `wait` false, a lock held elsewhere is `WouldBlock`; with
    /// `wait` true, wait until it is released.
    fn lock(&mut self, path: &Path, wait: bool) -> io::Result<Lock>;
}

/// sysctls under /proc/sys, by dotted name.
pub trait Sysctl {
    fn get(&mut self, key: &str) -> io::Result<String>;
    fn set(&mut self, key: &str, value: &str) -> io::Result<()>;
}

/// A command to run: a program and its arguments, never a shell line.
#[derive(Clone, Debug)]
pub struct Cmd<'a> {
    pub program: &'a str,
    pub args: &'a [&'a str],
    /// Bytes for standard input (e.g. a rule set for `nft -f -`).
    pub stdin: Option<&'a [u8]>,
    /// Killed after this long.
    pub timeout: Duration,
}

impl Cmd<'_> {
    /// The argv as one line, for logs and dry runs.
    pub fn display(&self) -> String {
        let mut s = self.program.to_string();
        for a in self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// What a command did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Exit code; None if it was killed by a signal or the timeout.
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// How the command ended, for messages: "exit status 1", "killed by
    /// a signal" or "timed out". A copy, so an error can keep it.
    pub(crate) fn ended(&self) -> Ended {
        Ended { code: self.code, timed_out: self.timed_out }
    }
}

/// [`Output::ended`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ended {
    pub code: Option<i32>,
    pub timed_out: bool,
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended { timed_out: true, .. } => f.write_str("timed out"),
            Ended { code: Some(c), .. } => write!(f, "exit status {c}"),
            Ended { code: None, .. } => f.write_str("killed by a signal"),
        }
    }
}

/// Running tools.
pub trait Runner {
    /// Run a command and wait for it (up to its timeout).
    fn run(&mut self, cmd: &Cmd<'_>) -> io::Result<Output>;
    /// Start a program that runs on (a DHCP client) and do not wait for
    /// it: a session of its own, no stdin, output to /dev/null. `cmd`'s
    /// program is a path (as `which` gave it) or a name on PATH; its stdin
    /// and timeout are not used.
    fn start(&mut self, cmd: &Cmd<'_>) -> io::Result<()>;
    /// Find a program on PATH.
    fn which(&mut self, program: &str) -> Option<PathBuf>;
    /// The file a program on PATH is in the end, symlinks followed: which
    /// binary of a multi-call tool it runs (`iptables-save` ->
    /// `xtables-legacy-multi`). None when it is not on PATH or cannot be
    /// resolved.
    fn resolve(&mut self, program: &str) -> Option<PathBuf>;
}

/// All the seams a command needs, borrowed from main.
pub struct Seams<'a> {
    pub files: &'a mut dyn Files,
    pub sysctl: &'a mut dyn Sysctl,
    pub runner: &'a mut dyn Runner,
    pub netif: &'a mut dyn netif::Netif,
    pub nft: &'a mut dyn nftables::Nftables,
    pub watchdog: &'a mut dyn watchdog::WatchdogPort,
}

#[cfg(test)]
mod tests {
    use super::Output;

    #[test]
    fn how_a_command_ended_reads_as_words() {
        let ended = |code, timed_out| Output { code, timed_out, ..Output::default() }.ended().to_string();
        assert_eq!(ended(Some(1), false), "exit status 1");
        assert_eq!(ended(None, false), "killed by a signal");
        assert_eq!(ended(None, true), "timed out");
    }
}
