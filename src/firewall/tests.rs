//! Golden files for both backends and every profile, the properties the
//! design promises (no conntrack in the stateless rule set, one rule and
//! one map lookup for a LAN packet), and loading through the FakeRunner.
//!
//! Regenerate the golden files with `NASBOOT_BLESS=1 cargo test --lib firewall`.

mod batch_text;

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

use super::load::{self, Confirm, LoadError};
use super::*;
use crate::config::parse_bytes;
use crate::exit::ExitStatus;
use crate::seam::fake::FakeBoard;
use crate::seam::Output;
use batch_text::batch_text;

const IFACES: &str =
    "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"wan\"\n[[interface]]\nname = \"eth1\"\nrole = \"lan\"\n";

/// (golden name, [firewall] section)
const PROFILES: &[(&str, &str)] = &[
    ("stateless", ""),
    (
        "stateless-services",
        "lan_services = [\"ssh\", \"nfs\", \"smb\"]\nlan_tcp_ports = [8080]\nmountd_port = 4002\nwan_services = [\"ssh\"]\nwan_udp_ports = [51820]\n",
    ),
    ("stateful", "profile = \"stateful\"\nwan_services = [\"https\"]\n"),
    ("off", "profile = \"off\"\n"),
    ("forward", "forward = true\nlog_rate = 30\n"),
    ("ingress", "hook = \"ingress\"\n"),
    ("ingress-services", "hook = \"ingress\"\nlan_services = [\"ssh\", \"nfs\"]\nwan_services = [\"ssh\"]\n"),
    ("forward-no-offload", "forward = true\nflow_offload = \"off\"\n"),
    ("router", ROUTER),
];

/// A router: a LAN bridge over two ports, a WAN VLAN, port forwards.
const ROUTER: &str = "[board]\nname = \"t\"\n\
    [[interface]]\nname = \"eth0.2\"\nkind = \"vlan\"\nlink = \"eth0\"\nid = 2\nrole = \"wan\"\n\
    [[interface]]\nname = \"br-lan\"\nkind = \"bridge\"\nports = [\"eth1\", \"eth2\"]\nrole = \"lan\"\naddress = [\"192.168.1.1/24\", \"fd00:1::1/64\"]\n\
    [firewall]\nprofile = \"stateful\"\nforward = true\n\
    [[firewall.port_forward]]\nproto = \"tcp\"\nwan_port = 2222\nto = \"192.168.1.10:22\"\n\
    [[firewall.port_forward]]\nproto = \"udp\"\nwan_port = 51820\nto = \"192.168.1.20:51820\"\n";

fn profile(section: &str) -> Profile {
    let text = if section.starts_with("[board]") { section.to_string() } else { format!("{IFACES}[firewall]\n{section}") };
    parse_bytes("t.toml", text.as_bytes()).expect("valid profile").profile
}

fn observed() -> Observed {
    Observed { ipv6: true, ..Observed::default() }
}

macro_rules! goldens {
    ($($name:literal),*) => {
        &[$(
            ($name, include_str!(concat!("../../tests/golden/firewall/", $name))),
        )*]
    };
}

const GOLDEN: &[(&str, &str)] = goldens!(
    "stateless.nft",
    "stateless.iptables",
    "stateless-services.nft",
    "stateless-services.iptables",
    "stateful.nft",
    "stateful.iptables",
    "off.nft",
    "off.iptables",
    "forward.nft",
    "forward.iptables",
    "forward-no-offload.nft",
    "forward-no-offload.iptables",
    "router.nft",
    "router.iptables",
    "ingress.nft",
    "ingress.iptables",
    "ingress-services.nft",
    "ingress-services.iptables",
    "fallback.nft",
    "fallback.iptables",
    "emergency.nft",
    "emergency.iptables",
    "netlink-le.txt",
    "netlink-be.txt"
);

fn ext(b: Backend) -> &'static str {
    match b {
        Backend::Nftables => "nft",
        Backend::Iptables => "iptables",
    }
}

fn check_golden(name: &str, got: &str) {
    let path = format!("tests/golden/firewall/{name}");
    if std::env::var_os("NASBOOT_BLESS").is_some() {
        let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(&path);
        std::fs::write(&full, got).expect("write golden");
        return;
    }
    let want = GOLDEN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
    let want = want.unwrap_or_else(|| panic!("{path}: no such golden file in the GOLDEN list"));
    assert!(want == got, "{path} differs (NASBOOT_BLESS=1 regenerates it):\n--- want\n{want}\n--- got\n{got}");
}

#[test]
fn goldens_for_every_profile_and_backend() {
    for (name, section) in PROFILES {
        let m = model::from_profile(&profile(section));
        for b in [Backend::Nftables, Backend::Iptables] {
            check_golden(&format!("{name}.{}", ext(b)), &render(&m, b, &observed()).text);
        }
    }
    let lan = model::from_profile(&profile("")).lan_ifaces;
    for b in [Backend::Nftables, Backend::Iptables] {
        check_golden(&format!("fallback.{}", ext(b)), &fallback(&lan, b, Via::Netlink).text);
        check_golden(&format!("emergency.{}", ext(b)), &emergency(b, Via::Netlink).text);
    }
}

/// Words that would engage connection tracking.
const CONNTRACK_WORDS: &[&str] = &[
    "ct",
    "notrack",
    "conntrack",
    "state",
    "--state",
    "--ctstate",
    "CT",
    "--notrack",
    "NOTRACK",
    "nat",
    "*nat",
    "*raw",
    "masquerade",
    "MASQUERADE",
    "snat",
    "dnat",
    "SNAT",
    "DNAT",
    "helper",
];

#[test]
fn stateless_never_engages_conntrack() {
    for section in ["", "lan_services = [\"nfs\"]\nwan_services = [\"ssh\"]\n"] {
        let m = model::from_profile(&profile(section));
        assert!(!m.uses_conntrack());
        for b in [Backend::Nftables, Backend::Iptables] {
            let text = render(&m, b, &observed()).text;
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                // The nat table is only named to delete it.
                if line.ends_with("nasboot_nat {}") || line.ends_with("table ip nasboot_nat") {
                    continue;
                }
                for word in line.split_whitespace() {
                    assert!(!CONNTRACK_WORDS.contains(&word), "{b} stateless rule set has `{word}`: {line}");
                }
            }
        }
    }
}

#[test]
fn a_lan_packet_costs_one_rule() {
    // A LAN open to everything is one compare rule ahead of the map: no
    // set lookup at all (the lookup is an indirect call per packet; the
    // plain compare measured 81% -> 90% of no-rules throughput).
    let m = model::from_profile(&profile(""));
    let text = render(&m, Backend::Nftables, &observed()).text;
    let input = text.split("chain input {").nth(1).unwrap().split("\n\t}").next().unwrap();
    let rules: Vec<&str> = input.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("type ")).collect();
    assert_eq!(rules, ["iifname \"eth1\" accept", "iif lo accept", "iifname vmap { \"eth0\" : jump wan }"], "{input}");
    let text = render(&m, Backend::Iptables, &observed()).text;
    let first = text.lines().find(|l| l.starts_with("-A INPUT")).unwrap();
    assert_eq!(first, "-A INPUT -i eth1 -j ACCEPT");
}

