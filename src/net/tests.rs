//! NIC planning and applying on a fake board: exact plans, idempotence,
//! partial failures naming interface and knob, and the ethtool
//! handshakes against a fake driver.

use super::ethtool::{LinkMode, Pause};
use super::Error;
use crate::apply;
use crate::apply::StepError;
use crate::config::{self, Profile};
use crate::exit::ExitStatus;
use crate::exit::Status;
use crate::plan;
use crate::seam::fake::FakeBoard;
use crate::seam::netif::RouteEntry;
use crate::sys::ethtool::{LinkSettings, RingParam, DUPLEX_FULL};

fn profile(body: &str) -> Profile {
    let text = format!("[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n{body}");
    config::parse_bytes("t.toml", text.as_bytes()).unwrap_or_else(|e| panic!("{e}")).profile
}

/// The plan's lines (actions, then notes) for a profile on a board.
pub(in crate::net) fn plan_lines(p: &Profile, board: &mut FakeBoard) -> (Vec<String>, Vec<String>) {
    let now = plan::observe(p, &mut board.seams());
    let pl = plan::plan(p, &now);
    (pl.actions.iter().map(|a| a.to_string()).collect(), pl.notes)
}

pub(in crate::net) fn apply_all(p: &Profile, board: &mut FakeBoard) -> apply::Report {
    let now = plan::observe(p, &mut board.seams());
    let pl = plan::plan(p, &now);
    apply::apply(&pl, &mut board.seams())
}

/// Two down veth-like interfaces with the sysctls the kernel has.
fn board() -> FakeBoard {
    let mut b = FakeBoard::new();
    for (name, idx) in [("eth0", 2), ("eth1", 3)] {
        b.netif.add(name, idx);
        b.sysctl.values.insert(format!("net.ipv6.conf.{name}.accept_ra"), "1".into());
        b.sysctl.values.insert(format!("net.ipv4.conf.{name}.rp_filter"), "0".into());
    }
    b
}

const BOX: &str = r#"
[[interface]]
name = "eth0"
role = "wan"
address = ["198.51.100.2/24", "fd00:51::2/64"]
gateway = "198.51.100.1"
mtu = 1400
txqueuelen = 500
accept_ra = 0
sysctl = { "ipv4.rp_filter" = 1 }
[[interface]]
name = "eth1"
role = "lan"
address = ["192.168.10.1/24"]
mac = "02:00:00:00:10:01"
route = [{ to = "10.8.0.0/16", via = "192.168.10.2" }]
"#;

