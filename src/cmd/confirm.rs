//! `apply --confirm SECS [FILE]`, `confirm`, `rollback`, and the revert
//! that every start of `apply` and `run` owes a pending candidate whose
//! deadline passed (the journal is `crate::confirm`).
//!
//! `apply --confirm SECS FILE` applies FILE as a candidate: the profile in
//! force (the `--config` file) is the last good profile, copied byte for
//! byte into the journal with the board's observation, fsynced, before
//! FILE replaces the profile file and is applied. Without FILE the profile
//! file is the candidate and the last good profile is the one the journal
//! kept from the last confirm or rollback. Then a holder is started that
//! reverts at the deadline unless `nasboot confirm` comes first: a nasboot
//! of its own session (posix_spawn with POSIX_SPAWN_SETSID, argv only),
//! which no SSH session's hangup reaches; where the `run` daemon serves,
//! the daemon holds it instead (`cmd::run`). If it dies, the next `apply` or
//! `run` (the boot's) finds the journal pending and past its deadline, or
//! from another boot, and reverts before anything else.
//!
//! A revert puts the last good profile back in the profile file (the
//! candidate kept as `FILE.rejected`), applies it whole (which removes the
//! bridges and VLANs the candidate made, and the SQM shaping the last good
//! profile does not ask for: nasboot marks its own), then observes the
//! board and sets back, through the same seams an apply uses, what still
//! differs from the observation from before the candidate: the sysctls
//! (global and per interface), links up or down, their MTU and
//! txqueuelen, addresses, the share files (from the `.bak` copy their
//! write kept; one that was absent is emptied, and exportfs -ra follows
//! the export table), nfsd's knobs, the read-ahead, and the watchdog's
//! timeout (opened, set and closed with the magic close; where `run`
//! holds the device the open is refused, and the daemon's own reload of
//! the last good profile sets it). It removes the bridges and VLANs the
//! candidate made. Then it observes the board again and compares it, name
//! by name, with the observation from before the candidate. Only then is
//! it called done; differences are reported.

use std::path::{Path, PathBuf};

use super::Io;
use crate::cli::Cli;
use crate::config::Profile;
use crate::confirm::{self, snapshot, Journal, Place, State};
use crate::exit::Status;
use crate::seam::netif::{Kind, LinkInfo};
use crate::seam::{Cmd, Seams};
use crate::share;

/// How often the holder reads the journal while it waits: a confirm is
/// seen, and the deadline kept, within this.
const TICK_MS: u64 = 100;

/// The lock between a revert and `confirm` (not the apply lock, which a
/// long apply holds): whichever comes first decides.
const JOURNAL_LOCK: &str = "/run/nasboot/confirm.lock";

fn say(io: &mut Io<'_>, what: std::fmt::Arguments<'_>) {
    let _ = writeln!(io.err, "nasboot: {what}");
}

/// What a start found in the journal.
pub(crate) enum Start {
    /// Nothing pending (one stat), or it was reverted now.
    Go,
    /// A candidate is pending and its deadline has not passed.
    Pending(Box<Journal>),
}