#[test]
fn re_apply_replaces_only_nasboots_tables() {
    let text = render(&model::from_profile(&profile("forward = true")), Backend::Nftables, &observed()).text;
    let starts: Vec<&str> = text.lines().filter(|l| l.starts_with("table") || l.starts_with("delete")).collect();
    assert_eq!(
        starts,
        [
            "table inet nasboot {}",
            "delete table inet nasboot",
            "table inet nasboot {",
            "table ip nasboot_nat {}",
            "delete table ip nasboot_nat",
            "table ip nasboot_nat {"
        ]
    );
    assert!(!text.contains("flush ruleset"));
}

#[test]
fn multiport_takes_at_most_15_ports_a_rule() {
    let mut section = String::from("lan_services = [\"ssh\"]\nlan_tcp_ports = [");
    for p in 1000..1020 {
        section.push_str(&format!("{p}, "));
    }
    section.push_str("2000]\n");
    let text = render(&model::from_profile(&profile(&section)), Backend::Iptables, &observed()).text;
    let rules: Vec<&str> = text.lines().filter(|l| l.contains("--dports")).take(2).collect();
    assert_eq!(rules[0].split("--dports ").nth(1).unwrap().split(' ').next().unwrap().split(',').count(), 15);
    assert_eq!(rules[1], "-A nasboot-lan -p tcp -m multiport --dports 1014,1015,1016,1017,1018,1019,2000 -j ACCEPT");
}

#[test]
fn iptables_cleans_raw_and_nat_left_by_an_earlier_rule_set() {
    let m = model::from_profile(&profile(""));
    let now = Observed { ipv6: true, left4: iptables::Leftovers { filter: true, raw: true, nat: true }, ..Observed::default() };
    let rs = render(&m, Backend::Iptables, &now);
    assert!(rs.v4().contains("*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-F PREROUTING\n-F OUTPUT\nCOMMIT\n"));
    assert!(rs.v4().contains("*nat\n:PREROUTING ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-F PREROUTING\n-F POSTROUTING\nCOMMIT\n"));
    assert!(!rs.v6().contains("*raw"));
    assert_eq!(iptables::Leftovers::from_names("filter\nraw\n"), iptables::Leftovers { filter: true, raw: true, nat: false });
}

/// A board whose kernel refuses the nf_tables socket (as under
/// qemu-user): the tool path. [`native_board`] is the netlink one.
fn board() -> FakeBoard {
    let mut b = FakeBoard::new();
    b.nft.refused = Some(nix::libc::EPROTONOSUPPORT);
    for p in ["nft", "iptables-restore", "ip6tables-restore", "iptables-save", "ip6tables-save"] {
        b.runner.programs.insert(p.to_string());
    }
    // Debian 12's default: iptables is iptables-nft.
    b.runner.links.insert("iptables-save".into(), "xtables-nft-multi".into());
    b.sysctl.values.insert("kernel.osrelease".into(), "6.1.0-50-4kc-malta\n".into());
    b.sysctl.values.insert("net.ipv6.conf.all.disable_ipv6".into(), "0".into());
    b
}

/// The tool path as a board that refuses the socket has it.
const TOOL: Via = Via::Tool(backend::Why::Refused(nix::libc::EPROTONOSUPPORT));

fn fail(stderr: &str) -> Output {
    Output { code: Some(1), stderr: stderr.as_bytes().to_vec(), ..Output::default() }
}

fn ok(stdout: &str) -> Output {
    Output { code: Some(0), stdout: stdout.as_bytes().to_vec(), ..Output::default() }
}

fn plan_on(b: &mut FakeBoard, section: &str) -> Action {
    let p = profile(section);
    let now = observe(&p, None, &mut b.seams());
    let mut actions = plan(&p, &now);
    assert_eq!(actions.len(), 1);
    actions.remove(0)
}

#[test]
fn the_tool_path_loads_once_from_stdin() {
    // `nft -f` is one transaction: no `nft -c` pass before it.
    let mut b = board();
    let a = plan_on(&mut b, "");
    super::apply(&a, &mut b.seams()).unwrap();
    assert_eq!(b.effects(), ["run nft -f -"]);
    let Action::Load { rules, .. } = &a;
    assert_eq!(b.runner.stdins, [rules.text.as_bytes()]);
}

#[test]
fn iptables_checks_both_families_before_loading_either() {
    let mut b = board();
    let a = plan_on(&mut b, "backend = \"iptables\"");
    super::apply(&a, &mut b.seams()).unwrap();
    assert_eq!(
        b.effects(),
        [
            "run iptables-restore --test --noflush",
            "run ip6tables-restore --test --noflush",
            "run iptables-restore --noflush",
            "run ip6tables-restore --noflush"
        ]
    );
    assert!(String::from_utf8_lossy(&b.runner.stdins[1]).contains("IPv6"));
}

#[test]
fn rejected_rule_set_loads_the_fallback_and_quotes_the_line() {
    let mut b = board();
    let a = plan_on(&mut b, "");
    b.runner.answers = VecDeque::from([fail("/dev/stdin:5:9-12: Error: syntax error, unexpected rule\n\t\tbogus rule\n\t\t      ^^^^\n")]);
    let e = super::apply(&a, &mut b.seams()).unwrap_err();
    assert!(matches!(&e, Error::Load { source: LoadError::Rejected { tool: "nft", .. }, then: Then::FellBack(Backend::Nftables) }), "{e}");
    assert_eq!(e.exit_status(), crate::exit::Status::Failure);
    assert_eq!(
        e.to_string(),
        "nft: nft rejected the rule set: /dev/stdin:5:9-12: Error: syntax error, unexpected rule (line 5: `table inet nasboot {`); \
         loaded the fallback rule set instead (nftables: loopback and LAN only)"
    );
    assert_eq!(b.effects(), ["run nft -f -", "run nft -f -"]);
    let lan = model::from_profile(&profile("")).lan_ifaces;
    assert_eq!(b.runner.stdins[1], fallback(&lan, Backend::Nftables, TOOL).text.as_bytes());
}

#[test]
fn fallback_uses_the_other_backend_when_its_own_fails_too() {
    let mut b = board();
    let a = plan_on(&mut b, "");
    b.runner.answers = VecDeque::from([fail("nft: kernel says no\n"), fail("nft: kernel says no\n")]);
    let e = super::apply(&a, &mut b.seams()).unwrap_err();
    assert!(matches!(e, Error::Load { then: Then::FellBack(Backend::Iptables), .. }), "{e}");
    assert!(e.to_string().ends_with("; loaded the fallback rule set instead (iptables: loopback and LAN only)"), "{e}");
    assert_eq!(
        b.effects()[2..],
        [
            "run iptables-restore --test --noflush",
            "run ip6tables-restore --test --noflush",
            "run iptables-restore --noflush",
            "run ip6tables-restore --noflush"
        ]
    );
}

#[test]
fn iptables_error_line_is_quoted_from_the_right_family() {
    let mut b = board();
    let a = plan_on(&mut b, "backend = \"iptables\"");
    b.runner.answers = VecDeque::from([
        ok(""),
        fail("ip6tables-restore v1.8.9 (legacy): unknown option \"--bogus\"\nError occurred at line: 3\nTry `ip6tables-restore -h'\n"),
    ]);
    let e = super::apply(&a, &mut b.seams()).unwrap_err();
    let Error::Load { source: LoadError::Rejected { tool: "ip6tables-restore", detail }, .. } = &e else { panic!("{e}") };
    assert_eq!(detail, "ip6tables-restore v1.8.9 (legacy): unknown option \"--bogus\" (line 3: `:INPUT DROP [0:0]`)");
}