#[test]
fn fresh_board_plan_in_order() {
    let p = profile(BOX);
    let mut b = board();
    let (actions, notes) = plan_lines(&p, &mut b);
    assert_eq!(
        actions,
        [
            "eth0: net.ipv4.conf.eth0.rp_filter 0 -> 1",
            "eth0: net.ipv6.conf.eth0.accept_ra 1 -> 0",
            "eth0: mtu 1500 -> 1400",
            "eth0: txqueuelen 1000 -> 500",
            "eth0: set up",
            "eth0: add address 198.51.100.2/24",
            "eth0: add address fd00:51::2/64",
            "eth0: default gateway -> 198.51.100.1",
            "eth1: mac 02:00:00:00:00:03 -> 02:00:00:00:10:01",
            "eth1: set up",
            "eth1: add address 192.168.10.1/24",
            "eth1: route 10.8.0.0/16 via 192.168.10.2",
        ]
    );
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn apply_then_reapply_does_nothing() {
    let p = profile(BOX);
    let mut b = board();
    let r = apply_all(&p, &mut b);
    assert_eq!(r.status, Status::Ok, "{:?}", r.errors);
    let first = b.effects();
    assert!(first.contains(&"link eth0 mtu 1400".to_string()), "{first:?}");
    assert!(first.contains(&"addr add 198.51.100.2/24 dev 2".to_string()), "{first:?}");
    assert!(first.contains(&"route replace 0.0.0.0/0 via 198.51.100.1 dev 2 metric 0".to_string()), "{first:?}");
    assert!(first.contains(&"sysctl net.ipv6.conf.eth0.accept_ra=0".to_string()), "{first:?}");
    let (actions, _) = plan_lines(&p, &mut b);
    assert!(actions.is_empty(), "{actions:?}");
    let r = apply_all(&p, &mut b);
    assert_eq!(r.status, Status::Ok);
    assert_eq!(b.effects(), first, "a re-apply changed something");
}

#[test]
fn mac_change_bounces_only_when_up_and_different() {
    let p = profile("[[interface]]\nname = \"eth0\"\nmac = \"02:00:00:00:10:01\"\n");
    let mut b = board();
    b.netif.links.get_mut("eth0").unwrap().state.up = true;
    let (actions, _) = plan_lines(&p, &mut b);
    assert_eq!(actions, ["eth0: set down", "eth0: mac 02:00:00:00:00:02 -> 02:00:00:00:10:01", "eth0: set up"]);
    assert_eq!(apply_all(&p, &mut b).status, Status::Ok);
    assert_eq!(b.effects(), ["link eth0 down", "link eth0 mac 02:00:00:00:10:01", "link eth0 up"]);
    // Right MAC, right MTU: no bounce at all.
    let (actions, _) = plan_lines(&p, &mut b);
    assert!(actions.is_empty(), "{actions:?}");
}

#[test]
fn missing_interface_is_partial_and_the_rest_carries_on() {
    let p = profile("[[interface]]\nname = \"eth7\"\nmtu = 1400\n[[interface]]\nname = \"eth0\"\nmtu = 1400\n");
    let mut b = board();
    let r = apply_all(&p, &mut b);
    assert_eq!(r.status, Status::Partial);
    assert_eq!(r.errors.len(), 1);
    assert!(matches!(&r.errors[0], StepError::Net(Error::Missing { name }) if name.as_str() == "eth7"), "{}", r.errors[0]);
    assert_eq!(r.errors[0].to_string(), "eth7: no such interface; nothing was applied to it");
    assert_eq!(r.errors[0].exit_status(), Status::Partial);
    assert!(b.effects().iter().all(|e| !e.contains("eth7")));
    assert!(b.effects().contains(&"link eth0 mtu 1400".to_string()));
}

#[test]
fn mtu_above_the_driver_maximum_names_interface_and_knob() {
    let p = profile("[[interface]]\nname = \"eth0\"\nmtu = 9000\ntxqueuelen = 64\n");
    let mut b = board();
    b.netif.links.get_mut("eth0").unwrap().max_mtu = 1500;
    let r = apply_all(&p, &mut b);
    assert_eq!(r.status, Status::Partial);
    let e = &r.errors[0];
    assert!(
        matches!(e, StepError::Net(Error::Mtu { name, to: 9000, source }) if name.as_str() == "eth0" && source.raw_os_error() == Some(nix::libc::EINVAL)),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "eth0 mtu: the kernel refused 9000 ({}): below the minimum or above the driver's maximum",
            std::io::Error::from_raw_os_error(nix::libc::EINVAL)
        )
    );
    assert!(b.effects().contains(&"link eth0 txqueuelen 64".to_string()), "the rest carries on");
}

#[test]
fn promisc_is_turned_off() {
    let p = profile("[[interface]]\nname = \"eth0\"\n");
    let mut b = board();
    b.netif.links.get_mut("eth0").unwrap().state.promisc = true;
    let (actions, _) = plan_lines(&p, &mut b);
    assert_eq!(actions, ["eth0: promisc off", "eth0: set up"]);
}

fn ethtool_board() -> FakeBoard {
    let mut b = board();
    let nic = &mut b.netif.links.get_mut("eth0").unwrap().nic;
    nic.rings = Some(RingParam { rx_max_pending: 512, tx_max_pending: 512, rx_pending: 256, tx_pending: 256, ..RingParam::default() });
    nic.coalesce = Some((50, 50));
    nic.pause = Some(Pause { autoneg: true, rx: true, tx: true }.into());
    nic.link = Some(LinkSettings { speed: 1000, duplex: DUPLEX_FULL, autoneg: 1, ..LinkSettings::default() });
    let mut features: Vec<(String, bool, bool)> = (0..40).map(|i| (format!("feature-{i}"), true, false)).collect();
    for (n, changeable) in [
        ("tx-scatter-gather", true),
        ("tx-tcp-segmentation", true),
        ("tx-tcp6-segmentation", true),
        ("rx-gro", true),
        ("rx-checksum", false),
        ("tx-generic-segmentation", true),
    ] {
        features.push((n.to_string(), changeable, true));
    }
    nic.features = Some(features);
    b
}

