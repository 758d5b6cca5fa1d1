//! The watchdog daemon's steady state allocates nothing: N ticks of
//! `daemon::serve` with a `Device` over a counting device, under
//! a counting global allocator, with a logger enabled at Info that
//! formats every record (so a log line on the tick path would count).
//! The second test runs the real health checks that read files (load
//! average, MemAvailable, a pidfile and /proc/PID, a heartbeat file's
//! age, lo's rx_bytes) on this host's /proc and /sys through `RealFiles`
//! on every tick: their reads reuse the checker's buffers. Not covered:
//! the test command (a fork and exec, which allocates) and a temperature
//! sensor (no hwmon on a CI machine; it reads through the same path as
//! the rx counter).
//!
//! The statics here are the test's instruments, not product state.

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use nasboot::daemon_test::{self as daemon, Checker, Config, Device, Failure, Host, Outcome, Sig, Support, WatchdogDevice};
use nasboot::{RealFiles, RealRunner, Root};

struct Counting;

thread_local! {
    /// Counting is per thread: the test harness's own threads (printing a
    /// finished test's result) must not count.
    static COUNTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn counting() -> bool {
    COUNTING.try_with(|c| c.get()).unwrap_or(false)
}

fn set_counting(on: bool) {
    COUNTING.with(|c| c.set(on));
}
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// The counters are global: the tests take turns.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Formats every record into a stack buffer, then drops it.
struct StackLogger;
impl log::Log for StackLogger {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        let mut buf: heapless::String<512> = heapless::String::new();
        let _ = write!(buf, "{}", record.args());
    }
    fn flush(&self) {}
}
static LOGGER: StackLogger = StackLogger;

/// A device that counts pets; `ioctl_errno` makes KEEPALIVE fail (ENOSYS
/// as under qemu-user), so pets go through write().
struct CountingDevice {
    pets: u64,
    ioctl_errno: Option<i32>,
}

impl WatchdogDevice for CountingDevice {
    fn get_support(&mut self) -> io::Result<Support> {
        Ok(Support::default())
    }
    fn get_bootstatus(&mut self) -> io::Result<u32> {
        Ok(0)
    }
    fn set_timeout(&mut self, secs: u32) -> io::Result<u32> {
        Ok(secs)
    }
    fn get_timeout(&mut self) -> io::Result<u32> {
        Ok(10)
    }
    fn set_options(&mut self, _: u32) -> io::Result<()> {
        Ok(())
    }
    fn keepalive(&mut self) -> io::Result<()> {
        if let Some(e) = self.ioctl_errno {
            return Err(io::Error::from_raw_os_error(e));
        }
        self.pets += 1;
        Ok(())
    }
    fn write(&mut self, _: &[u8]) -> io::Result<()> {
        self.pets += 1;
        Ok(())
    }
    fn exec_handover(&mut self, _: &[&str]) -> io::Error {
        io::Error::from(io::ErrorKind::Unsupported)
    }
}

/// A clock that jumps to each deadline; counting starts after `warmup`
/// waits and stops at the stop signal after `ticks` more.
struct TickHost {
    now: u64,
    waits: u64,
    warmup: u64,
    ticks: u64,
}

impl Host for TickHost {
    fn now_ms(&mut self) -> u64 {
        self.now
    }
    fn wait(&mut self, timeout_ms: u64) -> Option<Sig> {
        self.waits += 1;
        if self.waits == self.warmup {
            set_counting(true);
        }
        if self.waits == self.warmup + self.ticks {
            set_counting(false);
            return Some(Sig::Stop);
        }
        self.now += timeout_ms;
        None
    }
    fn check(&mut self, _: &Config) -> Result<(), Failure> {
        Ok(())
    }
    fn repair(&mut self, _: &Config) -> bool {
        true
    }
    fn reload(&mut self) -> Option<Config> {
        None
    }
    fn give_up(&mut self, _: &Failure) {}
    fn stopped(&mut self) {}
}

fn config() -> Config {
    let text = b"[board]\nname = \"t\"\n[watchdog]\ntimeout = 10\ninterval = 2\n";
    *daemon::parse_bytes("t.toml", text).unwrap().profile.watchdog.unwrap()
}

