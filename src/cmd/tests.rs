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

#[test]
fn every_bad_router_profile_exits_2_and_applies_nothing() {
    for (name, tail, line, column, key, _) in crate::config::tests::BAD_ROUTER {
        let text = if tail.starts_with("[board]") { tail.to_string() } else { format!("{}{tail}", crate::config::tests::ROUTER) };
        for cmd in ["apply", "check", "plan"] {
            let mut board = FakeBoard::new();
            board.files.files.insert("/etc/nasboot.toml".into(), text.as_bytes().to_vec());
            let (status, _, err) = run_on(&mut board, &[cmd]);
            assert_eq!(status, Status::Usage, "{name} ({cmd})");
            let want = format!("/etc/nasboot.toml:{line}:{column}: {key}: ");
            assert!(err.contains(&want), "{name} ({cmd}): `{err}` lacks `{want}`");
            assert_eq!(board.effects(), Vec::<String>::new(), "{name} ({cmd})");
        }
    }
}

/// A router on a fake board: a WAN VLAN on eth0, a LAN bridge over eth1
/// and eth2, the firewall off (its rules are tested in firewall/).
const ROUTER_LINKS: &str = "[board]\nname = \"r\"\n[firewall]\nprofile = \"off\"\n\
    [[interface]]\nname = \"eth0.2\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 2\naddress = [\"198.51.100.2/24\"]\n\
    [[interface]]\nname = \"br-lan\"\nkind = \"bridge\"\nports = [\"eth1\", \"eth2\"]\naddress = [\"192.168.1.1/24\"]\nmtu = 1500\n";

fn router_board(profile: &str) -> FakeBoard {
    let mut b = FakeBoard::new();
    b.files.files.insert("/etc/nasboot.toml".into(), profile.as_bytes().to_vec());
    for (i, n) in ["lo", "eth0", "eth1", "eth2"].iter().enumerate() {
        b.netif.add(n, i as u32 + 1);
    }
    b
}

#[test]
fn bridges_and_vlans_are_created_then_left_alone_and_removed_when_no_longer_named() {
    let mut b = router_board(ROUTER_LINKS);
    let (status, out, err) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok, "{err}");
    for step in [
        "netdev  br-lan: create bridge (stp off)",
        "netdev  eth0.2: create vlan 2 on eth0",
        "netdev  eth1: port of br-lan",
        "netdev  eth1: set up (for br-lan)",
        "netdev  eth0: set up (for eth0.2)",
        "links  br-lan: add address 192.168.1.1/24",
        "links  eth0.2: set up",
    ] {
        assert!(out.contains(step), "`{step}` not in:\n{out}");
    }
    assert_eq!(b.effects(), Vec::<String>::new(), "plan changes nothing");
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    let fx = b.effects();
    // The links to create are known absent from the link dump: never
    // asked for by name, which would make the kernel run modprobe.
    assert!(!fx.iter().any(|e| e.starts_with("kernel: modprobe")), "{fx:?}");
    let at = |s: &str| fx.iter().position(|e| e == s).unwrap_or_else(|| panic!("no `{s}` in {fx:?}"));
    assert!(at("create br-lan") < at("create eth0.2") && at("create eth0.2") < at("enslave eth1 to br-lan"));
    assert!(at("enslave eth2 to br-lan") < at("link br-lan up"));
    let br = &b.netif.links["br-lan"];
    assert_eq!((br.state.up, br.addrs.len(), br.alias.as_deref()), (true, 1, Some("nasboot")));
    assert_eq!(b.netif.links["eth1"].master, Some(br.state.index));
    assert!(b.netif.links["eth0"].state.up && b.netif.links["eth1"].state.up);
    // Again: nothing to do.
    let (_, out, _) = run_on(&mut b, &["plan"]);
    assert!(out.contains("nothing to do"), "{out}");
    // The bridge leaves the profile: removed, its ports released; the
    // VLAN stays; eth1 and eth2, which nasboot did not create, stay.
    let text = ROUTER_LINKS.split("[[interface]]\nname = \"br-lan\"").next().unwrap();
    b.files.files.insert("/etc/nasboot.toml".into(), text.as_bytes().to_vec());
    let (status, out, err) = run_on(&mut b, &["apply", "-v"]);
    assert_eq!(status, Status::Ok, "{out}{err}");
    assert!(!b.netif.links.contains_key("br-lan"));
    assert_eq!(b.netif.links["eth1"].master, None);
    assert!(b.netif.links.contains_key("eth0.2") && b.netif.links.contains_key("eth1"));
}

