//! `nasboot firewall render|apply|confirm`.
//!
//! - `render` prints the rule set for the chosen (or `--backend`) backend;
//!   for iptables, the IPv4 file then the IPv6 file.
//! - `apply` checks and loads it alone; `--confirm SECONDS` rolls it back
//!   unless `nasboot firewall confirm` comes in time (see
//!   `firewall::load`).
//! - `confirm` confirms the waiting apply.
//! - `lock-down` loads the emergency rule set without reading the profile,
//!   for boot scripts when `nasboot check` exits 2 (see `firewall`).

use std::time::Duration;

use super::Io;
use crate::cli::{Cli, FirewallCommand};
use crate::exit::Status;
use crate::firewall::{self, load::Confirm, Action};
use crate::seam::Seams;

pub(crate) fn run(cli: &Cli, sub: FirewallCommand, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    if sub == FirewallCommand::Confirm {
        // Confirming needs no profile: it only answers a waiting apply.
        return match firewall::load::confirm(seams) {
            Ok(()) => {
                if cli.verbosity >= 0 {
                    let _ = writeln!(io.out, "firewall: confirmed");
                }
                Status::Ok
            }
            Err(e) => {
                let _ = writeln!(io.err, "nasboot: {e}");
                Status::Failure
            }
        };
    }
    if sub == FirewallCommand::LockDown {
        // For a profile that cannot be read: no profile is loaded at all.
        return match firewall::load::lock_down(seams) {
            Ok(b) => {
                if cli.verbosity >= 0 {
                    let _ = writeln!(io.out, "firewall: locked down ({b}): loopback and replies only");
                }
                Status::Ok
            }
            Err(e) => {
                let _ = writeln!(io.err, "nasboot: {e}");
                Status::Failure
            }
        };
    }
    // Only an apply changes the board; `render` waits for nothing.
    let _lock = (sub == FirewallCommand::Apply).then(|| super::lock(seams, io));
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let mut now = firewall::observe(&loaded.profile, None, seams);
    if sub == FirewallCommand::Render {
        // The rule set is printed whether or not it is loaded already.
        now.loaded = None;
    }
    let actions = firewall::plan(&loaded.profile, &now);
    match sub {
        FirewallCommand::Render => {
            for Action::Load { rules, .. } in &actions {
                let _ = io.out.write_all(rules.text.as_bytes());
            }
            Status::Ok
        }
        FirewallCommand::Apply => {
            // As `apply` says them: a router without its fast path, and why.
            super::say_notes(&firewall::notes(&loaded.profile, &now), io);
            let mut status = Status::Ok;
            for a in &actions {
                let Action::Load { rules, fallback_lan, instead, then } = a;
                // A dry run changes nothing, so there is nothing to confirm.
                let confirm = cli.confirm.filter(|_| !cli.dry_run);
                let result = match confirm {
                    None => firewall::apply(a, seams),
                    Some(seconds) => {
                        let token = token();
                        let c = Confirm { seconds, token: &token };
                        let mut sleep = |d: Duration| std::thread::sleep(d);
                        let mut say = |s: &str| {
                            let _ = writeln!(io.out, "nasboot: {s}");
                            let _ = io.out.flush();
                        };
                        firewall::load::load_confirmed(rules, instead.as_ref(), fallback_lan.as_ref(), &c, seams, &mut sleep, &mut say)
                            .and_then(|()| then.iter().try_for_each(|t| crate::sysctl::apply(t, seams).map_err(Into::into)))
                    }
                };
                match result {
                    Ok(()) => {
                        if cli.verbosity >= 0 {
                            let _ = writeln!(io.out, "firewall: {a}: ok");
                        }
                    }
                    Err(e) => {
                        let _ = writeln!(io.err, "nasboot: {e}");
                        status = status.worst(Status::Failure);
                    }
                }
            }
            status
        }
        FirewallCommand::Confirm | FirewallCommand::LockDown => unreachable!("handled above"),
    }
}

/// A token that tells this apply's confirmation from an earlier one's.
fn token() -> String {
    token_of(std::process::id(), crate::sys::time::wall_clock().unwrap_or_default())
}

