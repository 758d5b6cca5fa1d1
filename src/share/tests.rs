//! NFS and Samba: golden files for every rendered file, plan and apply on
//! a fake board, bad input end to end.
//!
//! Regenerate the golden files with `NASBOOT_BLESS=1 cargo test nfs::`.

use std::io;
use std::path::{Path, PathBuf};

use super::*;
use crate::cli;
use crate::cmd::{self, Io};
use crate::config::{self, Loaded};
use crate::exit::Status;
use crate::seam::fake::FakeBoard;
use crate::seam::Output;

fn load(text: &str) -> Loaded {
    config::parse_bytes("test.toml", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
}

/// Compare with tests/golden/nfs/NAME, or rewrite it under NASBOOT_BLESS=1.
fn golden(name: &str, want: &str, got: &str) {
    let path = format!("tests/golden/nfs/{name}");
    if std::env::var_os("NASBOOT_BLESS").is_some() {
        let full = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(&path);
        std::fs::write(&full, got).unwrap_or_else(|e| panic!("{path}: {e}"));
        return;
    }
    assert!(want == got, "{path} differs (NASBOOT_BLESS=1 to regenerate):\n--- want\n{want}--- got\n{got}");
}

const BOARD: &str = "[board]\nname = \"bubba2\"\n\
[[interface]]\nname = \"eth0\"\nrole = \"wan\"\nmethod = \"manual\"\n\
[[interface]]\nname = \"eth1\"\nrole = \"lan\"\naddress = [\"192.168.10.1/24\", \"fd00:10::1/64\"]\n\
[firewall]\nprofile = \"off\"\n";

/// The LAN default: clients are the LAN subnets, safe options.
const BASIC: &str = "[[nfs.export]]\npath = \"/srv/nfs\"\n";

/// Every option, escaping, wildcards, IPv6.
const MIXED: &str = "\
[[nfs.export]]
path = \"/srv/My Music\"
clients = [\"192.168.10.0/24\", \"*.lan\", \"fd00:10::/64\", \"fd00:10::7\"]
rw = true
squash = \"all\"
anonuid = 1000
anongid = 100
[[nfs.export]]
path = \"/srv/odd \\\"#(name),\\\\q\"
clients = [\"*\"]
secure = false
subtree_check = true
fsid = 7
crossmnt = true
[[nfs.export]]
path = \"/\"
clients = [\"nas-client\", \"10.?.0.[12]\"]
squash = \"none\"
fsid = \"root\"
no_wdelay = true
[[nfs.export]]
path = \"/srv/scratch\"
clients = [\"192.168.10.0/24\"]
rw = true
sync = false
";

const SLOW: &str = "[nfs]\npreset = \"slow-cpu\"\nexports_d = true\n[[nfs.export]]\npath = \"/srv/nfs\"\nrw = true\n";

const SAMBA: &str = "\
[samba]
workgroup = \"HOME\"
[[samba.share]]
name = \"media\"
path = \"/srv/My Music\"
comment = \"Music, read only\"
[[samba.share]]
name = \"backup\"
path = \"/srv/backup\"
read_only = false
valid_users = [\"alice\", \"bob\"]
";

/// A Debian-shaped /etc/default/nfs-kernel-server.
const DEBIAN_DEFAULT: &str = "\
# Number of servers to start up
RPCNFSDCOUNT=8

# Runtime priority of server (see nice(1))
RPCNFSDPRIORITY=0

# Options for rpc.mountd.
RPCMOUNTDOPTS=\"--manage-gids\"

NEED_SVCGSSD=\"\"
RPCSVCGSSDOPTS=\"\"
";

/// An nfs.conf in the shape nfs-utils ships it.
const NFS_CONF: &str = "\
#
# General configuration for the NFS daemons and tools
#
[general]
pipefs-directory=/run/rpc_pipefs
#
[mountd]
manage-gids=y
# port=0
#
[nfsd]
# threads=8
# vers3=y
# vers4=y
udp=n
";

#[test]
fn golden_exports() {
    let cases = [
        ("exports.basic", BASIC, include_str!("../../tests/golden/nfs/exports.basic")),
        ("exports.mixed", MIXED, include_str!("../../tests/golden/nfs/exports.mixed")),
        ("exports.d.slow-cpu", SLOW, include_str!("../../tests/golden/nfs/exports.d.slow-cpu")),
    ];
    for (name, nfs, want) in cases {
        let l = load(&format!("{BOARD}{nfs}"));
        golden(name, want, &exports::render(&l.profile, l.profile.nfs.exports_d));
    }
}

#[test]
fn golden_exports_read_back_like_nfs_utils() {
    let l = load(&format!("{BOARD}{MIXED}"));
    let text = exports::render(&l.profile, false);
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), l.profile.nfs.export.len());
    for (line, e) in lines.iter().zip(&l.profile.nfs.export) {
        let token = line.split_whitespace().next().unwrap();
        assert_eq!(exports::unescape(token), e.path.get_ref().as_str().as_bytes(), "{line}");
    }
}

#[test]
fn golden_distro_files() {
    let l = load(&format!("{BOARD}{SLOW}"));
    let s = distro::Settings {
        threads: nfsd::default_threads(61_412, 1, l.profile.nfs.preset),
        versions: nfsd::wanted_versions(None, l.profile.nfs.preset),
        mountd_port: l.profile.firewall.mountd_port.get(),
        statd_port: l.profile.firewall.statd_port.get(),
        lockd_port: l.profile.firewall.lockd_port.get(),
    };
    golden(
        "nfs-kernel-server.default",
        include_str!("../../tests/golden/nfs/nfs-kernel-server.default"),
        &distro::default_file(DEBIAN_DEFAULT, &s),
    );
    golden("nfs.conf.d-nasboot.conf", include_str!("../../tests/golden/nfs/nfs.conf.d-nasboot.conf"), &distro::nfs_conf_drop_in(&s));
    golden("nfs.conf.in-place", include_str!("../../tests/golden/nfs/nfs.conf.in-place"), &distro::nfs_conf_in_place(NFS_CONF, &s));
}

#[test]
fn golden_smb_include() {
    let l = load(&format!("{BOARD}{SAMBA}"));
    let s = l.profile.samba.as_deref().unwrap();
    golden("smb-nasboot.conf", include_str!("../../tests/golden/nfs/smb-nasboot.conf"), &samba::render(&l.profile, s));
    let text = samba::render(&l.profile, s);
    assert!(text.contains("interfaces = lo eth1\n"), "{text}");
    assert!(!text.lines().any(|l| l.trim_start().starts_with("socket options")));
}

/// A fake board with nfs-utils' files, nfsd loaded (running or not), and
/// the export directories present.
fn board(profile: &str, nfsd_threads: Option<u32>) -> FakeBoard {
    let mut b = FakeBoard::new();
    let f = &mut b.files.files;
    f.insert("/etc/nasboot.toml".into(), profile.as_bytes().to_vec());
    f.insert("/proc/meminfo".into(), b"MemTotal:          61412 kB\nMemFree: 1000 kB\n".to_vec());
    f.insert("/sys/devices/system/cpu/online".into(), b"0\n".to_vec());
    f.insert("/etc/default/nfs-kernel-server".into(), DEBIAN_DEFAULT.as_bytes().to_vec());
    f.insert("/etc/nfs.conf".into(), NFS_CONF.as_bytes().to_vec());
    f.insert("/etc/nfs.conf.d".into(), Vec::new());
    // A directory is one with something in it.
    for dir in ["/srv/nfs", "/srv/My Music", "/srv/backup", "/srv/scratch", "/"] {
        f.insert(Path::new(dir).join(".keep"), Vec::new());
    }
    if let Some(t) = nfsd_threads {
        f.insert("/proc/fs/nfsd/threads".into(), format!("{t}\n").into_bytes());
        f.insert("/proc/fs/nfsd/portlist".into(), if t > 0 { b"tcp 2049\n".to_vec() } else { Vec::new() });
        f.insert("/proc/fs/nfsd/versions".into(), b"-2 +3 +4 +4.1 +4.2\n".to_vec());
        f.insert("/proc/fs/nfsd/max_block_size".into(), b"8192\n".to_vec());
    }
    // The links already match the profile, so only NFS has work to do.
    b.netif.add("eth0", 2).state.up = true;
    let lan = b.netif.add("eth1", 3);
    lan.state.up = true;
    lan.addrs = vec!["192.168.10.1/24".parse().unwrap(), "fd00:10::1/64".parse().unwrap()];
    b.runner.programs.insert("exportfs".into());
    // `[samba] backend = "auto"` serves through smbd where it is installed.
    b.runner.programs.insert("smbd".into());
    b
}

fn run_on(b: &mut FakeBoard, args: &[&str]) -> (Status, String, String) {
    let cli = cli::parse(args.iter().copied()).expect("valid command line");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = {
        let mut io = Io { out: &mut out, err: &mut err };
        cmd::dispatch(&cli, &mut b.seams(), &mut io)
    };
    (status, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

fn text_of(b: &FakeBoard, path: &str) -> String {
    String::from_utf8(b.files.files.get(&PathBuf::from(path)).cloned().unwrap_or_default()).unwrap()
}

#[test]
fn under_root_the_exports_are_written_but_exportfs_does_not_run() {
    let mut b = board(&format!("{BOARD}{BASIC}"), None);
    b.files.relocated = true;
    let (status, out, err) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert!(out.contains("exportfs -ra is not run"), "{out}");
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    let effects = b.effects();
    assert!(effects.contains(&"replace /etc/exports".to_string()), "{effects:?}");
    assert!(!effects.iter().any(|e| e.starts_with("run exportfs")), "{effects:?}");
}

#[test]
fn apply_writes_exports_then_exportfs_once() {
    let mut b = board(&format!("{BOARD}{BASIC}"), None);
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert_eq!(
        b.effects(),
        ["replace /etc/exports", "run exportfs -ra", "replace /etc/default/nfs-kernel-server", "replace /etc/nfs.conf.d/nasboot.conf",]
    );
    assert_eq!(text_of(&b, "/etc/exports"), include_str!("../../tests/golden/nfs/exports.basic"));
    assert!(text_of(&b, "/etc/default/nfs-kernel-server").contains("RPCNFSDCOUNT=2\n"));
    assert_eq!(text_of(&b, "/etc/nfs.conf"), NFS_CONF, "nfs.conf itself is left alone when nfs.conf.d exists");
    assert!(err.contains("not mounted"), "{err}");
    // Again: nothing differs, nothing is written, exportfs does not run.
    b.journal.borrow_mut().clear();
    let (status, out, _) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok);
    assert!(out.contains("applied 0 action(s)"), "{out}");
    assert_eq!(b.effects(), Vec::<String>::new());
}

#[test]
fn no_nfs_in_the_profile_leaves_nfs_alone() {
    let mut b = board(BOARD, Some(8));
    b.files.files.insert("/etc/exports".into(), b"/home *(rw)\n".to_vec());
    let (status, _, _err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok);
    assert_eq!(b.effects(), Vec::<String>::new(), "{_err}");
}

#[test]
fn enospc_keeps_the_old_exports_and_skips_exportfs() {
    for kind in [io::ErrorKind::StorageFull, io::ErrorKind::PermissionDenied] {
        let mut b = board(&format!("{BOARD}{BASIC}"), None);
        b.files.files.insert("/etc/exports".into(), b"/old *(ro)\n".to_vec());
        b.files.fail_writes = Some(kind);
        let (status, _, err) = run_on(&mut b, &["apply"]);
        assert_eq!(status, Status::Failure, "{kind:?}: {err}");
        assert!(err.contains("nasboot: /etc/exports: cannot write: "), "{kind:?}: {err}");
        assert!(err.contains("the previous file is unchanged"), "{err}");
        assert_eq!(text_of(&b, "/etc/exports"), "/old *(ro)\n");
        assert!(!b.effects().iter().any(|e| e.starts_with("run ")), "{:?}", b.effects());
    }
}

#[test]
fn exportfs_errors_are_reported_with_file_and_line() {
    let mut b = board(&format!("{BOARD}{BASIC}"), None);
    b.runner.answers.push_back(Output {
        code: Some(1),
        stderr: b"exportfs: /etc/exports:3: unknown keyword \"bogus\"\n".to_vec(),
        ..Output::default()
    });
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Partial, "{err}");
    assert!(err.contains("nasboot: exportfs: /etc/exports:3: unknown keyword \"bogus\""), "{err}");
}

#[test]
fn exportfs_failures_are_told_apart() {
    let exports = Action::Exports { path: "/etc/exports".into(), text: "/srv *(ro)\n".into(), reload: true };
    let fails = |answer: Option<Output>| {
        let mut b = FakeBoard::new();
        b.runner.programs.insert("exportfs".into());
        b.runner.answers.extend(answer);
        apply(&exports, &mut b.seams()).unwrap_err()
    };
    let located = b"exportfs: /etc/exports:3: unknown keyword \"bogus\"\nexportfs: /etc/exports [4]: no_subtree_check\n";
    let e = fails(Some(Output { code: Some(1), stderr: located.to_vec(), ..Output::default() }));
    assert!(matches!(&e, Error::ExportfsRejected { errors } if errors.len() == 2), "{e}");
    assert_eq!(e.to_string(), "exportfs: /etc/exports:3: unknown keyword \"bogus\"; /etc/exports:4: no_subtree_check");
    let e = fails(Some(Output { code: Some(2), stderr: b"\n  exportfs: no memory\n".to_vec(), ..Output::default() }));
    assert!(matches!(&e, Error::ExportfsFailed { ended, first } if ended.code == Some(2) && first == "exportfs: no memory"), "{e}");
    assert_eq!(e.to_string(), "exportfs: exportfs -ra failed (exit status 2): exportfs: no memory");
    let e = fails(Some(Output { code: None, timed_out: true, ..Output::default() }));
    assert!(matches!(e, Error::ExportfsTimedOut), "{e}");
    assert_eq!(e.to_string(), "exportfs: exportfs -ra timed out after 60 s");
    assert_eq!(e.exit_status(), Status::Partial);
}

#[test]
fn missing_exportfs_is_partial_and_names_the_file() {
    let mut b = board(&format!("{BOARD}{BASIC}"), None);
    b.runner.programs.clear();
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Partial);
    assert!(err.contains("exportfs: not found on PATH: /etc/exports is written"), "{err}");
}

#[test]
fn stopped_nfsd_gets_versions_and_block_size_but_no_threads() {
    let profile = format!("{BOARD}[nfs]\npreset = \"slow-cpu\"\nmax_block_size = 32768\n{BASIC}");
    let l = load(&profile);
    let mut b = board(&profile, Some(0));
    let now = observe(&l.profile, &mut b.seams());
    assert!(!now.nfsd.running());
    let (actions, notes) = plan(&l.profile, &now);
    let knobs: Vec<String> = actions.iter().filter(|a| matches!(a, Action::Nfsd { .. })).map(|a| a.to_string()).collect();
    assert_eq!(knobs, ["nfsd versions = +3 -4 (now -2 +3 +4 +4.1 +4.2)", "nfsd max_block_size = 32768 (now 8192)"]);
    assert!(notes.iter().any(|n| n.contains("nfsd is stopped") && n.contains("2 thread(s)")), "{notes:?}");
    let mut s = b.seams();
    for a in &actions {
        apply(a, &mut s).unwrap();
    }
    let effects = b.effects();
    let v = effects.iter().position(|e| e == "write /proc/fs/nfsd/versions +3 -4").unwrap();
    let m = effects.iter().position(|e| e == "write /proc/fs/nfsd/max_block_size 32768").unwrap();
    assert!(v < m);
    assert!(!effects.iter().any(|e| e.contains("/proc/fs/nfsd/threads")));
}

#[test]
fn running_nfsd_gets_threads_and_a_note_instead_of_versions() {
    let profile = format!("{BOARD}[nfs]\nthreads = 4\nversions = [\"3\"]\n{BASIC}");
    let l = load(&profile);
    let mut b = board(&profile, Some(8));
    let now = observe(&l.profile, &mut b.seams());
    assert!(now.nfsd.running());
    let (actions, notes) = plan(&l.profile, &now);
    let knobs: Vec<String> = actions.iter().filter(|a| matches!(a, Action::Nfsd { .. })).map(|a| a.to_string()).collect();
    assert_eq!(knobs, ["nfsd threads = 4 (now 8)"]);
    let note = notes.iter().find(|n| n.contains("nfsd is running")).expect("a note");
    assert!(note.contains("versions = +3 -4") && note.contains("stop the NFS server"), "{note}");
    // Running with the versions already right: no note.
    b.files.files.insert("/proc/fs/nfsd/versions".into(), b"-2 +3 -4 -4.0 -4.1 -4.2\n".to_vec());
    let now = observe(&l.profile, &mut b.seams());
    let (_, notes) = plan(&l.profile, &now);
    assert!(!notes.iter().any(|n| n.contains("nfsd is running")), "{notes:?}");
}

#[test]
fn ebusy_on_a_knob_is_partial_with_a_hint() {
    struct Busy;
    impl crate::seam::Files for Busy {
        fn read(&mut self, _: &Path) -> io::Result<Vec<u8>> {
            Err(io::ErrorKind::NotFound.into())
        }
        fn exists(&mut self, _: &Path) -> bool {
            false
        }
        fn is_dir(&mut self, _: &Path) -> bool {
            false
        }
        fn replace(&mut self, _: &Path, _: &[u8]) -> io::Result<Replaced> {
            Ok(Replaced::Unchanged)
        }
        fn write_kernel(&mut self, _: &Path, _: &[u8]) -> io::Result<()> {
            Err(io::Error::from_raw_os_error(16))
        }
        fn lock(&mut self, _: &Path, _: bool) -> io::Result<crate::seam::Lock> {
            Ok(crate::seam::Lock::none())
        }
    }
    let mut b = FakeBoard::new();
    let mut busy = Busy;
    let mut s = b.seams();
    s.files = &mut busy;
    let e = apply(&Action::Nfsd { knob: Knob::Versions, value: "+3 -4".into(), from: None }, &mut s).unwrap_err();
    assert!(matches!(&e, Error::Nfsd { knob: Knob::Versions, source, .. } if source.raw_os_error() == Some(16)), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "nfsd versions: cannot write +3 -4 to /proc/fs/nfsd/versions: {}: nfsd is running (EBUSY); stop it and apply again",
            io::Error::from_raw_os_error(16)
        )
    );
    assert_eq!(e.exit_status(), Status::Partial);
}

#[test]
fn samba_include_and_a_note_when_smb_conf_lacks_it() {
    let profile = format!("{BOARD}{SAMBA}");
    let mut b = board(&profile, None);
    b.files.files.insert("/etc/samba/smb.conf".into(), b"[global]\n   workgroup = X\n".to_vec());
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert_eq!(text_of(&b, "/etc/samba/nasboot.conf"), include_str!("../../tests/golden/nfs/smb-nasboot.conf"));
    assert!(err.contains("add `include = /etc/samba/nasboot.conf` as its last line"), "{err}");
    b.files.files.insert("/etc/samba/smb.conf".into(), b"[global]\ninclude = /etc/samba/nasboot.conf\n".to_vec());
    let (_, _, err) = run_on(&mut b, &["apply"]);
    assert!(!err.contains("include ="), "{err}");
}

#[test]
fn a_missing_export_path_warns_and_fails_under_strict() {
    let profile = format!("{BOARD}[[nfs.export]]\npath = \"/srv/none\"\n");
    let mut b = board(&profile, None);
    let (status, _, err) = run_on(&mut b, &["check"]);
    assert_eq!(status, Status::Ok);
    assert!(err.contains("/etc/nasboot.toml:14:8: nfs.export[0].path: /srv/none does not exist"), "{err}");
    assert!(err.contains("(warning)"), "{err}");
    for args in [&["apply", "--strict"][..], &["plan", "--strict"][..]] {
        let mut b = board(&profile, None);
        b.files.files.insert("/etc/exports".into(), b"/old *(ro)\n".to_vec());
        let (status, _, err) = run_on(&mut b, args);
        assert_eq!(status, Status::Usage, "{args:?}");
        assert!(err.contains("/etc/nasboot.toml:14:8: nfs.export[0].path: /srv/none does not exist"), "{err}");
        assert_eq!(b.effects(), Vec::<String>::new());
        assert_eq!(text_of(&b, "/etc/exports"), "/old *(ro)\n");
    }
    // [nfs] strict = true in the profile does the same without --strict.
    let profile = format!("{BOARD}[nfs]\nstrict = true\n[[nfs.export]]\npath = \"/srv/none\"\n");
    let mut b = board(&profile, None);
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Usage);
    assert!(err.contains("nfs.export[0].path: /srv/none does not exist"), "{err}");
    assert!(!err.contains("(warning)"), "{err}");
    assert_eq!(b.effects(), Vec::<String>::new());
}

/// (name, profile after BOARD or alone, line, column, key, part of the message)
const BAD: &[(&str, &str, usize, usize, &str, &str)] = &[
    ("relative path", "[[nfs.export]]\npath = \"srv/nfs\"\n", 14, 8, "nfs.export[0].path", "absolute"),
    ("unknown SMB server", "[samba]\nbackend = \"samba\"\n", 14, 11, "samba.backend", "samba"),
    ("newline in path", "[[nfs.export]]\npath = \"/srv/a\\nb\"\n", 14, 8, "nfs.export[0].path", "control character"),
    ("client /33", "[[nfs.export]]\npath = \"/srv\"\nclients = [\"10.0.0.0/33\"]\n", 15, 12, "nfs.export[0].clients[0]", "/33"),
    ("IPv6 /129", "[[nfs.export]]\npath = \"/srv\"\nclients = [\"fd00::/129\"]\n", 15, 12, "nfs.export[0].clients[0]", "/129"),
    (
        "same path and client twice",
        "[[nfs.export]]\npath = \"/srv\"\nclients = [\"10.0.0.0/8\"]\n[[nfs.export]]\npath = \"/srv\"\nclients = [\"10.0.0.0/8\"]\n",
        18,
        12,
        "nfs.export[1].clients[0]",
        "twice",
    ),
    (
        "LAN default and the same subnet",
        "[[nfs.export]]\npath = \"/srv\"\n[[nfs.export]]\npath = \"/srv\"\nclients = [\"192.168.10.0/24\"]\n",
        17,
        12,
        "nfs.export[1].clients[0]",
        "also by nfs.export[0]",
    ),
    (
        "same network written twice",
        "[[nfs.export]]\npath = \"/srv\"\nclients = [\"10.0.0.0/8\", \"10.1.2.3/8\"]\n",
        15,
        26,
        "nfs.export[0].clients[1]",
        "twice",
    ),
    ("backslash and octal digits", "[[nfs.export]]\npath = '/srv/a\\101'\n", 14, 8, "nfs.export[0].path", "etab"),
    (
        "client with options",
        "[[nfs.export]]\npath = \"/srv\"\nclients = [\"host(rw)\"]\n",
        15,
        12,
        "nfs.export[0].clients[0]",
        "not a host",
    ),
    ("unknown export key", "[[nfs.export]]\npath = \"/srv\"\nnohide = true\n", 15, 1, "nfs.export[0].nohide", "unknown field"),
    ("no versions", "[nfs]\nversions = []\n", 14, 1, "nfs.versions", "at least one"),
    ("4.1 without 4", "[nfs]\nversions = [\"3\", \"4.1\"]\n", 14, 1, "nfs.versions", "need \"4\""),
    ("unknown preset", "[nfs]\npreset = \"fast\"\n", 14, 10, "nfs.preset", "unknown variant `fast`"),
    ("samba share reserved", "[samba]\n[[samba.share]]\nname = \"global\"\npath = \"/srv\"\n", 15, 8, "samba.share[0].name", "reserved"),
    (
        "samba share twice",
        "[samba]\n[[samba.share]]\nname = \"a\"\npath = \"/srv\"\n[[samba.share]]\nname = \"A\"\npath = \"/srv\"\n",
        18,
        8,
        "samba.share[1].name",
        "twice",
    ),
    ("samba % in path", "[samba]\n[[samba.share]]\nname = \"a\"\npath = \"/srv/%U\"\n", 16, 8, "samba.share[0].path", "%"),
    ("samba unknown interface", "[samba]\ninterfaces = [\"eth7\"]\n", 14, 15, "samba.interfaces[0]", "not an [[interface]]"),
    ("samba receivefile", "[samba]\nmin_receivefile_size = 262144\n", 14, 1, "samba.min_receivefile_size", "131072"),
    ("samba bad workgroup", "[samba]\nworkgroup = \"a b\"\n", 14, 13, "samba.workgroup", "letters"),
];

#[test]
fn bad_nfs_and_samba_input_names_the_key_and_writes_nothing() {
    for (name, tail, line, column, key, msg) in BAD {
        let text = format!("{BOARD}{tail}");
        let e = match config::parse_bytes("test.toml", text.as_bytes()) {
            Ok(_) => panic!("{name}: accepted"),
            Err(e) => e,
        };
        assert_eq!((e.line, e.column, e.key.as_str()), (*line, *column, *key), "{name}: {e}");
        assert!(e.message.contains(msg), "{name}: `{}` lacks `{msg}`", e.message);
        let mut b = board(&text, Some(8));
        b.files.files.insert("/etc/exports".into(), b"/old *(ro)\n".to_vec());
        let (status, _, err) = run_on(&mut b, &["apply"]);
        assert_eq!(status, Status::Usage, "{name}: {err}");
        assert_eq!(b.effects(), Vec::<String>::new(), "{name}");
        assert_eq!(text_of(&b, "/etc/exports"), "/old *(ro)\n", "{name}");
    }
}

#[test]
fn no_clients_and_no_lan_is_an_error_naming_the_key() {
    let e = config::parse_bytes("t.toml", b"[board]\nname = \"t\"\n[[nfs.export]]\npath = \"/srv\"\n").unwrap_err();
    assert_eq!((e.line, e.column, e.key.as_str()), (4, 8, "nfs.export[0].clients"), "{e}");
    assert!(e.message.contains("role = \"lan\""), "{e}");
    let e = config::parse_bytes("t.toml", b"[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n[samba]\n").unwrap_err();
    assert_eq!(e.key, "samba.interfaces", "{e}");
}

#[test]
fn warnings_for_squash_without_anonuid_and_ineffective_no_wdelay() {
    let l = load(&format!(
        "{BOARD}[[nfs.export]]\npath = \"/srv\"\nrw = true\nsquash = \"all\"\n[[nfs.export]]\npath = \"/srv/b\"\nsync = false\nno_wdelay = true\n"
    ));
    let keys: Vec<&str> = l.warnings.iter().map(|w| w.0.key.as_str()).collect();
    assert_eq!(keys, ["nfs.export[0].anonuid", "nfs.export[1].sync", "nfs.export[1].no_wdelay"]);
}

#[test]
fn plan_shows_the_sizing() {
    let profile = format!("{BOARD}{BASIC}");
    let mut b = board(&profile, None);
    let (status, out, _) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok);
    assert!(
        out.contains("note: nfsd: 2 thread(s) (sized for 64 MiB RAM, 1 CPU(s)), max_block_size 8 KiB (kernel default): about 64 KiB of kernel memory"),
        "{out}"
    );
    assert!(out.contains("--- /etc/exports ---"), "{out}");
    assert_eq!(b.effects(), Vec::<String>::new());
}