#[test]
fn missing_tool_changes_nothing() {
    let mut b = board();
    let a = plan_on(&mut b, "");
    b.runner.programs.remove("nft");
    let e = super::apply(&a, &mut b.seams()).unwrap_err();
    assert!(matches!(e, Error::Load { source: LoadError::Missing("nft"), then: Then::KeptPrevious }), "{e}");
    assert_eq!(e.to_string(), "nft: `nft` is not on PATH: nothing was loaded; the previous rule set is kept");
    assert_eq!(b.effects(), Vec::<String>::new());
}

#[test]
fn off_without_any_tool_plans_nothing() {
    let mut b = FakeBoard::new();
    let p = profile("profile = \"off\"");
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(plan(&p, &now), Vec::new());
}

#[test]
fn auto_backend_follows_the_kernel() {
    let mut b = board();
    b.sysctl.values.insert("kernel.osrelease".into(), "2.6.39\n".into());
    let Action::Load { rules, .. } = plan_on(&mut b, "");
    assert_eq!(rules.backend, Backend::Iptables);
    let mut b = board();
    let Action::Load { rules, .. } = plan_on(&mut b, "");
    assert_eq!(rules.backend, Backend::Nftables);
}

#[test]
fn confirmed_apply_keeps_the_new_rules() {
    let mut b = board();
    let Action::Load { rules, fallback_lan, .. } = plan_on(&mut b, "");
    b.files.files.insert(crate::paths::FIREWALL_CONFIRM.into(), b"tok-1\n".to_vec());
    b.runner.answers = VecDeque::from([ok("table inet nasboot {\n}\n"), fail("Error: No such file or directory\n")]);
    let mut slept = 0;
    let mut said = Vec::new();
    load::load_confirmed(
        &rules,
        None,
        fallback_lan.as_ref(),
        &Confirm { seconds: 2, token: "tok-1" },
        &mut b.seams(),
        &mut |_| slept += 1,
        &mut |s| said.push(s.to_string()),
    )
    .unwrap();
    assert_eq!(slept, 1);
    assert_eq!(said.last().unwrap(), "firewall confirmed");
    assert_eq!(
        b.effects(),
        [
            "run nft list table inet nasboot",
            "run nft list table ip nasboot_nat",
            "replace /run/nasboot/firewall.previous",
            "run nft -f -",
            "replace /run/nasboot/firewall.pending",
            "replace /run/nasboot/firewall.pending"
        ]
    );
}

#[test]
fn unconfirmed_apply_rolls_back_after_the_timeout() {
    let mut b = board();
    let Action::Load { rules, fallback_lan, .. } = plan_on(&mut b, "");
    let before = "table inet nasboot {\n\tchain input {\n\t}\n}\n";
    b.runner.answers = VecDeque::from([ok(before), fail("Error: No such file or directory\n")]);
    // A confirmation left from an earlier apply does not count.
    b.files.files.insert(crate::paths::FIREWALL_CONFIRM.into(), b"old-token".to_vec());
    let mut slept = Duration::ZERO;
    let e = load::load_confirmed(
        &rules,
        None,
        fallback_lan.as_ref(),
        &Confirm { seconds: 2, token: "tok-2" },
        &mut b.seams(),
        &mut |d| slept += d,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, Error::NotConfirmed { seconds: 2 }), "{e}");
    assert_eq!(e.to_string(), "firewall: not confirmed within 2 s: the previous rule set is back");
    assert_eq!(slept, Duration::from_secs(2));
    let previous =
        format!("table inet nasboot {{}}\ndelete table inet nasboot\n{before}table ip nasboot_nat {{}}\ndelete table ip nasboot_nat\n");
    assert_eq!(b.runner.stdins.last().unwrap(), previous.as_bytes());
    assert_eq!(b.files.files[Path::new(crate::paths::FIREWALL_PREVIOUS)], previous.as_bytes());
    assert_eq!(b.files.files[Path::new(crate::paths::FIREWALL_PENDING)], b"");
    assert_eq!(b.effects()[b.effects().len() - 2..], ["replace /run/nasboot/firewall.pending", "run nft -f -"]);
}

#[test]
fn iptables_rollback_restores_saved_tables_and_empties_the_rest() {
    let mut b = board();
    let Action::Load { rules, .. } = plan_on(&mut b, "backend = \"iptables\"\nforward = true");
    b.runner.answers = VecDeque::from([ok("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n"), ok("")]);
    let prev = load::save_previous(&rules, &mut b.seams()).unwrap();
    assert!(!prev.noflush);
    assert_eq!(
        prev.v4(),
        format!(
            "*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n{}{}",
            "*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n",
            "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\nCOMMIT\n"
        )
    );
    assert!(prev.v6().starts_with("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n*raw\n"));
    load::check_and_load(&prev, &mut b.seams()).unwrap();
    assert_eq!(
        b.effects()[2..],
        ["run iptables-restore --test", "run ip6tables-restore --test", "run iptables-restore", "run ip6tables-restore"]
    );
}

#[test]
fn confirm_without_a_waiting_apply_fails() {
    let mut b = board();
    let e = load::confirm(&mut b.seams()).unwrap_err();
    assert!(matches!(e, Error::NotWaiting), "{e}");
    assert_eq!(e.to_string(), "firewall confirm: no `firewall apply --confirm` is waiting");
    b.files.files.insert(crate::paths::FIREWALL_PENDING.into(), b"tok-3".to_vec());
    load::confirm(&mut b.seams()).unwrap();
    assert_eq!(b.files.files[Path::new(crate::paths::FIREWALL_CONFIRM)], b"tok-3");
}

#[test]
fn emergency_loads_with_either_backend() {
    let mut b = board();
    b.runner.programs.remove("nft");
    assert_eq!(load::load_emergency(Backend::Nftables, TOOL, &mut b.seams()).unwrap(), Backend::Iptables);
    let text = String::from_utf8_lossy(&b.runner.stdins[0]).into_owned();
    assert!(text.contains("-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT"), "{text}");
}

#[test]
fn explain_reads_nft_and_iptables_messages() {
    let text = "a\nb\nc\n";
    assert_eq!(load::explain(b"/dev/stdin:2:1-3: Error: nope\n", text), "/dev/stdin:2:1-3: Error: nope (line 2: `b`)");
    assert_eq!(load::explain(b"iptables-restore: line 3 failed\n", text), "iptables-restore: line 3 failed (line 3: `c`)");
    assert_eq!(load::explain(b"x\nError occurred at line: 9\n", text), "x");
    assert_eq!(load::explain(b"", text), "(no message)");
}

#[test]
fn off_settles_once_nasboots_rules_are_gone() {
    let off = "profile = \"off\"\n";
    // nftables: our table is loaded, so "off" removes it.
    let mut b = board();
    b.runner.answers.push_back(ok("table inet filter\ntable inet nasboot\n"));
    let p = profile(off);
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(true));
    assert_eq!(plan(&p, &now).len(), 1);
    // Only other tools' tables: nothing to do, no tool runs on apply.
    let mut b = board();
    b.runner.answers.push_back(ok("table inet filter\n"));
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(false));
    assert_eq!(plan(&p, &now), Vec::new());
    // iptables-nft: our chains in the IPv6 table only still count.
    let p = profile("profile = \"off\"\nbackend = \"iptables\"\n");
    let mut b = board();
    b.runner.answers.push_back(ok("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n"));
    b.runner.answers.push_back(ok("*filter\n:INPUT DROP [0:0]\n:nasboot-wan - [0:0]\nCOMMIT\n"));
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(true));
    // A probe that fails: cannot tell, so the "off" rule set is loaded.
    let mut b = board();
    b.runner.answers.push_back(fail("iptables-save: permission denied"));
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, None);
    assert_eq!(plan(&p, &now).len(), 1);
}

