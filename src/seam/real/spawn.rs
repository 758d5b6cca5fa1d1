//! Starting programs without `std::process::Command`: what it did for the
//! runner (`posix_spawnp` with pipes) and for the watchdog hand-over
//! (`execvpe` with one variable added to the environment), step for step as
//! the pinned std does it, with none of its general machinery (its
//! environment map, fork/exec fallback and pidfd support, which the
//! binary's size budget has no room for). Never a shell.
//!
//! What std does and this keeps: argv[0] is the program as given; a NUL
//! byte in the program or an argument is refused before anything else
//! ("nul byte found in provided data"); the child's stdin, stdout and
//! stderr are dup2'd from close-on-exec pipes (or /dev/null); SIGPIPE is
//! reset to its default in the new program (main.rs ignores it), the
//! signal mask is inherited; the environment is ours, and for the
//! hand-over sorted by name with the variable set, as std's map built it.

use std::ffi::{CString, OsString};
use std::fs::File;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use nix::libc;

unsafe extern "C" {
    static mut environ: *const *const libc::c_char;
}

fn nul_error() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "nul byte found in provided data")
}

/// A NULL-terminated argv (or envp) and the strings it points into.
struct CStrings {
    _strings: Vec<CString>,
    ptrs: Vec<*const libc::c_char>,
}

impl CStrings {
    fn new(items: Vec<Vec<u8>>) -> io::Result<CStrings> {
        let strings = items.into_iter().map(CString::new).collect::<Result<Vec<_>, _>>().map_err(|_| nul_error())?;
        let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        Ok(CStrings { _strings: strings, ptrs })
    }

    fn argv(program: &[u8], args: &[&str]) -> io::Result<CStrings> {
        let mut items = Vec::with_capacity(args.len() + 1);
        items.push(program.to_vec());
        items.extend(args.iter().map(|a| a.as_bytes().to_vec()));
        CStrings::new(items)
    }
}

/// A pipe, both ends close-on-exec: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded: both are open descriptors we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// posix_spawn's functions return an errno instead of setting it.
fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(ret))
    }
}

/// A started program, until it is waited for.
pub(crate) struct Child {
    pid: libc::pid_t,
    /// The wait status once reaped.
    status: Option<libc::c_int>,
}

/// Our ends of a started program's pipes.
pub(crate) struct Spawned {
    pub child: Child,
    pub stdin: Option<File>,
    pub stdout: File,
    pub stderr: File,
}

/// Start `program` (a path) with `args`; its stdin a pipe when `stdin`,
/// else /dev/null; stdout and stderr pipes.
pub(crate) fn spawn(program: &Path, args: &[&str], stdin: bool) -> io::Result<Spawned> {
    let argv = CStrings::argv(program.as_os_str().as_bytes(), args)?;
    let (their_in, our_in) = if stdin {
        let (r, w) = pipe()?;
        (r, Some(File::from(w)))
    } else {
        (OwnedFd::from(File::open("/dev/null")?), None)
    };
    let (our_out, their_out) = pipe()?;
    let (our_err, their_err) = pipe()?;
    let pid = spawn_with(&argv, [their_in.as_raw_fd(), their_out.as_raw_fd(), their_err.as_raw_fd()], 0)?;
    Ok(Spawned { child: Child { pid, status: None }, stdin: our_in, stdout: File::from(our_out), stderr: File::from(our_err) })
}

/// Start `program` (a path) with `args` in a session of its own, its
/// stdin, stdout and stderr /dev/null, and leave it running: a daemon
/// that stays in the foreground. Not waited for: when nasboot exits first
/// it goes to init, as a daemon that forked itself would.
pub(crate) fn start(program: &Path, args: &[&str]) -> io::Result<()> {
    let argv = CStrings::argv(program.as_os_str().as_bytes(), args)?;
    // SAFETY: open() of a NUL-terminated literal path.
    let fd = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: open succeeded: a descriptor we now own (closed on return).
    let null = unsafe { OwnedFd::from_raw_fd(fd) };
    spawn_with(&argv, [null.as_raw_fd(); 3], libc::POSIX_SPAWN_SETSID as libc::c_int).map(drop)
}