#[test]
fn exports_d_creates_an_empty_exports_only_when_absent() {
    let profile = format!("{BOARD}{SLOW}");
    let mut b = board(&profile, None);
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    let effects = b.effects();
    assert_eq!(&effects[..3], ["replace /etc/exports", "replace /etc/exports.d/nasboot.exports", "run exportfs -ra"]);
    assert!(text_of(&b, "/etc/exports").starts_with("# The board's own exports."));
    assert_eq!(text_of(&b, "/etc/exports.d/nasboot.exports"), include_str!("../../tests/golden/nfs/exports.d.slow-cpu"));
    // The owner's table is never rewritten.
    let mut b = board(&profile, None);
    b.files.files.insert("/etc/exports".into(), b"/home *(ro)\n".to_vec());
    run_on(&mut b, &["apply"]);
    assert_eq!(text_of(&b, "/etc/exports"), "/home *(ro)\n");
    assert!(!b.effects().contains(&"replace /etc/exports".to_string()));
}

/// ksmbd: `SAMBA` with a guest share, served by the kernel's ksmbd.
const KSMBD: &str = "\
[samba]
backend = \"ksmbd\"
workgroup = \"HOME\"
[[samba.share]]
name = \"media\"
path = \"/srv/My Music\"
comment = \"Music, read only\"
guest_ok = true
[[samba.share]]
name = \"backup\"
path = \"/srv/backup\"
read_only = false
valid_users = [\"alice\", \"bob\"]
";

const PWDDB: &str = "/etc/ksmbd/ksmbdpwd.db";
const KSMBD_CONF: &str = "/etc/ksmbd/ksmbd.conf";

/// A board with ksmbd-tools, both users provisioned; ksmbd.mountd running
/// as pid 321 when `running`.
fn ksmbd_board(profile: &str, running: bool) -> FakeBoard {
    let mut b = board(profile, None);
    b.runner.programs.remove("smbd");
    for p in ["ksmbd.mountd", "ksmbd.control"] {
        b.runner.programs.insert(p.into());
    }
    b.files.files.insert(PWDDB.into(), b"alice:qO3dYwAAZFhUcQeYUq/v0Q==\nbob:8846F7EAEE8FB117AD06BDD830B7586C\n".to_vec());
    if running {
        b.files.files.insert("/run/ksmbd.lock".into(), b"321".to_vec());
        b.files.files.insert("/proc/321/comm".into(), b"ksmbd.mountd\n".to_vec());
    }
    b
}

#[test]
fn ksmbd_conf_golden_and_a_stopped_ksmbd_is_left_to_start() {
    let mut b = ksmbd_board(&format!("{BOARD}{KSMBD}"), false);
    let (status, out, err) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert!(out.contains("note: SMB: ksmbd (backend = \"ksmbd\")"), "{out}");
    assert!(out.contains("ksmbd.mountd is not running: it reads the new file when it starts"), "{out}");
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    golden("ksmbd.conf", include_str!("../../tests/golden/nfs/ksmbd.conf"), &text_of(&b, KSMBD_CONF));
    assert!(!b.effects().iter().any(|e| e.contains("ksmbd.control")), "{:?}", b.effects());
    // Nothing of smbd's.
    assert_eq!(text_of(&b, "/etc/samba/nasboot.conf"), "");
    // The same again: nothing to do for SMB.
    let (_, out, _) = run_on(&mut b, &["plan"]);
    assert!(!out.contains(KSMBD_CONF), "{out}");
}

#[test]
fn a_running_ksmbd_reloads_for_shares_and_restarts_for_globals() {
    let mut b = ksmbd_board(&format!("{BOARD}{KSMBD}"), true);
    let (status, out, err) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok, "{err}");
    // No file yet: ksmbd runs on its defaults, its globals change.
    assert!(out.contains("ksmbd.control --shutdown, then ksmbd.mountd (global settings changed"), "{out}");
    let rendered =
        ksmbd::render(&load(&format!("{BOARD}{KSMBD}")).profile, load(&format!("{BOARD}{KSMBD}")).profile.samba.as_ref().unwrap());
    // A share's path changed since: a reload, nothing else.
    b.files.files.insert(KSMBD_CONF.into(), rendered.replace("/srv/backup", "/srv/old").into_bytes());
    let (status, out, _) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok);
    assert!(out.contains("ksmbd.control --reload (shares or users changed)") && !out.contains("--shutdown"), "{out}");
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert_eq!(text_of(&b, KSMBD_CONF), rendered);
    assert_eq!(text_of(&b, &format!("{KSMBD_CONF}.bak")), rendered.replace("/srv/backup", "/srv/old"), "the previous copy is kept");
    let runs: Vec<String> = b.effects().into_iter().filter(|e| e.starts_with("run ksmbd") || e.starts_with("start")).collect();
    assert_eq!(runs, ["run ksmbd.control --reload"]);
}