#[test]
fn a_name_taken_by_a_link_nasboot_did_not_create_is_never_touched() {
    let mut b = router_board(ROUTER_LINKS);
    // An existing bridge of someone else's named like ours: reused as is
    // (the same kind), but a veth named like our VLAN is not ours.
    b.netif.add("eth0.2", 9).kind = Some(crate::seam::netif::Kind::Other("veth".try_into().unwrap()));
    let (status, out, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Partial, "{out}{err}");
    assert!(err.contains("eth0.2: exists as a veth link, which nasboot did not create; nothing was applied to it"), "{err}");
    assert!(!b.effects().iter().any(|e| e.contains("eth0.2")), "{:?}", b.effects());
    assert!(b.netif.links["br-lan"].state.up, "the rest is applied");
    // A bridge nasboot did not create is never removed.
    let mut b = router_board("[board]\nname = \"r\"\n[firewall]\nprofile = \"off\"\n");
    b.netif.add("br0", 7).kind = Some(crate::seam::netif::Kind::Bridge { stp: false });
    let (_, out, _) = run_on(&mut b, &["plan"]);
    assert!(out.contains("nothing to do"), "{out}");
}

#[test]
fn run_says_the_watchdog_is_held_even_when_another_step_failed() {
    // A `nasboot watchdog` already holds the device (EBUSY: apply's open is
    // not an error), and a NIC step fails (exit 3). The run must still say
    // that it is not petting, and exit 1, not 3 as if only a knob failed.
    let mut board = FakeBoard::new();
    board.files.files.insert(
        "/etc/nasboot.toml".into(),
        b"[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n[watchdog]\ntimeout = 30\n[[interface]]\nname = \"eth7\"\nrole = \"lan\"\n"
            .to_vec(),
    );
    board.watchdog.devices.insert("/dev/watchdog0".into());
    board.watchdog.busy = Some((4242, "nasboot".into()));
    let (status, _, err) = run_on(&mut board, &["run"]);
    assert!(err.contains("eth7: no such interface"), "{err}");
    assert!(err.contains("the watchdog device is held by another process; not petting it"), "{err}");
    assert_eq!(status, Status::Failure);
}

#[test]
fn changing_commands_hold_the_apply_lock_around_every_change() {
    let lock = crate::paths::APPLY_LOCK;
    // apply and firewall apply: taken before the first change, released
    // after the last; the profile is read with it held (the code takes it
    // first; the fake cannot order a read against it).
    for args in [&["apply"][..], &["firewall", "apply"][..]] {
        let mut b = router_board(ROUTER_LINKS);
        // nasboot's table is loaded, so "off" removes it: a change.
        b.nft.tables.insert((crate::sys::nftnl::NFPROTO_INET, "nasboot".into()), Vec::new());
        let (status, _, err) = run_on(&mut b, args);
        assert_eq!(status, Status::Ok, "{args:?}: {err}");
        let n = b.effects().len();
        assert!(n > 0, "{args:?} changed nothing");
        assert_eq!(*b.files.locks.borrow(), [format!("lock {lock} at 0"), format!("unlock {lock} at {n}")], "{args:?}");
    }
    // Commands that change nothing take no lock.
    for args in [&["plan"][..], &["check"][..], &["status"][..], &["firewall", "render"][..]] {
        let mut b = router_board(ROUTER_LINKS);
        b.runner.programs.insert("nft".into());
        let _ = run_on(&mut b, args);
        assert_eq!(*b.files.locks.borrow(), Vec::<String>::new(), "{args:?}");
    }
}

