//! The entry points of the fuzz targets (tests/fuzz, cargo-fuzz), built
//! only with the `fuzz` feature. Each function takes the fuzzer's bytes,
//! runs one parser or planner on them and panics when an invariant
//! breaks; a panic is what libFuzzer reports as a crash (and what the
//! boards' `panic = "abort"` turns into a board that did not come up).
//!
//! This is the only door the fuzz crate has into the library: the modules
//! stay `pub(crate)`. The targets and what each asserts beyond "no panic":
//!
//! - [`profile`]: the profile parser on arbitrary bytes; every error
//!   names the file, a line and column >= 1 within the text, a key and a
//!   message.
//! - [`toml`]: the profile's TOML parser (`config::document`) against the
//!   toml crate on the same text: both accept with the same tree, every
//!   value's kind, value and span and every key's span the same, or both
//!   refuse (ours may also refuse nesting deeper than its limit); an error
//!   is placed within the text.
//! - [`plan`]: a profile that parses is observed on a fake board (every
//!   interface it names present, both firewall tools, nf_tables through
//!   netlink or the nft tool, IPv6, Linux 6.1 or 4.19) and planned; the
//!   plan and every file it renders are formatted.
//!   Every rule set names no interface, port or address the profile did
//!   not name (`rule_set_names_only_the_profile`); every export path
//!   escapes and unescapes to itself; the board files nasboot rewrites
//!   converge (rewriting the result changes nothing).
//! - [`export_path`]: escape then unescape is the identity, and the
//!   escaped form is one whitespace-free token.
//! - [`proc_files`]: /proc/PID/stat's state, /proc/meminfo (MemTotal and
//!   MemAvailable), /proc/loadavg, the online CPU list,
//!   /proc/net/{tcp,udp}[6] listeners, ip_tables_names, the kernel
//!   release. The first byte picks the parser.
//! - [`history`]: the reset-history file; parse, render and parse again
//!   gives the same history.
//! - [`board_configs`]: the files nasboot rewrites in place
//!   (/etc/default/nfs-kernel-server, /etc/nfs.conf, smb.conf's include
//!   test): a rewrite of a rewrite is the rewrite (the next apply
//!   converges), and the keys nasboot sets are in it.
//! - [`tool_output`]: `iptables-save` output completed for a rollback,
//!   `exportfs` error output.
//! - [`netlink`]: one datagram of rtnetlink replies walked, each message
//!   read as an address, a route and a qdisc, class or filter (SQM); the
//!   prefixes fit their family.
//! - [`nf_tables`]: one datagram of nf_tables replies (acks, errors with
//!   and without the extended ack, dumps), in both byte orders: read as
//!   the answer to a batch, where an error counts only for the batch's
//!   numbers and never reads as success, and anything else is malformed;
//!   every dumped object replayed, and the replayed message walks whole;
//!   an extended ack's offset looked up in the datagram.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::net::IpAddr;

use crate::config::{self, Profile};
use crate::firewall::{self, model, Backend};
use crate::seam::fake::FakeBoard;
use crate::seam::netif::ARPHRD_ETHER;

/// The file name the fuzzed profile is given.
pub const FILE: &str = "fuzz.toml";

/// The profile parser on arbitrary bytes.
pub fn profile(data: &[u8]) {
    match config::parse_bytes(FILE, data) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                let _ = w.to_string();
            }
        }
        Err(e) => check_error(&e, data),
    }
}

fn check_error(e: &config::ConfigError, data: &[u8]) {
    let lines = data.iter().filter(|b| **b == b'\n').count() + 1;
    assert_eq!(e.file, FILE, "error names another file: {e}");
    assert!(e.line >= 1 && e.line <= lines, "line {} outside 1..={lines}: {e}", e.line);
    assert!(e.column >= 1, "column 0: {e}");
    assert!(!e.key.is_empty(), "error names no key: {e}");
    assert!(!e.message.trim().is_empty(), "error without a message: {e}");
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("{FILE}:{}:", e.line)), "shown as {shown:?}");
}

/// The profile's TOML parser against the toml crate.
pub fn toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(d) = config::document::reference::differ(text) {
        panic!("the parsers differ on {text:?}: {d}");
    }
    if let Err(e) = config::document::parse(text) {
        assert!(e.at <= text.len(), "error past the end: {e:?}");
        assert!(!e.message.is_empty(), "error without a message");
    }
}

