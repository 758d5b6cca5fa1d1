//! `apply --confirm`, `confirm`, `rollback` and the start's revert on a
//! fake board (its files replace and rename as the real seam does).

use std::path::Path;

use super::super::{dispatch, Io};
use crate::cli;
use crate::confirm::{self, Journal, State};
use crate::exit::Status;
use crate::seam::fake::FakeBoard;

const A: &[u8] = b"[board]\nname = \"a\"\n[firewall]\nprofile = \"off\"\n";
const B: &[u8] = b"[board]\nname = \"b\"\n[firewall]\nprofile = \"off\"\n[sysctl.set]\n\"net.ipv4.ip_default_ttl\" = 99\n";
const PROFILE: &str = "/etc/nasboot.toml";

struct Board {
    fake: FakeBoard,
}

fn board() -> Board {
    let mut fake = FakeBoard::new();
    fake.sysctl.values.insert("net.ipv4.ip_default_ttl".into(), "64".into());
    if let Ok(exe) = std::env::current_exe() {
        fake.runner.programs.insert(exe.to_string_lossy().into_owned());
    }
    let files = &mut fake.files.files;
    files.insert(PROFILE.into(), A.to_vec());
    files.insert("/etc/b.toml".into(), B.to_vec());
    files.insert(crate::paths::BOOT_ID.into(), b"11111111-2222\n".to_vec());
    Board { fake }
}