/// The iptables tables (ip_tables_names) are read for the iptables
/// backend, whose rule set and `off` use them, and not on a board that
/// loads nftables, where nothing would use them (two /proc/net reads).
#[test]
fn the_iptables_tables_are_read_for_the_iptables_backend_only() {
    for (backend, read) in [("nftables", false), ("iptables", true)] {
        let p = profile(&format!("backend = \"{backend}\"\n"));
        let mut b = board();
        b.runner.links.insert("iptables-save".into(), "xtables-legacy-multi".into());
        b.files.files.insert(crate::paths::IP_TABLES_NAMES.into(), b"filter\nnat\n".to_vec());
        b.files.unreadable.insert(crate::paths::IP6_TABLES_NAMES.into());
        let now = observe(&p, None, &mut b.seams());
        assert!(now.offer.kernel.is_some(), "{backend}");
        assert_eq!((now.left4.filter, now.left4.nat), (read, read), "{backend}");
        assert!(now.iptables_tables().is_none(), "{backend}: IPv6's are unreadable, so not all known");
    }
}

/// The runs of `*tables-save` and `nft` on a board, in order.
fn probes(b: &FakeBoard) -> Vec<String> {
    b.journal.borrow().iter().filter(|l| l.starts_with("run ")).cloned().collect()
}

#[test]
fn off_asks_only_the_iptables_families_that_have_a_filter_table() {
    let p = profile("profile = \"off\"\nbackend = \"iptables\"\n");
    let legacy = |v4: Option<&str>, v6: Option<&str>| {
        let mut b = board();
        b.runner.links.insert("iptables-save".into(), "xtables-legacy-multi".into());
        for (path, names) in [(crate::paths::IP_TABLES_NAMES, v4), (crate::paths::IP6_TABLES_NAMES, v6)] {
            if let Some(names) = names {
                b.files.files.insert(path.into(), names.as_bytes().to_vec());
            }
        }
        b
    };
    // Legacy iptables with no filter table (ip_tables not even loaded for
    // IPv4): nothing of ours can be loaded, and no tool runs at all.
    let mut b = legacy(None, Some("mangle\n"));
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(false));
    assert_eq!(plan(&p, &now), Vec::new());
    assert_eq!(probes(&b), Vec::<String>::new());
    // A filter table in IPv6 only: ip6tables-save alone is asked, and our
    // chain there counts.
    let mut b = legacy(Some("nat\n"), Some("filter\n"));
    b.runner.answers.push_back(ok("*filter\n:INPUT DROP [0:0]\n:nasboot-wan - [0:0]\nCOMMIT\n"));
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(true));
    assert_eq!(probes(&b), ["run ip6tables-save -t filter"]);
    assert!(now.left4.nat && !now.left4.raw);
    // Both: both are asked (the first says none of ours).
    let mut b = legacy(Some("filter\n"), Some("filter\n"));
    b.runner.answers.push_back(ok("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n"));
    b.runner.answers.push_back(ok("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n"));
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(false));
    assert_eq!(probes(&b), ["run iptables-save -t filter", "run ip6tables-save -t filter"]);
    // The tables cannot be read (not root): both are asked, and their
    // failure leaves it unknown, so "off" is loaded to be sure.
    let mut b = legacy(Some("filter\n"), None);
    b.files.unreadable.insert(crate::paths::IP6_TABLES_NAMES.into());
    b.runner.programs.remove("nft");
    b.runner.answers.push_back(ok("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n"));
    b.runner.answers.push_back(fail("ip6tables-save v1.8.9 (legacy): Permission denied (you must be root)"));
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, None);
    assert_eq!(probes(&b), ["run iptables-save -t filter", "run ip6tables-save -t filter"]);
    // Under `--root` the tables read are not the running kernel's: both
    // are asked.
    let mut b = legacy(None, None);
    b.files.relocated = true;
    b.runner.programs.remove("nft");
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(false));
    assert_eq!(probes(&b), ["run iptables-save -t filter", "run ip6tables-save -t filter"]);
    // iptables-nft where nf_tables cannot be asked (qemu-user), nft or
    // not: not known, both asked.
    let mut b = board();
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(false));
    assert_eq!(probes(&b), ["run iptables-save -t filter", "run ip6tables-save -t filter"]);
    // iptables-nft with nf_tables through netlink: the kernel's tables say
    // IPv4 only has a filter table.
    let mut b = native_board();
    b.nft.tables.insert((crate::sys::nftnl::NFPROTO_IPV4, "filter".into()), Vec::new());
    b.nft.tables.insert((crate::sys::nftnl::NFPROTO_INET, "fw4".into()), Vec::new());
    b.runner.answers.push_back(ok("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n"));
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.ours_loaded, Some(false));
    assert_eq!(probes(&b), ["run iptables-save -t filter"]);
    // status asks the same way.
    assert_eq!(now.iptables_tables().map(|t| t.map(|l| l.filter)), Some([true, false]));
}

/// The hook `hook = "auto"` (the default) picks on a board with `links`
/// (name, ARPHRD type; loopback is always there) and kernel `release`.
fn auto_hook(section: &str, release: &str, links: &[(&str, u16)]) -> &'static str {
    let mut b = board();
    b.sysctl.values.insert("kernel.osrelease".into(), format!("{release}\n"));
    b.netif.add("lo", 1).state.hwtype = 772;
    for (i, (name, hw)) in links.iter().enumerate() {
        b.netif.add(name, i as u32 + 2).state.hwtype = *hw;
    }
    let a = plan_on(&mut b, section);
    // The links a caller has dumped already (plan::observe passes the
    // network's dump) give what the firewall's own dump gives.
    let p = profile(section);
    let all = crate::seam::netif::Netif::link_infos(&mut b.netif).unwrap();
    assert_eq!(observe(&p, Some(&all), &mut b.seams()).links, observe(&p, None, &mut b.seams()).links);
    let Action::Load { rules, .. } = &a;
    let ingress = rules.text.contains("type filter hook ingress device \"eth0\"");
    let input = rules.text.contains("type filter hook input");
    // `nasboot plan` says which.
    assert_eq!(a.to_string().contains(" lines, on the ingress hooks)"), ingress, "{a}");
    match (ingress, input) {
        (true, false) => "ingress",
        (false, true) => "input",
        _ => panic!("no single hook in:\n{}", rules.text),
    }
}

