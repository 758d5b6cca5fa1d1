//! Running tools: posix_spawn with an argv (`spawn`, as
//! `std::process::Command` did it), never a shell.
//!
//! No threads and no polling with sleeps while the tool talks: our ends of
//! its pipes are non-blocking and one poll(2) loop feeds its stdin while it
//! collects stdout and stderr, so a large stdin (an nft rule file) cannot
//! deadlock against a tool that writes before it has read all its input.
//! poll's timeout runs to the deadline, where the child is killed. Once
//! both outputs are at end of file the child has (almost always) exited;
//! a tool that closed them but keeps running is waited for with short,
//! growing naps, still only up to the deadline.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::spawn::{self, Child, Spawned};
use crate::seam::{Cmd, Output, Runner};

/// Bytes read from a pipe per read(2), into a buffer on the stack.
const CHUNK: usize = 8192;
/// First and longest nap while waiting for a child that closed its outputs
/// but has not exited yet. An exiting child closes its pipes a moment
/// before it can be reaped, so the first nap is short: it bounds the time
/// every short command takes (scripts/bench-net times them).
const FIRST_NAP: Duration = Duration::from_micros(100);
const MAX_NAP: Duration = Duration::from_millis(50);

/// Runs programs on this machine.
#[derive(Default)]
pub struct RealRunner;

/// Our ends of the child's pipes, each `None` once closed (all of stdin
/// written, or an output at end of file), and what came out of them.
struct Pipes<'a> {
    stdin: Option<File>,
    /// What is still to be written to stdin.
    input: &'a [u8],
    stdout: Option<File>,
    stderr: Option<File>,
    out: Vec<u8>,
    err: Vec<u8>,
}

fn nonblocking(fd: impl AsFd) -> io::Result<()> {
    let flags = OFlag::from_bits_retain(fcntl(&fd, FcntlArg::F_GETFL)?);
    fcntl(&fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// Reads what `pipe` holds now into `buf`; closes it at end of file. A
/// read error ends it too: the child's status tells what went wrong.
fn fill<R: Read>(pipe: &mut Option<R>, buf: &mut Vec<u8>) {
    let Some(r) = pipe else { return };
    let mut chunk = [0u8; CHUNK];
    loop {
        match r.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(_) => break,
        }
    }
    *pipe = None;
}

/// Writes as much of `input` as the pipe takes now; closes stdin once all
/// of it is written. A tool that exits early closes the pipe (EPIPE; main.rs
/// ignores SIGPIPE): stdin is closed too, and its status says why.
fn feed(pipe: &mut Option<File>, input: &mut &[u8]) {
    let Some(w) = pipe else { return };
    while !input.is_empty() {
        match w.write(input) {
            Ok(0) => break,
            Ok(n) => *input = &input[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(_) => break,
        }
    }
    *pipe = None;
}

/// poll's timeout for the time from `now` to `deadline`, rounded up to a
/// whole millisecond so that poll does not return just before it.
fn until(now: Instant, deadline: Option<Instant>) -> PollTimeout {
    let Some(d) = deadline else { return PollTimeout::NONE };
    // Whole microseconds, then up to milliseconds, as `as_micros()` would
    // give them but in 64 bits (saturating: poll waits at most MAX anyway).
    let left = d.saturating_duration_since(now);
    let micros = left.as_secs().saturating_mul(1_000_000).saturating_add(u64::from(left.subsec_micros()));
    let ms = micros.div_ceil(1000);
    PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
}

impl Pipes<'_> {
    fn set_nonblocking(&self) -> io::Result<()> {
        if let Some(p) = &self.stdin {
            nonblocking(p)?;
        }
        if let Some(p) = &self.stdout {
            nonblocking(p)?;
        }
        if let Some(p) = &self.stderr {
            nonblocking(p)?;
        }
        Ok(())
    }

    /// Waits up to `timeout` for the open pipes; which of stdin, stdout and
    /// stderr have something to say (data, room, end of file or an error).
    fn ready(&self, timeout: PollTimeout) -> nix::Result<[bool; 3]> {
        let ends = [
            self.stdin.as_ref().map(|p| (p.as_fd(), PollFlags::POLLOUT)),
            self.stdout.as_ref().map(|p| (p.as_fd(), PollFlags::POLLIN)),
            self.stderr.as_ref().map(|p| (p.as_fd(), PollFlags::POLLIN)),
        ];
        let mut fds = heapless::Vec::<PollFd<'_>, 3>::new();
        let mut which = heapless::Vec::<usize, 3>::new();
        for (i, (fd, events)) in ends.into_iter().enumerate().filter_map(|(i, e)| Some((i, e?))) {
            // At most three: neither push can fail.
            let _ = fds.push(PollFd::new(fd, events));
            let _ = which.push(i);
        }
        let mut ready = [false; 3];
        if poll(&mut fds, timeout)? > 0 {
            for (p, &i) in fds.iter().zip(&which) {
                // Flags nix does not know: try the pipe, read/write decide.
                ready[i] = p.any().unwrap_or(true);
            }
        }
        Ok(ready)
    }

    /// Feeds stdin and drains the outputs until all pipes are closed (true)
    /// or the deadline passes (false).
    fn pump(&mut self, deadline: Option<Instant>) -> io::Result<bool> {
        feed(&mut self.stdin, &mut self.input);
        while self.stdin.is_some() || self.stdout.is_some() || self.stderr.is_some() {
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Ok(false);
            }
            let [w, o, e] = match self.ready(until(now, deadline)) {
                Ok(r) => r,
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            };
            if w {
                feed(&mut self.stdin, &mut self.input);
            }
            if o {
                fill(&mut self.stdout, &mut self.out);
            }
            if e {
                fill(&mut self.stderr, &mut self.err);
            }
        }
        Ok(true)
    }
}

