//! The `log` backend: one line per record on standard error,
//! `LEVEL [target] message` (the level padded to five columns), the format
//! simple_logger wrote before.
//!
//! Why not simple_logger itself: it prints with `eprintln!`, which panics
//! when the write fails, and standard error of a daemon is often a pipe
//! (procd hands instances a pipe to logd; an init script's `| logger`).
//! When the reader goes away, the next log line would kill `nasboot run`,
//! which owns the hardware watchdog. Here a failed write is ignored: a lost
//! log line must never stop the daemon. Each line is formatted into a
//! stack buffer and written with one write(2), so lines from several
//! processes sharing a log do not interleave, and logging allocates
//! nothing.

use std::fmt::Write as _;
use std::io::{self, Write};

/// Lines up to this long go out in one write; longer ones in pieces.
const LINE: usize = 512;

struct StderrLogger {
    level: log::LevelFilter,
}

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= self.level
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            write_record(&mut io::stderr().lock(), record);
        }
    }

    fn flush(&self) {}
}

/// Install the logger (once per process; a second call changes nothing).
pub fn init(level: log::LevelFilter) {
    if log::set_logger(Box::leak(Box::new(StderrLogger { level }))).is_ok() {
        log::set_max_level(level);
    }
}

/// Write one record as a line to `w`, ignoring any error.
pub(crate) fn write_record<W: Write>(w: &mut W, record: &log::Record<'_>) {
    let target = if record.target().is_empty() { record.module_path().unwrap_or_default() } else { record.target() };
    let mut line: heapless::String<LINE> = heapless::String::new();
    if writeln!(line, "{:<5} [{}] {}", record.level(), target, record.args()).is_ok() {
        let _ = w.write_all(line.as_bytes());
    } else {
        let _ = writeln!(w, "{:<5} [{}] {}", record.level(), target, record.args());
    }
}

/// A writer that sends each line to `W` in one write: bytes are kept
/// until a newline (or until `LINE` bytes are held), then written whole.
/// For standard error, whose messages are written in pieces by their
/// `Display`; std's `LineWriter` would do the same with more code.
/// What is held at drop is written then.
pub struct Lines<W: Write> {
    inner: W,
    held: heapless::Vec<u8, LINE>,
}

impl<W: Write> Lines<W> {
    pub fn new(inner: W) -> Self {
        Lines { inner, held: heapless::Vec::new() }
    }

    fn write_held(&mut self) -> io::Result<()> {
        let r = self.inner.write_all(&self.held);
        self.held.clear();
        r
    }
}

impl<W: Write> Write for Lines<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        for &b in buf {
            if self.held.push(b).is_err() {
                self.write_held()?; // a line longer than LINE: in pieces
                let _ = self.held.push(b);
            }
            if b == b'\n' {
                self.write_held()?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.held.is_empty() {
            self.write_held()?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Lines<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(level: log::Level, args: std::fmt::Arguments<'_>, f: impl FnOnce(&log::Record<'_>)) {
        f(&log::Record::builder().level(level).target("nasboot::watchdog").args(args).build());
    }

    /// Records each write(2) it is given.
    struct Writes(Vec<Vec<u8>>);
    impl Write for Writes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.push(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_go_out_whole_one_write_each() {
        let mut w = Writes(Vec::new());
        {
            let mut lines = Lines::new(&mut w);
            let (file, line) = ("p.toml", 3);
            writeln!(lines, "nasboot: {file}:{line}: bad").unwrap();
            write!(lines, "a\nb").unwrap();
            lines.write_all(&[b'x'; LINE + 1]).unwrap();
            lines.write_all(b"\nend").unwrap();
        }
        let got: Vec<String> = w.0.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect();
        let long = format!("b{}", "x".repeat(LINE - 1));
        assert_eq!(got, ["nasboot: p.toml:3: bad\n", "a\n", &long, "xx\n", "end"]);
    }

    #[test]
    fn the_line_format_is_simple_loggers() {
        let mut out = Vec::new();
        record(log::Level::Warn, format_args!("profile reloaded: petting every {} ms", 1000), |r| write_record(&mut out, r));
        record(log::Level::Info, format_args!("x"), |r| write_record(&mut out, r));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "WARN  [nasboot::watchdog] profile reloaded: petting every 1000 ms\nINFO  [nasboot::watchdog] x\n"
        );
    }

    #[test]
    fn a_long_line_is_written_whole() {
        let long = "x".repeat(2000);
        let mut out = Vec::new();
        record(log::Level::Error, format_args!("{long}"), |r| write_record(&mut out, r));
        assert_eq!(out.len(), "ERROR [nasboot::watchdog] ".len() + 2000 + 1);
    }

    /// A reader that went away (EPIPE): the record is dropped, no panic.
    struct ClosedPipe(u32);
    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            self.0 += 1;
            Err(io::Error::from_raw_os_error(nix::libc::EPIPE))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_loses_the_line_and_nothing_else() {
        let mut w = ClosedPipe(0);
        record(log::Level::Error, format_args!("pet failed"), |r| write_record(&mut w, r));
        assert_eq!(w.0, 1, "one write attempt per line");
    }
}
