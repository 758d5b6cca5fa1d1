//! `nasboot status`: the board's current state against the profile.

use super::Io;
use crate::cli::Cli;
use crate::config::types::MacAddr;
use crate::exit::Status;
use crate::plan;
use crate::seam::Seams;

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let p = &loaded.profile;
    let now = plan::observe(p, seams);
    let pending = plan::plan(p, &now);
    let _ = writeln!(io.out, "board {} ({})", p.board.name, cli.config.display());
    for o in &now.net.ifaces {
        let name = &o.name;
        match &o.link {
            Some(s) => {
                let _ = write!(
                    io.out,
                    "  {name}: {} {} mtu {} txqueuelen {} mac {}{}",
                    if s.up { "up" } else { "down" },
                    if s.carrier { "carrier" } else { "no-carrier" },
                    s.mtu,
                    s.txqueuelen,
                    MacAddr(s.mac),
                    if s.promisc { " promisc" } else { "" }
                );
                if let Ok(addrs) = &o.addrs {
                    for a in addrs {
                        let _ = write!(io.out, " {a}");
                    }
                }
                let _ = writeln!(io.out);
            }
            None => {
                let _ = writeln!(io.out, "  {name}: missing");
            }
        }
    }
    let mut shaped = String::new();
    let _ = crate::net::sqm::status(now.net.virt.links.as_deref().unwrap_or_default(), &now.net.sqm, &mut shaped);
    let _ = io.out.write_all(shaped.as_bytes());
    if p.firewall.forward {
        let path = std::path::Path::new(crate::paths::PROC_NF_CONNTRACK);
        match seams.files.read(path) {
            Ok(b) => {
                let f = crate::firewall::flows::count(&String::from_utf8_lossy(&b));
                let _ = writeln!(io.out, "  forwarding: {} tracked connection(s), {} offloaded to the flowtable", f.tracked, f.offloaded);
            }
            Err(e) => {
                let _ = writeln!(io.out, "  forwarding: offloaded flows unknown ({}: {e})", path.display());
            }
        }
    }
    // A load is not counted as a pending change (where nasboot cannot tell
    // the loaded rule set from the wanted one, `apply` always loads it
    // again): status says whether nasboot's rules are loaded, and through
    // netlink whether they are still as nasboot loaded them.
    let settled = now.firewall.loaded.is_some() && !pending.actions.iter().any(|a| a.phase() == crate::plan::Phase::Firewall);
    let backend = crate::firewall::backend_for(p, &now.firewall);
    if p.firewall.profile == crate::config::firewall::Profile::Off {
        // Nothing to load: only rules left from an earlier profile matter.
        let left = if now.firewall.ours_loaded == Some(true) { ", nasboot's earlier rules still loaded (apply removes them)" } else { "" };
        let _ = writeln!(io.out, "  firewall: off{left}");
    } else {
        firewall_line(p, backend, &now, settled, seams, io);
    }
    let pending: Vec<_> = pending.actions.iter().filter(|a| a.phase() != crate::plan::Phase::Firewall).collect();
    super::confirm::status(cli, seams, io);
    if pending.is_empty() {
        let _ = writeln!(io.out, "in sync with the profile");
    } else {
        let _ = writeln!(io.out, "{} change(s) pending:", pending.len());
        for a in &pending {
            let _ = writeln!(io.out, "  {:<8}  {a}", a.phase());
        }
    }
    Status::Ok
}

/// The firewall's line: its profile, backend and path, whether nasboot's
/// rules are loaded, and whether as nasboot loaded them (`settled`).
fn firewall_line(
    p: &crate::config::Profile,
    backend: crate::firewall::Backend,
    now: &plan::Observed,
    settled: bool,
    seams: &mut Seams<'_>,
    io: &mut Io<'_>,
) {
    let loaded = match crate::firewall::ours_loaded(backend, &now.firewall, seams) {
        Some(true) => "loaded",
        Some(false) => "not loaded",
        None => "unknown (the tool did not answer)",
    };
    let via = match backend {
        crate::firewall::Backend::Nftables => format!(" {}", now.firewall.via),
        crate::firewall::Backend::Iptables => String::new(),
    };
    let still = if settled { ", this profile's, unchanged since nasboot loaded them" } else { "" };
    let _ = writeln!(io.out, "  firewall: profile {}, {backend}{via}, nasboot's rules {loaded}{still}", p.firewall.profile);
}
