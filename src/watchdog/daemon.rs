//! The watchdog daemon's loop, generic over the fallible [`Dog`] (feed,
//! re-arm on reload, the orderly stop) and over a [`Host`] that gives
//! time, signals, checks and repairs. A recording fake drives the tests.
//!
//! Not embedded-hal 0.2's watchdog traits: they are infallible (`feed()`
//! returns nothing), and the daemon needs each error to report it. The
//! device implements them too, for code written against them (feature
//! `embedded-hal`, `hal.rs`).
//!
//! One wake-up per interval: the host's `wait` returns at the next pet
//! (sigtimedwait with the time left as timeout) or at a signal. The steady
//! state (no checks configured) allocates nothing: see tests/alloc_tick.rs.

use std::io;
use std::path::Path;

use super::device::Device;
use super::health::{Failure, Policy, Step};
use crate::config::watchdog::Watchdog as Config;

/// What a signal asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sig {
    /// SIGHUP: re-read the profile; the device stays open.
    Reload,
    /// SIGTERM, SIGINT: orderly stop with the magic close.
    Stop,
    /// SIGUSR1: log the status.
    Status,
    /// SIGUSR2: exec `handover_command` with the device inherited (WDTFD).
    Handover,
}

/// What the daemon needs besides the device.
pub trait Host {
    /// Monotonic milliseconds.
    fn now_ms(&mut self) -> u64;
    /// Wait up to `timeout_ms`, or until a signal.
    fn wait(&mut self, timeout_ms: u64) -> Option<Sig>;
    /// Run the configured health checks.
    fn check(&mut self, cfg: &Config) -> Result<(), Failure>;
    /// Run the repair command; true when it succeeded.
    fn repair(&mut self, cfg: &Config) -> bool;
    /// The profile again (SIGHUP); None keeps the running one.
    fn reload(&mut self) -> Option<Config>;
    /// Petting stops now: record it, flush the disks.
    fn give_up(&mut self, why: &Failure);
    /// The orderly stop happened.
    fn stopped(&mut self);
    /// Called once, after the first pet of the loop: start-up is over.
    fn settled(&mut self) {}
    /// A candidate (`apply --confirm`) whose revert this daemon holds:
    /// [`Held::Nothing`] when none is pending (one stat), else the ms left
    /// to its deadline; once that has passed, the host reverts it first.
    /// Asked at start, at every pet and on SIGHUP. The default holds none.
    fn candidate(&mut self) -> Held {
        Held::Nothing
    }
}

/// What [`Host::candidate`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    Nothing,
    /// Pending, this many ms before its deadline.
    Left(u64),
    /// Its deadline passed and the host tried the revert (or it was
    /// settled meanwhile): the profile file may have changed, so the
    /// daemon reloads it, as on SIGHUP. The revert's own apply cannot
    /// reach the watchdog this daemon holds open, and a SIGHUP inside the
    /// window may have loaded the candidate's settings.
    Settled,
}

/// The watchdog the daemon pets. Every operation says how it went.
pub trait Dog {
    /// The device, for messages.
    fn path(&self) -> &Path;
    /// Pet once.
    fn feed(&mut self) -> io::Result<()>;
    /// (Re-)arm with a timeout in seconds (pets).
    fn start(&mut self, secs: u32) -> io::Result<()>;
    /// The orderly stop (magic close); `Ok(Some(why))` when it may not
    /// have stopped the hardware.
    fn disable(&mut self) -> io::Result<Option<&'static str>>;
    /// The timeout in use, when the driver told it.
    fn timeout(&self) -> Option<u32>;
    /// Exec `argv` with the device inherited; returns only on failure.
    fn handover(&mut self, argv: &[&str]) -> io::Error;
}

impl Dog for Device {
    fn path(&self) -> &Path {
        &self.path
    }
    fn feed(&mut self) -> io::Result<()> {
        Device::feed(self)
    }
    fn start(&mut self, secs: u32) -> io::Result<()> {
        self.rearm(secs)
    }
    fn disable(&mut self) -> io::Result<Option<&'static str>> {
        self.stop()
    }
    fn timeout(&self) -> Option<u32> {
        Device::timeout(self)
    }
    fn handover(&mut self, argv: &[&str]) -> io::Error {
        Device::handover(self, argv)
    }
}