#[test]
fn a_restart_shuts_ksmbd_down_then_starts_ksmbd_mountd() {
    // ksmbd.mountd gone once --shutdown returned (its lock file names no
    // live process).
    let mut b = ksmbd_board(&format!("{BOARD}{KSMBD}"), false);
    apply(&Action::Ksmbd(ksmbd::Change::Restart), &mut b.seams()).unwrap();
    let runs: Vec<String> = b.effects().into_iter().filter(|e| e.contains("ksmbd")).collect();
    assert_eq!(runs, ["run ksmbd.control --shutdown", "start /usr/sbin/ksmbd.mountd"]);
    // A failing tool is named, with its first line, and is partial.
    let mut b = ksmbd_board(&format!("{BOARD}{KSMBD}"), false);
    b.runner.answers.push_back(Output { code: Some(1), stderr: b"ERROR: Can't open `/run/ksmbd.lock'\n".to_vec(), ..Output::default() });
    let e = apply(&Action::Ksmbd(ksmbd::Change::Reload), &mut b.seams()).unwrap_err();
    assert_eq!(e.to_string(), "ksmbd.control --reload failed (exit status 1): ERROR: Can't open `/run/ksmbd.lock'");
    assert_eq!(e.exit_status(), Status::Partial);
}

#[test]
fn a_ksmbd_user_without_a_password_is_refused_by_name_and_the_rest_applies() {
    let mut b = ksmbd_board(&format!("{BOARD}{BASIC}{KSMBD}"), true);
    b.files.files.insert(PWDDB.into(), b"alice:qO3dYwAAZFhUcQeYUq/v0Q==\n".to_vec());
    let (status, out, _) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok);
    let want = "refused: ksmbd: user `bob` (samba.share[1].valid_users) has no password in /etc/ksmbd/ksmbdpwd.db: \
                provision it with `ksmbd.adduser -a USER`; /etc/ksmbd/ksmbd.conf is not written";
    assert!(out.contains(want), "{out}");
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Partial, "{err}");
    assert!(err.contains("nasboot: ksmbd: user `bob` (samba.share[1].valid_users) has no password"), "{err}");
    assert_eq!(text_of(&b, KSMBD_CONF), "", "nothing of ksmbd's written");
    assert!(!b.effects().iter().any(|e| e.contains("ksmbd.control")), "{:?}", b.effects());
    assert!(text_of(&b, "/etc/exports").contains("/srv/nfs"), "the exports still applied");
    // No database at all: every user named.
    b.files.files.remove(Path::new(PWDDB));
    let (_, out, _) = run_on(&mut b, &["plan"]);
    assert!(out.contains("user `alice` (samba.share[1].valid_users), user `bob` (samba.share[1].valid_users) has no"), "{out}");
}

