//! `run --background`: once the apply is in force the watchdog daemon goes
//! on in a child, and the command returns with the apply's status. An init
//! script that runs `nasboot run -b` goes on only when the links, the
//! firewall, the exports and the watchdog are in place, at the cost of one
//! process, where `check`, `apply` and a backgrounded `run` would observe
//! and plan the whole board twice, and a script would have to sleep to
//! see that the daemon had not exited.
//!
//! Process-level, so not behind a seam: fork(2), setsid(2) and the
//! standard descriptors. Tested where a real watchdog is: on the emulated
//! board's softdog by tests/watchdog/board-healthy.sh (the status, the
//! pidfile, a stderr pipe released, the daemon petting, SIGTERM's magic
//! close) and by the init scripts' board suites (tests/pkg/board-*.sh).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use nix::libc;

/// The pidfile, made before the fork (a directory that cannot take it is
/// found while nothing runs yet), filled and renamed into place by the
/// parent once it knows the child's pid.
pub(crate) struct Pidfile {
    path: PathBuf,
    tmp: PathBuf,
    file: File,
}

impl Pidfile {
    pub(crate) fn create(path: &Path) -> io::Result<Self> {
        let mut name = path.as_os_str().to_os_string();
        name.push(".nasboot-tmp");
        let tmp = PathBuf::from(name);
        let file = File::create(&tmp)?;
        Ok(Pidfile { path: path.to_path_buf(), tmp, file })
    }

    /// The pid, then the rename: a reader sees the whole file or none.
    fn fill(mut self, pid: i32) -> io::Result<()> {
        let done = writeln!(self.file, "{pid}").and_then(|()| fs::rename(&self.tmp, &self.path));
        if done.is_err() {
            let _ = fs::remove_file(&self.tmp);
        }
        done
    }
}

/// Which side of the fork this is.
pub(crate) enum Side {
    /// The daemon: a new session, stdin and stdout on /dev/null.
    Child,
    /// The command, to return. `pidfile`: whether the pidfile went in
    /// place (the child runs either way).
    Parent { pid: i32, pidfile: io::Result<()> },
}

/// fork(2). The child leaves the caller's session and puts /dev/null on
/// stdin and stdout. Its stderr becomes `log` (opened to append) where
/// given; otherwise /dev/null where it is a pipe, whose reader
/// (`out=$(nasboot run -b 2>&1)`) would wait for the daemon's end, and
/// it is kept where it is a file or a console. A `log` that cannot be
/// opened counts as none.
pub(crate) fn detach(pidfile: Option<Pidfile>, log: Option<&Path>) -> io::Result<Side> {
    let log = log.and_then(|l| std::ffi::CString::new(l.as_os_str().as_encoded_bytes()).ok());
    // SAFETY: nasboot runs on one thread (the runner polls; no reader
    // threads), so the child may go on running Rust code after fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        if let Some(p) = pidfile {
            let _ = fs::remove_file(&p.tmp);
        }
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        return Ok(Side::Parent { pid, pidfile: pidfile.map_or(Ok(()), |p| p.fill(pid)) });
    }
    drop(pidfile);
    // SAFETY: plain system calls on descriptors this process owns; a
    // failure leaves the descriptor as it was, which is harmless.
    unsafe {
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            let appended =
                log.map_or(-1, |l| libc::open(l.as_ptr(), libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_CLOEXEC, 0o640));
            let mut st: libc::stat = std::mem::zeroed();
            if appended >= 0 {
                libc::dup2(appended, 2);
                libc::close(appended);
            } else if libc::fstat(2, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFIFO {
                libc::dup2(null, 2);
            }
            libc::close(null);
        }
    }
    Ok(Side::Child)
}
