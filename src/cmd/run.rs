//! `nasboot run`: apply, then keep the watchdog in the foreground (for
//! procd and systemd), or with `--background` in a child once the apply is
//! in force (for init scripts: see `background`). In a boot loop (see
//! `watchdog::history`) the safe profile is applied instead.
//!
//! The daemon holds the revert of a candidate (`apply --confirm`): while
//! it serves it keeps [`HOLDER_LOCK`] locked, and an `apply --confirm`
//! that finds it so starts no holder process. At each pet (and on
//! SIGHUP) the daemon stats the pending journal, one stat when none is
//! pending; a pending candidate's deadline becomes a wake-up, at which
//! the daemon pets, then reverts as a holder would (`confirm::at_start`,
//! under the apply lock, which it never waits for: an apply in progress
//! is asked again 0.1 s later). A new candidate is seen at the next pet
//! (or at once on SIGHUP), so a window shorter than the pet interval may
//! be reverted up to one interval late. If the daemon dies inside the window, its lock goes
//! with it: the watchdog resets the board, and the boot reverts.

use std::path::Path;

use super::background::{self, Pidfile, Side};
use super::confirm::Start;
use super::Io;
use crate::apply::StepError;
use crate::cli::Cli;
use crate::config::watchdog::Watchdog as Config;
use crate::confirm;
use crate::exit::Status;
use crate::seam::{Lock, Seams};
use crate::watchdog::daemon::Held;
use crate::watchdog::history;

/// Locked by the `run` daemon while it serves (flock: released however
/// it ends).
const HOLDER_LOCK: &str = "/run/nasboot/confirm-holder.lock";

/// Whether a `run` daemon holds the reverts: its lock is taken.
pub(crate) fn daemon_holds(seams: &mut Seams<'_>) -> bool {
    matches!(seams.files.lock(Path::new(HOLDER_LOCK), false), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// The daemon's side of the revert.
struct Holder<'c, 'i, 'o> {
    cli: &'c Cli,
    io: &'i mut Io<'o>,
    /// [`HOLDER_LOCK`]; let go when a revert fails, as a holder process
    /// ends: the next start reverts and says why, and a later candidate
    /// gets a holder of its own.
    held: Option<Lock>,
}

impl crate::watchdog::Hold for Holder<'_, '_, '_> {
    fn candidate(&mut self, seams: &mut Seams<'_>) -> Held {
        if self.held.is_none() || !seams.files.exists(Path::new(confirm::PENDING)) {
            return Held::Nothing;
        }
        // The start's check, as a holder's: a revert once due. Not waiting
        // for the apply lock (an apply in progress): the daemon must pet.
        let _lock = match seams.files.lock(Path::new(crate::paths::APPLY_LOCK), false) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Held::Left(100),
            l => l,
        };
        // The revert's result too goes to the daemon's log (its stdout
        // is /dev/null in the background).
        let mut out = Vec::new();
        let start = super::confirm::at_start(self.cli, seams, &mut Io { out: &mut out, err: &mut *self.io.err });
        let _ = self.io.err.write_all(&out);
        match start {
            Ok(Start::Pending(j)) => Held::Left(j.left_ms(&confirm::now(seams.files))),
            Ok(Start::Go) => Held::Settled,
            Err(_) => {
                self.held = None;
                Held::Settled
            }
        }
    }
}

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    match start(cli, seams, io) {
        Ok((Some(dog), Some(cfg), safe, status)) => {
            if cli.background {
                match go_to_background(cli, io) {
                    // The parent's copy of the device closes without the
                    // magic close: the child's keeps the watchdog armed.
                    Ok(Some(parent)) => return status.worst(parent),
                    Ok(None) => {}
                    Err(e) => {
                        let _ = writeln!(io.err, "nasboot: cannot go on in the background: {e}; the watchdog is closed");
                        let _ = dog.close();
                        return status.worst(Status::Failure);
                    }
                }
            }
            // Taken in the daemon (after the fork): the lock goes with it.
            let held = if cli.dry_run { None } else { seams.files.lock(Path::new(HOLDER_LOCK), false).ok() };
            let mut holder = held.map(|h| Holder { cli, io, held: Some(h) });
            let hold = holder.as_mut().map(|h| h as &mut dyn crate::watchdog::Hold);
            crate::watchdog::serve_holding(dog, &cfg, seams, &cli.config, safe, hold).worst(status)
        }
        Ok((None, Some(_), _, status)) => {
            let _ = writeln!(io.err, "nasboot: the watchdog device is held by another process; not petting it");
            status.worst(Status::Failure)
        }
        Ok((_, _, _, status)) | Err(status) => status,
    }
}