/// Parse, observe on fake boards, plan, render, and check the rule sets.
pub fn plan(data: &[u8]) {
    let Ok(loaded) = config::parse_bytes(FILE, data) else { return };
    let p = &loaded.profile;
    let text = String::from_utf8_lossy(data);
    for (nft, iptables, kernel) in [(true, true, "6.1.0"), (false, true, "4.19.0"), (true, false, "5.4.0"), (false, false, "6.1.0")] {
        let mut board = FakeBoard::new();
        for (i, iface) in p.interface.iter().enumerate() {
            board.netif.add(iface.name.get_ref().as_str(), i as u32 + 2);
        }
        board.netif.add("lo", 1).state.hwtype = crate::seam::netif::ARPHRD_LOOPBACK;
        if nft {
            board.runner.programs.insert("nft".into());
            // With nft, the socket refused (qemu-user): the tool path.
            board.nft.refused = Some(nix::libc::EPROTONOSUPPORT);
        }
        if iptables {
            board.runner.programs.insert("iptables-restore".into());
        }
        board.sysctl.values.insert("kernel.osrelease".into(), kernel.into());
        board.sysctl.values.insert("net.ipv6.conf.all.disable_ipv6".into(), "0".into());
        board.files.files.insert(crate::paths::PROC_MEMINFO.into(), b"MemTotal: 61412 kB\n".to_vec());
        let now = crate::plan::observe(p, &mut board.seams());
        let planned = crate::plan::plan(p, &now);
        let mut shown = String::new();
        write!(shown, "{planned}").expect("formatting a plan");
        for a in &planned.actions {
            if let crate::plan::Action::Firewall(f) = a {
                let firewall::Action::Load { rules, instead, .. } = &**f;
                rule_set_names_only_the_profile(p, &text, rules);
                if let Some(i) = instead {
                    rule_set_names_only_the_profile(p, &text, &i.rules);
                }
            }
        }
    }
    // Both backends and both hooks, whatever the board would choose.
    let mut m = model::from_profile(p);
    for ingress in [false, true] {
        m.ingress = ingress;
        for backend in [Backend::Nftables, Backend::Iptables] {
            let now = firewall::Observed { ipv6: true, ..firewall::Observed::default() };
            rule_set_names_only_the_profile(p, &text, &firewall::render(&m, backend, &now));
            rule_set_names_only_the_profile(p, &text, &firewall::fallback(&m.lan_ifaces, backend, firewall::Via::Netlink));
        }
    }
    for e in &p.nfs.export {
        export_path(e.path.get_ref().as_str().as_bytes());
    }
    let _ = crate::share::exports::render(p, false);
    let _ = crate::share::exports::render(p, true);
    if let Some(s) = &p.samba {
        let _ = crate::share::samba::render(p, s);
    }
    let _ = crate::sysctl::global::wanted(p);
    for iface in p.interface.iter() {
        let _ = crate::sysctl::interface::wanted(iface);
    }
}

