//! The journal's state machine, each transition by name, and its file.

use std::path::Path;

use super::*;
use crate::seam::fake::FakeFiles;

const GOOD: &[u8] = b"[board]\nname = \"a\"\n";
const CAND: &[u8] = b"[board]\nname = \"b\"\n";

fn now(boot: &str, ms: u64) -> Now {
    Now { boot: boot.to_string(), ms, wall: 1_000 }
}

fn pending() -> Journal {
    let obs = vec!["addr eth1 = 192.168.10.1/24".to_string(), "sysctl net.core.somaxconn = 4096".to_string()];
    Journal::begin(None, Path::new("/etc/nasboot.toml"), GOOD.to_vec(), CAND, &now("b1", 5_000), 3, obs).unwrap()
}

#[test]
fn none_to_pending_keeps_the_good_copy_digest_and_deadline() {
    let j = pending();
    assert_eq!(j.state, State::Pending);
    assert_eq!(j.good, GOOD);
    assert_eq!(j.candidate, Digest::of(CAND));
    assert_eq!((j.boot.as_str(), j.deadline_ms, j.deadline_wall), ("b1", 8_000, 1_003));
}

#[test]
fn pending_to_pending_is_refused() {
    let j = pending();
    let again = Journal::begin(Some(&j), Path::new("/etc/nasboot.toml"), GOOD.to_vec(), CAND, &now("b1", 6_000), 3, Vec::new());
    assert_eq!(again, Err(Refused::AlreadyPending));
}

#[test]
fn settled_to_pending_is_allowed() {
    let mut j = pending();
    j.confirm(CAND.to_vec()).unwrap();
    let next = Journal::begin(Some(&j), Path::new("/etc/nasboot.toml"), CAND.to_vec(), GOOD, &now("b1", 9_000), 5, Vec::new());
    assert_eq!(next.map(|j| j.state), Ok(State::Pending));
}

#[test]
fn pending_is_due_at_the_deadline_not_before() {
    let j = pending();
    assert!(!j.due(&now("b1", 7_999)));
    assert_eq!(j.left_ms(&now("b1", 7_000)), 1_000);
    assert!(j.due(&now("b1", 8_000)));
    assert_eq!(j.left_ms(&now("b1", 9_000)), 0);
}

#[test]
fn pending_from_another_boot_is_due_whatever_the_clock() {
    // CLOCK_BOOTTIME restarts at 0 each boot: a reset inside the window
    // gives a small clock, which must not read as "not yet".
    let j = pending();
    assert!(j.due(&now("b2", 0)));
    assert!(j.due(&now("b2", 1)));
}

#[test]
fn pending_to_confirmed_makes_the_candidate_the_last_good() {
    let mut j = pending();
    j.confirm(CAND.to_vec()).unwrap();
    assert_eq!(j.state, State::Confirmed);
    assert_eq!(j.good, CAND);
    assert!(!j.due(&now("b2", 0)), "a settled journal is never due");
}

#[test]
fn pending_to_rolled_back_records_the_check() {
    let mut j = pending();
    j.reject("reverted; the board matches its observation from before").unwrap();
    assert_eq!(j.state, State::RolledBack);
    assert_eq!(j.good, GOOD, "the last good profile stays");
    assert!(j.note.starts_with("reverted"));
}

#[test]
fn settled_cannot_be_confirmed_or_rolled_back() {
    let mut j = pending();
    j.confirm(CAND.to_vec()).unwrap();
    assert_eq!(j.confirm(CAND.to_vec()), Err(Refused::NothingPending));
    assert_eq!(j.reject("x"), Err(Refused::NothingPending));
    let mut j = pending();
    j.reject("x").unwrap();
    assert_eq!(j.confirm(CAND.to_vec()), Err(Refused::NothingPending));
}