fn run(b: &mut Board, args: &[&str]) -> (Status, String, String) {
    let cli = cli::parse(args.iter().copied()).expect("valid command line");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = dispatch(&cli, &mut b.fake.seams(), &mut Io { out: &mut out, err: &mut err });
    (status, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

fn journal(b: &Board, path: &str) -> Journal {
    Journal::parse(b.fake.files.files.get(Path::new(path)).expect("a journal")).unwrap()
}

/// The files written and renamed, in order.
fn writes(b: &Board) -> Vec<String> {
    b.fake.effects().into_iter().filter(|o| o.starts_with("replace ") || o.starts_with("rename ")).collect()
}

#[test]
fn a_candidate_is_journaled_before_it_is_put_in_place_and_applied() {
    let mut b = board();
    let (status, out, err) = run(&mut b, &["apply", "--confirm", "30", "/etc/b.toml"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert_eq!(writes(&b)[..2], ["replace /var/lib/nasboot/confirm.pending", "replace /etc/nasboot.toml"]);
    let j = journal(&b, confirm::PENDING);
    assert_eq!((j.state, j.good.as_slice(), j.candidate), (State::Pending, A, confirm::Digest::of(B)));
    assert!(j.observed.iter().any(|l| l == "sysctl net.ipv4.ip_default_ttl = 64"), "{:?}", j.observed);
    assert_eq!(b.fake.files.files[Path::new(PROFILE)], B);
    assert_eq!(b.fake.sysctl.values["net.ipv4.ip_default_ttl"], "99");
    assert!(b.fake.effects().iter().any(|e| e.starts_with("start ") && e.ends_with("confirm-hold")), "{:?}", b.fake.effects());
    assert!(out.contains("keep it with: nasboot -c /etc/nasboot.toml confirm"), "{out}");
}

#[test]
fn a_candidate_failing_check_is_refused_before_anything_is_journaled() {
    let mut b = board();
    b.fake.files.files.insert("/etc/b.toml".into(), b"[board]\nname = \"b\"\nbogus = 1\n".to_vec());
    let (status, _, err) = run(&mut b, &["apply", "--confirm", "30", "/etc/b.toml"]);
    assert_eq!(status, Status::Usage);
    assert!(err.contains("/etc/b.toml:3:1: board.bogus"), "{err}");
    assert!(writes(&b).is_empty(), "{:?}", writes(&b));
    assert!(b.fake.effects().is_empty(), "{:?}", b.fake.effects());
}

#[test]
fn a_read_only_var_lib_refuses_with_nothing_changed() {
    let mut b = board();
    b.fake.files.fail_writes = Some(std::io::ErrorKind::ReadOnlyFilesystem);
    let (status, _, err) = run(&mut b, &["apply", "--confirm", "30", "/etc/b.toml"]);
    assert_eq!(status, Status::Failure);
    assert!(err.contains("/var/lib/nasboot/confirm.pending: cannot write the confirm journal"), "{err}");
    assert!(err.contains("nothing was changed"), "{err}");
    assert!(b.fake.effects().is_empty(), "{:?}", b.fake.effects());
    assert_eq!(b.fake.files.files[Path::new(PROFILE)], A);
}

#[test]
fn one_candidate_at_a_time_unless_rolled_back_first() {
    let mut b = board();
    assert_eq!(run(&mut b, &["apply", "--confirm", "30", "/etc/b.toml"]).0, Status::Ok);
    for args in [&["apply"][..], &["apply", "--confirm", "30", "/etc/b.toml"]] {
        let (status, _, err) = run(&mut b, args);
        assert_eq!(status, Status::Usage, "{args:?}");
        assert!(err.contains("is pending for"), "{err}");
    }
    let (status, _, err) = run(&mut b, &["apply", "--rollback-first"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert_eq!(b.fake.files.files[Path::new(PROFILE)], A);
    assert_eq!(b.fake.files.files[Path::new("/etc/nasboot.toml.rejected")], B);
    assert_eq!(b.fake.sysctl.values["net.ipv4.ip_default_ttl"], "64", "set back: A does not name it");
    assert_eq!(journal(&b, confirm::SETTLED).state, State::RolledBack);
}

#[test]
fn confirm_keeps_the_candidate_as_the_last_good() {
    let mut b = board();
    let (status, _, err) = run(&mut b, &["confirm"]);
    assert_eq!(status, Status::Failure);
    assert!(err.contains("no candidate is pending"), "{err}");
    assert_eq!(run(&mut b, &["apply", "--confirm", "30", "/etc/b.toml"]).0, Status::Ok);
    assert_eq!(run(&mut b, &["confirm"]).0, Status::Ok);
    assert!(!b.fake.files.files.contains_key(Path::new(confirm::PENDING)));
    let j = journal(&b, confirm::SETTLED);
    assert_eq!((j.state, j.good.as_slice()), (State::Confirmed, B));
    assert_eq!(run(&mut b, &["confirm"]).0, Status::Failure);
    // A plain apply now pays the stat and goes on.
    let (status, _, err) = run(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
}

#[test]
fn rollback_without_a_last_good_profile_exits_1() {
    let mut b = board();
    let (status, _, err) = run(&mut b, &["rollback"]);
    assert_eq!(status, Status::Failure);
    assert!(err.contains("no last good profile is recorded"), "{err}");
}

#[test]
fn a_start_in_another_boot_reverts_before_anything_else() {
    let mut b = board();
    assert_eq!(run(&mut b, &["apply", "--confirm", "3600", "/etc/b.toml"]).0, Status::Ok);
    // The board was reset inside the window: another boot id, a small clock.
    b.fake.files.files.insert(crate::paths::BOOT_ID.into(), b"33333333-4444\n".to_vec());
    b.fake.files.stats.clear();
    let (status, _, err) = run(&mut b, &["run"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert!(err.contains("the board restarted inside its window"), "{err}");
    assert_eq!(b.fake.files.stats[0], Path::new(confirm::PENDING), "the journal first");
    assert_eq!(b.fake.files.files[Path::new(PROFILE)], A);
    let j = journal(&b, confirm::SETTLED);
    assert_eq!(j.state, State::RolledBack);
    assert!(j.note.contains("the board matches its observation from before the candidate"), "{}", j.note);
}

#[test]
fn a_corrupt_journal_stops_apply_and_brings_run_up_safe() {
    let mut b = board();
    b.fake.files.files.insert(confirm::PENDING.into(), b"nasboot confirm journal 1\nstate pend".to_vec());
    let (status, _, err) = run(&mut b, &["apply"]);
    assert_eq!(status, Status::Usage);
    assert!(err.contains("/var/lib/nasboot/confirm.pending:2: the confirm journal is unusable: truncated"), "{err}");
    assert!(b.fake.effects().is_empty(), "{:?}", b.fake.effects());
    let (_, _, err) = run(&mut b, &["run"]);
    assert!(err.contains("coming up in the safe profile"), "{err}");
}

#[test]
fn a_plain_apply_with_nothing_pending_stats_the_journal_once() {
    let mut b = board();
    let (status, _, err) = run(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    let asked: Vec<_> = b.fake.files.stats.iter().filter(|p| p.starts_with("/var/lib/nasboot")).collect();
    assert_eq!(asked, [Path::new(confirm::PENDING)]);
    assert!(!b.fake.effects().iter().any(|e| e.contains("/var/lib/nasboot/confirm")), "{:?}", b.fake.effects());
}

#[test]
fn a_bridge_the_candidate_made_goes_even_without_the_alias() {
    // A candidate killed between the bridge's creation and its alias (two
    // requests: the kernel takes IFLA_IFALIAS on existing links only)
    // leaves a bridge that the apply's own clean-up does not know for
    // nasboot's. The revert tells it by the observation from before.
    let mut b = board();
    b.fake.netif.add("eth1", 1);
    let with_bridge =
        b"[board]\nname = \"c\"\n[firewall]\nprofile = \"off\"\n[[interface]]\nname = \"br0\"\nkind = \"bridge\"\nports = [\"eth1\"]\n";
    b.fake.files.files.insert("/etc/c.toml".into(), with_bridge.to_vec());
    let (status, _, err) = run(&mut b, &["apply", "--confirm", "30", "/etc/c.toml"]);
    assert_eq!(status, Status::Ok, "{err}");
    b.fake.netif.links.get_mut("br0").expect("the candidate's bridge").alias = None;
    let (status, out, err) = run(&mut b, &["rollback"]);
    assert_eq!(status, Status::Ok, "{out}{err}");
    assert!(!b.fake.netif.links.contains_key("br0"), "{out}{err}");
    assert_eq!(journal(&b, confirm::SETTLED).state, State::RolledBack);
}

/// Apply `cand` as a candidate, check that it changed the board
/// (`changed`), roll back, and check the board (`back`): the revert must
/// say the board matches its observation from before.
fn candidate_then_rollback(b: &mut Board, cand: &[u8], changed: impl Fn(&Board), back: impl Fn(&Board)) -> String {
    b.fake.files.files.insert("/etc/c.toml".into(), cand.to_vec());
    let (status, _, err) = run(b, &["apply", "--confirm", "30", "/etc/c.toml"]);
    assert_eq!(status, Status::Ok, "{err}");
    changed(b);
    let (status, out, err) = run(b, &["rollback"]);
    back(b);
    assert_eq!(status, Status::Ok, "{out}{err}");
    assert!(out.contains("the board matches its observation from before the candidate"), "{out}{err}");
    assert_eq!(journal(b, confirm::SETTLED).state, State::RolledBack);
    out + &err
}

fn text(b: &Board, path: &str) -> String {
    String::from_utf8_lossy(&b.fake.files.files[Path::new(path)]).trim().to_string()
}

#[test]
fn an_interfaces_sysctl_mtu_and_txqueuelen_that_a_does_not_name_go_back() {
    let mut b = board();
    b.fake.netif.add("eth1", 2);
    b.fake.sysctl.values.insert("net.ipv4.conf.eth1.arp_ignore".into(), "0".into());
    let cand = b"[board]\nname = \"c\"\n[firewall]\nprofile = \"off\"\n[[interface]]\nname = \"eth1\"\nmtu = 1400\ntxqueuelen = 500\n[interface.sysctl]\n\"ipv4.arp_ignore\" = 2\n";
    let link = |b: &Board| {
        let s = &b.fake.netif.links["eth1"].state;
        (s.mtu, s.txqueuelen, b.fake.sysctl.values["net.ipv4.conf.eth1.arp_ignore"].clone())
    };
    candidate_then_rollback(
        &mut b,
        cand,
        |b| assert_eq!(link(b), (1400, 500, "2".to_string())),
        |b| assert_eq!(link(b), (1500, 1000, "0".to_string())),
    );
}

#[test]
fn nfsds_threads_and_a_devices_read_ahead_go_back() {
    let mut b = board();
    for (path, v) in [
        ("/sys/block/sda/queue/read_ahead_kb", "128\n"),
        ("/proc/fs/nfsd/threads", "8\n"),
        ("/proc/fs/nfsd/portlist", "tcp 2049\n"),
        ("/proc/fs/nfsd/versions", "+3 +4 +4.1 +4.2\n"),
        ("/proc/fs/nfsd/max_block_size", "524288\n"),
    ] {
        b.fake.files.files.insert(path.into(), v.as_bytes().to_vec());
    }
    let cand =
        b"[board]\nname = \"c\"\n[firewall]\nprofile = \"off\"\n[nfs]\nthreads = 16\n[[storage]]\ndevice = \"sda\"\nread_ahead_kb = 4096\n";
    let knobs = |b: &Board| (text(b, "/proc/fs/nfsd/threads"), text(b, "/sys/block/sda/queue/read_ahead_kb"));
    candidate_then_rollback(
        &mut b,
        cand,
        |b| assert_eq!(knobs(b), ("16".into(), "4096".into())),
        |b| assert_eq!(knobs(b), ("8".into(), "128".into())),
    );
}

#[test]
fn share_files_go_back_from_their_copy_and_a_new_one_is_emptied() {
    let mut b = board();
    b.fake.runner.programs.insert("exportfs".into());
    b.fake.files.files.insert("/srv/x/file".into(), Vec::new());
    let default = "RPCNFSDCOUNT=8\nRPCMOUNTDOPTS=\"--manage-gids\"\n";
    b.fake.files.files.insert(crate::paths::DEFAULT_NFS_KERNEL_SERVER.into(), default.as_bytes().to_vec());
    let cand = b"[board]\nname = \"c\"\n[firewall]\nprofile = \"off\"\n[nfs]\nthreads = 4\n[[nfs.export]]\npath = \"/srv/x\"\nclients = [\"192.168.1.0/24\"]\n";
    let out = candidate_then_rollback(
        &mut b,
        cand,
        |b| {
            assert!(text(b, crate::paths::EXPORTS).contains("/srv/x"));
            assert_ne!(text(b, crate::paths::DEFAULT_NFS_KERNEL_SERVER), default.trim());
        },
        |b| {
            assert_eq!(text(b, crate::paths::EXPORTS), "", "absent before: emptied");
            assert_eq!(text(b, crate::paths::DEFAULT_NFS_KERNEL_SERVER), default.trim(), "from its .bak");
        },
    );
    // The emptied export table is loaded: the candidate's exports go.
    let runs: Vec<_> = b.fake.effects().into_iter().filter(|e| e == "run exportfs -ra").collect();
    assert_eq!(runs.len(), 2, "{out}: once for the candidate, once for the revert");
}

#[test]
fn nasboots_root_qdisc_goes_so_the_default_comes_back() {
    use crate::seam::netif::{TcKind, TcObject};
    let mut b = board();
    b.fake.netif.add("eth0", 1).state.up = true;
    let default =
        TcObject { index: 1, handle: 0, parent: crate::sys::tc::TC_H_ROOT, prio: 0, kind: TcKind::FqCodel, stats: Default::default() };
    b.fake.netif.tc.push(default);
    b.fake.netif.default_qdisc = Some(TcKind::FqCodel);
    let cand = b"[board]\nname = \"c\"\n[firewall]\nprofile = \"off\"\n[[interface]]\nname = \"eth0\"\nrole = \"wan\"\n[interface.sqm]\negress_kbit = 10000\n";
    let roots = |b: &Board| b.fake.netif.tc.iter().filter(|o| o.parent == crate::sys::tc::TC_H_ROOT).map(|o| o.handle).collect::<Vec<_>>();
    candidate_then_rollback(
        &mut b,
        cand,
        |b| assert_eq!(roots(b), [crate::sys::tc::OURS]),
        |b| assert_eq!(roots(b), [0], "the kernel's default again"),
    );
}

#[test]
fn the_watchdogs_timeout_goes_back() {
    let mut b = board();
    b.fake.files.files.insert("/sys/class/watchdog/watchdog0/timeout".into(), b"60\n".to_vec());
    b.fake.watchdog.devices.insert("/dev/watchdog0".into());
    let cand = b"[board]\nname = \"c\"\n[firewall]\nprofile = \"off\"\n[watchdog]\ntimeout = 30\n";
    b.fake.files.files.insert("/etc/c.toml".into(), cand.to_vec());
    let (status, _, err) = run(&mut b, &["apply", "--confirm", "30", "/etc/c.toml"]);
    assert_eq!(status, Status::Ok, "{err}");
    let j = journal(&b, confirm::PENDING);
    assert!(j.observed.iter().any(|l| l == "watchdog /dev/watchdog0 = 60"), "{:?}", j.observed);
    assert!(b.fake.effects().iter().any(|e| e == "settimeout /dev/watchdog0 30"), "{:?}", b.fake.effects());
    // The kernel's sysfs says what WDIOC_SETTIMEOUT set (the fake device
    // does not write it).
    b.fake.files.files.insert("/sys/class/watchdog/watchdog0/timeout".into(), b"30\n".to_vec());
    let n = b.fake.effects().len();
    let (_, out, err) = run(&mut b, &["rollback"]);
    assert!(b.fake.effects()[n..].iter().any(|e| e == "settimeout /dev/watchdog0 60"), "{out}{err}{:?}", b.fake.effects());
    // Its sysfs file is not the fake device's: the check still reads 30,
    // and says so by name.
    assert!(err.contains("watchdog /dev/watchdog0: was 60, now 30"), "{err}");
}

#[test]
fn a_running_ksmbd_takes_its_file_back() {
    // The owner's own ksmbd.conf, and ksmbd.mountd running on it (pid
    // 321); the last good profile has no [samba], so its apply leaves SMB
    // alone. The candidate's shares must not stay served after the
    // revert: ksmbd is told once its file is back.
    let conf = crate::paths::KSMBD_CONF;
    let mut b = board();
    b.fake.netif.add("eth1", 2);
    for p in ["ksmbd.mountd", "ksmbd.control"] {
        b.fake.runner.programs.insert(p.into());
    }
    for (path, v) in [("/srv/x/file", ""), ("/run/ksmbd.lock", "321"), ("/proc/321/comm", "ksmbd.mountd\n")] {
        b.fake.files.files.insert(path.into(), v.as_bytes().to_vec());
    }
    let cand = b"[board]\nname = \"c\"\n[firewall]\nprofile = \"off\"\n[[interface]]\nname = \"eth1\"\nrole = \"lan\"\nmethod = \"manual\"\n[samba]\nbackend = \"ksmbd\"\n[[samba.share]]\nname = \"x\"\npath = \"/srv/x\"\n";
    let c = crate::config::parse_bytes("c.toml", cand).unwrap().profile;
    // The same globals as the candidate's: a reload either way.
    let theirs = crate::share::ksmbd::render(&c, c.samba.as_ref().unwrap()).replace("/srv/x", "/srv/theirs");
    b.fake.files.files.insert(conf.into(), theirs.clone().into_bytes());
    candidate_then_rollback(
        &mut b,
        cand,
        |b| assert!(text(b, conf).contains("path = /srv/x"), "{}", text(b, conf)),
        |b| assert_eq!(text(b, conf), theirs.trim()),
    );
    let (write, reload) = (format!("replace {conf}"), "run ksmbd.control --reload");
    // (by whole effect: a clone's path may hold "ksmbd" too, and the
    // confirm-hold start names the binary by its path)
    let runs: Vec<_> = b.fake.effects().into_iter().filter(|e| *e == write || e == reload).collect();
    assert_eq!(runs, [write.as_str(), reload, &write, reload], "the candidate's, then the revert's: the file first");
}