#[test]
fn auto_hook_is_ingress_only_where_it_filters_what_input_would() {
    const ETH: u16 = 1;
    let both = [("eth0", ETH), ("eth1", ETH)];
    assert_eq!(auto_hook("", "6.1.0-50-4kc-malta", &both), "ingress");
    assert_eq!(auto_hook("", "5.10.0", &both), "ingress");
    // Without the inet ingress hook.
    assert_eq!(auto_hook("", "5.9.16", &both), "input");
    // An interface the profile does not name: no chain would cover it.
    assert_eq!(auto_hook("", "6.1", &[("eth0", ETH), ("eth1", ETH), ("wlan0", ETH)]), "input");
    assert_eq!(auto_hook("", "6.1", &[("eth0", ETH), ("eth1", ETH), ("sit0", 776)]), "input");
    // The WAN absent (its chain could not be hooked), or a ppp WAN (its
    // device is created again on each connection, without the hook).
    assert_eq!(auto_hook("", "6.1", &[("eth1", ETH)]), "input");
    assert_eq!(auto_hook("", "6.1", &[("eth0", 512), ("eth1", ETH)]), "input");
    // A LAN open to everything gets no chain: any link type will do; a
    // restricted LAN gets one, so it must be there and Ethernet-like.
    assert_eq!(auto_hook("", "6.1", &[("eth0", ETH), ("eth1", 65534)]), "ingress");
    assert_eq!(auto_hook("", "6.1", &[("eth0", ETH)]), "ingress");
    let restricted = "lan_services = [\"nfs\"]\n";
    assert_eq!(auto_hook(restricted, "6.1", &both), "ingress");
    assert_eq!(auto_hook(restricted, "6.1", &[("eth0", ETH), ("eth1", 65534)]), "input");
    assert_eq!(auto_hook(restricted, "6.1", &[("eth0", ETH)]), "input");
    // Only the stateless profile without forwarding, only on nftables.
    assert_eq!(auto_hook("profile = \"stateful\"\n", "6.1", &both), "input");
    assert_eq!(auto_hook("forward = true\n", "6.1", &both), "input");
    assert_eq!(auto_hook("hook = \"input\"\n", "6.1", &both), "input");
    let mut b = board();
    b.netif.add("eth0", 2);
    b.netif.add("eth1", 3);
    let Action::Load { rules, .. } = plan_on(&mut b, "backend = \"iptables\"\n");
    assert_eq!(rules.backend, Backend::Iptables);
    assert!(rules.text.contains("-A INPUT -i eth1 -j ACCEPT"), "{}", rules.text);
}

/// A board where `hook = "auto"` takes the ingress hooks.
fn auto_ingress_board() -> FakeBoard {
    let mut b = board();
    b.netif.add("eth0", 2);
    b.netif.add("eth1", 3);
    b
}

#[test]
fn an_nft_without_inet_ingress_gets_the_input_chain_instead() {
    let mut b = auto_ingress_board();
    let a = plan_on(&mut b, "");
    let Action::Load { rules, instead, .. } = &a;
    assert!(rules.text.contains("hook ingress"), "{}", rules.text);
    let input = &instead.as_ref().expect("the input chain, in case").rules;
    assert!(input.text.contains("hook input") && !input.text.contains("hook ingress"), "{}", input.text);
    // nft 0.9.6 and older refuse the ingress hooks.
    b.runner.answers.push_back(fail("/dev/stdin:5:29-35: Error: syntax error, unexpected ingress\n"));
    super::apply(&a, &mut b.seams()).unwrap();
    assert_eq!(b.effects(), ["run nft -f -", "run nft -f -"]);
    assert_eq!(b.runner.stdins[1], input.text.as_bytes());
    // Refused too: the fallback, and the step fails.
    let mut b = auto_ingress_board();
    b.runner.answers.push_back(fail("Error: unexpected ingress\n"));
    b.runner.answers.push_back(fail("Error: no such file\n"));
    let e = super::apply(&a, &mut b.seams()).unwrap_err();
    assert!(matches!(e, Error::Load { source: LoadError::Rejected { tool: "nft", .. }, then: Then::FellBack(Backend::Nftables) }), "{e}");
    // The input chain from the start (hook = "input"): nothing instead.
    let mut b = auto_ingress_board();
    let Action::Load { instead, .. } = plan_on(&mut b, "hook = \"input\"\n");
    assert_eq!(instead, None);
}

/// A router profile on `b`, whose kernel has modules under /lib/modules
/// (`flow_offload`: whether nft_flow_offload.ko is among them).
fn router_board(flow_offload: bool) -> FakeBoard {
    let mut b = board();
    let dir = "/lib/modules/6.1.0-50-4kc-malta";
    b.files.files.insert(dir.into(), Vec::new());
    b.files.files.insert(format!("{dir}/modules.builtin").into(), b"kernel/net/bridge/bridge.ko\n".to_vec());
    if flow_offload {
        b.files.files.insert(format!("{dir}/kernel/net/netfilter/nft_flow_offload.ko").into(), Vec::new());
    }
    b.files.files.insert("/sys/module/nf_nat".into(), Vec::new());
    b.sysctl.values.insert("net.ipv4.ip_forward".into(), "0".into());
    b.sysctl.values.insert("net.ipv6.conf.all.forwarding".into(), "0".into());
    // The bridge and the VLAN, as `nasboot apply` has made them.
    b.netif.add("eth0.2", 5);
    b.netif.add("br-lan", 6);
    b
}

#[test]
fn a_router_gets_the_flowtable_where_the_kernel_has_it_and_forwards_only_once_loaded() {
    let mut b = router_board(true);
    b.nft.refused = None;
    let p = profile(ROUTER);
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.flowtable, Some(true));
    assert!(notes(&p, &now).is_empty());
    let a = plan(&p, &now).remove(0);
    let Action::Load { rules, instead, then, .. } = &a;
    assert!(rules.text.contains("\tflowtable ft {") && rules.text.contains("flow add @ft"));
    assert_eq!(instead, &None);
    assert_eq!(
        then.iter().map(|t| (t.key.as_str(), t.value.as_str())).collect::<Vec<_>>(),
        [("net.ipv4.ip_forward", "1"), ("net.ipv6.conf.all.forwarding", "1")]
    );
    assert!(
        a.to_string().ends_with(
            "with the flowtable) through netlink, then net.ipv4.ip_forward = 1 (now 0), then net.ipv6.conf.all.forwarding = 1 (now 0)"
        ),
        "{a}"
    );
    super::apply(&a, &mut b.seams()).unwrap();
    assert_eq!(b.effects(), ["nf_tables commit 54 messages", "sysctl net.ipv4.ip_forward=1", "sysctl net.ipv6.conf.all.forwarding=1"]);
    assert!(b.nft.tables.contains_key(&(crate::sys::nftnl::NFPROTO_INET, "nasboot".into())));
    // Re-planned on a router that forwards already, its rule set loaded
    // as nasboot left it: nothing to do.
    let now = observe(&p, None, &mut b.seams());
    assert!(now.loaded.is_some());
    assert_eq!(plan(&p, &now), []);
    // With the rule set changed by someone else (a commit): loaded again,
    // and the sysctls, right already, are left.
    b.nft.generation += 1;
    let now = observe(&p, None, &mut b.seams());
    let Action::Load { then, .. } = plan(&p, &now).remove(0);
    assert!(then.is_empty());
}