/// The child's status once it exits (its exit code, None for a signal),
/// or None at the deadline. For after its outputs closed: it has normally
/// exited already or is about to.
fn reap(child: &mut Child, deadline: Option<Instant>) -> io::Result<Option<Option<i32>>> {
    let mut nap = FIRST_NAP;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok(Some(st));
        }
        let now = Instant::now();
        let left = match deadline {
            Some(d) if now >= d => return Ok(None),
            Some(d) => d - now,
            None => nap,
        };
        thread::sleep(nap.min(left));
        nap = (nap * 2).min(MAX_NAP);
    }
}

impl Runner for RealRunner {
    fn run(&mut self, cmd: &Cmd<'_>) -> io::Result<Output> {
        // Look the program up first: under qemu-user an exec failure in the
        // child shows up as exit 127 instead of ENOENT, so a missing tool
        // would read as a tool that failed.
        let program = self
            .which(cmd.program)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{}: not found on PATH", cmd.program)))?;
        let Spawned { mut child, stdin, stdout, stderr } =
            spawn::spawn(&program, cmd.args, cmd.stdin.is_some()).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", cmd.program)))?;
        let deadline = Instant::now().checked_add(cmd.timeout);
        let mut pipes = Pipes {
            stdin,
            input: cmd.stdin.unwrap_or_default(),
            stdout: Some(stdout),
            stderr: Some(stderr),
            out: Vec::new(),
            err: Vec::new(),
        };
        // At the deadline with a pipe still open the child may have exited
        // anyway (a daemon it started holds the pipe): its status stands.
        let status = pipes.set_nonblocking().and_then(|()| pipes.pump(deadline)).and_then(|closed| {
            if closed {
                reap(&mut child, deadline)
            } else {
                child.try_wait()
            }
        });
        let status = match status {
            Ok(Some(st)) => Some(st),
            Ok(None) => {
                let _ = child.kill();
                child.wait()?;
                // What the pipes still hold; never waits.
                fill(&mut pipes.stdout, &mut pipes.out);
                fill(&mut pipes.stderr, &mut pipes.err);
                None
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::new(e.kind(), format!("{}: {e}", cmd.program)));
            }
        };
        Ok(Output { code: status.flatten(), timed_out: status.is_none(), stdout: pipes.out, stderr: pipes.err })
    }

    fn start(&mut self, cmd: &Cmd<'_>) -> io::Result<()> {
        // The program is the path `which` gave (the DHCP client's): no
        // second lookup; posix_spawnp takes a name on PATH too.
        spawn::start(Path::new(cmd.program), cmd.args)
    }

    fn which(&mut self, program: &str) -> Option<PathBuf> {
        if program.contains('/') {
            let p = PathBuf::from(program);
            return p.is_file().then_some(p);
        }
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
        std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
    }

    fn resolve(&mut self, program: &str) -> Option<PathBuf> {
        std::fs::canonicalize(self.which(program)?).ok()
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// Runs PROGRAM with ARGS through the real runner.
    fn run(program: &str, args: &[&str], stdin: Option<&[u8]>, timeout: Duration) -> io::Result<Output> {
        RealRunner.run(&Cmd { program, args, stdin, timeout })
    }

    #[test]
    fn poll_timeout_is_whole_microseconds_rounded_up_to_milliseconds() {
        let now = Instant::now();
        for d in [0, 1, 999, 1000, 1001, 1_000_500, 2_500_999_999, 5_000_000_000_000] {
            let d = Duration::from_nanos(d);
            let want = PollTimeout::try_from(d.as_micros().div_ceil(1000)).unwrap_or(PollTimeout::MAX);
            assert_eq!(until(now, Some(now + d)), want, "{d:?}");
        }
        assert_eq!(until(now, None), PollTimeout::NONE);
    }

    #[test]
    fn argv_is_not_a_shell_line() {
        let out = run("echo", &["$HOME", ";", "id"], None, Duration::from_secs(5)).unwrap();
        assert_eq!(out.stdout, b"$HOME ; id\n");
        assert!(out.success());
    }

    #[test]
    fn stdin_and_exit_code() {
        let out = run("sh", &["-c", "cat; exit 3"], Some(b"rules\n"), Duration::from_secs(5)).unwrap();
        assert_eq!(out.stdout, b"rules\n");
        assert_eq!(out.code, Some(3));
    }

    #[test]
    fn hung_command_is_killed_at_its_timeout() {
        let start = Instant::now();
        let out = run("sleep", &["30"], None, Duration::from_millis(200)).unwrap();
        assert!(out.timed_out);
        assert_eq!(out.code, None);
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn missing_program_names_it() {
        let e = run("no-such-tool-nasboot", &[], None, Duration::from_secs(1)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("no-such-tool-nasboot"));
    }

    /// 256 KiB is more than a pipe holds (64 KiB on Linux): `cat` blocks on
    /// its output while we still write, unless both are multiplexed.
    #[test]
    fn stdin_larger_than_a_pipe_comes_back_intact() {
        let data: Vec<u8> = (0..256 * 1024u32).map(|i| (i % 251) as u8 ^ (i >> 12) as u8).collect();
        let out = run("cat", &[], Some(&data), Duration::from_secs(60)).unwrap();
        assert!(!out.timed_out);
        assert_eq!(out.code, Some(0));
        assert_eq!(out.stdout.len(), data.len());
        assert!(out.stdout == data, "stdout differs from stdin");
        assert!(out.stderr.is_empty());
    }

    /// More than a pipe's worth on stdout, then on stderr: reading one
    /// output to its end before the other would deadlock.
    #[test]
    fn stdout_and_stderr_both_come_back_in_full() {
        let script = "head -c 200000 /dev/zero; head -c 200000 /dev/zero | tr '\\0' e >&2";
        let out = run("sh", &["-c", script], None, Duration::from_secs(60)).unwrap();
        assert!(!out.timed_out);
        assert_eq!(out.code, Some(0));
        assert_eq!(out.stdout.len(), 200_000);
        assert!(out.stdout.iter().all(|&b| b == 0));
        assert_eq!(out.stderr.len(), 200_000);
        assert!(out.stderr.iter().all(|&b| b == b'e'));
    }

    /// A tool that exits without reading its input: the write fails with
    /// EPIPE, and the tool's status is what comes back.
    #[test]
    fn tool_that_ignores_a_large_stdin_reports_its_status() {
        let data = vec![b'x'; 256 * 1024];
        let out = run("sh", &["-c", "echo bye; exit 4"], Some(&data), Duration::from_secs(60)).unwrap();
        assert!(!out.timed_out);
        assert_eq!(out.code, Some(4));
        assert_eq!(out.stdout, b"bye\n");
    }

    /// End of file on both outputs does not mean the tool exited: it is
    /// still killed at its timeout.
    #[test]
    fn tool_that_closes_its_output_is_killed_at_its_timeout() {
        let start = Instant::now();
        let out = run("sh", &["-c", "exec >&- 2>&-; exec sleep 30"], None, Duration::from_millis(300)).unwrap();
        assert!(out.timed_out);
        assert_eq!(out.code, None);
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    /// A tool that exits but leaves a process holding its stdout: at the
    /// deadline its own status stands (it did not time out).
    #[test]
    fn exited_tool_whose_output_is_held_open_keeps_its_status() {
        let out = run("sh", &["-c", "echo started; sleep 5 & exit 5"], None, Duration::from_secs(1)).unwrap();
        assert!(!out.timed_out);
        assert_eq!(out.code, Some(5));
        assert_eq!(out.stdout, b"started\n");
    }
}