/// The interfaces, ports and addresses a rule set names must all be named
/// by the profile (or be the renderer's fixed ones: loopback, the reply
/// ports of DNS, NTP, DHCP and DHCPv6, the ephemeral port range).
/// Panics naming the stray token.
pub(crate) fn rule_set_names_only_the_profile(p: &Profile, source: &str, rules: &firewall::Loadable) {
    let mut ifaces: BTreeSet<String> = p.interface.iter().map(|i| i.name.get_ref().to_string()).collect();
    ifaces.insert("lo".into());
    let fw = &p.firewall;
    let mut ports: BTreeSet<u16> = [53, 67, 68, 123, 546, 547].into_iter().collect();
    ports.extend([fw.local_port_range.lo(), fw.local_port_range.hi()]);
    for s in fw.lan_services.iter().chain(&fw.wan_services) {
        let (t, u) = model::service_ports(*s);
        ports.extend(t.iter().chain(u));
        if *s == config::firewall::Service::Nfs {
            ports.extend([fw.mountd_port.get(), fw.statd_port.get(), fw.lockd_port.get()]);
        }
    }
    for l in [&fw.lan_tcp_ports, &fw.lan_udp_ports, &fw.wan_tcp_ports, &fw.wan_udp_ports] {
        ports.extend(l.iter().map(|p| p.get()));
    }
    for f in &fw.port_forward {
        ports.extend([f.wan_port.get_ref().get(), f.to.get_ref().port.get()]);
    }
    let bad_iface = |name: &str| assert!(ifaces.contains(name), "rule set names interface {name:?}, not in the profile:\n{}", rules.text);
    let bad_port = |tok: &str| {
        for n in tok.split([',', '-', ':', '{', '}', ' ']).filter(|s| !s.is_empty()) {
            if let Ok(n) = n.parse::<u16>() {
                assert!(ports.contains(&n), "rule set names port {n}, not in the profile:\n{}", rules.text);
            }
        }
    };
    for line in rules.text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        if rules.backend == Backend::Nftables {
            // Interface names are the quoted strings (a log prefix is
            // quoted too, and starts with "nasboot-").
            for name in line.split('"').skip(1).step_by(2).filter(|q| !q.starts_with("nasboot-")) {
                bad_iface(name);
            }
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let next = words.get(i + 1).copied().unwrap_or("");
            match rules.backend {
                Backend::Nftables => {
                    if *w == "iif" || *w == "oif" {
                        bad_iface(next);
                    }
                    if *w == "dport" || *w == "sport" {
                        // A number, a range, or `{ a, b }` to the next `}`.
                        let rest: String = if next == "{" {
                            words[i + 1..].iter().take_while(|t| **t != "}").copied().collect::<Vec<_>>().join(" ")
                        } else {
                            next.into()
                        };
                        bad_port(&rest);
                    }
                    if *w == "elements" && line.contains("{") {
                        bad_port(line.split_once('{').map_or("", |(_, r)| r));
                    }
                }
                Backend::Iptables => {
                    if *w == "-i" || *w == "-o" {
                        bad_iface(next);
                    }
                    if matches!(*w, "--dport" | "--sport" | "--dports" | "--sports") {
                        bad_port(next);
                    }
                }
            }
            // An address literal anywhere must be written in the profile.
            let bare = w.trim_matches(|c: char| c == ',' || c == '{' || c == '}' || c == ';');
            let addr = bare.split('/').next().unwrap_or(bare);
            if let Some(ip) = addr.contains(['.', ':']).then(|| addr.parse::<IpAddr>().ok()).flatten() {
                // Or the network of an address it names (a port forward's
                // LAN network, for NAT reflection).
                let network = p.interface.iter().flat_map(|i| &i.address).any(|a| a.get_ref().network() == ip);
                assert!(source.contains(addr) || network, "rule set names address {addr}, not in the profile:\n{}", rules.text);
            }
        }
    }
}

/// Escape then unescape an export path.
pub fn export_path(data: &[u8]) {
    let Ok(path) = std::str::from_utf8(data) else { return };
    let escaped = crate::share::exports::escape_path(path);
    // nfs-utils splits tokens with isspace() on bytes (C locale): ASCII
    // whitespace only; a UTF-8 space such as U+2009 is part of the token.
    assert!(!escaped.bytes().any(|b| b.is_ascii_whitespace() || b == 0x0b), "escaped {path:?} as {escaped:?}, not one token");
    assert_eq!(crate::share::exports::unescape(&escaped), path.as_bytes(), "{path:?} escaped as {escaped:?}");
}