#[test]
fn a_router_whose_bridge_is_not_there_yet_forwards_without_the_flowtable_until_it_is() {
    // `firewall apply` early in the boot, before `nasboot apply` made
    // br-lan: the kernel would refuse a flowtable over it (ENOENT), and the
    // LAN-only fallback forwards nothing. The rule set goes without it.
    let mut b = router_board(true);
    b.nft.refused = None;
    b.netif.links.remove("br-lan");
    let p = profile(ROUTER);
    let now = observe(&p, None, &mut b.seams());
    let names = |n: &[IfName]| n.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!((now.flowtable, names(&now.absent)), (Some(true), vec!["br-lan".to_string()]));
    assert_eq!(
        notes(&p, &now),
        ["flow_offload = \"auto\": br-lan is not there yet, so forwarding goes without the flowtable until an apply finds it (nasboot run, or the hotplug handler)"]
    );
    let a = plan(&p, &now).remove(0);
    let Action::Load { rules, instead, .. } = &a;
    assert!(!rules.text.contains("flowtable") && rules.text.contains("masquerade"), "{}", rules.text);
    assert_eq!(instead, &None);
    super::apply(&a, &mut b.seams()).unwrap();
    // Asked by a dump, not by an interface ioctl, which would have the
    // kernel run modprobe for the missing name.
    assert!(!b.effects().iter().any(|e| e.contains("modprobe")), "{:?}", b.effects());
    // Once it is there (the links `nasboot apply` dumped, or a dump of
    // its own): the loaded rule set is not the one wanted, and the
    // flowtable comes in.
    b.netif.add("br-lan", 6);
    let now = observe(&p, None, &mut b.seams());
    assert!(now.absent.is_empty() && now.loaded.is_some());
    let Action::Load { rules, .. } = plan(&p, &now).remove(0);
    assert!(rules.text.contains("\tflowtable ft {"), "{}", rules.text);
    let all = crate::seam::netif::Netif::link_infos(&mut b.netif).unwrap();
    assert!(observe(&p, Some(&all), &mut b.seams()).absent.is_empty());
    let some: Vec<_> = all.into_iter().filter(|l| l.name.as_str() != "eth0.2").collect();
    assert_eq!(names(&observe(&p, Some(&some), &mut b.seams()).absent), ["eth0.2"]);
    // A kernel without the flowtable: its devices are not asked about.
    let mut b = router_board(false);
    b.netif.links.clear();
    assert!(observe(&p, None, &mut b.seams()).absent.is_empty());
}

#[test]
fn a_rejected_router_rule_set_never_turns_forwarding_on() {
    let mut b = router_board(true);
    let a = plan_on(&mut b, ROUTER);
    b.runner.answers.push_back(fail("/dev/stdin:3:1-5: Error: Could not process rule: No such file or directory\n"));
    let e = super::apply(&a, &mut b.seams()).unwrap_err();
    assert!(matches!(e, Error::Load { source: LoadError::Rejected { tool: "nft", .. }, then: Then::FellBack(Backend::Nftables) }), "{e}");
    assert!(!b.effects().iter().any(|e| e.starts_with("set ")), "{:?}", b.effects());
    assert_eq!(b.sysctl.values["net.ipv4.ip_forward"], "0");
}

#[test]
fn a_kernel_without_the_flowtable_gets_plain_forwarding_and_a_note() {
    let mut b = router_board(false);
    let p = profile(ROUTER);
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.flowtable, Some(false));
    let n = notes(&p, &now);
    assert!(n.len() == 1 && n[0].contains("no nft_flow_offload"), "{n:?}");
    let Action::Load { rules, instead, .. } = plan(&p, &now).remove(0);
    assert!(!rules.text.contains("flowtable") && !rules.text.contains("flow add"), "{}", rules.text);
    assert!(rules.text.contains("ct state established,related accept") && rules.text.contains("masquerade"));
    assert_eq!(instead, None);
    // iptables: no flowtable at all, said so.
    let p = profile(&ROUTER.replace("forward = true\n", "forward = true\nbackend = \"iptables\"\n"));
    let mut b = router_board(true);
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.flowtable, None, "not even asked");
    assert!(notes(&p, &now)[0].contains("iptables has no flowtable"));
}

#[test]
fn a_kernel_that_cannot_be_asked_tries_the_flowtable_with_plain_forwarding_ready() {
    // No /lib/modules for this kernel (a board image without modules).
    let mut b = router_board(false);
    b.files.files.clear();
    let a = plan_on(&mut b, ROUTER);
    let Action::Load { rules, instead, .. } = &a;
    assert!(rules.text.contains("flow add @ft"));
    let plain = &instead.as_ref().expect("plain forwarding, in case").rules;
    assert!(!plain.text.contains("flow") && plain.text.contains("masquerade"), "{}", plain.text);
    // The host kernel of these machines: no nf_flow_table, so nft says ENOENT.
    b.runner.answers.push_back(fail("/dev/stdin:6:12-13: Error: Could not process rule: No such file or directory\n"));
    super::apply(&a, &mut b.seams()).unwrap();
    assert_eq!(b.runner.stdins.last().unwrap(), plain.text.as_bytes());
}

#[test]
fn a_kernel_without_nat_is_named_in_the_plan() {
    let mut b = router_board(true);
    b.files.files.remove(std::path::Path::new("/sys/module/nf_nat"));
    let p = profile(ROUTER);
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.nat, Some(false));
    assert!(notes(&p, &now).iter().any(|n| n.contains("no NAT (nf_nat)")), "{:?}", notes(&p, &now));
    // nft refuses the nat table: the fallback, which forwards nothing.
    let a = plan(&p, &now).remove(0);
    b.runner.answers.push_back(fail("/dev/stdin:50:3-12: Error: Could not process rule: No such file or directory\n"));
    let e = super::apply(&a, &mut b.seams()).unwrap_err();
    assert!(matches!(e, Error::Load { source: LoadError::Rejected { tool: "nft", .. }, then: Then::FellBack(Backend::Nftables) }), "{e}");
    let fallback = String::from_utf8_lossy(b.runner.stdins.last().unwrap()).to_string();
    assert!(fallback.contains("chain forward {\n\t\ttype filter hook forward priority 0; policy drop;\n\t}"), "{fallback}");
    assert_eq!(b.sysctl.values["net.ipv4.ip_forward"], "0");
}

#[test]
fn port_forwards_name_only_what_the_profile_names() {
    let m = model::from_profile(&profile(ROUTER));
    assert_eq!(m.dnat.len(), 2);
    for b in [Backend::Nftables, Backend::Iptables] {
        let text = render(&m, b, &observed()).text;
        // Every address in the rule set is the profile's.
        for word in text.split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}') {
            let addr = word.split(['/', ':']).next().unwrap();
            if addr.parse::<std::net::Ipv4Addr>().is_ok() {
                assert!(["192.168.1.10", "192.168.1.20", "192.168.1.0"].contains(&addr), "{b:?}: {word}");
            }
        }
        for dev in text.split('"').skip(1).step_by(2).filter(|w| !w.contains(' ')) {
            assert!(["br-lan", "eth0.2"].contains(&dev), "{b:?}: {dev}");
        }
    }
}

#[test]
fn a_saved_rule_set_without_its_final_newline_is_completed_on_a_line_of_its_own() {
    // Fuzz regression (tests/fuzz/regressions/tool_output): the empty
    // *raw table was glued to the dump's last line, "COMMIT*raw".
    let mut out = String::new();
    crate::firewall::load::complete("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT", "*filter\n*raw\n", &mut out);
    assert!(out.starts_with("*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n*raw\n"), "{out}");
}

/// Every golden rule set, as the nftables goldens have them.
fn golden_rule_sets() -> Vec<(String, rules::Ruleset)> {
    let mut all = Vec::new();
    for (name, section) in PROFILES {
        all.push((name.to_string(), rules::build(&model::from_profile(&profile(section)))));
    }
    let lan = model::from_profile(&profile("")).lan_ifaces;
    all.push(("fallback".into(), rules::fallback(&lan)));
    all.push(("emergency".into(), rules::emergency()));
    all
}