fn run(ioctl_errno: Option<i32>) -> (u64, usize) {
    let dev = CountingDevice { pets: 0, ioctl_errno };
    let mut dog = Device::new(Box::new(dev), PathBuf::from("/dev/watchdog0"));
    let mut host = TickHost { now: 0, waits: 0, warmup: 3, ticks: 1000 };
    ALLOCS.store(0, Ordering::SeqCst);
    let out = daemon::serve(&mut dog, &mut host, config());
    assert_eq!(out, Outcome::Stopped);
    (host.now, ALLOCS.load(Ordering::SeqCst))
}

#[test]
fn ticks_allocate_nothing() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(log::LevelFilter::Info);
    // KEEPALIVE petting, then write() petting after ENOSYS (qemu-user).
    for errno in [None, Some(nix::libc::ENOSYS)] {
        let (now, allocs) = run(errno);
        assert_eq!(allocs, 0, "allocations during 1000 ticks (KEEPALIVE errno {errno:?})");
        assert_eq!(now, 1000 * 2000 + 2 * 2000, "one wake-up per 2 s interval");
    }
}

/// TickHost's clock, with the real checks: every tick reads this host's
/// /proc and /sys; a datagram over lo each wait makes rx_bytes advance.
struct CheckingHost {
    tick: TickHost,
    checker: Checker,
    files: RealFiles,
    runner: RealRunner,
    checks: u64,
    failures: Vec<String>,
    ping: (std::net::UdpSocket, std::net::SocketAddr),
}

impl Host for CheckingHost {
    fn now_ms(&mut self) -> u64 {
        self.tick.now_ms()
    }
    fn wait(&mut self, timeout_ms: u64) -> Option<Sig> {
        self.ping.0.send_to(b"tick", self.ping.1).expect("a datagram over lo");
        self.tick.wait(timeout_ms)
    }
    fn check(&mut self, cfg: &Config) -> Result<(), Failure> {
        self.checks += 1;
        let r = self.checker.check(
            cfg,
            &mut self.files,
            &mut self.runner,
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap(),
        );
        if let Err(e) = &r {
            // Outside the counted window only: a failure is the test's failure anyway.
            set_counting(false);
            self.failures.push(e.to_string());
        }
        r
    }
    fn repair(&mut self, _: &Config) -> bool {
        true
    }
    fn reload(&mut self) -> Option<Config> {
        None
    }
    fn give_up(&mut self, _: &Failure) {}
    fn stopped(&mut self) {}
}

#[test]
fn health_checks_that_read_files_allocate_nothing() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(log::LevelFilter::Info);
    let pidfile = std::env::temp_dir().join(format!("nasboot-alloc-tick-{}.pid", std::process::id()));
    std::fs::write(&pidfile, format!("{}\n", std::process::id())).unwrap();
    let text = format!(
        "[board]\nname = \"t\"\n[watchdog]\ntimeout = 10\ninterval = 2\nmax_load1 = 1000.0\nmax_load5 = 1000.0\nmax_load15 = 1000.0\n\
         min_memory_kb = 1\npidfiles = [\"{p}\"]\nheartbeat_file = \"{p}\"\nheartbeat_max_age = 3600\nrx_interface = \"lo\"\n",
        p = pidfile.display()
    );
    let cfg = *daemon::parse_bytes("t.toml", text.as_bytes()).unwrap().profile.watchdog.unwrap();
    let sink = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let ping = (std::net::UdpSocket::bind("127.0.0.1:0").unwrap(), sink.local_addr().unwrap());
    let dev = CountingDevice { pets: 0, ioctl_errno: None };
    let mut dog = Device::new(Box::new(dev), PathBuf::from("/dev/watchdog0"));
    let mut host = CheckingHost {
        tick: TickHost { now: 0, waits: 0, warmup: 3, ticks: 1000 },
        checker: Checker::default(),
        files: RealFiles::new(Root::new(None)),
        runner: RealRunner,
        checks: 0,
        failures: Vec::new(),
        ping,
    };
    ALLOCS.store(0, Ordering::SeqCst);
    let out = daemon::serve(&mut dog, &mut host, cfg);
    let allocs = ALLOCS.load(Ordering::SeqCst);
    let _ = std::fs::remove_file(&pidfile);
    assert_eq!(out, Outcome::Stopped);
    assert_eq!(host.failures, Vec::<String>::new(), "every check passes on this host");
    assert!(host.checks >= 1000, "the checks ran on every tick: {}", host.checks);
    assert_eq!(allocs, 0, "allocations during 1000 ticks with the /proc, /sys and file checks");
    assert_eq!(host.tick.now, 1000 * 2000 + 2 * 2000, "one wake-up per 2 s interval");
}