/// posix_spawnp of `argv` with `fds` dup2'd to 0, 1 and 2, SIGPIPE back to
/// its default, our environment; `flags` added to the spawn's (SETSID).
fn spawn_with(argv: &CStrings, fds: [RawFd; 3], flags: libc::c_int) -> io::Result<libc::pid_t> {
    struct Actions(MaybeUninit<libc::posix_spawn_file_actions_t>);
    impl Drop for Actions {
        fn drop(&mut self) {
            // SAFETY: initialised before this guard was made.
            unsafe { libc::posix_spawn_file_actions_destroy(self.0.as_mut_ptr()) };
        }
    }
    struct Attrs(MaybeUninit<libc::posix_spawnattr_t>);
    impl Drop for Attrs {
        fn drop(&mut self) {
            // SAFETY: initialised before this guard was made.
            unsafe { libc::posix_spawnattr_destroy(self.0.as_mut_ptr()) };
        }
    }
    // SAFETY: the attributes and file actions are initialised before use
    // and destroyed once (the guards); argv's pointers live in `argv`, a
    // NULL-terminated array; environ is the process's environment, which
    // nasboot never changes.
    unsafe {
        let mut attrs = MaybeUninit::uninit();
        check(libc::posix_spawnattr_init(attrs.as_mut_ptr()))?;
        let mut attrs = Attrs(attrs);
        let mut actions = MaybeUninit::uninit();
        check(libc::posix_spawn_file_actions_init(actions.as_mut_ptr()))?;
        let mut actions = Actions(actions);
        for (fd, to) in fds.into_iter().zip([libc::STDIN_FILENO, libc::STDOUT_FILENO, libc::STDERR_FILENO]) {
            check(libc::posix_spawn_file_actions_adddup2(actions.0.as_mut_ptr(), fd, to))?;
        }
        let mut default = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(default.as_mut_ptr());
        libc::sigaddset(default.as_mut_ptr(), libc::SIGPIPE);
        check(libc::posix_spawnattr_setsigdefault(attrs.0.as_mut_ptr(), default.as_ptr()))?;
        check(libc::posix_spawnattr_setflags(attrs.0.as_mut_ptr(), (libc::POSIX_SPAWN_SETSIGDEF | flags) as _))?;
        let mut pid = 0;
        check(libc::posix_spawnp(
            &mut pid,
            argv.ptrs[0],
            actions.0.as_ptr(),
            attrs.0.as_ptr(),
            argv.ptrs.as_ptr() as *const *mut libc::c_char,
            environ as *const *mut libc::c_char,
        ))?;
        Ok(pid)
    }
}