#[test]
fn the_file_round_trips_every_field() {
    let mut j = pending();
    j.note = "a note".into();
    let text = j.render();
    assert_eq!(Journal::parse(&text), Ok(j.clone()));
    let s = String::from_utf8_lossy(&text);
    assert!(s.starts_with("nasboot confirm journal 1\nstate pending\nprofile /etc/nasboot.toml\n"), "{s}");
    assert!(s.ends_with("name = \"a\"\n\nend\n"), "{s}");
}

#[test]
fn a_truncated_journal_is_refused_at_every_length() {
    let text = pending().render();
    for n in 0..text.len() {
        let e = Journal::parse(&text[..n]).expect_err(&format!("cut at {n}"));
        assert!(e.line >= 1, "{n}: {e:?}");
    }
}

#[test]
fn a_corrupt_journal_says_which_line() {
    let text = String::from_utf8(pending().render()).unwrap();
    let cases = [
        (text.replace("state pending", "state maybe"), 2, "state is none of"),
        (text.replace("deadline 8000", "deadline soon"), 7, "not a number"),
        (text.replace("nasboot confirm journal 1", "nasboot confirm journal 9"), 1, "another version"),
        (text.replace("name = \"a\"", "name = \"z\""), 13, "do not match its digest"),
        (text.replace("\nend\n", "\nen\n"), 13, "not followed by `end`"),
    ];
    for (bad, line, what) in cases {
        let e = Journal::parse(bad.as_bytes()).unwrap_err();
        assert_eq!(e.line, line, "{what}: {e:?}");
        assert!(e.what.contains(what), "{what}: {e:?}");
    }
}

#[test]
fn written_pending_then_settled_by_rename() {
    let mut f = FakeFiles::default();
    let mut j = pending();
    write_pending(&mut f, &j).unwrap();
    assert_eq!(*f.journal.borrow(), ["replace /var/lib/nasboot/confirm.pending"]);
    let (back, place) = read(&mut f, Path::new("/etc/nasboot.toml")).unwrap().unwrap();
    assert_eq!((back, place), (j.clone(), Place::Pending));
    j.confirm(CAND.to_vec()).unwrap();
    write_settled(&mut f, &j).unwrap();
    assert_eq!(f.stats, [Path::new(PENDING)]);
    assert_eq!(
        f.journal.borrow()[1..],
        ["replace /var/lib/nasboot/confirm.pending", "rename /var/lib/nasboot/confirm.pending /var/lib/nasboot/confirm"]
    );
    assert!(!f.files.contains_key(Path::new(PENDING)));
    let (back, place) = read(&mut f, Path::new("/etc/nasboot.toml")).unwrap().unwrap();
    assert_eq!((back.state, place), (State::Confirmed, Place::Settled));
}

#[test]
fn a_crash_between_the_settled_write_and_the_rename_is_finished_by_the_next_read() {
    let mut f = FakeFiles::default();
    let mut j = pending();
    j.reject("reverted").unwrap();
    f.files.insert(PENDING.into(), j.render());
    let (back, place) = read(&mut f, Path::new("/etc/nasboot.toml")).unwrap().unwrap();
    assert_eq!((back.state, place), (State::RolledBack, Place::Settled));
    assert!(!f.files.contains_key(Path::new(PENDING)) && f.files.contains_key(Path::new(SETTLED)));
}

#[test]
fn a_settle_finished_by_another_reader_is_no_error() {
    // `confirm` writes the settled state into the pending file; a holder's
    // `read` renames it before `confirm` does.
    let mut f = FakeFiles::default();
    let mut j = pending();
    write_pending(&mut f, &j).unwrap();
    j.confirm(CAND.to_vec()).unwrap();
    f.files.insert(PENDING.into(), j.render());
    read(&mut f, Path::new("/etc/nasboot.toml")).unwrap();
    assert_eq!(settle_file(&mut f).map_err(|e| e.to_string()), Ok(()));
    f.files.remove(Path::new(SETTLED));
    assert!(matches!(settle_file(&mut f), Err(Error::Io { op: "rename into", .. })));
}