/// `PID-NANOS`, the nanoseconds since the epoch as `as_nanos()` prints
/// them, without 128-bit arithmetic (a 32-bit board would link its
/// division and printing): the seconds, then 9 digits.
fn token_of(pid: u32, since: std::time::Duration) -> String {
    match since.as_secs() {
        0 => format!("{pid}-{}", since.subsec_nanos()),
        secs => format!("{pid}-{secs}{:09}", since.subsec_nanos()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn token_prints_the_nanoseconds_as_as_nanos_did() {
        use std::time::Duration;
        for d in [Duration::ZERO, Duration::from_nanos(7), Duration::new(1, 5), Duration::new(1_764_662_400, 123_456_789), Duration::MAX] {
            assert_eq!(super::token_of(42, d), format!("42-{}", d.as_nanos()), "{d:?}");
        }
    }

    use crate::cmd::tests::run_on;
    use crate::exit::Status;
    use crate::seam::fake::FakeBoard;
    use crate::seam::Output;

    const PROFILE: &str =
        "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\nrole = \"wan\"\n[[interface]]\nname = \"eth1\"\nrole = \"lan\"\n";

    fn board(profile: &str) -> FakeBoard {
        let mut b = FakeBoard::new();
        b.files.files.insert("/etc/nasboot.toml".into(), profile.as_bytes().to_vec());
        for p in ["nft", "iptables-restore", "ip6tables-restore"] {
            b.runner.programs.insert(p.to_string());
        }
        b.sysctl.values.insert("kernel.osrelease".into(), "6.1.0\n".into());
        b
    }

    #[test]
    fn render_prints_the_forced_backend_and_changes_nothing() {
        let mut b = board(PROFILE);
        let (status, out, _) = run_on(&mut b, &["firewall", "render", "--backend", "iptables"]);
        assert_eq!(status, Status::Ok);
        assert!(out.starts_with("# nasboot firewall: profile stateless (iptables-restore --noflush, IPv4)\n*filter\n"), "{out}");
        assert!(out.contains("-A INPUT -i eth1 -j ACCEPT\n"), "{out}");
        // The kernel's tables were read through netlink: no process at all.
        assert_eq!(b.effects(), Vec::<String>::new(), "observing only");
        let (_, out, _) = run_on(&mut b, &["firewall", "render"]);
        assert!(out.contains("iifname \"eth1\" accept\n\t\tiif lo accept\n\t\tiifname vmap { \"eth0\" : jump wan }"), "{out}");
    }

    #[test]
    fn apply_loads_one_batch_through_netlink() {
        let mut b = board(PROFILE);
        b.runner.programs.remove("nft");
        let (status, out, err) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(status, Status::Ok, "{err}");
        assert_eq!(out, "firewall: load the nftables rule set (28 lines) through netlink: ok\n");
        assert_eq!(b.effects(), ["nf_tables commit 28 messages"]);
    }

    /// A kernel whose netfilter is modules, none loaded: the apply names
    /// the rule set's modules to the kernel's modprobe, once, before the
    /// batch. What this does not cover: modprobe itself (dependencies,
    /// modprobe.d) and the kernel's loads, which the fake does not model
    /// (tests/firewall/board-vlan.sh and `scripts/bench-fwload --cold`
    /// run both on the emulated board's modules).
    fn cold(profile: &str) -> FakeBoard {
        let mut b = board(profile);
        b.runner.programs.remove("nft");
        b.runner.programs.insert("/sbin/modprobe".to_string());
        b.files.files.insert("/proc/modules".into(), b"e1000 163840 0 - Live 0x00000000\n".to_vec());
        b.sysctl.values.insert("kernel.modprobe".into(), "/sbin/modprobe\n".into());
        b.files.files.insert("/lib/modules/6.1.0".into(), Vec::new());
        b.files.files.insert("/lib/modules/6.1.0/modules.builtin".into(), b"kernel/net/netfilter/x_tables.ko\n".to_vec());
        b
    }

    #[test]
    fn a_cold_kernel_gets_the_rule_sets_modules_from_one_modprobe_before_the_batch() {
        let mut b = cold(PROFILE);
        let (status, _, err) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(status, Status::Ok, "{err}");
        // The stateless rule set: its log rule's limit, log and logger.
        assert_eq!(b.effects(), ["run /sbin/modprobe -a -q -- nf_tables nft_limit nf_log_syslog nft_log", "nf_tables commit 28 messages"]);

        // The router's: conntrack, fib, masquerade, the flowtable.
        let effects = apply_router(&mut cold_router());
        assert_eq!(effects[0], ROUTER_MODPROBE, "{effects:?}");
        assert!(effects[1].starts_with("nf_tables commit "), "{effects:?}");
    }

    /// The router profile on a cold kernel: the flowtable's and NAT's
    /// modules installed, not loaded.
    fn cold_router() -> FakeBoard {
        let mut b = cold(&format!("{PROFILE}[firewall]\nprofile = \"stateful\"\nforward = true\n"));
        for m in ["nft_flow_offload", "nf_nat"] {
            b.files.files.insert(format!("/lib/modules/6.1.0/kernel/net/netfilter/{m}.ko").into(), Vec::new());
        }
        b.sysctl.values.insert("net.ipv4.ip_forward".into(), "0\n".into());
        b.netif.add("eth0", 2);
        b.netif.add("eth1", 3);
        b
    }

    /// `firewall apply` that succeeds, and what it did.
    fn apply_router(b: &mut FakeBoard) -> Vec<String> {
        let (status, _, err) = run_on(b, &["firewall", "apply"]);
        assert_eq!(status, Status::Ok, "{err}");
        b.effects()
    }

    /// Every module of the router's rule set (no port forward: no nft_nat).
    const ROUTER_MODPROBE: &str = "run /sbin/modprobe -a -q -- nf_tables nft_limit nf_log_syslog nft_log nft_ct nft_fib_inet \
                                   nft_masq nft_chain_nat nf_flow_table_inet nft_flow_offload";

    #[test]
    fn a_warm_kernel_or_one_without_modules_gets_no_modprobe() {
        // The logging rule's last module loaded (the stateless rule set's
        // only kind): one stat, no process.
        let mut b = cold(PROFILE);
        b.files.files.insert("/sys/module/nft_log".into(), Vec::new());
        let (status, _, err) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(status, Status::Ok, "{err}");
        assert_eq!(b.effects(), ["nf_tables commit 28 messages"]);
        // No modules at all (the built big-endian boards' kernels).
        let mut b = cold(PROFILE);
        b.files.files.remove(std::path::Path::new("/proc/modules"));
        run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(b.effects(), ["nf_tables commit 28 messages"]);
        // Built in, every one of them.
        let mut b = cold(PROFILE);
        let builtin = "kernel/net/netfilter/nf_tables.ko\nkernel/net/netfilter/nft_limit.ko\nkernel/net/netfilter/nft_log.ko\n\
                       kernel/net/netfilter/nf_log_syslog.ko\n";
        b.files.files.insert("/lib/modules/6.1.0/modules.builtin".into(), builtin.as_bytes().to_vec());
        run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(b.effects(), ["nf_tables commit 28 messages"]);
        // The module loader off (`kernel.modprobe` empty).
        let mut b = cold(PROFILE);
        b.sysctl.values.insert("kernel.modprobe".into(), "\n".into());
        run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(b.effects(), ["nf_tables commit 28 messages"]);
    }

    #[test]
    fn one_kind_loaded_alone_does_not_hide_the_others() {
        // The flowtable's loaded at boot (as tests/routerboard.sh does),
        // and the logging rule's by a stateless rule set before: conntrack's
        // and NAT's are missing.
        let mut b = cold_router();
        for m in ["nft_flow_offload", "nft_log"] {
            b.files.files.insert(format!("/sys/module/{m}").into(), Vec::new());
        }
        let effects = apply_router(&mut b);
        assert_eq!(effects[0], ROUTER_MODPROBE, "{effects:?}");
    }

    #[test]
    fn a_modprobe_that_fails_leaves_the_loading_to_the_kernel() {
        let mut b = cold(PROFILE);
        b.runner.answers.push_back(Output { code: Some(1), ..Output::default() });
        let (status, _, err) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(status, Status::Ok, "{err}");
        assert_eq!(b.effects()[1], "nf_tables commit 28 messages");
    }

    #[test]
    fn apply_under_qemu_user_says_it_uses_nft_and_why() {
        let mut b = board(PROFILE);
        b.nft.refused = Some(nix::libc::EPROTONOSUPPORT);
        let (status, out, err) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(status, Status::Ok, "{err}");
        assert_eq!(
            out,
            "firewall: load the nftables rule set (28 lines) with nft: the kernel refused the nf_tables netlink socket \
             (qemu-user, or no nfnetlink): ok\n"
        );
        assert_eq!(b.effects(), ["run nft -f -"]);
    }

    #[test]
    fn a_rule_the_kernel_refuses_is_named_with_its_key_and_the_fallback_loads() {
        let mut b = board(PROFILE);
        b.nft.missing_expr = Some(("log", nix::libc::ENOENT));
        let (status, _, err) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(status, Status::Failure);
        assert_eq!(
            err,
            "nasboot: nf_tables: the kernel refused `limit rate 10/minute burst 5 packets log prefix \"nasboot-wan-drop: \"` in chain wan \
             (from firewall.log_rate): No such file or directory (os error 2); this kernel has no `log` expression (nft_log); \
             loaded the fallback rule set instead (nftables: loopback and LAN only)\n"
        );
        assert_eq!(b.effects(), ["nf_tables commit 28 messages", "nf_tables commit 9 messages"]);
        let tables: Vec<_> = b.nft.tables.keys().cloned().collect();
        assert_eq!(tables, [(crate::sys::nftnl::NFPROTO_INET, "nasboot".to_string())], "the fallback alone");
    }

    #[test]
    fn a_settled_apply_loads_nothing_and_render_and_status_still_tell() {
        let mut b = board(PROFILE);
        let (status, out, _) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!((status, out.ends_with("through netlink: ok\n")), (Status::Ok, true), "{out}");
        let (status, out, _) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!((status, out.as_str()), (Status::Ok, ""), "nothing to do");
        assert_eq!(b.nft.batches.len(), 1);
        let (_, out, _) = run_on(&mut b, &["firewall", "render"]);
        assert!(out.starts_with("#!/usr/sbin/nft -f\n"), "render prints the rule set loaded or not: {out}");
        let (_, out, _) = run_on(&mut b, &["status"]);
        assert!(out.contains("nasboot's rules loaded, this profile's, unchanged since nasboot loaded them\n"), "{out}");
        b.nft.generation += 1;
        let (_, out, _) = run_on(&mut b, &["status"]);
        assert!(out.contains("nasboot's rules loaded\n"), "{out}");
    }

    #[test]
    fn rejected_rule_set_exits_1_with_nfts_words() {
        let mut b = board(PROFILE);
        b.nft.refused = Some(nix::libc::EPROTONOSUPPORT);
        b.runner.answers.push_back(Output {
            code: Some(1),
            stderr: b"/dev/stdin:3:1-6: Error: Could not process rule: No such file or directory\n".to_vec(),
            ..Output::default()
        });
        let (status, _, err) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(status, Status::Failure);
        assert_eq!(
            err,
            "nasboot: nft: nft rejected the rule set: /dev/stdin:3:1-6: Error: Could not process rule: No such file or directory \
             (line 3: `table inet nasboot {}`); loaded the fallback rule set instead (nftables: loopback and LAN only)\n"
        );
    }

    #[test]
    fn bad_profile_exits_2_and_loads_nothing() {
        let mut b = board("[board]\nname = \"t\"\n[firewall]\nlan_tcp_ports = [0]\n");
        let (status, _, err) = run_on(&mut b, &["firewall", "apply"]);
        assert_eq!(status, Status::Usage);
        assert!(err.contains("/etc/nasboot.toml:4:18: firewall.lan_tcp_ports[0]: port 0 is out of range"), "{err}");
        assert_eq!(b.effects(), Vec::<String>::new());
    }

    #[test]
    fn lock_down_needs_no_profile_and_no_nft() {
        let mut b = board("not toml at all");
        b.runner.programs.remove("nft");
        let (status, out, err) = run_on(&mut b, &["firewall", "lock-down"]);
        assert_eq!(status, Status::Ok, "{err}");
        assert_eq!(out, "firewall: locked down (nftables): loopback and replies only\n");
        assert_eq!(b.effects(), ["nf_tables commit 15 messages"]);
        // Where netlink cannot be had, nor nft: iptables.
        let mut b = board("not toml at all");
        b.runner.programs.remove("nft");
        b.nft.refused = Some(nix::libc::EPROTONOSUPPORT);
        let (status, out, _) = run_on(&mut b, &["firewall", "lock-down"]);
        assert_eq!((status, out.as_str()), (Status::Ok, "firewall: locked down (iptables): loopback and replies only\n"));
        assert_eq!(b.effects()[0], "run iptables-restore --test --noflush");
    }

    #[test]
    fn confirm_with_nothing_waiting_exits_1() {
        let mut b = board(PROFILE);
        let (status, _, err) = run_on(&mut b, &["firewall", "confirm"]);
        assert_eq!(status, Status::Failure);
        assert_eq!(err, "nasboot: firewall confirm: no `firewall apply --confirm` is waiting\n");
    }
}