impl Child {
    /// The exit code once it exited (None: killed by a signal).
    fn code(status: libc::c_int) -> Option<i32> {
        libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status))
    }

    /// Its exit status if it has exited: Some(code), code None for a
    /// signal. Never waits.
    pub(crate) fn try_wait(&mut self) -> io::Result<Option<Option<i32>>> {
        if let Some(st) = self.status {
            return Ok(Some(Child::code(st)));
        }
        let mut st = 0;
        // SAFETY: waitpid on our own child, with a valid status pointer.
        let pid = unsafe { libc::waitpid(self.pid, &mut st, libc::WNOHANG) };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            return Ok(None);
        }
        self.status = Some(st);
        Ok(Some(Child::code(st)))
    }

    /// Waits for it to exit.
    pub(crate) fn wait(&mut self) -> io::Result<Option<i32>> {
        if let Some(st) = self.status {
            return Ok(Child::code(st));
        }
        let mut st = 0;
        loop {
            // SAFETY: as in try_wait.
            if unsafe { libc::waitpid(self.pid, &mut st, 0) } >= 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        self.status = Some(st);
        Ok(Child::code(st))
    }

    /// SIGKILL, unless it has been waited for already.
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: a signal to our own, not yet reaped, child.
        if unsafe { libc::kill(self.pid, libc::SIGKILL) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Our environment as std's map held it for a command with one variable
/// set: `NAME=VALUE` items by name, the last of a name kept, `key` set.
fn env_with(key: &str, value: &str) -> Vec<Vec<u8>> {
    let mut vars: Vec<(OsString, OsString)> = Vec::new();
    for (k, v) in std::env::vars_os().chain([(OsString::from(key), OsString::from(value))]) {
        match vars.iter_mut().find(|(n, _)| *n == k) {
            Some(slot) => slot.1 = v,
            None => vars.push((k, v)),
        }
    }
    vars.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    vars.into_iter()
        .map(|(k, v)| {
            let mut item = k.into_vec();
            item.push(b'=');
            item.extend_from_slice(v.as_bytes());
            item
        })
        .collect()
}

/// Replace this process with `program` (looked up on PATH unless it holds
/// a `/`) and `args`, with `key=value` added to the environment. Returns
/// only on failure, as std's `exec` did: SIGPIPE is then at its default.
pub(crate) fn exec_with(program: &str, args: &[&str], key: &str, value: &str) -> io::Error {
    let argv = match CStrings::argv(program.as_bytes(), args) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let envp = match CStrings::new(env_with(key, value)) {
        Ok(e) => e,
        Err(e) => return e,
    };
    // SAFETY: signal() with SIG_DFL; argv and envp are NULL-terminated
    // arrays of pointers into strings that outlive the exec attempt.
    unsafe {
        if libc::signal(libc::SIGPIPE, libc::SIG_DFL) == libc::SIG_ERR {
            return io::Error::last_os_error();
        }
        libc::execvpe(argv.ptrs[0], argv.ptrs.as_ptr(), envp.ptrs.as_ptr());
        io::Error::last_os_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// What std's Command built: a map of our variables, the one set.
    #[test]
    fn hand_over_environment_is_std_s() {
        let mut map: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
        map.insert("WDTFD".into(), "3".into());
        let want: Vec<Vec<u8>> = map.into_iter().map(|(k, v)| [k.as_bytes(), b"=", v.as_bytes()].concat()).collect();
        assert_eq!(env_with("WDTFD", "3"), want);
    }

    /// The refusals and failures read as std's did.
    #[test]
    fn errors_are_std_s() {
        use std::process::{Command, Stdio};
        let std_err = |p: &str, a: &str| {
            Command::new(p).arg(a).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map(|_| ()).unwrap_err()
        };
        let ours = spawn(Path::new("/bin/true"), &["a\0b"], false).map(|_| ()).unwrap_err();
        let theirs = std_err("/bin/true", "a\0b");
        assert_eq!((ours.kind(), ours.to_string()), (theirs.kind(), theirs.to_string()));
        let e = exec_with("true", &["a\0b"], "WDTFD", "3");
        assert_eq!((e.kind(), e.to_string()), (theirs.kind(), theirs.to_string()));
        // A file that is not executable: EACCES from posix_spawn, where
        // the platform reports it (qemu-user may not: then neither does).
        let dir = std::env::temp_dir().join(format!("nasboot-spawn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("not-executable");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        let ours = spawn(&f, &[], false).map(|_| ()).map_err(|e| (e.kind(), e.to_string()));
        let theirs = Command::new(&f)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map(|mut c| {
                let _ = c.wait();
            })
            .map_err(|e| (e.kind(), e.to_string()));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(ours.is_err(), theirs.is_err());
        if let (Err(o), Err(t)) = (ours, theirs) {
            assert_eq!(o, t);
        }
    }
}