/// The netlink emitter's batch for every golden rule set, in both byte
/// orders: the exact bytes, every message and expression kind nasboot
/// sends. The little-endian file was checked against nft 1.0.6's own
/// batch for the same `nft -f` files (`nft --debug=mnl`): identical
/// payloads. Regenerated with NASBOOT_BLESS=1 like the others.
#[test]
fn netlink_goldens_in_both_byte_orders() {
    use crate::sys::nftnl::Order;
    for (file, order) in [("netlink-le.txt", Order::Little), ("netlink-be.txt", Order::Big)] {
        let mut text = String::new();
        for (name, rs) in golden_rule_sets() {
            text.push_str(&format!("== {name}\n"));
            let bytes = netlink::encode(&rs, order, 0).sent.bytes;
            crate::sys::nftnl::check_batch(&bytes, order).unwrap_or_else(|_| panic!("{name}: the batch does not read back whole"));
            text.push_str(&batch_text(&bytes, order));
        }
        check_golden(file, &text);
    }
}

/// Every golden rule set's batch fits the room a batch starts with: the
/// writer never regrows its buffer on the way.
#[test]
fn a_router_batch_fits_its_room() {
    for (name, rs) in golden_rule_sets() {
        let len = netlink::encode(&rs, crate::sys::nftnl::Order::HOST, 0).sent.bytes.len();
        assert!(len <= crate::sys::nftnl::BATCH_ROOM, "{name}: {len} bytes");
    }
}

/// A board whose kernel takes nf_tables over netlink (the fake models its
/// tables and its all-or-nothing commit), with no nft binary at all.
fn native_board() -> FakeBoard {
    let mut b = board();
    b.nft.refused = None;
    b.runner.programs.remove("nft");
    b.sysctl.values.insert("net.ipv4.ip_forward".into(), "0".into());
    b.sysctl.values.insert("net.ipv6.conf.all.forwarding".into(), "0".into());
    b
}

/// The fake's tables as a kernel's dump would show them: the sets ids of
/// the batch gone (the kernel keeps none), the sets and their elements in
/// any order, the chains and the rules in theirs.
/// A table and its objects, (NFT_MSG_NEW*, attributes) each.
type Dumped = Vec<(crate::seam::nftables::TableId, Vec<(u8, Vec<u8>)>)>;

fn as_dumped(b: &FakeBoard) -> Dumped {
    use crate::sys::nftnl::{each_attr, Order, NFTA_SET_ELEM_LIST_SET_ID, NFTA_SET_ID, NFT_MSG_NEWSET, NFT_MSG_NEWSETELEM};
    let strip = |kind: u8, attrs: &[u8]| {
        let drop = match kind {
            NFT_MSG_NEWSET => NFTA_SET_ID,
            NFT_MSG_NEWSETELEM => NFTA_SET_ELEM_LIST_SET_ID,
            _ => return attrs.to_vec(),
        };
        let mut out = Vec::new();
        let mut at = 0;
        each_attr(attrs, Order::HOST, &mut |k, v| {
            let rec = (4 + v.len() + 3) & !3;
            if k != drop {
                out.extend_from_slice(&attrs[at..(at + rec).min(attrs.len())]);
            }
            at += rec;
            Ok(())
        })
        .unwrap();
        out
    };
    b.nft
        .tables
        .iter()
        .map(|(t, objs)| {
            let mut sets: Vec<(u8, Vec<u8>)> =
                objs.iter().filter(|(k, _)| matches!(*k, NFT_MSG_NEWSET | NFT_MSG_NEWSETELEM)).map(|(k, a)| (*k, strip(*k, a))).collect();
            sets.sort();
            let mut rest: Vec<(u8, Vec<u8>)> =
                objs.iter().filter(|(k, _)| !matches!(*k, NFT_MSG_NEWSET | NFT_MSG_NEWSETELEM)).cloned().collect();
            rest.extend(sets);
            (t.clone(), rest)
        })
        .collect()
}

#[test]
fn netlink_loads_one_batch_and_replaces_only_nasboots_tables() {
    let mut b = native_board();
    b.netif.add("eth0", 2);
    b.netif.add("eth1", 3);
    let other = (crate::sys::nftnl::NFPROTO_INET, "fw4".to_string());
    b.nft.tables.insert(other.clone(), vec![(crate::sys::nftnl::NFT_MSG_NEWCHAIN, vec![1, 2, 3, 4])]);
    let a = plan_on(&mut b, "forward = true");
    assert!(a.to_string().contains(" through netlink"), "{a}");
    super::apply(&a, &mut b.seams()).unwrap();
    assert_eq!(b.effects(), ["nf_tables commit 48 messages", "sysctl net.ipv4.ip_forward=1", "sysctl net.ipv6.conf.all.forwarding=1"]);
    let tables: Vec<_> = b.nft.tables.keys().map(|(f, n)| (*f, n.as_str())).collect();
    assert_eq!(tables, [(1, "fw4"), (1, "nasboot"), (2, "nasboot_nat")]);
    assert_eq!(b.nft.tables[&other], [(crate::sys::nftnl::NFT_MSG_NEWCHAIN, vec![1, 2, 3, 4])], "another table is left alone");
    // The batch is the emitter's, byte for byte, sealed with the
    // generation its commit made.
    let Action::Load { rules, .. } = &a;
    let Native::Rules(rs) = &rules.native else { panic!("no rules") };
    let mut enc = netlink::encode(rs, crate::sys::nftnl::Order::HOST, 1);
    enc.seal(1);
    assert_eq!(b.nft.batches[0], enc.sent.bytes);
    assert_eq!(b.nft.generation, 1);
}

#[test]
fn a_kernel_without_the_flowtable_gets_the_rule_set_without_it() {
    // --root: the modules cannot be asked, so the flowtable is tried.
    let mut b = native_board();
    b.netif.add("eth0.2", 5);
    b.netif.add("br-lan", 6);
    b.files.relocated = true;
    b.nft.missing_expr = Some(("flow_offload", nix::libc::ENOENT));
    let p = profile(ROUTER);
    let now = observe(&p, None, &mut b.seams());
    assert_eq!(now.flowtable, None);
    let a = plan(&p, &now).remove(0);
    let Action::Load { instead, .. } = &a;
    assert!(instead.as_ref().is_some_and(|i| !i.rules.text.contains("flowtable")));
    super::apply(&a, &mut b.seams()).unwrap();
    assert_eq!(
        b.effects(),
        [
            "nf_tables commit 54 messages",
            "nf_tables commit 50 messages",
            "sysctl net.ipv4.ip_forward=1",
            "sysctl net.ipv6.conf.all.forwarding=1"
        ]
    );
    assert!(b.nft.tables.contains_key(&(crate::sys::nftnl::NFPROTO_IPV4, "nasboot_nat".into())));
}

#[test]
fn an_unconfirmed_netlink_apply_puts_back_what_was_loaded() {
    let mut b = native_board();
    // What an earlier apply loaded: the stateful profile.
    let before = plan_on(&mut b, "profile = \"stateful\"\nwan_services = [\"https\"]");
    super::apply(&before, &mut b.seams()).unwrap();
    let loaded = as_dumped(&b);
    let Action::Load { rules, fallback_lan, .. } = plan_on(&mut b, "forward = true");
    let e = load::load_confirmed(
        &rules,
        None,
        fallback_lan.as_ref(),
        &Confirm { seconds: 1, token: "tok" },
        &mut b.seams(),
        &mut |_| {},
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(e, Error::NotConfirmed { seconds: 1 }), "{e}");
    // The dump replayed: every table holds again exactly what it held.
    assert!(as_dumped(&b) == loaded, "the tables differ after the rollback");
    let record = String::from_utf8_lossy(&b.files.files[Path::new(crate::paths::FIREWALL_PREVIOUS)]).into_owned();
    assert!(record.starts_with("# nasboot: the rule set before, saved through netlink ("), "{record}");
    assert_eq!(b.effects().iter().filter(|e| e.starts_with("nf_tables commit")).count(), 3, "{:?}", b.effects());
}