/// Pet, and report a failure: the first of a run, then every 60th (the
/// next pet tries again). Allocation-free.
pub(crate) fn feed<W: Dog>(dog: &mut W, failures: &mut u32) -> bool {
    let result = dog.feed();
    super::device::counted(dog.path(), "pet", result, failures)
}

/// The orderly stop, reported.
pub(crate) fn disable<W: Dog>(dog: &mut W) {
    match dog.disable() {
        Ok(None) => log::info!("{}: magic close: stopped", dog.path().display()),
        Ok(Some(why)) => log::warn!("{}: magic close written, but {why}", dog.path().display()),
        Err(e) => log::error!("{}: magic close failed: {e}; the board will reset", dog.path().display()),
    }
}

/// How the daemon ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Stopped in order (magic close written).
    Stopped,
    /// Stopped in order after it had given up petting for a failed check.
    StoppedAfterGivingUp,
}

/// The pet interval in ms: the profile's (default timeout/2), at most half
/// the timeout in use, at least 250 ms.
pub(crate) fn interval_ms(cfg: &Config, timeout_in_use: Option<u32>) -> u64 {
    let timeout = u64::from(timeout_in_use.unwrap_or(cfg.timeout.0).max(1));
    let half = timeout * 500;
    let wanted = cfg.interval.map_or(half, |i| u64::from(i.0) * 1000);
    wanted.min(half).max(250)
}

/// Counters for the status line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    pub pets: u64,
    pub wakeups: u64,
    pub checks_failed: u64,
}

/// When the held candidate's revert is due, in `now_ms`'s clock;
/// `settled` is set when a revert was just tried.
fn due_at<H: Host>(host: &mut H, settled: &mut bool) -> Option<u64> {
    match host.candidate() {
        Held::Left(ms) => Some(host.now_ms() + ms),
        Held::Settled => {
            *settled = true;
            None
        }
        Held::Nothing => None,
    }
}