#[test]
fn an_apply_waits_for_the_one_running_and_a_lock_it_cannot_take_does_not_stop_it() {
    let lock = crate::paths::APPLY_LOCK;
    let mut b = router_board(ROUTER_LINKS);
    b.files.locked_elsewhere.insert(lock.into());
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert!(err.contains(&format!("{lock}: another nasboot is changing the board; waiting for it")), "{err}");
    assert_eq!(b.files.locks.borrow()[0], format!("lock {lock} after waiting, at 0"));
    assert!(b.netif.links["br-lan"].state.up, "applied once the other let go");
    // A read-only /run: said, and the boot goes on.
    let mut b = router_board(ROUTER_LINKS);
    b.files.fail_lock = Some(std::io::ErrorKind::ReadOnlyFilesystem);
    let (status, _, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert!(err.contains(&format!("{lock}: cannot take the lock (")) && err.contains("going on without it"), "{err}");
    assert!(b.netif.links["br-lan"].state.up);
}

#[test]
fn run_holds_the_apply_lock_for_its_apply() {
    // Not covered here: that `run` lets go before it serves the watchdog
    // (the lock lives in `start`'s frame). tests/pkg/board-systemd.sh
    // covers it: a `nasboot apply` beside the running service must end at
    // once, without waiting.
    let lock = crate::paths::APPLY_LOCK;
    let mut board = FakeBoard::new();
    board.files.files.insert("/etc/nasboot.toml".into(), b"[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n[watchdog]\ntimeout = 30\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\nmtu = 1400\n".to_vec());
    board.netif.add("eth0", 2);
    board.watchdog.devices.insert("/dev/watchdog0".into());
    board.watchdog.busy = Some((4242, "nasboot".into()));
    let _ = run_on(&mut board, &["run"]);
    let n = board.effects().len();
    assert!(board.effects().iter().any(|e| e.contains("mtu")), "{:?}", board.effects());
    assert_eq!(*board.files.locks.borrow(), [format!("lock {lock} at 0"), format!("unlock {lock} at {n}")]);
}

#[test]
fn status_with_the_firewall_off_says_off() {
    let mut board = FakeBoard::new();
    board.files.files.insert("/etc/nasboot.toml".into(), b"[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n".to_vec());
    let (status, out, _) = run_on(&mut board, &["status"]);
    assert_eq!(status, Status::Ok);
    assert!(out.contains("\n  firewall: off\n"), "{out}");
    assert!(!out.contains("nasboot's rules unknown"), "{out}");
}

#[test]
fn the_firewall_hooks_the_links_the_netdev_steps_created() {
    // The WAN is a VLAN nasboot creates: absent at the first observation,
    // where `hook = "auto"` would take the input chain (a chain cannot be
    // hooked to a device that is not there). Observed again after the
    // netdev steps, it is there: the ingress hooks, as on a board where
    // the VLAN was already up.
    let profile = "[board]\nname = \"n\"\n[firewall]\nprofile = \"stateless\"\n\
        [[interface]]\nname = \"eth0.2\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 2\nrole = \"wan\"\nmethod = \"manual\"\n\
        [[interface]]\nname = \"eth1\"\nrole = \"lan\"\naddress = [\"192.168.1.1/24\"]\n\
        [[interface]]\nname = \"eth0\"\nrole = \"lan\"\nmethod = \"manual\"\n";
    let board = |vlan_there: bool| {
        let mut b = FakeBoard::new();
        b.files.files.insert("/etc/nasboot.toml".into(), profile.as_bytes().to_vec());
        b.sysctl.values.insert("kernel.osrelease".into(), "6.1.0-50-4kc-malta\n".into());
        b.sysctl.values.insert("net.ipv6.conf.all.disable_ipv6".into(), "0".into());
        b.sysctl.values.insert("net.ipv4.ip_local_port_range".into(), "32768\t60999\n".into());
        b.netif.add("lo", 1).state.hwtype = 772;
        b.netif.add("eth0", 2);
        b.netif.add("eth1", 3);
        if vlan_there {
            let v = b.netif.add("eth0.2", 4);
            v.kind = Some(crate::seam::netif::Kind::Vlan { link: 2, id: 2 });
            v.alias = Some("nasboot".into());
        }
        b
    };
    let mut b = board(false);
    let (status, out, err) = run_on(&mut b, &["plan"]);
    assert_eq!(status, Status::Ok, "{err}");
    assert!(out.contains("create vlan 2 on eth0") && !out.contains("on the ingress hooks"), "{out}");
    let (status, out, err) = run_on(&mut b, &["apply"]);
    assert_eq!(status, Status::Ok, "{out}{err}");
    // With the VLAN there, the plan is the ingress hooks; and it is what
    // the apply loaded: nothing to do (the seal's digest is the batch's).
    let mut there = board(true);
    let (_, out, _) = run_on(&mut there, &["plan"]);
    assert!(out.contains("on the ingress hooks"), "{out}");
    let (_, out, _) = run_on(&mut b, &["plan"]);
    assert!(out.contains("nothing to do"), "{out}");
}
