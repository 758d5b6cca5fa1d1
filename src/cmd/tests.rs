//! Commands end to end on a fake board.

use super::*;
use crate::cli;
use crate::seam::fake::FakeBoard;

/// Run `nasboot ARGS` against a fake board; (status, stdout, stderr).
pub(super) fn run_on(board: &mut FakeBoard, args: &[&str]) -> (Status, String, String) {
    let cli = cli::parse(args.iter().copied()).expect("valid command line");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = {
        let mut io = Io { out: &mut out, err: &mut err };
        dispatch(&cli, &mut board.seams(), &mut io)
    };
    (status, String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn every_bad_profile_exits_2_and_applies_nothing() {
    for (name, text, line, column, key, _) in crate::config::tests::BAD {
        for cmd in ["apply", "run", "check", "plan"] {
            let mut board = FakeBoard::new();
            board.files.files.insert("/etc/nasboot.toml".into(), text.as_bytes().to_vec());
            board.watchdog.devices.insert("/dev/watchdog0".into());
            let (status, _, err) = run_on(&mut board, &[cmd]);
            assert_eq!(status, Status::Usage, "{name} ({cmd})");
            let want = format!("/etc/nasboot.toml:{line}:{column}: {key}: ");
            assert!(err.contains(&want), "{name} ({cmd}): `{err}` lacks `{want}`");
            assert_eq!(board.effects(), Vec::<String>::new(), "{name} ({cmd})");
        }
    }
}

#[test]
fn missing_profile_names_the_file() {
    let mut board = FakeBoard::new();
    let (status, _, err) = run_on(&mut board, &["check", "--config", "/etc/none.toml"]);
    assert_eq!(status, Status::Usage);
    assert!(err.contains("/etc/none.toml: cannot read the profile"), "{err}");
}

#[test]
fn strict_turns_warnings_into_errors() {
    let mut board = FakeBoard::new();
    board.files.files.insert(
        "/etc/nasboot.toml".into(),
        b"[board]\nname = \"t\"\n[[nfs.export]]\npath = \"/srv\"\nclients = [\"*\"]\nsync = false\n".to_vec(),
    );
    assert_eq!(run_on(&mut board, &["check"]).0, Status::Ok);
    let (status, _, err) = run_on(&mut board, &["check", "--strict"]);
    assert_eq!(status, Status::Usage);
    assert!(err.contains("nfs.export[0].sync"), "{err}");
    assert_eq!(board.effects(), Vec::<String>::new());
}