const TUNED: &str = r#"
[[interface]]
name = "eth0"
[interface.ethtool]
rx_ring = 4096
tx_ring = 256
tso = false
gro = false
rx_checksum = false
rx_usecs = 100
pause_rx = false
pause_tx = false
speed = 100
duplex = "full"
autoneg = false
"#;

#[test]
fn ethtool_knobs_plan_apply_and_settle() {
    let p = profile(TUNED);
    let mut b = ethtool_board();
    let (actions, notes) = plan_lines(&p, &mut b);
    assert_eq!(
        actions,
        [
            "eth0: ring rx 256 -> 512",
            "eth0: tso on -> off",
            "eth0: gro on -> off",
            "eth0: coalesce rx-usecs 50 -> 100",
            "eth0: pause autoneg on rx on tx on -> autoneg on rx off tx off",
            "eth0: link speed 100 duplex full autoneg off (now 1000 Mb/s full duplex, autoneg on)",
            "eth0: set up",
        ]
    );
    assert_eq!(
        notes,
        [
            "eth0 rx_ring: 4096 is above the driver's maximum 512; clamped to 512",
            "eth0 rx_checksum: fixed by the driver, cannot turn it off; skipped",
        ]
    );
    let r = apply_all(&p, &mut b);
    assert_eq!(r.status, Status::Ok, "{:?}", r.errors);
    let nic = &b.netif.links["eth0"].nic;
    assert_eq!(nic.rings.unwrap().rx_pending, 512);
    assert_eq!(nic.coalesce, Some((100, 50)));
    assert_eq!(nic.pause.map(Pause::from), Some(Pause { autoneg: true, rx: false, tx: false }));
    assert_eq!(nic.link.as_ref().map(LinkMode::from), Some(LinkMode { speed: 100, duplex: DUPLEX_FULL, autoneg: false }));
    let f = nic.features.as_ref().unwrap();
    let active = |n: &str| f.iter().find(|x| x.0 == n).unwrap().2;
    assert!(!active("tx-tcp-segmentation") && !active("tx-tcp6-segmentation") && !active("rx-gro"));
    assert!(active("tx-scatter-gather") && active("tx-generic-segmentation"), "untouched features stay");
    assert!(!active("feature-3"), "features beyond the first word block are not disturbed");
    let (actions, _) = plan_lines(&p, &mut b);
    assert!(actions.is_empty(), "{actions:?}");
}

/// The exact requests sent, as youki's tests assert on the netlink
/// messages: the read-modify-write keeps what the profile does not set,
/// and SFEATURES names only the offload's changeable features.
#[test]
fn ethtool_requests_carry_the_values() {
    use crate::seam::netif::EthtoolSet;
    let p = profile("[[interface]]\nname = \"eth0\"\n[interface.ethtool]\nrx_ring = 300\ngro = false\n");
    let mut b = ethtool_board();
    assert_eq!(apply_all(&p, &mut b).status, Status::Ok);
    let sent: Vec<&EthtoolSet> = b.netif.sent.iter().map(|(_, s)| s).collect();
    let [EthtoolSet::Rings(r), EthtoolSet::Features(f)] = sent[..] else { panic!("{sent:?}") };
    assert_eq!((r.rx_pending, r.tx_pending, r.rx_max_pending, r.tx_max_pending), (300, 256, 512, 512));
    let gro = 40 + 3; // rx-gro's index in ethtool_board's table
    assert_eq!(f.len(), 2, "one block per 32 features");
    assert_eq!((f[1].valid, f[1].requested, f[0].valid), (1 << (gro - 32), 0, 0));
    assert_eq!(sent[0].to_string(), "ETHTOOL_SRINGPARAM rx 300 tx 256", "what dry-run prints");
}