#[test]
fn errors_name_the_file() {
    let mut f = FakeFiles::default();
    f.files.insert(PENDING.into(), b"nasboot confirm journal 1\nstate pen".to_vec());
    let e = read(&mut f, Path::new("/etc/nasboot.toml")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/var/lib/nasboot/confirm.pending:2: the confirm journal is unusable: truncated (remove it once the board is as wanted)"
    );
    let mut f = FakeFiles::default();
    f.files.insert(SETTLED.into(), pending().render());
    let e = read(&mut f, Path::new("/etc/other.toml")).unwrap_err();
    assert_eq!(e.to_string(), "/var/lib/nasboot/confirm: the confirm journal is for the profile /etc/nasboot.toml, not this one");
    let mut f = FakeFiles { fail_writes: Some(io::ErrorKind::ReadOnlyFilesystem), ..FakeFiles::default() };
    let e = write_pending(&mut f, &pending()).unwrap_err();
    assert!(matches!(&e, Error::Io { path: PENDING, op: "write", .. }), "{e:?}");
    assert!(e.to_string().starts_with("/var/lib/nasboot/confirm.pending: cannot write the confirm journal: Read-only file system"), "{e}");
    assert!(f.files.is_empty());
}

#[test]
fn nothing_written_reads_as_none() {
    let mut f = FakeFiles::default();
    assert_eq!(read(&mut f, Path::new("/etc/nasboot.toml")).unwrap(), None);
}

#[test]
fn differences_are_named() {
    let before = vec!["addr eth1 = 192.168.10.1/24".to_string(), "link br0 = none".to_string(), "sysctl a = 1".to_string()];
    let after = vec!["addr eth1 = 192.168.20.1/24".to_string(), "sysctl a = 1".to_string(), "link br9 = bridge up mtu 1500".to_string()];
    assert_eq!(
        snapshot::differences(&before, &after),
        [
            "addr eth1: was 192.168.10.1/24, now 192.168.20.1/24",
            "link br0: was none, now absent",
            "link br9: was absent, now bridge up mtu 1500"
        ]
    );
    assert!(snapshot::differences(&before, &before).is_empty());
}

#[test]
fn changed_names_what_differs_now_never_an_unknown() {
    let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let before = l(&[
        "file /etc/exports = absent",
        "firewall = ?",
        "knob /proc/fs/nfsd/threads = 8",
        "knob /proc/fs/nfsd/versions = ?",
        "link eth1 = device up mtu 1500 qlen 1000",
    ]);
    let now = l(&["file /etc/exports = fnv1a64:0000000000000001", "firewall = 4e42", "knob /proc/fs/nfsd/threads = 8"]);
    // Threads the same, versions and the firewall unknown before.
    assert_eq!(snapshot::changed(&before, &now), [("file /etc/exports", "absent"), ("link eth1", "device up mtu 1500 qlen 1000")]);
    // An unknown before matches anything; a name gone is a difference.
    assert_eq!(
        snapshot::differences(&before, &now),
        ["file /etc/exports: was absent, now fnv1a64:0000000000000001", "link eth1: was device up mtu 1500 qlen 1000, now absent"]
    );
}

#[test]
fn of_a_name_seen_twice_the_known_value_is_kept() {
    let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut lines = l(&["firewall = ?", "knob /proc/fs/nfsd/threads = 8", "firewall = 4e42"]);
    snapshot::dedup(&mut lines);
    assert_eq!(lines, ["firewall = 4e42", "knob /proc/fs/nfsd/threads = 8"]);
    assert_eq!(snapshot::lines(&[], Some(("/dev/watchdog0", None))), ["watchdog /dev/watchdog0 = ?"]);
    assert_eq!(snapshot::lines(&[], Some(("/dev/watchdog1", Some(60)))), ["watchdog /dev/watchdog1 = 60"]);
}
