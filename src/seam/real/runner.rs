//! Running tools: `std::process::Command` with an argv, never a shell.
//! Output is collected on two reader threads; the child is killed at its
//! timeout.

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::seam::{Cmd, Output, Runner};

/// Runs programs on this machine.
#[derive(Default)]
pub struct RealRunner;

fn drain<R: Read + Send + 'static>(r: Option<R>) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut buf);
        }
        buf
    })
}

impl Runner for RealRunner {
    fn run(&mut self, cmd: &Cmd<'_>) -> io::Result<Output> {
        // Look the program up first: under qemu-user an exec failure in the
        // child shows up as exit 127 instead of ENOENT, so a missing tool
        // would read as a tool that failed.
        let program = self
            .which(cmd.program)
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{}: not found on PATH", cmd.program)))?;
        let mut child = Command::new(program)
            .args(cmd.args)
            .stdin(if cmd.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", cmd.program)))?;
        let out = drain(child.stdout.take());
        let err = drain(child.stderr.take());
        if let (Some(data), Some(mut stdin)) = (cmd.stdin, child.stdin.take()) {
            // A tool that exits early closes the pipe; its status says why.
            let _ = stdin.write_all(data);
        }
        let deadline = Instant::now() + cmd.timeout;
        let mut timed_out = false;
        let status = loop {
            if let Some(st) = child.try_wait()? {
                break st;
            }
            if Instant::now() >= deadline {
                timed_out = true;
                let _ = child.kill();
                break child.wait()?;
            }
            thread::sleep(Duration::from_millis(5));
        };
        Ok(Output {
            code: if timed_out { None } else { status.code() },
            timed_out,
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        })
    }

    fn which(&mut self, program: &str) -> Option<PathBuf> {
        if program.contains('/') {
            let p = PathBuf::from(program);
            return p.is_file().then_some(p);
        }
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/sbin:/usr/bin:/sbin:/bin".into());
        std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_is_not_a_shell_line() {
        let mut r = RealRunner;
        let out = r
            .run(&Cmd { program: "echo", args: &["$HOME", ";", "id"], stdin: None, timeout: Duration::from_secs(5) })
            .unwrap();
        assert_eq!(out.stdout, b"$HOME ; id\n");
        assert!(out.success());
    }

    #[test]
    fn stdin_and_exit_code() {
        let mut r = RealRunner;
        let out = r
            .run(&Cmd { program: "sh", args: &["-c", "cat; exit 3"], stdin: Some(b"rules\n"), timeout: Duration::from_secs(5) })
            .unwrap();
        assert_eq!(out.stdout, b"rules\n");
        assert_eq!(out.code, Some(3));
    }

    #[test]
    fn hung_command_is_killed_at_its_timeout() {
        let mut r = RealRunner;
        let start = Instant::now();
        let out = r
            .run(&Cmd { program: "sleep", args: &["30"], stdin: None, timeout: Duration::from_millis(200) })
            .unwrap();
        assert!(out.timed_out);
        assert_eq!(out.code, None);
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn missing_program_names_it() {
        let mut r = RealRunner;
        let e = r
            .run(&Cmd { program: "no-such-tool-nasboot", args: &[], stdin: None, timeout: Duration::from_secs(1) })
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("no-such-tool-nasboot"));
    }
}