#[test]
fn knobs_the_driver_lacks_are_notes_not_failures() {
    // A veth-like driver: features only.
    let p = profile(TUNED);
    let mut b = ethtool_board();
    let nic = &mut b.netif.links.get_mut("eth0").unwrap().nic;
    nic.rings = None;
    nic.coalesce = None;
    nic.pause = None;
    nic.link = None;
    let (actions, notes) = plan_lines(&p, &mut b);
    assert_eq!(actions, ["eth0: tso on -> off", "eth0: gro on -> off", "eth0: set up"]);
    for knob in ["eth0 ring:", "eth0 coalesce:", "eth0 pause:", "eth0 link settings:"] {
        assert!(notes.iter().any(|n| n.starts_with(knob) && n.contains("not supported by the driver")), "{knob}: {notes:?}");
    }
    assert_eq!(apply_all(&p, &mut b).status, Status::Ok);
}

#[test]
fn legacy_kernels_use_the_per_offload_and_gset_commands() {
    let p = profile("[[interface]]\nname = \"eth0\"\n[interface.ethtool]\ngro = false\nsg = true\nspeed = 100\n");
    let mut b = ethtool_board();
    let nic = &mut b.netif.links.get_mut("eth0").unwrap().nic;
    nic.features = None;
    nic.legacy.insert(crate::sys::ethtool::cmd::GGRO, true);
    nic.legacy.insert(crate::sys::ethtool::cmd::GSG, false);
    nic.legacy_link = true;
    let (actions, _) = plan_lines(&p, &mut b);
    assert_eq!(actions[..3], ["eth0: gro on -> off", "eth0: sg off -> on", "eth0: link speed 100 (now 1000 Mb/s full duplex, autoneg on)"]);
    assert_eq!(apply_all(&p, &mut b).status, Status::Ok);
    let effects = b.effects();
    for want in ["ethtool eth0 ETHTOOL_SGRO", "ethtool eth0 ETHTOOL_SSG", "ethtool eth0 ETHTOOL_SSET"] {
        assert!(effects.contains(&want.to_string()), "{want}: {effects:?}");
    }
    let nic = &b.netif.links["eth0"].nic;
    assert!(!nic.legacy[&crate::sys::ethtool::cmd::GGRO]);
    assert_eq!(nic.link.unwrap().speed, 100);
    assert!(plan_lines(&p, &mut b).0.is_empty());
}

#[test]
fn carrier_wait_is_cut_into_bounded_steps_and_reports_the_interface() {
    let p = profile("[[interface]]\nname = \"eth0\"\ncarrier_timeout = 2\n");
    let mut b = board();
    b.netif.links.get_mut("eth0").unwrap().no_carrier = true;
    let (actions, _) = plan_lines(&p, &mut b);
    assert_eq!(actions, ["eth0: set up", "eth0: wait for carrier (up to 2 s)", "eth0: still waiting for carrier (2/2)"]);
    let start = std::time::Instant::now();
    let r = apply_all(&p, &mut b);
    assert!(start.elapsed() < std::time::Duration::from_secs(4));
    assert_eq!(r.status, Status::Partial);
    assert!(matches!(&r.errors[0], StepError::Net(Error::NoCarrier { name, secs: 2 }) if name.as_str() == "eth0"), "{}", r.errors[0]);
    assert_eq!(r.errors[0].to_string(), "eth0 carrier: no carrier after 2 s");
    // With a cable, the wait ends at once.
    let mut b = board();
    let r = apply_all(&p, &mut b);
    assert_eq!(r.status, Status::Ok);
}

