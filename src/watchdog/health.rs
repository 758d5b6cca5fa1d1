//! Health checks and the repair policy (the checks of the watchdog 5.x
//! daemon, watchdog.conf(5)): load average, available memory, pidfiles,
//! a heartbeat file's age, an interface's receive counter, a hwmon
//! temperature and a test program. Reads go through the Files seam,
//! programs through the Runner seam (argv, killed at their timeout).
//!
//! The policy is pure: a check that keeps failing for `retry_timeout`
//! runs the repair program (at most `max_repairs` times in a row); after
//! that the daemon gives up and stops petting, so the hardware resets.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::watchdog::{Argv, Watchdog};
use crate::seam::{Cmd, Files, Runner};

/// A failed check, with what was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    Load {
        minutes: u8,
        seen: u32,
        max: u32,
    },
    Memory {
        available_kb: u64,
        min_kb: u64,
    },
    Pidfile {
        path: PathBuf,
        why: String,
    },
    Heartbeat {
        path: PathBuf,
        why: String,
    },
    Rx {
        interface: String,
        bytes: u64,
    },
    Temperature {
        path: PathBuf,
        millideg: i64,
        max: u32,
    },
    Test {
        program: String,
        why: String,
    },
    /// A file a check needs could not be read.
    Unreadable {
        path: PathBuf,
        why: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hund = |n: u32| format!("{}.{:02}", n / 100, n % 100);
        match self {
            Failure::Load { minutes, seen, max } => {
                write!(f, "load average ({minutes} min) {} is over {}", hund(*seen), hund(*max))
            }
            Failure::Memory { available_kb, min_kb } => {
                write!(f, "MemAvailable {available_kb} kB is under {min_kb} kB")
            }
            Failure::Pidfile { path, why } => write!(f, "pidfile {}: {why}", path.display()),
            Failure::Heartbeat { path, why } => write!(f, "heartbeat {}: {why}", path.display()),
            Failure::Rx { interface, bytes } => write!(f, "{interface}: rx_bytes stuck at {bytes}"),
            Failure::Temperature { path, millideg, max } => {
                write!(f, "{}: {}.{} °C is over {max} °C", path.display(), millideg / 1000, (millideg % 1000).abs() / 100)
            }
            Failure::Test { program, why } => write!(f, "test command {program}: {why}"),
            Failure::Unreadable { path, why } => write!(f, "{}: {why}", path.display()),
        }
    }
}

/// State kept between checks: the last receive counter, and the buffers
/// the checks read into, so that a tick allocates nothing (tests/alloc_tick.rs).
#[derive(Clone, Debug)]
pub struct Checker {
    last_rx: Option<u64>,
    buf: Vec<u8>,
    path: heapless::String<PATH_MAX>,
}

/// Longest path built by a check: /proc/PID, /sys/class/net/IFNAME/statistics/rx_bytes.
const PATH_MAX: usize = 64;
/// /proc/meminfo is about 1.4 kB on a 6.1 kernel.
const BUF_CAPACITY: usize = 4096;

impl Default for Checker {
    fn default() -> Checker {
        Checker { last_rx: None, buf: Vec::with_capacity(BUF_CAPACITY), path: heapless::String::new() }
    }
}

/// Read `path` into `buf`; the text borrows it (no copy when it is UTF-8).
fn read_text<'b>(files: &mut dyn Files, path: &Path, buf: &'b mut Vec<u8>) -> Result<std::borrow::Cow<'b, str>, Failure> {
    files.read_into(path, buf).map_err(|e| Failure::Unreadable { path: path.to_path_buf(), why: e.to_string() })?;
    Ok(String::from_utf8_lossy(buf))
}

/// `buf` = the formatted path; a path too long is unreadable.
fn format_path<'b>(buf: &'b mut heapless::String<PATH_MAX>, args: fmt::Arguments<'_>) -> Result<&'b Path, Failure> {
    use fmt::Write as _;
    buf.clear();
    match buf.write_fmt(args) {
        Ok(()) => Ok(Path::new(buf.as_str())),
        Err(_) => Err(Failure::Unreadable { path: PathBuf::from(args.to_string()), why: "path too long".into() }),
    }
}

