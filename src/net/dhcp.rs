//! method = "dhcp": start the board's DHCP client, found on PATH through
//! `seams.runner.which()` and run with an argv (never a shell):
//!
//! - BusyBox `udhcpc -i IF -f -p /run/udhcpc.IF.pid`, started and not
//!   waited for (`Runner::start`: a session of its own, output to
//!   /dev/null), staying in the foreground (-f) so that it never forks
//!   again. With -b instead, udhcpc goes to the background only once it
//!   has a lease or its discovers went unanswered (3 of them, 3 s apart):
//!   waited for, a WAN with no DHCP server would hold the rest of the apply
//!   (the LAN's addresses, the exports) up for all three (scripts/bench-boot);
//! - ISC `dhclient -nw -pf /run/dhclient.IF.pid IF` (-nw: no wait), run
//!   and waited for: it forks to the background at once.
//!
//! A client whose pidfile names a live process is left alone, so a
//! re-apply does not start a second one.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::net::{Interface, Method};
use crate::config::types::IfName;
use crate::seam::{Cmd, Seams};

use super::Error;

/// The clients tried, in order.
pub(crate) const CLIENTS: [&str; 2] = ["udhcpc", "dhclient"];
/// How long dhclient may take to go to the background.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The pidfile of a client on an interface.
pub(crate) fn pidfile(client: &str, ifname: &IfName) -> String {
    format!("{}/{client}.{ifname}.pid", crate::paths::RUN)
}

/// The argv (after the program) for a client.
pub(crate) fn args(client: &str, ifname: &IfName) -> Vec<String> {
    let pid = pidfile(client, ifname);
    match client {
        "udhcpc" => vec!["-i".into(), ifname.to_string(), "-f".into(), "-p".into(), pid],
        _ => vec!["-nw".into(), "-pf".into(), pid, ifname.to_string()],
    }
}

/// Start a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    pub name: IfName,
    /// The client's path, or None when neither is installed.
    pub program: Option<String>,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.program {
            Some(p) => {
                let client = p.rsplit('/').next().unwrap_or(p);
                write!(f, "{}: start DHCP: {p} {}", self.name, args(client, &self.name).join(" "))
            }
            None => write!(f, "{}: start DHCP: no {} on PATH", self.name, CLIENTS.join(" or ")),
        }
    }
}

/// Whether a client already runs for the interface, and if none does,
/// the client found on PATH to start (looked for only then: a statx per
/// PATH directory until found).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub program: Option<String>,
    pub running: bool,
}

pub(crate) fn observe(iface: &Interface, seams: &mut Seams<'_>) -> Observed {
    if iface.method != Method::Dhcp {
        return Observed::default();
    }
    let name = iface.name.get_ref();
    let running = CLIENTS.iter().any(|c| {
        let Ok(bytes) = seams.files.read(std::path::Path::new(&pidfile(c, name))) else { return false };
        let pid = String::from_utf8_lossy(&bytes).trim().to_string();
        !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) && alive(&pid, seams)
    });
    if running {
        return Observed { program: None, running };
    }
    let program = CLIENTS.iter().find_map(|c| seams.runner.which(c)).map(|p: PathBuf| p.display().to_string());
    Observed { program, running }
}

/// A process that runs (`sys::proc_stat_runs`): a client `nasboot run`
/// started and that then died stays a zombie of the daemon, with its
/// /proc entry: not running.
fn alive(pid: &str, seams: &mut Seams<'_>) -> bool {
    seams.files.read(std::path::Path::new(&format!("/proc/{pid}/stat"))).is_ok_and(|s| crate::sys::proc_stat_runs(&s))
}

pub(crate) fn plan(iface: &Interface, now: &Observed) -> Vec<Action> {
    if iface.method != Method::Dhcp || !iface.up || now.running {
        return Vec::new();
    }
    vec![Action { name: iface.name.get_ref().clone(), program: now.program.clone() }]
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    let Some(program) = &a.program else {
        return Err(Error::NoDhcpClient { name: a.name.clone() });
    };
    let client = program.rsplit('/').next().unwrap_or(program);
    let owned = args(client, &a.name);
    let argv: Vec<&str> = owned.iter().map(String::as_str).collect();
    let cmd = Cmd { program, args: &argv, stdin: None, timeout: TIMEOUT };
    let run = |source| Error::DhcpRun { name: a.name.clone(), source };
    if client == "udhcpc" {
        return seams.runner.start(&cmd).map_err(run);
    }
    let out = seams.runner.run(&cmd).map_err(run)?;
    if out.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Err(Error::DhcpFailed { name: a.name.clone(), program: program.clone(), ended: out.ended(), stderr })
    }
}