/// Apply `section` on `b`, through netlink; then what a second plan wants.
fn apply_then_plan(b: &mut FakeBoard, section: &str) -> Vec<Action> {
    let a = plan_on(b, section);
    super::apply(&a, &mut b.seams()).unwrap();
    let p = profile(section);
    let now = observe(&p, None, &mut b.seams());
    plan(&p, &now)
}

#[test]
fn the_rule_set_nasboot_loaded_and_nobody_touched_is_not_loaded_again() {
    for section in ["hook = \"input\"\nwan_services = [\"ssh\"]", "hook = \"ingress\"", "profile = \"stateful\""] {
        let mut b = native_board();
        assert_eq!(apply_then_plan(&mut b, section), [], "{section}");
        assert_eq!(b.nft.batches.len(), 1, "{section}");
    }
}

#[test]
fn a_commit_since_another_rule_set_a_lost_hook_device_or_no_seal_loads_again() {
    let ingress = "hook = \"ingress\"";
    let wan_chain = |b: &FakeBoard| {
        b.nft.tables[&(crate::sys::nftnl::NFPROTO_INET, "nasboot".to_string())]
            .iter()
            .position(|(k, a)| {
                let mut devs = 0;
                seal::hooked(*k, a, crate::sys::nftnl::Order::HOST, &mut devs);
                devs == seal::hook_device("nasboot", "wan_in0", "eth0")
            })
            .expect("the WAN's ingress chain")
    };
    // Anything committed since (another table, an element added to
    // nasboot's set, a policy changed): the generation moved on.
    let mut b = native_board();
    assert_eq!(apply_then_plan(&mut b, ingress), []);
    b.nft.generation += 1;
    let p = profile(ingress);
    assert_eq!(plan(&p, &observe(&p, None, &mut b.seams())).len(), 1);
    // Another rule set.
    let mut b = native_board();
    assert_eq!(apply_then_plan(&mut b, ingress), []);
    let p = profile("hook = \"ingress\"\nwan_services = [\"ssh\"]");
    assert_eq!(plan(&p, &observe(&p, None, &mut b.seams())).len(), 1);
    // The WAN device went away: Linux 6.1 deletes a chain with its last
    // device, without a commit.
    let mut b = native_board();
    assert_eq!(apply_then_plan(&mut b, ingress), []);
    let at = wan_chain(&b);
    b.nft.tables.get_mut(&(crate::sys::nftnl::NFPROTO_INET, "nasboot".to_string())).unwrap().remove(at);
    let p = profile(ingress);
    assert_eq!(plan(&p, &observe(&p, None, &mut b.seams())).len(), 1);
    // A table without nasboot's seal (loaded by nft, or by an older
    // nasboot), or with a damaged one.
    for udata in [&[][..], &[b'n', 3, 1, 2, 3][..], &[b'n', 200][..]] {
        let mut b = native_board();
        assert_eq!(apply_then_plan(&mut b, ingress), []);
        let id = (crate::sys::nftnl::NFPROTO_INET, "nasboot".to_string());
        let mut w = crate::sys::nftnl::Writer::new(crate::sys::nftnl::Order::HOST, 1);
        w.msg(crate::sys::nftnl::NFT_MSG_NEWTABLE, 1, 0);
        w.put_str(crate::sys::nftnl::NFTA_TABLE_NAME, "nasboot");
        if !udata.is_empty() {
            w.put(crate::sys::nftnl::NFTA_TABLE_USERDATA, udata);
        }
        let msg = w.finish().bytes;
        b.nft.table_attrs.insert(id, msg[crate::sys::nftnl::NLMSG_HDRLEN + crate::sys::nftnl::NFGENMSG_LEN..].to_vec());
        let p = profile(ingress);
        assert_eq!(plan(&p, &observe(&p, None, &mut b.seams())).len(), 1, "{udata:?}");
    }
    // With a router's forwarding turned off meanwhile: the load, then the
    // sysctls (they come with the load).
    let mut b = router_board(true);
    b.nft.refused = None;
    assert_eq!(apply_then_plan(&mut b, ROUTER), []);
    b.sysctl.values.insert("net.ipv4.ip_forward".into(), "0".into());
    let p = profile(ROUTER);
    let Action::Load { then, .. } = plan(&p, &observe(&p, None, &mut b.seams())).remove(0);
    assert_eq!(then.len(), 1);
}

/// The hook devices the encoder sums as it writes the chains and the
/// flowtable are those its messages carry, read as a dump of the loaded
/// tables is read: the ingress chains' and the flowtable's, each once.
#[test]
fn the_hook_devices_summed_while_encoding_are_those_sent() {
    for (name, section) in PROFILES {
        let rs = rules::build(&model::from_profile(&profile(section)));
        for order in [crate::sys::nftnl::Order::Little, crate::sys::nftnl::Order::Big] {
            let e = netlink::encode(&rs, order, 1);
            assert_eq!(e.hook_devices(), e.hook_devices_sent(order), "{name}");
            let hooked = name.starts_with("ingress") || *name == "forward" || *name == "router";
            assert_eq!(e.hook_devices() != 0, hooked, "{name}");
        }
    }
}

#[test]
fn the_seal_is_the_digest_without_sequence_numbers_and_the_next_generation() {
    let rs = rules::build(&model::from_profile(&profile("forward = true")));
    for order in [crate::sys::nftnl::Order::Little, crate::sys::nftnl::Order::Big] {
        let (a, mut b) = (netlink::encode(&rs, order, 1), netlink::encode(&rs, order, 4000));
        assert_ne!(a.sent.bytes, b.sent.bytes);
        assert_eq!(a.digest(), b.digest(), "the sequence numbers are left out");
        b.seal(7);
        let mut seals = Vec::new();
        crate::sys::nftnl::messages(&b.sent, order, &mut |kind, attrs| {
            if let (crate::sys::nftnl::NFT_MSG_NEWTABLE, Some(u)) =
                (kind, crate::sys::nftnl::find(attrs, order, crate::sys::nftnl::NFTA_TABLE_USERDATA))
            {
                seals.push(seal::Seal::read(u));
            }
        });
        let hook_devices = a.hook_devices();
        assert_eq!(seals, [Some(seal::Seal { digest: a.digest(), generation: 7, hook_devices })], "in the first table only");
        let ft = |dev| seal::hook_device("nasboot", "ft", dev);
        assert_eq!(a.hook_devices(), ft("eth0").wrapping_add(ft("eth1")));
        assert_eq!(a.hook_devices_sent(order), a.hook_devices(), "as a dump of the loaded tables reads them");
        assert_ne!(ft("eth0"), ft("eth1"));
    }
    let other =
        netlink::encode(&rules::build(&model::from_profile(&profile("forward = true\nlog_rate = 30"))), crate::sys::nftnl::Order::HOST, 1);
    assert_ne!(other.digest(), netlink::encode(&rs, crate::sys::nftnl::Order::HOST, 1).digest());
}