/// "0.52" -> 52 (hundredths); None when it is not a number or too large.
fn parse_hundredths(s: &str) -> Option<u32> {
    let (int, frac) = s.split_once('.').unwrap_or((s, "0"));
    let int: u32 = int.parse().ok()?;
    // Two digits of the fraction, "5" as "50", without allocating (this
    // runs on every tick: tests/alloc_tick.rs).
    let mut digits = frac.bytes().chain(*b"00").take(2);
    let mut hundredths = 0;
    for _ in 0..2 {
        let d = digits.next()?;
        if !d.is_ascii_digit() {
            return None;
        }
        hundredths = hundredths * 10 + u32::from(d - b'0');
    }
    // A load too large for u32 hundredths is unreadable, not wrapped to a
    // small one (found by the proc_files fuzz target).
    int.checked_mul(100)?.checked_add(hundredths)
}

/// The 1, 5 and 15 minute load averages of /proc/loadavg, in hundredths
/// (None: a field missing or not a number). Pure (fuzzed: tests/fuzz).
pub(crate) fn load_averages(text: &str) -> [Option<u32>; 3] {
    let mut fields = text.split_whitespace();
    [(); 3].map(|()| fields.next().and_then(parse_hundredths))
}

/// MemAvailable of /proc/meminfo, in kB. Pure (fuzzed).
pub(crate) fn mem_available(text: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix("MemAvailable:")).and_then(|r| r.split_whitespace().next()).and_then(|n| n.parse::<u64>().ok())
}

/// Split an argv into program and arguments without allocating.
pub(crate) fn split_argv(argv: &Argv) -> Option<(&str, heapless::Vec<&str, { crate::config::watchdog::MAX_ARGV }>)> {
    let (program, rest) = argv.split_first()?;
    Some((program.as_str(), rest.iter().map(|s| s.as_str()).collect()))
}

impl Checker {
    /// Run every configured check; the first failure is returned.
    pub fn check(&mut self, w: &Watchdog, files: &mut dyn Files, runner: &mut dyn Runner, wall_now: Duration) -> Result<(), Failure> {
        if w.max_load1.is_some() || w.max_load5.is_some() || w.max_load15.is_some() {
            let path = Path::new("/proc/loadavg");
            let text = read_text(files, path, &mut self.buf)?;
            for ((minutes, max), seen) in [(1u8, w.max_load1), (5, w.max_load5), (15, w.max_load15)].into_iter().zip(load_averages(&text)) {
                if let (Some(max), Some(seen)) = (max, seen) {
                    if seen > max.0 {
                        return Err(Failure::Load { minutes, seen, max: max.0 });
                    }
                }
            }
        }
        if let Some(min_kb) = w.min_memory_kb {
            let path = Path::new("/proc/meminfo");
            let text = read_text(files, path, &mut self.buf)?;
            let avail =
                mem_available(&text).ok_or_else(|| Failure::Unreadable { path: path.into(), why: "no MemAvailable line".into() })?;
            if avail < min_kb {
                return Err(Failure::Memory { available_kb: avail, min_kb });
            }
        }
        for pidfile in &w.pidfiles {
            let path = pidfile.as_path();
            files.read_into(path, &mut self.buf).map_err(|e| Failure::Pidfile { path: path.into(), why: format!("cannot read: {e}") })?;
            let text = String::from_utf8_lossy(&self.buf);
            let pid: u32 = text
                .trim()
                .parse()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| Failure::Pidfile { path: path.into(), why: format!("no pid in {:?}", text.trim()) })?;
            // A zombie is not running (`sys::proc_stat_runs`); read into
            // the same buffer: nothing is allocated per tick.
            let stat = format_path(&mut self.path, format_args!("/proc/{pid}/stat"))?;
            let runs = files.read_into(stat, &mut self.buf).is_ok() && crate::sys::proc_stat_runs(&self.buf);
            if !runs {
                return Err(Failure::Pidfile { path: path.into(), why: format!("process {pid} is not running") });
            }
        }
        if let Some(hb) = &w.heartbeat_file {
            let path = hb.as_path();
            let mtime = files.modified(path).map_err(|e| Failure::Heartbeat { path: path.into(), why: format!("cannot stat: {e}") })?;
            let age = wall_now.saturating_sub(mtime);
            let max = w.heartbeat_max_age();
            if age > Duration::from_secs(u64::from(max)) {
                return Err(Failure::Heartbeat { path: path.into(), why: format!("{} s old, over {max} s", age.as_secs()) });
            }
        }
        if let Some(ifname) = &w.rx_interface {
            let path = format_path(&mut self.path, format_args!("/sys/class/net/{}/statistics/rx_bytes", ifname.as_str()))?;
            let text = read_text(files, path, &mut self.buf)?;
            let bytes: u64 = text
                .trim()
                .parse()
                .map_err(|_| Failure::Unreadable { path: path.into(), why: format!("not a counter: {:?}", text.trim()) })?;
            let last = self.last_rx.replace(bytes);
            if last == Some(bytes) {
                return Err(Failure::Rx { interface: ifname.to_string(), bytes });
            }
        }
        if let (Some(sensor), Some(max)) = (&w.temperature_sensor, w.max_temperature) {
            let path = sensor.as_path();
            let text = read_text(files, path, &mut self.buf)?;
            let millideg: i64 = text
                .trim()
                .parse()
                .map_err(|_| Failure::Unreadable { path: path.into(), why: format!("not a temperature: {:?}", text.trim()) })?;
            if millideg > i64::from(max) * 1000 {
                return Err(Failure::Temperature { path: path.into(), millideg, max });
            }
        }
        if let Some((program, args)) = split_argv(&w.test_command) {
            let timeout = Duration::from_secs(u64::from(w.test_timeout()));
            let out = runner
                .run(&Cmd { program, args: &args, stdin: None, timeout })
                .map_err(|e| Failure::Test { program: program.into(), why: e.to_string() })?;
            if out.timed_out {
                return Err(Failure::Test { program: program.into(), why: format!("hung; killed after {} s", timeout.as_secs()) });
            }
            if !out.success() {
                return Err(Failure::Test { program: program.into(), why: out.ended().to_string() });
            }
        }
        Ok(())
    }
}