/// A kernel module tree: modules.builtin (so an absent module is known
/// absent), and ksmbd.ko when `ksmbd`.
fn kernel(b: &mut FakeBoard, ksmbd: bool) {
    let dir = "/lib/modules/6.1.0-50-4kc-malta";
    b.sysctl.values.insert("kernel.osrelease".into(), "6.1.0-50-4kc-malta\n".into());
    b.files.files.insert(format!("{dir}/modules.builtin").into(), b"kernel/net/ipv4/tcp_cubic.ko\n".to_vec());
    if ksmbd {
        b.files.files.insert(format!("{dir}/kernel/fs/ksmbd/ksmbd.ko.xz").into(), Vec::new());
    }
}

#[test]
fn auto_serves_through_smbd_else_ksmbd_else_says_smb_is_not_served() {
    let auto = KSMBD.replace("backend = \"ksmbd\"\n", "");
    // smbd installed: smbd, whatever the kernel has.
    let mut b = ksmbd_board(&format!("{BOARD}{auto}"), false);
    b.runner.programs.insert("smbd".into());
    kernel(&mut b, true);
    let (_, out, _) = run_on(&mut b, &["plan"]);
    assert!(out.contains("note: SMB: smbd (auto: smbd is installed)") && out.contains("--- /etc/samba/nasboot.conf"), "{out}");
    // No smbd, and the kernel has ksmbd: ksmbd.
    let mut b = ksmbd_board(&format!("{BOARD}{auto}"), false);
    kernel(&mut b, true);
    let (_, out, _) = run_on(&mut b, &["plan"]);
    assert!(
        out.contains("note: SMB: ksmbd (auto: no smbd, and the kernel has ksmbd)") && out.contains("--- /etc/ksmbd/ksmbd.conf"),
        "{out}"
    );
    // Neither: SMB is not served, the rest of the profile applies, exit 3.
    let mut b = ksmbd_board(&format!("{BOARD}{BASIC}{auto}"), false);
    kernel(&mut b, false);
    let (status, out, _) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok);
    assert!(out.contains("refused: SMB is not served (auto: no smbd on PATH, and the kernel has no ksmbd module)"), "{out}");
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Partial, "{err}");
    assert!(err.contains("nasboot: SMB is not served"), "{err}");
    assert!(text_of(&b, "/etc/exports").contains("/srv/nfs"));
    assert_eq!((text_of(&b, KSMBD_CONF), text_of(&b, "/etc/samba/nasboot.conf")), (String::new(), String::new()));
    // backend = "ksmbd" on a kernel without it: written, and said.
    let mut b = ksmbd_board(&format!("{BOARD}{KSMBD}"), false);
    kernel(&mut b, false);
    let (_, out, _) = run_on(&mut b, &["plan"]);
    assert!(out.contains("the kernel has no ksmbd module (CONFIG_SMB_SERVER)"), "{out}");
}

#[test]
fn a_share_path_that_is_a_file_is_named_and_nothing_applies() {
    let profile = format!("{BOARD}{KSMBD}").replace("/srv/backup", "/srv/backup.tar");
    let mut b = ksmbd_board(&profile, false);
    b.files.files.insert("/srv/backup.tar".into(), b"data".to_vec());
    for cmd in ["check", "plan", "apply"] {
        let (status, _, err) = run_on(&mut b, &[cmd]);
        assert_eq!(status, Status::Usage, "{cmd}");
        assert!(
            err.contains("/etc/nasboot.toml:23:8: samba.share[1].path: /srv/backup.tar is not a directory; a share is a directory"),
            "{err}"
        );
    }
    assert_eq!(b.effects(), Vec::<String>::new());
    // Missing: a warning naming it, as for exports.
    let profile = format!("{BOARD}{KSMBD}").replace("/srv/backup", "/srv/gone");
    let mut b = ksmbd_board(&profile, false);
    let (status, _, err) = run_on(&mut b, &["check"]);
    assert_eq!(status, Status::Ok);
    assert!(err.contains("/etc/nasboot.toml:23:8: samba.share[1].path: /srv/gone does not exist on this board"), "{err}");
}
