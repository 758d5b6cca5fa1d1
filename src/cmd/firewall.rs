//! `nasboot firewall render|apply|confirm`.
//!
//! - `render` prints the rule set for the chosen (or `--backend`) backend;
//!   for iptables, the IPv4 file then the IPv6 file.
//! - `apply` checks and loads it alone; `--confirm SECONDS` rolls it back
//!   unless `nasboot firewall confirm` comes in time (see
//!   `firewall::apply`).
//! - `confirm` confirms the waiting apply.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Io;
use crate::cli::{Cli, FirewallCommand};
use crate::exit::Status;
use crate::firewall::{self, apply::Confirm, Action};
use crate::seam::Seams;

pub fn run(cli: &Cli, sub: FirewallCommand, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    if sub == FirewallCommand::Confirm {
        // Confirming needs no profile: it only answers a waiting apply.
        return match firewall::apply::confirm(seams) {
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
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let now = firewall::observe(&loaded.profile, seams);
    let actions = firewall::plan(&loaded.profile, &now);
    match sub {
        FirewallCommand::Render => {
            for Action::Load { rules, .. } in &actions {
                let _ = io.out.write_all(rules.text.as_bytes());
            }
            Status::Ok
        }
        FirewallCommand::Apply => {
            let mut status = Status::Ok;
            for a in &actions {
                let Action::Load { rules, fallback_lan } = a;
                let result = match cli.confirm {
                    None => firewall::apply(a, seams),
                    Some(seconds) => {
                        let token = token();
                        let c = Confirm { seconds, token: &token };
                        let mut sleep = |d: Duration| std::thread::sleep(d);
                        let mut say = |s: &str| {
                            let _ = writeln!(io.out, "nasboot: {s}");
                            let _ = io.out.flush();
                        };
                        firewall::apply::load_confirmed(rules, fallback_lan.as_ref(), &c, seams, &mut sleep, &mut say)
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
        FirewallCommand::Confirm => unreachable!("handled above"),
    }
}

/// A token that tells this apply's confirmation from an earlier one's.
fn token() -> String {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{nanos}", std::process::id())
}