/// Run the repair program; true when it exited 0.
pub(crate) fn repair(w: &Watchdog, runner: &mut dyn Runner) -> bool {
    let Some((program, args)) = split_argv(&w.repair_command) else { return false };
    let timeout = Duration::from_secs(u64::from(w.repair_timeout()));
    match runner.run(&Cmd { program, args: &args, stdin: None, timeout }) {
        Ok(out) if out.success() => {
            log::warn!("repair command {program} succeeded");
            true
        }
        Ok(out) if out.timed_out => {
            log::error!("repair command {program} hung; killed after {} s", timeout.as_secs());
            false
        }
        Ok(out) => {
            log::error!("repair command {program} failed: {}", out.ended());
            false
        }
        Err(e) => {
            log::error!("repair command {program}: {e}");
            false
        }
    }
}

/// What the policy says to do after a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Healthy,
    /// Failing, still within the retry timeout: keep petting.
    Failing,
    /// Failing for the retry timeout: run the repair program now.
    Repair,
    /// Failing after every repair: stop petting.
    GiveUp,
}

/// The repair policy's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Policy {
    failing_since_ms: Option<u64>,
    repairs: u32,
}

impl Policy {
    /// Advance with one check result at `now_ms` (monotonic).
    pub(crate) fn update(&mut self, healthy: bool, now_ms: u64, retry_ms: u64, max_repairs: u32, can_repair: bool) -> Step {
        if healthy {
            *self = Policy::default();
            return Step::Healthy;
        }
        let since = *self.failing_since_ms.get_or_insert(now_ms);
        if now_ms.saturating_sub(since) < retry_ms {
            return Step::Failing;
        }
        if can_repair && self.repairs < max_repairs {
            self.repairs += 1;
            // The repair gets a fresh retry window.
            self.failing_since_ms = Some(now_ms);
            return Step::Repair;
        }
        Step::GiveUp
    }