/// Pet until a stop signal. `cfg` is the running profile's `[watchdog]`.
pub fn serve<W: Dog, H: Host>(dog: &mut W, host: &mut H, mut cfg: Config) -> Outcome {
    let mut interval = interval_ms(&cfg, dog.timeout());
    let mut checks = cfg.has_checks();
    let mut policy = Policy::default();
    let mut petting = true;
    let mut stats = Stats::default();
    let mut last_failure: Option<Failure> = None;
    log::info!("petting every {} ms (timeout {})", interval, dog.timeout().map_or("unknown".to_string(), |t| format!("{t} s")));
    let mut failures = 0;
    feed(dog, &mut failures);
    stats.pets += 1;
    let mut next = host.now_ms() + interval;
    // When the held candidate's revert is due (now_ms's clock), and
    // whether one was just tried (then the profile is reloaded).
    let mut settled = false;
    let mut due = due_at(host, &mut settled);
    loop {
        let now = host.now_ms();
        if due.is_some_and(|d| now >= d) {
            // Petted first: the revert's apply cannot pet (the device is
            // this daemon's), so it has the whole timeout.
            if petting {
                feed(dog, &mut failures);
                stats.pets += 1;
            }
            due = due_at(host, &mut settled);
            continue;
        }
        if now >= next {
            if petting && checks {
                let result = host.check(&cfg);
                let healthy = result.is_ok();
                if let Err(f) = result {
                    stats.checks_failed += 1;
                    if last_failure.as_ref() != Some(&f) {
                        log::warn!("health check failed: {f}");
                    }
                    last_failure = Some(f);
                } else if last_failure.take().is_some() {
                    log::warn!("health checks pass again");
                }
                let step =
                    policy.update(healthy, now, u64::from(cfg.retry_timeout()) * 1000, cfg.max_repairs(), !cfg.repair_command.is_empty());
                match step {
                    Step::Healthy | Step::Failing => {}
                    Step::Repair => {
                        log::warn!("repair {} of {}: running the repair command", policy.repairs(), cfg.max_repairs());
                        host.repair(&cfg);
                    }
                    Step::GiveUp => {
                        let why = last_failure.clone().expect("a failure");
                        log::error!("giving up after {} repair(s): {why}; petting stops, the watchdog resets the board", policy.repairs());
                        host.give_up(&why);
                        petting = false;
                    }
                }
            }
            if petting {
                feed(dog, &mut failures);
                stats.pets += 1;
            }
            if stats.pets == 2 {
                host.settled();
            }
            next += interval;
            if next <= now {
                next = now + interval;
            }
            due = due_at(host, &mut settled);
            continue;
        }
        let sig = if std::mem::take(&mut settled) {
            Some(Sig::Reload)
        } else {
            stats.wakeups += 1;
            host.wait(due.map_or(next, |d| d.min(next)) - now)
        };
        match sig {
            None => {}
            Some(Sig::Stop) => {
                disable(dog);
                host.stopped();
                return if petting { Outcome::Stopped } else { Outcome::StoppedAfterGivingUp };
            }
            Some(Sig::Reload) => {
                if let Some(new) = host.reload() {
                    if new.timeout != cfg.timeout {
                        if let Err(e) = dog.start(new.timeout.0) {
                            log::error!("{}: re-arming with a {} s timeout: {e}", dog.path().display(), new.timeout.0);
                        }
                    }
                    cfg = new;
                    checks = cfg.has_checks();
                    interval = interval_ms(&cfg, dog.timeout());
                    next = next.min(host.now_ms() + interval);
                    log::warn!("profile reloaded: petting every {interval} ms");
                }
                due = due_at(host, &mut settled);
            }
            Some(Sig::Status) => log::warn!(
                "status: {} ({} pets, {} wake-ups, interval {interval} ms, timeout {}, {} failed checks{})",
                if petting { "petting" } else { "gave up, not petting" },
                stats.pets,
                stats.wakeups,
                dog.timeout().map_or("unknown".to_string(), |t| format!("{t} s")),
                stats.checks_failed,
                last_failure.as_ref().map_or(String::new(), |f| format!(", failing: {f}")),
            ),
            Some(Sig::Handover) => match super::health::split_argv(&cfg.handover_command) {
                Some((program, args)) => {
                    let mut argv: heapless::Vec<&str, 9> = heapless::Vec::new();
                    let _ = argv.push(program);
                    argv.extend(args.iter().copied());
                    log::warn!("handing the watchdog over to {program} (WDTFD)");
                    feed(dog, &mut failures);
                    let e = dog.handover(&argv);
                    log::error!("hand-over to {program} failed: {e}; petting on");
                }
                None => log::warn!("SIGUSR2: no handover_command in [watchdog]; ignored"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Records what the daemon did to the device.
    #[derive(Default)]
    struct Dog {
        log: Vec<String>,
        timeout: Option<u32>,
    }
    impl super::Dog for Dog {
        fn path(&self) -> &Path {
            Path::new("/dev/watchdog0")
        }
        fn feed(&mut self) -> io::Result<()> {
            self.log.push("feed".into());
            Ok(())
        }
        fn start(&mut self, t: u32) -> io::Result<()> {
            self.timeout = Some(t);
            self.log.push(format!("start {t}"));
            Ok(())
        }
        fn disable(&mut self) -> io::Result<Option<&'static str>> {
            self.log.push("disable".into());
            Ok(None)
        }
        fn timeout(&self) -> Option<u32> {
            self.timeout
        }
        fn handover(&mut self, argv: &[&str]) -> io::Error {
            self.log.push(format!("handover {}", argv.join(" ")));
            io::Error::from(io::ErrorKind::NotFound)
        }
    }

    /// A scripted clock: `wait` jumps time forward; signals arrive at set times.
    #[derive(Default)]
    struct FakeHost {
        now: u64,
        signals: VecDeque<(u64, Sig)>,
        checks: VecDeque<Result<(), Failure>>,
        log: Vec<String>,
        reload_to: Option<Config>,
        waits: u32,
        /// Whether it holds candidates; one: (pending from, deadline,
        /// confirmed at). `candidate` answers as the journal would, and
        /// records each stat and revert.
        holds: bool,
        pending: Option<(u64, u64, u64)>,
    }
    impl Host for FakeHost {
        fn now_ms(&mut self) -> u64 {
            self.now
        }
        fn wait(&mut self, timeout_ms: u64) -> Option<Sig> {
            self.waits += 1;
            let until = self.now + timeout_ms;
            if let Some(&(at, sig)) = self.signals.front() {
                if at <= until {
                    self.signals.pop_front();
                    self.now = self.now.max(at);
                    return Some(sig);
                }
            }
            self.now = until;
            None
        }
        fn check(&mut self, _: &Config) -> Result<(), Failure> {
            self.log.push(format!("check@{}", self.now));
            self.checks.pop_front().unwrap_or(Ok(()))
        }
        fn repair(&mut self, _: &Config) -> bool {
            self.log.push(format!("repair@{}", self.now));
            true
        }
        fn reload(&mut self) -> Option<Config> {
            self.reload_to.take()
        }
        fn give_up(&mut self, why: &Failure) {
            self.log.push(format!("give_up@{} {why}", self.now));
        }
        fn stopped(&mut self) {
            self.log.push(format!("stopped@{}", self.now));
        }
        fn candidate(&mut self) -> Held {
            if !self.holds {
                return Held::Nothing;
            }
            self.log.push(format!("stat@{}", self.now));
            let Some((from, deadline, confirmed)) = self.pending else { return Held::Nothing };
            if self.now < from || self.now >= confirmed {
                return Held::Nothing;
            }
            if self.now < deadline {
                return Held::Left(deadline - self.now);
            }
            self.log.push(format!("revert@{}", self.now));
            self.pending = None;
            Held::Settled
        }
    }

    fn cfg(extra: &str) -> Config {
        let text = format!("[board]\nname = \"t\"\n[watchdog]\ntimeout = 10\n{extra}");
        *crate::config::parse_bytes("t.toml", text.as_bytes()).unwrap().profile.watchdog.unwrap()
    }

    #[test]
    fn interval_is_at_most_half_the_timeout_in_use() {
        assert_eq!(interval_ms(&cfg(""), Some(10)), 5000);
        assert_eq!(interval_ms(&cfg("interval = 2\n"), Some(10)), 2000);
        // The driver clamped 10 to 3: pet every 1.5 s.
        assert_eq!(interval_ms(&cfg("interval = 4\n"), Some(3)), 1500);
        assert_eq!(interval_ms(&cfg(""), None), 5000);
    }

    #[test]
    fn one_wakeup_per_interval_and_magic_close_on_stop() {
        let mut dog = Dog { timeout: Some(10), ..Dog::default() };
        let mut host = FakeHost { signals: [(30_000, Sig::Stop)].into(), ..FakeHost::default() };
        let out = serve(&mut dog, &mut host, cfg(""));
        assert_eq!(out, Outcome::Stopped);
        // 1 at start + one per 5 s tick before the stop at 30 s.
        assert_eq!(dog.log.iter().filter(|l| *l == "feed").count(), 6);
        assert_eq!(dog.log.last().unwrap(), "disable");
        assert_eq!(host.waits, 6, "one wait per interval; the last one ended by the signal");
        assert_eq!(host.log, ["stopped@30000"]);
    }

    #[test]
    fn failing_check_retries_repairs_then_stops_petting() {
        let mut dog = Dog { timeout: Some(10), ..Dog::default() };
        let fail = || Err(Failure::Rx { interface: "eth1".into(), bytes: 5 });
        let mut host = FakeHost {
            signals: [(60_000, Sig::Stop)].into(),
            checks: std::iter::repeat_with(fail).take(20).collect(),
            ..FakeHost::default()
        };
        let out = serve(&mut dog, &mut host, cfg("rx_interface = \"eth1\"\nretry_timeout = 10\nrepair_command = [\"/bin/fix\"]\n"));
        assert_eq!(out, Outcome::StoppedAfterGivingUp);
        let events: Vec<&String> = host.log.iter().filter(|l| !l.starts_with("check@")).collect();
        // First failure at 5 s; repair at 15 s (retry 10 s); give up at 25 s.
        assert_eq!(events, ["repair@15000", "give_up@25000 eth1: rx_bytes stuck at 5", "stopped@60000"]);
        // Pets: start, 5, 10, 15, 20 s; none from 25 s on.
        assert_eq!(dog.log.iter().filter(|l| *l == "feed").count(), 5);
    }

    #[test]
    fn reload_rearms_with_the_new_timeout_and_handover_runs_the_command() {
        let mut dog = Dog { timeout: Some(10), ..Dog::default() };
        let mut host =
            FakeHost { signals: [(1_000, Sig::Reload), (2_000, Sig::Handover), (3_000, Sig::Stop)].into(), ..FakeHost::default() };
        let mut new = cfg("handover_command = [\"/sbin/upgrade\", \"-n\"]\n");
        new.timeout = crate::config::watchdog::Seconds(4);
        host.reload_to = Some(new);
        serve(&mut dog, &mut host, cfg(""));
        assert_eq!(dog.log, ["feed", "start 4", "feed", "handover /sbin/upgrade -n", "disable"]);
    }

    /// The host's log, the pets and the waits, with a candidate pending.
    fn held(pending: (u64, u64, u64), stop: u64) -> (Vec<String>, usize, u32) {
        let mut dog = Dog { timeout: Some(10), ..Dog::default() };
        let mut host = FakeHost { signals: [(stop, Sig::Stop)].into(), holds: true, pending: Some(pending), ..FakeHost::default() };
        serve(&mut dog, &mut host, cfg(""));
        (host.log, dog.log.iter().filter(|l| *l == "feed").count(), host.waits)
    }

    #[test]
    fn nothing_pending_costs_one_stat_per_pet_and_no_wakeup() {
        let (log, feeds, waits) = held((u64::MAX, u64::MAX, u64::MAX), 20_000);
        // At start, then at each 5 s pet; waits as without a holder.
        assert_eq!(log, ["stat@0", "stat@5000", "stat@10000", "stat@15000", "stopped@20000"]);
        assert_eq!((feeds, waits), (4, 4));
    }

    #[test]
    fn a_candidate_seen_at_a_pet_is_reverted_at_its_deadline_after_a_pet() {
        // Applied at 3 s with a 9.2 s window: seen at the 5 s pet, reverted
        // at 12.2 s sharp (not at the next pet), then one stat a pet again.
        let (log, feeds, waits) = held((3_000, 12_200, u64::MAX), 20_000);
        // The reverted profile is reloaded at once (one more stat).
        assert_eq!(log, ["stat@0", "stat@5000", "stat@10000", "stat@12200", "revert@12200", "stat@12200", "stat@15000", "stopped@20000"]);
        // Pets at 0, 5, 10, 12.2 (before the revert), 15 s; one more wait.
        assert_eq!((feeds, waits), (5, 5));
    }

    #[test]
    fn sighup_looks_at_the_journal_at_once() {
        // Applied at 1 s with a 2 s window, shorter than the 5 s pet
        // interval: a SIGHUP at 1.5 s has it reverted at 3 s sharp.
        let mut dog = Dog { timeout: Some(10), ..Dog::default() };
        let mut host = FakeHost {
            signals: [(1_500, Sig::Reload), (6_000, Sig::Stop)].into(),
            holds: true,
            pending: Some((1_000, 3_000, u64::MAX)),
            ..FakeHost::default()
        };
        serve(&mut dog, &mut host, cfg(""));
        assert_eq!(host.log, ["stat@0", "stat@1500", "stat@3000", "revert@3000", "stat@3000", "stat@5000", "stopped@6000"]);
    }

    #[test]
    fn a_confirmed_candidate_is_not_reverted() {
        // Confirmed at 11 s: the wake-up at the deadline finds none.
        let (log, _, _) = held((3_000, 12_200, 11_000), 16_000);
        assert_eq!(log, ["stat@0", "stat@5000", "stat@10000", "stat@12200", "stat@15000", "stopped@16000"]);
    }

    #[test]
    fn after_a_revert_the_daemon_takes_the_reverted_profiles_timeout() {
        // Applied at 1 s with a 2 s window, seen first at the 5 s pet,
        // after its deadline: reverted there, and the profile put back
        // (4 s timeout) re-arms the device at once, without a signal.
        let mut dog = Dog { timeout: Some(10), ..Dog::default() };
        let mut host =
            FakeHost { signals: [(8_000, Sig::Stop)].into(), holds: true, pending: Some((1_000, 3_000, u64::MAX)), ..FakeHost::default() };
        let mut good = cfg("");
        good.timeout = crate::config::watchdog::Seconds(4);
        host.reload_to = Some(good);
        serve(&mut dog, &mut host, cfg(""));
        assert_eq!(host.log, ["stat@0", "stat@5000", "revert@5000", "stat@5000", "stat@7000", "stopped@8000"]);
        assert_eq!(dog.log, ["feed", "feed", "start 4", "feed", "disable"]);
    }
}