#[test]
fn dhcp_starts_a_client_once() {
    let p = profile("[[interface]]\nname = \"eth0\"\nmethod = \"dhcp\"\naddress = [\"fd00::2/64\"]\n");
    let mut b = board();
    let (actions, _) = plan_lines(&p, &mut b);
    assert_eq!(actions, ["eth0: set up", "eth0: add address fd00::2/64", "eth0: start DHCP: no udhcpc or dhclient on PATH"]);
    b.runner.programs.insert("udhcpc".into());
    let r = apply_all(&p, &mut b);
    assert_eq!(r.status, Status::Ok, "{:?}", r.errors);
    // Started, not waited for: the rest of the apply does not wait for a lease.
    assert!(b.effects().contains(&"start /usr/sbin/udhcpc -i eth0 -f -p /run/udhcpc.eth0.pid".to_string()), "{:?}", b.effects());
    b.files.files.insert("/run/udhcpc.eth0.pid".into(), b"4242\n".to_vec());
    b.files.files.insert("/proc/4242/stat".into(), b"4242 (udhcpc) S 1 4242 4242 0 -1".to_vec());
    assert!(plan_lines(&p, &mut b).0.is_empty());
    // One runs: no client is looked for on PATH.
    let iface = p.interface.iter().next().unwrap();
    assert_eq!(super::dhcp::observe(iface, &mut b.seams()), super::dhcp::Observed { program: None, running: true });
    // A client that died under `nasboot run` is its zombie: started again.
    b.files.files.insert("/proc/4242/stat".into(), b"4242 (udh) c) Z 77 4242 4242 0 -1".to_vec());
    assert_eq!(plan_lines(&p, &mut b).0, ["eth0: start DHCP: /usr/sbin/udhcpc -i eth0 -f -p /run/udhcpc.eth0.pid"]);
    // dhclient when there is no udhcpc; a failure is partial, named.
    let mut b = board();
    b.runner.programs.insert("dhclient".into());
    b.runner.answers.push_back(crate::seam::Output { code: Some(1), stderr: b"no link".to_vec(), ..Default::default() });
    let r = apply_all(&p, &mut b);
    assert_eq!(r.status, Status::Partial);
    let e = &r.errors[0];
    assert!(matches!(e, StepError::Net(Error::DhcpFailed { ended, .. }) if ended.code == Some(1)), "{e}");
    assert_eq!(e.to_string(), "eth0 dhcp: /usr/sbin/dhclient exit status 1: no link");
    assert!(b.effects().contains(&"run /usr/sbin/dhclient -nw -pf /run/dhclient.eth0.pid eth0".to_string()));
}

#[test]
fn gateway_change_is_a_replace_and_routes_need_the_link_up() {
    let p = profile("[[interface]]\nname = \"eth0\"\naddress = [\"10.0.0.2/24\"]\ngateway = \"10.0.0.1\"\n");
    let mut b = board();
    b.netif.links.get_mut("eth0").unwrap().state.up = true;
    b.netif.links.get_mut("eth0").unwrap().addrs.push("10.0.0.2/24".parse().unwrap());
    b.netif.routes.push(RouteEntry { dst: "0.0.0.0/0".parse().unwrap(), via: Some("10.0.0.254".parse().unwrap()), oif: 2, metric: 0 });
    let (actions, _) = plan_lines(&p, &mut b);
    assert_eq!(actions, ["eth0: default gateway 10.0.0.254 -> 10.0.0.1"]);
    assert_eq!(apply_all(&p, &mut b).status, Status::Ok);
    assert_eq!(b.netif.routes.len(), 1);
    let p = profile("[[interface]]\nname = \"eth0\"\nup = false\naddress = [\"10.0.0.2/24\"]\ngateway = \"10.0.0.1\"\n");
    let (actions, notes) = plan_lines(&p, &mut b);
    assert_eq!(actions, ["eth0: set down"]);
    assert!(notes[0].contains("routes and gateways are not installed"), "{notes:?}");
}

#[test]
fn per_interface_sysctl_keys_must_be_relative() {
    let text = "[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n[[interface]]\nname = \"eth0\"\nsysctl = { \"net.core.x\" = 1 }\n";
    let e = config::parse_bytes("t.toml", text.as_bytes()).unwrap_err();
    assert_eq!(e.key, "interface[0].sysctl.net.core.x");
    assert_eq!((e.line, e.column), (6, 8));
}

#[test]
fn vlan_interface_sysctls_use_the_sysctl8_slash() {
    // eth0.2 (an OpenWrt VLAN): its key carries the dot as `/`, which the
    // real seam maps back to /proc/sys/net/ipv6/conf/eth0.2/accept_ra.
    let p = profile("[[interface]]\nname = \"eth0.2\"\naccept_ra = 0\nsysctl = { \"ipv4.rp_filter\" = 1 }\n");
    let wanted = crate::sysctl::interface::wanted(&p.interface[0]);
    assert_eq!(
        wanted,
        [("net.ipv4.conf.eth0/2.rp_filter".to_string(), "1".to_string()), ("net.ipv6.conf.eth0/2.accept_ra".to_string(), "0".to_string()),]
    );
    assert_eq!(crate::seam::real::sysctl::proc_path(&wanted[1].0), "/proc/sys/net/ipv6/conf/eth0.2/accept_ra");
}