    pub(crate) fn repairs(&self) -> u32 {
        self.repairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::watchdog::{Load, Seconds};
    use crate::seam::fake::FakeBoard;
    use crate::seam::Output;

    #[test]
    fn a_load_too_large_is_unreadable_not_wrapped() {
        // Fuzz regression (tests/fuzz/regressions/proc_files): 42949673
        // * 100 overflowed u32 (a panic with overflow checks, 0.04 without).
        assert_eq!(load_averages("0.52 42949673.00 341.5\n"), [Some(52), None, Some(34150)]);
        assert_eq!(load_averages("42949672.95 4294967.3 x"), [Some(u32::MAX), Some(429496730), None]);
        assert_eq!(load_averages(""), [None, None, None]);
        // The fraction: one digit is tenths, a third digit is ignored, a sign or a letter is not a number.
        assert_eq!(load_averages("1.5 0.525 7"), [Some(150), Some(52), Some(700)]);
        assert_eq!(load_averages("1.+5 0.x 2."), [None, None, Some(200)]);
    }

    fn wd() -> Watchdog {
        *crate::config::parse_bytes("t.toml", b"[board]\nname = \"t\"\n[watchdog]\ntimeout = 10\n").unwrap().profile.watchdog.unwrap()
    }

    fn check(b: &mut FakeBoard, w: &Watchdog, c: &mut Checker) -> Result<(), Failure> {
        let now = Duration::from_secs(1000);
        c.check(w, &mut b.files, &mut b.runner, now)
    }

    #[test]
    fn no_checks_is_healthy_and_reads_nothing() {
        let mut b = FakeBoard::new();
        assert_eq!(check(&mut b, &wd(), &mut Checker::default()), Ok(()));
        assert!(b.effects().is_empty());
    }

    #[test]
    fn load_memory_temperature() {
        let mut b = FakeBoard::new();
        b.files.files.insert("/proc/loadavg".into(), b"0.50 4.75 1.00 1/80 123\n".to_vec());
        b.files.files.insert("/proc/meminfo".into(), b"MemTotal: 256000 kB\nMemAvailable:  9000 kB\n".to_vec());
        b.files.files.insert("/sys/class/hwmon/hwmon0/temp1_input".into(), b"71500\n".to_vec());
        let mut w = wd();
        w.max_load5 = Some(Load(400));
        let e = check(&mut b, &w, &mut Checker::default()).unwrap_err();
        assert_eq!(e.to_string(), "load average (5 min) 4.75 is over 4.00");
        w.max_load5 = Some(Load(500));
        w.min_memory_kb = Some(10_000);
        let e = check(&mut b, &w, &mut Checker::default()).unwrap_err();
        assert_eq!(e.to_string(), "MemAvailable 9000 kB is under 10000 kB");
        w.min_memory_kb = Some(8000);
        w.temperature_sensor = Some("/sys/class/hwmon/hwmon0/temp1_input".parse().unwrap());
        w.max_temperature = Some(70);
        let e = check(&mut b, &w, &mut Checker::default()).unwrap_err();
        assert_eq!(e.to_string(), "/sys/class/hwmon/hwmon0/temp1_input: 71.5 °C is over 70 °C");
        w.max_temperature = Some(80);
        assert_eq!(check(&mut b, &w, &mut Checker::default()), Ok(()));
    }

    #[test]
    fn pidfiles_unreadable_garbage_dead_alive() {
        let mut b = FakeBoard::new();
        let mut w = wd();
        w.pidfiles.push("/run/nfsd.pid".parse().unwrap()).unwrap();
        let e = check(&mut b, &w, &mut Checker::default()).unwrap_err();
        assert!(e.to_string().starts_with("pidfile /run/nfsd.pid: cannot read:"), "{e}");
        b.files.files.insert("/run/nfsd.pid".into(), b"abc\n".to_vec());
        let e = check(&mut b, &w, &mut Checker::default()).unwrap_err();
        assert_eq!(e.to_string(), "pidfile /run/nfsd.pid: no pid in \"abc\"");
        b.files.files.insert("/run/nfsd.pid".into(), b"42\n".to_vec());
        let e = check(&mut b, &w, &mut Checker::default()).unwrap_err();
        assert_eq!(e.to_string(), "pidfile /run/nfsd.pid: process 42 is not running");
        // A zombie (its parent has not reaped it) is not running.
        b.files.files.insert("/proc/42/stat".into(), b"42 (rpc.nfsd (x)) Z 1 42 42 0 -1".to_vec());
        let e = check(&mut b, &w, &mut Checker::default()).unwrap_err();
        assert_eq!(e.to_string(), "pidfile /run/nfsd.pid: process 42 is not running");
        b.files.files.insert("/proc/42/stat".into(), b"42 (rpc.nfsd (x)) S 1 42 42 0 -1".to_vec());
        assert_eq!(check(&mut b, &w, &mut Checker::default()), Ok(()));
    }

    #[test]
    fn heartbeat_age() {
        let mut b = FakeBoard::new();
        let mut w = wd();
        w.heartbeat_file = Some("/run/hb".parse().unwrap());
        w.heartbeat_max_age = Some(Seconds(30));
        b.files.mtimes.insert("/run/hb".into(), Duration::from_secs(900));
        let e = check(&mut b, &w, &mut Checker::default()).unwrap_err();
        assert_eq!(e.to_string(), "heartbeat /run/hb: 100 s old, over 30 s");
        b.files.mtimes.insert("/run/hb".into(), Duration::from_secs(990));
        assert_eq!(check(&mut b, &w, &mut Checker::default()), Ok(()));
    }

    #[test]
    fn rx_counter_must_advance() {
        let mut b = FakeBoard::new();
        let mut w = wd();
        w.rx_interface = Some("eth1".parse().unwrap());
        let p = "/sys/class/net/eth1/statistics/rx_bytes";
        b.files.files.insert(p.into(), b"100\n".to_vec());
        let mut c = Checker::default();
        assert_eq!(check(&mut b, &w, &mut c), Ok(()));
        let e = check(&mut b, &w, &mut c).unwrap_err();
        assert_eq!(e.to_string(), "eth1: rx_bytes stuck at 100");
        b.files.files.insert(p.into(), b"160\n".to_vec());
        assert_eq!(check(&mut b, &w, &mut c), Ok(()));
    }

    #[test]
    fn test_command_runs_argv_with_its_timeout() {
        let mut b = FakeBoard::new();
        b.runner.programs.insert("/bin/check-nfs".into());
        let mut w = wd();
        w.test_command.push("/bin/check-nfs".try_into().unwrap()).unwrap();
        w.test_command.push("--quick".try_into().unwrap()).unwrap();
        b.runner.answers.push_back(Output { code: None, timed_out: true, ..Output::default() });
        b.runner.answers.push_back(Output { code: Some(3), ..Output::default() });
        let mut c = Checker::default();
        let e = check(&mut b, &w, &mut c).unwrap_err();
        assert_eq!(e.to_string(), "test command /bin/check-nfs: hung; killed after 10 s");
        let e = check(&mut b, &w, &mut c).unwrap_err();
        assert_eq!(e.to_string(), "test command /bin/check-nfs: exit status 3");
        assert_eq!(check(&mut b, &w, &mut c), Ok(()));
        assert_eq!(b.effects(), ["run /bin/check-nfs --quick"; 3]);
    }

    #[test]
    fn policy_retries_repairs_then_gives_up() {
        let mut p = Policy::default();
        assert_eq!(p.update(false, 0, 10_000, 1, true), Step::Failing);
        assert_eq!(p.update(false, 5_000, 10_000, 1, true), Step::Failing);
        assert_eq!(p.update(false, 10_000, 10_000, 1, true), Step::Repair);
        assert_eq!(p.update(false, 15_000, 10_000, 1, true), Step::Failing);
        assert_eq!(p.update(false, 20_000, 10_000, 1, true), Step::GiveUp);
        // A healthy check forgets the failure and the repairs.
        assert_eq!(p.update(true, 21_000, 10_000, 1, true), Step::Healthy);
        assert_eq!(p.update(false, 22_000, 10_000, 0, true), Step::Failing);
        assert_eq!(p.update(false, 32_000, 10_000, 0, true), Step::GiveUp);
    }
}