/// Before anything else, at every start of `apply` and `run` (under the
/// apply lock): one stat of the pending journal; if a candidate is pending
/// past its deadline (or from another boot), revert it now. `boot`: this
/// is `run`, which must come up whatever the journal says; an unusable
/// journal there is said, and the caller comes up in the safe profile.
pub(crate) fn at_start(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Result<Start, Status> {
    if cli.dry_run || !seams.files.exists(Path::new(confirm::PENDING)) {
        return Ok(Start::Go);
    }
    let j = match confirm::read(seams.files, &cli.config) {
        Ok(Some((j, Place::Pending))) => j,
        Ok(_) => return Ok(Start::Go),
        Err(e) => {
            say(io, format_args!("{e}"));
            return Err(Status::Usage);
        }
    };
    let now = confirm::now(seams.files);
    if !j.due(&now) {
        // Its holder may be dead (kill -9, the OOM killer): another one
        // is started; a second holder finds the journal settled and goes.
        if let Err(e) = start_holder(cli, seams) {
            say(io, format_args!("the holder of the revert could not start ({e})"));
        }
        return Ok(Start::Pending(Box::new(j)));
    }
    let why = if j.boot == now.boot { "its deadline passed" } else { "the board restarted inside its window" };
    say(
        io,
        format_args!("the candidate {} was not confirmed ({why}): going back to the last good profile {}", j.candidate, j.good_digest()),
    );
    match revert(cli, j, seams, io) {
        Status::Ok => Ok(Start::Go),
        s => Err(s),
    }
}

/// A candidate pending (not yet due) when `apply` starts: refused (exit 2)
/// unless `--rollback-first`, which reverts it first. One change at a
/// time: a plain apply must not silently disarm a pending one.
pub(crate) fn clear_pending(cli: &Cli, pending: Start, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Result<(), Status> {
    if let Start::Pending(j) = pending {
        if !cli.rollback_first {
            let left = j.left_ms(&confirm::now(seams.files)).div_ceil(1000);
            say(
                io,
                format_args!(
                    "{}: the candidate {} is pending for {left} s more: `nasboot confirm` keeps it, `nasboot rollback` goes back; or apply with --rollback-first",
                    confirm::PENDING,
                    j.candidate
                ),
            );
            return Err(Status::Usage);
        }
        say(io, format_args!("--rollback-first: going back from the candidate {} first", j.candidate));
        let s = revert(cli, *j, seams, io);
        if s != Status::Ok {
            return Err(s);
        }
    }
    Ok(())
}

/// `apply --confirm SECS [FILE]`, under the apply lock, after `at_start`
/// and `clear_pending`.
pub(crate) fn apply(cli: &Cli, secs: u32, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let file = cli.config.display().to_string();
    let in_force = match seams.files.read(&cli.config) {
        Ok(b) => b,
        Err(e) => {
            say(io, format_args!("{file}: cannot read the profile: {e}"));
            return Status::Usage;
        }
    };
    let settled = match confirm::read(seams.files, &cli.config) {
        Ok(j) => j.map(|(j, _)| j),
        Err(e) => {
            say(io, format_args!("{e}"));
            return Status::Usage;
        }
    };
    // The candidate's bytes and the last good profile's.
    let (candidate, good) = match &cli.candidate {
        Some(c) => match seams.files.read(c) {
            Ok(b) => (b, in_force),
            Err(e) => {
                say(io, format_args!("{}: cannot read the candidate: {e}", c.display()));
                return Status::Usage;
            }
        },
        None => match settled.as_ref() {
            Some(j) => (in_force, j.good.clone()),
            None => {
                say(
                    io,
                    format_args!(
                        "{}: no last good profile is recorded for {file}: give the candidate as a file (`nasboot apply --confirm SECS FILE`), so that {file} as it is stays the last good one",
                        confirm::SETTLED
                    ),
                );
                return Status::Usage;
            }
        },
    };
    // Checked before anything is journaled: a bad candidate changes nothing.
    let cand_name = cli.candidate.as_ref().map_or_else(|| file.clone(), |c| c.display().to_string());
    let cand = match check(&cand_name, &candidate, cli, seams, io) {
        Some(l) => l,
        None => return Status::Usage,
    };
    let cand = &cand.profile;
    let good_profile = crate::config::parse_bytes(&file, &good).ok();
    // The board before the candidate, as both profiles see it.
    let observed = observe(cand, good_profile.as_ref().map(|l| &l.profile), seams).0;
    drop(good_profile);
    let now = confirm::now(seams.files);
    let j = match Journal::begin(settled.as_ref(), &cli.config, good, &candidate, &now, secs, observed) {
        Ok(j) => j,
        Err(_) => {
            say(io, format_args!("{}: a candidate is pending already", confirm::PENDING));
            return Status::Usage;
        }
    };
    if let Err(e) = confirm::write_pending(seams.files, &j) {
        say(io, format_args!("{e}; --confirm needs it on persistent storage: nothing was changed"));
        return Status::Failure;
    }
    if cli.candidate.is_some() {
        if let Err(e) = seams.files.replace(&cli.config, &candidate) {
            say(io, format_args!("{file}: cannot put the candidate in place: {e}; going back"));
            return revert(cli, j, seams, io).worst(Status::Failure);
        }
    }
    let mut report = super::apply::apply_profile(cli, cand, seams, io);
    if let Some(dog) = report.watchdog.take() {
        let _ = dog.close();
    }
    if let Err(e) = start_holder(cli, seams) {
        say(
            io,
            format_args!("the holder of the revert could not start ({e}): the next `nasboot apply` or `run` after the deadline reverts"),
        );
    }
    let _ = writeln!(io.out, "candidate {} in force until its deadline in {secs} s; the LAN's addresses under it:", j.candidate);
    for i in cand.interface.iter().filter(|i| i.role == crate::config::net::Role::Lan) {
        for a in &i.address {
            let _ = writeln!(io.out, "  {} {}", i.name.get_ref(), a.get_ref());
        }
    }
    let _ = writeln!(io.out, "keep it with: nasboot -c {file} confirm   (go back now: nasboot -c {file} rollback)");
    // A partial apply stays pending: the revert covers whatever of it was applied.
    report.status
}

/// Parse and validate a candidate as `check` would; None (reported) when
/// it fails.
fn check(name: &str, bytes: &[u8], cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Option<crate::config::Loaded> {
    match super::parse_on_board(name, bytes, seams, io) {
        Err(parsed) => {
            if parsed {
                say(io, format_args!("the candidate fails check: nothing was journaled or changed"));
            }
            None
        }
        // Only the board's warnings count (they come last).
        Ok((loaded, board)) if cli.strict && board > 0 => {
            for w in &loaded.warnings[loaded.warnings.len() - board..] {
                say(io, format_args!("{w}"));
            }
            None
        }
        Ok((loaded, _)) => Some(loaded),
    }
}

/// The holder: `nasboot [-r ROOT] -c PROFILE confirm-hold`, in a session of
/// its own.
fn start_holder(cli: &Cli, seams: &mut Seams<'_>) -> std::io::Result<()> {
    // Where the `run` daemon serves, it holds the revert.
    if super::run::daemon_holds(seams) {
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let exe = exe.to_string_lossy();
    let config = cli.config.to_string_lossy();
    let root = cli.root.as_deref().unwrap_or(Path::new("")).to_string_lossy();
    let all = ["-r", &root, "-c", &config, "confirm-hold"];
    let args = if cli.root.is_some() { &all[..] } else { &all[2..] };
    seams.runner.start(&Cmd { program: &exe, args, stdin: None, timeout: std::time::Duration::ZERO })
}

/// `confirm-hold`: wait for the deadline, reading the journal every
/// [`TICK_MS`]; gone once it is settled; revert at the deadline.
pub(crate) fn hold(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    loop {
        let j = match confirm::read(seams.files, &cli.config) {
            Ok(Some((j, Place::Pending))) => j,
            Ok(_) => return Status::Ok,
            Err(e) => {
                say(io, format_args!("{e}"));
                return Status::Failure;
            }
        };
        let now = confirm::now(seams.files);
        if j.due(&now) {
            let _lock = super::lock(seams, io);
            return at_start(cli, seams, io).map_or_else(|s| s, |_| Status::Ok);
        }
        std::thread::sleep(std::time::Duration::from_millis(j.left_ms(&now).min(TICK_MS)));
    }
}

/// `nasboot confirm`: keep the candidate. Not under the apply lock.
pub(crate) fn confirm(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let _held = seams.files.lock(Path::new(JOURNAL_LOCK), true);
    let mut j = match confirm::read(seams.files, &cli.config) {
        Ok(Some((j, Place::Pending))) => j,
        Ok(_) => {
            say(io, format_args!("{}: no candidate is pending: nothing to confirm", confirm::PENDING));
            return Status::Failure;
        }
        Err(e) => {
            say(io, format_args!("{e}"));
            return Status::Failure;
        }
    };
    if j.due(&confirm::now(seams.files)) {
        say(io, format_args!("the candidate {}'s deadline has passed: it is being rolled back", j.candidate));
        return Status::Failure;
    }
    let file = cli.config.display();
    let bytes = match seams.files.read(&cli.config) {
        Ok(b) if confirm::Digest::of(&b) == j.candidate => b,
        Ok(_) => {
            say(io, format_args!("{file}: the profile changed since the candidate {} was applied: not confirmed", j.candidate));
            return Status::Failure;
        }
        Err(e) => {
            say(io, format_args!("{file}: cannot read the profile: {e}"));
            return Status::Failure;
        }
    };
    let _ = j.confirm(bytes);
    if let Err(e) = confirm::write_settled(seams.files, &j) {
        say(io, format_args!("{e}"));
        return Status::Failure;
    }
    let _ = writeln!(io.out, "confirmed: {} is the last good profile", j.candidate);
    Status::Ok
}

/// `nasboot rollback`: go back now (under the apply lock).
pub(crate) fn rollback(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let _lock = super::lock(seams, io);
    match confirm::read(seams.files, &cli.config) {
        Ok(Some((j, Place::Pending))) => revert(cli, j, seams, io),
        Ok(Some((mut j, Place::Settled))) => {
            // The last good profile again, as a revert does it, checked.
            // No observation from before a candidate to compare with: the
            // check is the plan's (nothing left to do).
            j.state = State::Pending;
            j.candidate = confirm::Digest::of(&seams.files.read(&cli.config).unwrap_or_default());
            j.observed.clear();
            revert(cli, j, seams, io)
        }
        Ok(None) => {
            say(io, format_args!("{}: no last good profile is recorded: nothing to roll back to", confirm::SETTLED));
            Status::Failure
        }
        Err(e) => {
            say(io, format_args!("{e}"));
            Status::Failure
        }
    }
}

fn rejected(config: &Path) -> PathBuf {
    let mut s = config.as_os_str().to_os_string();
    s.push(".rejected");
    PathBuf::from(s)
}

/// Revert to the journal's last good profile, check the board, and settle
/// the journal (see the module's doc). Ok only when the board matches the
/// observation from before the candidate.
pub(crate) fn revert(cli: &Cli, mut j: Journal, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let _held = seams.files.lock(Path::new(JOURNAL_LOCK), true);
    let file = cli.config.display().to_string();
    let current = seams.files.read(&cli.config).ok();
    let kept = rejected(&cli.config);
    if let Some(cur) = current.as_ref().filter(|c| c.as_slice() != j.good.as_slice()) {
        if let Err(e) = seams.files.replace(&kept, cur) {
            say(io, format_args!("{}: cannot keep the candidate: {e}; nothing reverted", kept.display()));
            return Status::Failure;
        }
    }
    if let Err(e) = seams.files.replace(&cli.config, &j.good) {
        say(io, format_args!("{file}: cannot put the last good profile back: {e}; nothing reverted"));
        return Status::Failure;
    }
    let candidate = current.as_deref().and_then(|c| crate::config::parse_bytes(&file, c).ok());
    let good = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(_) => {
            let note = format!(
                "the last good profile {} no longer passes check: it is back in {file} (the candidate in {}), and the board is left as it is",
                j.good_digest(),
                kept.display()
            );
            say(io, format_args!("{note}"));
            let _ = j.reject(&note);
            let _ = confirm::write_settled(seams.files, &j);
            return Status::Failure;
        }
    };
    let good = &good.profile;
    let mut report = super::apply::apply_profile(cli, good, seams, io);
    if let Some(dog) = report.watchdog.take() {
        let _ = dog.close();
    }
    // What differs now from before the candidate, set back.
    let cand = candidate.as_ref().map(|l| &l.profile);
    let now = if j.observed.is_empty() { Vec::new() } else { observe(good, cand, seams).0 };
    let changed = snapshot::changed(&j.observed, &now);
    let actions = restore_values(&changed, seams, io);
    // One read of the links for all three: set up or down, a link keeps
    // its name and index.
    if let Ok(links) = seams.netif.link_infos() {
        restore_links(good, &changed, &links, seams, io);
        restore_addresses(good, &changed, &links, seams, io);
        remove_new_devices(good, &j.observed, &links, seams, io);
    }
    // The files and the watchdog as an apply does them: the same steps.
    let mut back = crate::apply::apply(&crate::plan::Plan { actions, notes: Vec::new() }, seams);
    for e in &back.errors {
        say(io, format_args!("{e}"));
    }
    if let Some(dog) = back.watchdog.take() {
        let _ = dog.close();
    }
    let (now, after_good) = observe(good, cand, seams);
    let mut diffs = if j.observed.is_empty() { Vec::new() } else { snapshot::differences(&j.observed, &now) };
    // And the last good profile's plan on the board as it is now: nothing
    // left to do but what every apply does again (the firewall's load, the
    // watchdog's open, which `run` keeps and an apply closes).
    let left = crate::plan::plan(good, &after_good);
    let again = |a: &&crate::plan::Action| matches!(a.phase(), crate::plan::Phase::Firewall | crate::plan::Phase::Watchdog);
    for a in &left.actions {
        if !again(&a) {
            diffs.push(format!("still to do: {a}"));
        }
    }
    let against = if j.observed.is_empty() { "the last good profile" } else { "its observation from before the candidate" };
    for d in &diffs {
        say(io, format_args!("after the revert, the board differs from {against}: {d}"));
    }
    let note = if diffs.is_empty() {
        format!("reverted to {}; the board matches {against}; the candidate is in {}", j.good_digest(), kept.display())
    } else {
        format!("reverted to {}, but {} difference(s) from {against} remain: {}", j.good_digest(), diffs.len(), diffs.join("; "))
    };
    let _ = writeln!(io.out, "{note}");
    let _ = j.reject(&note);
    if let Err(e) = confirm::write_settled(seams.files, &j) {
        say(io, format_args!("{e}"));
        return Status::Failure;
    }
    if diffs.is_empty() {
        report.status
    } else {
        report.status.worst(Status::Failure)
    }
}

/// What differs from before the candidate and a write of its own sets
/// back: the sysctls (global, and interfaces' `IF:KEY`; the last good
/// profile may not name those the candidate set) and the kernel files
/// (`knob`: nfsd's, the read-ahead), now; the share files (export table,
/// nfs settings, the Samba include, ksmbd.conf) and the watchdogs'
/// timeouts as steps for an apply (the export table's runs exportfs -ra;
/// a watchdog `run` holds cannot be opened, as its step says in the log:
/// the daemon's reload of the last good profile sets its timeout, and the
/// check reports it until then). A share file goes back to the text of
/// the `.bak` copy the candidate's write kept (the check tells if it was
/// not that one); one that was absent is emptied, which is as good (its
/// text kept in `.bak`). A running ksmbd is then told, as by an apply.
fn restore_values(changed: &[(&str, &str)], seams: &mut Seams<'_>, io: &mut Io<'_>) -> Vec<crate::plan::Action> {
    use crate::plan::Action;
    let mut actions = Vec::new();
    for &(name, was) in changed {
        let Some((kind, key)) = name.split_once(' ') else { continue };
        let r = match kind {
            "sysctl" if was != "absent" => seams.sysctl.set(key.split_once(':').map_or(key, |(_, k)| k), was),
            "knob" => seams.files.write_kernel(Path::new(key), was.as_bytes()),
            "watchdog" => {
                if let Ok(timeout) = was.parse() {
                    actions.push(Action::Watchdog(crate::watchdog::Action { device: Some(key.to_string()), timeout, interval: 1 }));
                }
                Ok(())
            }
            "file" => {
                let text =
                    if was == "absent" { Vec::new() } else { seams.files.read(Path::new(&format!("{key}.bak"))).unwrap_or_default() };
                let (text, path) = (String::from_utf8_lossy(&text).into_owned(), key.to_string());
                // Written as the export table is; then exportfs -ra for
                // the export table, and for ksmbd.conf a reload of a
                // running ksmbd, which serves the candidate's shares until
                // it takes the file back (share::apply).
                let reload = (key == crate::paths::EXPORTS
                    || key == share::EXPORTS_DROP_IN
                    || key == crate::paths::KSMBD_CONF && share::smb::mountd_running(seams))
                    && !seams.files.relocated();
                actions.push(Action::Nfs(share::Action::Exports { path, text, reload }));
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            say(io, format_args!("{key}: cannot set it back to {was}: {e}"));
        }
    }
    actions
}

/// Every link's MTU and txqueuelen as they were before the candidate; and
/// links the last good profile does not name (a bridge port the candidate
/// brought up) set back up or down as they were.
fn restore_links(good: &Profile, changed: &[(&str, &str)], links: &[LinkInfo], seams: &mut Seams<'_>, io: &mut Io<'_>) {
    let named =
        |n: &str| good.interface.iter().any(|i| i.name.get_ref().as_str() == n || i.ports.iter().any(|p| p.get_ref().as_str() == n));
    for (name, value) in changed.iter().filter_map(|(n, v)| Some((n.strip_prefix("link ")?, *v))) {
        // "KIND[ master M] up|down mtu N qlen Q": the word before " mtu ".
        let Some((head, tail)) = value.split_once(" mtu ") else { continue };
        let was_up = head.ends_with(" up");
        let Some(now) = links.iter().find(|k| k.name.as_str() == name) else { continue };
        // Set again whatever changed: the same MTU or length is no change.
        if let Some((Ok(mtu), Ok(qlen))) = tail.split_once(" qlen ").map(|(m, q)| (m.parse(), q.parse())) {
            if let Err(e) = seams.netif.set_mtu(&now.name, mtu).and_then(|()| seams.netif.set_txqueuelen(&now.name, qlen)) {
                say(io, format_args!("{name}: cannot set it back to {value}: {e}"));
            }
        }
        if named(name) || now.state.up == was_up {
            continue;
        }
        if let Err(e) = seams.netif.set_up(&now.name, was_up) {
            say(io, format_args!("{name}: cannot set it {} again: {e}", if was_up { "up" } else { "down" }));
        }
    }
}

/// Addresses on the observed links that were not there before the
/// candidate and that the last good profile does not give: removed (a
/// moved LAN address; nasboot's apply only adds the profile's).
fn restore_addresses(good: &Profile, changed: &[(&str, &str)], links: &[LinkInfo], seams: &mut Seams<'_>, io: &mut Io<'_>) {
    let Ok(addrs) = seams.netif.addresses() else { return };
    for (name, before) in changed.iter().filter_map(|(n, v)| Some((n.strip_prefix("addr ")?, *v))) {
        let Some(link) = links.iter().find(|k| k.name.as_str() == name) else { continue };
        for (i, a) in &addrs {
            if *i != link.state.index {
                continue;
            }
            let s = a.to_string();
            let wanted = good.interface.iter().any(|i| i.name.get_ref().as_str() == name && i.address.iter().any(|w| w.get_ref() == a));
            if s.starts_with("fe80:") || before.split(' ').any(|b| b == s) || wanted {
                continue;
            }
            if let Err(e) = seams.netif.delete_address(link.state.index, a) {
                say(io, format_args!("{name}: cannot remove {s}, which the candidate added: {e}"));
            }
        }
    }
}

/// Bridges and VLANs that were not there before the candidate and that
/// the last good profile does not name: removed. The apply's own clean-up
/// removes only links with nasboot's alias, which a link gets in a second
/// request after its creation; a candidate killed between the two leaves
/// one without it, which only the observation from before can tell.
fn remove_new_devices(good: &Profile, observed: &[String], links: &[LinkInfo], seams: &mut Seams<'_>, io: &mut Io<'_>) {
    let was_there =
        |n: &str| observed.iter().any(|l| l.strip_prefix("link ").and_then(|r| r.strip_prefix(n)).is_some_and(|r| r.starts_with(" = ")));
    for l in links.iter().filter(|l| matches!(l.kind, Kind::Bridge { .. } | Kind::Vlan { .. })) {
        let name = l.name.as_str();
        if observed.is_empty() || was_there(name) || good.interface.iter().any(|i| i.name.get_ref().as_str() == name) {
            continue;
        }
        if let Err(e) = seams.netif.delete_link(&l.name) {
            say(io, format_args!("{name}: cannot remove it, which the candidate made: {e}"));
        }
    }
}

/// The board as the candidate and the last good profile see it (see
/// `confirm::snapshot`): the plan's observation for each, and the
/// timeouts of the watchdogs they name, from sysfs (never opened: an open
/// arms it). And the plan's observation for `cand`.
fn observe(cand: &Profile, good: Option<&Profile>, seams: &mut Seams<'_>) -> (Vec<String>, crate::plan::Observed) {
    let c = crate::plan::observe(cand, seams);
    let g = good.map(|g| crate::plan::observe(g, seams));
    // The candidate's watchdog, else the last good profile's.
    let dog = cand.watchdog.as_ref().or(good.and_then(|g| g.watchdog.as_ref()));
    let dog = dog.map(|w| {
        let dev = w.device.as_ref().map_or(crate::paths::WATCHDOG_DEVICES[0], |d| d.as_str());
        (dev, crate::watchdog::device::read_u32(seams.files, &crate::watchdog::device::sysfs_dir(Path::new(dev)).join("timeout")))
    });
    // Without a last good profile, the candidate's twice (a name seen
    // twice keeps one line).
    let lines = snapshot::lines(&[&c, g.as_ref().unwrap_or(&c)], dog);
    (lines, c)
}

/// `status`'s lines about the journal.
pub(crate) fn status(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) {
    match confirm::read(seams.files, &cli.config) {
        Ok(None) => {}
        Ok(Some((j, _))) => {
            let now = confirm::now(seams.files);
            if j.state == State::Pending {
                let when = if j.due(&now) { "due now".to_string() } else { format!("in {} s", j.left_ms(&now).div_ceil(1000)) };
                let _ = writeln!(io.out, "candidate {} pending: reverted {when} unless `nasboot confirm`", j.candidate);
            } else {
                let sep = if j.note.is_empty() { "" } else { ": " };
                let _ = writeln!(io.out, "last candidate {}: {}{sep}{}", j.candidate, j.state, j.note);
            }
            let _ = writeln!(io.out, "last good profile: {} {} (kept in {})", cli.config.display(), j.good_digest(), j.state_path());
        }
        Err(e) => {
            let _ = writeln!(io.out, "confirm journal: {e}");
        }
    }
}

impl Journal {
    fn state_path(&self) -> &'static str {
        if self.state == State::Pending {
            confirm::PENDING
        } else {
            confirm::SETTLED
        }
    }
}

#[cfg(test)]
mod tests;