/// The /proc and /sys files nasboot parses; the first byte picks one.
pub fn proc_files(data: &[u8]) {
    let Some((which, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    match which % 8 {
        0 => {
            // A DHCP client's /proc/PID/stat: "PID (COMM) STATE ...".
            let _ = crate::sys::proc_stat_runs(rest);
        }
        1 => {
            if let Some(kib) = crate::share::nfsd::parse_meminfo(&text) {
                let threads = crate::share::nfsd::default_threads(kib, 1, None);
                assert!(threads >= 1, "{threads} threads for {kib} KiB");
                let _ = crate::share::nfsd::kernel_default_max_block(kib);
            }
        }
        2 => {
            let _ = crate::watchdog::health::mem_available(&text);
        }
        3 => {
            let _ = crate::watchdog::health::load_averages(&text);
        }
        4 => {
            if let Some(n) = crate::share::nfsd::parse_cpu_list(&text) {
                let _ = crate::share::nfsd::default_threads(61412, n, None);
            }
        }
        5 | 6 => {
            use crate::firewall::listeners::{parse, Proto};
            let proto = if *which % 8 == 5 { Proto::Tcp } else { Proto::Udp };
            let range = config::types::PortRange::LINUX_DEFAULT;
            for l in parse(&text, proto, "0A", range) {
                assert!(range.contains(l.port), "{l:?} outside {range:?}");
                assert!(!l.addr.is_loopback(), "{l:?} is loopback");
            }
        }
        _ => {
            let _ = crate::firewall::iptables::Leftovers::from_names(&text);
            let _ = crate::firewall::backend::kernel_version(&text);
        }
    }
}

/// The reset-history file.
pub fn history(data: &[u8]) {
    use crate::watchdog::history::History;
    let h = History::parse(&String::from_utf8_lossy(data));
    let again = History::parse(&h.render());
    assert_eq!(h, again, "render of {h:?} reads back differently");
    let _ = h.recent_resets(u64::MAX, u32::MAX);
    let _ = h.recent_resets(0, 0);
}

/// The board files nasboot rewrites in place: rewriting converges.
pub fn board_configs(data: &[u8]) {
    use crate::share::distro;
    let Some((&sel, rest)) = data.split_first() else { return };
    let old = String::from_utf8_lossy(rest);
    let s = distro::Settings {
        threads: u16::from(sel) + 1,
        versions: (sel & 1 == 1).then(|| vec![config::nfs::NfsVersion::V3, config::nfs::NfsVersion::V4_2]),
        mountd_port: 4002,
        statd_port: 4003,
        lockd_port: 4001,
    };
    let once = distro::default_file(&old, &s);
    assert_eq!(distro::default_file(&once, &s), once, "/etc/default rewrite does not converge from {old:?}");
    let once = distro::nfs_conf_in_place(&old, &s);
    assert_eq!(distro::nfs_conf_in_place(&once, &s), once, "nfs.conf rewrite does not converge from {old:?}");
    let _ = crate::share::samba::includes_us(&old);
}

/// Output of the tools nasboot reads back.
pub fn tool_output(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut out = String::new();
    crate::firewall::load::complete(&text, "*filter\n*raw\n*nat\n", &mut out);
    assert!(out.starts_with(text.as_ref()), "the saved rule set is not kept whole");
    for t in ["*filter", "*raw", "*nat"] {
        assert!(out.lines().any(|l| l.trim_end() == t), "rollback lacks {t}");
    }
    for e in crate::share::exports::parse_exportfs_stderr(&text) {
        let _ = format!("{e:?}");
    }
}

/// One datagram of rtnetlink replies.
pub fn netlink(data: &[u8]) {
    use crate::seam::real::netlink::{address, route, walk};
    let seq = data.get(8..12).map_or(0, |b| u32::from_ne_bytes(b.try_into().expect("4 bytes")));
    let _ = walk(data, seq, &mut |_, payload| {
        for index in [0, 1, 2] {
            if let Some(net) = address(payload, index) {
                assert!(net.prefix <= if net.is_v4() { 32 } else { 128 }, "{net:?}");
                let _ = (net.network(), net.broadcast(), net.contains(net.addr));
            }
        }
        if let Some(r) = route(payload) {
            let _ = (r.dst.network(), r.dst.broadcast());
        }
        // A qdisc, class or filter (SQM's dumps), and its line in `status`.
        for class in [false, true] {
            if let Some(o) = crate::sys::tc::object(payload, class) {
                if let crate::sys::tc::Kind::Cake(c) = o.kind {
                    let _ = crate::seam::netif::Qdisc::Cake(c).to_string();
                }
            }
        }
    });
    let _ = ARPHRD_ETHER;
}

/// One datagram of nf_tables replies.
pub fn nf_tables(data: &[u8]) {
    use crate::sys::nftnl::{self as nl, Answer, Order, Reply, Writer};
    for order in [Order::Little, Order::Big] {
        let seq = data.get(8..12).map_or(0, |b| u32::from_ne_bytes(b.try_into().expect("4 bytes")));
        // The answer to a batch of 40 messages from `seq`, fenced after it.
        let mut a = Answer::new(seq, seq.wrapping_add(40), seq.wrapping_add(41));
        if a.read(data, order).is_ok() {
            if let Some((s, errno, _, _)) = &a.refused {
                assert!(*errno > 0, "errno {errno}");
                assert!(s.wrapping_sub(seq) <= 40, "an error for message {s} outside the batch");
            }
        }
        let _ = nl::replies(data, order, &mut |r| match r {
            Reply::Nft { kind, family, attrs, .. } => {
                let mut w = Writer::batch(order, 1);
                if nl::replay(&mut w, kind, family, attrs, order, 1) {
                    let sent = w.finish_batch();
                    // The replayed message (and the framing) reads back whole.
                    nl::check_batch(&sent.bytes, order).expect("a replayed message walks whole");
                }
                let _ = nl::find(attrs, order, 1).map(nl::str_value);
            }
            Reply::Error { errno, offset, .. } => {
                assert!(errno > 0);
                if let Some(o) = offset {
                    let _ = nl::expr_at(data, o, order);
                }
            }
            Reply::Ack { .. } | Reply::Done { .. } => {}
        });
    }
}