/// The fork of `--background`: None in the child (the daemon goes on),
/// the parent's own status to return otherwise. An error: nothing was
/// forked.
fn go_to_background(cli: &Cli, io: &mut Io<'_>) -> std::io::Result<Option<Status>> {
    let pidfile = match &cli.pidfile {
        Some(p) => Some(Pidfile::create(p).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))?),
        None => None,
    };
    // Nothing held in a buffer may be written twice, once by each side.
    let _ = io.out.flush();
    let _ = io.err.flush();
    match background::detach(pidfile, cli.log.as_deref())? {
        Side::Child => Ok(None),
        Side::Parent { pid, pidfile: Ok(()) } => {
            if cli.verbosity > 0 {
                let _ = writeln!(io.err, "nasboot: the watchdog daemon goes on as pid {pid}");
            }
            Ok(Some(Status::Ok))
        }
        Side::Parent { pid, pidfile: Err(e) } => {
            let p = cli.pidfile.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
            let _ = writeln!(io.err, "nasboot: {p}: the daemon's pid {pid} was not written: {e}; it runs all the same");
            Ok(Some(Status::Failure))
        }
    }
}

type Started = (Option<crate::watchdog::Armed>, Option<Box<Config>>, bool, Status);

/// Load and apply. Out of line so the large profile values live in this
/// frame, gone (and its stack pages released) once the daemon runs.
#[inline(never)]
fn start(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Result<Started, Status> {
    // Held for the apply only: released when this returns, before the
    // watchdog is served (for as long as the board runs).
    let _lock = super::lock(seams, io);
    // A candidate past its deadline, or from before a reset, is reverted
    // first (one stat when none is pending): the boot never brings up an
    // unconfirmed candidate. An unusable journal: the safe profile.
    let unusable = matches!(super::confirm::at_start(cli, seams, io), Err(Status::Usage));
    let loaded = super::load(cli, seams, io)?;
    let loaded = if unusable {
        let _ = writeln!(
            io.err,
            "nasboot: the confirm journal could not be used: coming up in the safe profile (LAN-only firewall, no exports)"
        );
        crate::config::Loaded { profile: history::safe_profile(loaded.profile), ..loaded }
    } else {
        loaded
    };
    let history::Prepared { profile, safe } = history::prepare(loaded.profile, seams.files, crate::watchdog::unix_now());
    if safe {
        let _ = writeln!(io.err, "nasboot: boot loop: applying the safe profile (LAN only, no exports)");
    }
    let mut report = super::apply::apply_profile(cli, &profile, seams, io);
    let dog = report.watchdog.take();
    // A failed open was reported with the other errors: no second message.
    // Any other failed step leaves a device held elsewhere (EBUSY) to say.
    let open_failed = report.errors.iter().any(|e| matches!(e, StepError::Watchdog(_)));
    let cfg = if dog.is_none() && open_failed { None } else { profile.watchdog };
    Ok((dog, cfg, safe, report.status))
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::Path;

    use super::{Held, Holder, HOLDER_LOCK};
    use crate::cli::{self, Cli};
    use crate::cmd::{dispatch, Io};
    use crate::confirm::{self, Journal, State};
    use crate::exit::Status;
    use crate::seam::fake::FakeBoard;
    use crate::seam::{Lock, Seams};
    use crate::watchdog::Hold;

    const A: &[u8] = b"[board]\nname = \"a\"\n[firewall]\nprofile = \"off\"\n";
    const B: &[u8] = b"[board]\nname = \"b\"\n[firewall]\nprofile = \"off\"\n[sysctl.set]\n\"net.ipv4.ip_default_ttl\" = 99\n";
    const PROFILE: &str = "/etc/nasboot.toml";

    struct Board {
        fake: FakeBoard,
    }

    fn board(daemon: bool) -> Board {
        let mut fake = FakeBoard::new();
        fake.sysctl.values.insert("net.ipv4.ip_default_ttl".into(), "64".into());
        if let Ok(exe) = std::env::current_exe() {
            fake.runner.programs.insert(exe.to_string_lossy().into_owned());
        }
        // flock's answer to a second locker: the daemon's lock held or not.
        let files = &mut fake.files;
        if daemon {
            files.locked_elsewhere.insert(HOLDER_LOCK.into());
        }
        files.files.insert(PROFILE.into(), A.to_vec());
        files.files.insert("/etc/b.toml".into(), B.to_vec());
        files.files.insert(crate::paths::BOOT_ID.into(), b"11111111-2222\n".to_vec());
        Board { fake }
    }

    /// `f` with the board's seams, a command line and its output.
    fn with<T>(b: &mut Board, args: &[&str], f: impl FnOnce(&Cli, &mut Seams<'_>, &mut Io<'_>) -> T) -> (T, String) {
        let cli = cli::parse(args.iter().copied()).expect("valid command line");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut seams = b.fake.seams();
        let t = f(&cli, &mut seams, &mut Io { out: &mut out, err: &mut err });
        (t, String::from_utf8(err).unwrap())
    }

    /// The daemon's holder, asked once; `held`: its lock, kept between asks.
    fn ask(b: &mut Board, held: &mut Option<Lock>) -> (Held, String) {
        with(b, &["run"], |cli, seams, io| {
            let mut h = Holder { cli, io, held: held.take() };
            let left = h.candidate(seams);
            *held = h.held;
            left
        })
    }

    fn holders(b: &Board) -> usize {
        b.fake.effects().iter().filter(|e| e.starts_with("start ") && e.ends_with("confirm-hold")).count()
    }

    #[test]
    fn under_a_daemon_apply_confirm_starts_no_holder() {
        for (daemon, want) in [(false, 1), (true, 0)] {
            let mut b = board(daemon);
            let (status, err) = with(&mut b, &["apply", "--confirm", "30", "/etc/b.toml"], dispatch);
            assert_eq!(status, Status::Ok, "{err}");
            assert_eq!(holders(&b), want, "daemon {daemon}: {:?}", b.fake.effects());
        }
    }

    #[test]
    fn nothing_pending_is_one_stat() {
        let mut b = board(true);
        let (left, err) = ask(&mut b, &mut Some(Lock::none()));
        assert_eq!((left, err.as_str()), (Held::Nothing, ""));
        assert_eq!(b.fake.files.stats, [Path::new(confirm::PENDING)]);
        assert!(b.fake.files.journal.borrow().is_empty(), "nothing written");
    }

    /// `apply --confirm 30 B` under the daemon, its deadline then passed.
    fn due(b: &mut Board) -> Option<Lock> {
        let (status, err) = with(b, &["apply", "--confirm", "30", "/etc/b.toml"], dispatch);
        assert_eq!(status, Status::Ok, "{err}");
        let mut held = Some(Lock::none());
        let (left, err) = ask(b, &mut held);
        assert!(matches!(left, Held::Left(l) if l > 29_000 && l <= 30_000), "{left:?} {err}");
        let path = Path::new(confirm::PENDING);
        let mut j = Journal::parse(&b.fake.files.files[path]).unwrap();
        j.deadline_ms = 0;
        b.fake.files.files.insert(path.into(), j.render());
        held
    }

    #[test]
    fn the_daemon_reverts_at_the_deadline_and_logs_it() {
        let mut b = board(true);
        let mut held = due(&mut b);
        let (left, err) = ask(&mut b, &mut held);
        assert_eq!(left, Held::Settled);
        assert!(err.contains("was not confirmed (its deadline passed)"), "{err}");
        assert!(err.contains("; the board matches its observation from before the candidate"), "the result, in its log: {err}");
        assert_eq!(b.fake.files.files[Path::new(PROFILE)], A);
        assert_eq!(b.fake.sysctl.values["net.ipv4.ip_default_ttl"], "64");
        let settled = Journal::parse(&b.fake.files.files[Path::new(confirm::SETTLED)]).unwrap();
        assert_eq!(settled.state, State::RolledBack);
        assert_eq!(holders(&b), 0);
        assert!(held.is_some(), "it holds the next one");
    }

    #[test]
    fn a_due_revert_waits_for_an_apply_in_progress_petting() {
        let mut b = board(true);
        let mut held = due(&mut b);
        b.fake.files.locked_elsewhere.insert(crate::paths::APPLY_LOCK.into());
        let (left, err) = ask(&mut b, &mut held);
        assert_eq!((left, err.as_str()), (Held::Left(100), ""), "asked again in 0.1 s, not blocked");
        assert_eq!(b.fake.files.files[Path::new(PROFILE)], B);
        b.fake.files.locked_elsewhere.remove(Path::new(crate::paths::APPLY_LOCK));
        let (left, err) = ask(&mut b, &mut held);
        assert_eq!(left, Held::Settled);
        assert!(err.contains("its deadline passed"), "{err}");
        assert_eq!(b.fake.files.files[Path::new(PROFILE)], A);
    }

    #[test]
    fn a_revert_that_fails_lets_the_hold_go() {
        // A read-only /var/lib: the revert cannot be done. The daemon lets
        // its lock go, as a holder process ends: the next start says why.
        let mut b = board(true);
        let mut held = due(&mut b);
        b.fake.files.fail_writes = Some(io::ErrorKind::ReadOnlyFilesystem);
        let (first, err) = ask(&mut b, &mut held);
        assert!(err.contains("nothing reverted"), "{err}");
        assert!(held.is_none());
        b.fake.files.stats.clear();
        let written = b.fake.files.journal.borrow().len();
        let (again, err) = ask(&mut b, &mut held);
        assert_eq!((first, again, err.as_str()), (Held::Settled, Held::Nothing, ""));
        assert!(b.fake.files.stats.is_empty(), "{:?}", b.fake.files.stats);
        assert_eq!(b.fake.files.journal.borrow().len(), written, "nothing written");
        assert_eq!(Journal::parse(&b.fake.files.files[Path::new(confirm::PENDING)]).unwrap().state, State::Pending);
    }
}
