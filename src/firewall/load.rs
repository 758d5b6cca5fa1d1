//! Loading rule sets: check, then load, through `seams.runner` (argv and
//! standard input, never a shell); the fallback when a rule set is
//! rejected; and `firewall apply --confirm` with its rollback.
//!
//! # `--confirm SECONDS`
//!
//! 1. The previous rule set is saved: nftables `nft list table inet
//!    nasboot` (and `ip nasboot_nat`), iptables `iptables-save` and
//!    `ip6tables-save`, completed with empty tables for those nasboot
//!    touches that were not loaded. It is kept in
//!    `/run/nasboot/firewall.previous` for the record.
//! 2. The new rule set is checked and loaded as usual (a rejected one
//!    loads the fallback and ends the command with exit 1, no waiting).
//! 3. A token is written to `/run/nasboot/firewall.pending`, and the
//!    command waits in the foreground, polling five times a second for
//!    `nasboot firewall confirm`, which copies the token to
//!    `/run/nasboot/firewall.confirm`.
//! 4. Confirmed: exit 0. Not confirmed within SECONDS: the previous rule set
//!    is loaded back (nftables: one transaction; iptables: a full restore
//!    of each saved table) and the command exits 1.
//!
//! The wait is in the foreground, not a forked child, so the operator sees
//! the outcome; `main` ignores SIGHUP and SIGPIPE during it, so a dropped
//! SSH session (the very case this guards against) does not stop the
//! rollback. SIGINT and SIGTERM end the wait without a rollback.

use std::fmt;
use std::io;
use std::path::Path;
use std::time::Duration;

use super::backend::Backend;
use super::model::Ifaces;
use super::{Error, Then};
use super::{Instead, Loadable, Native, Via};
use crate::paths;
use crate::seam::{Cmd, Output, Seams};

/// How long a tool may take: fw3 reloads have taken seconds per interface
/// on MIPS routers, so be generous.
const TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// How often `--confirm` looks for the confirmation.
pub(crate) const POLL: Duration = Duration::from_millis(200);

/// Why a rule set did not load, or the loaded one could not be saved.
/// Every variant but `Missing` may have changed what is loaded.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// The tool is not on PATH; nothing was changed.
    Missing(&'static str),
    /// The tool could not be run.
    Run { tool: &'static str, source: io::Error },
    /// It did not finish within [`TOOL_TIMEOUT`].
    TimedOut(&'static str),
    /// It was killed by a signal (a crash): what it printed is not the reason.
    Killed(&'static str),
    /// It refused the rule set (check or load); `detail` quotes its error
    /// and the offending line of the file ([`explain`]).
    Rejected { tool: &'static str, detail: String },
    /// `nft list table FAMILY NAME` failed; its standard error.
    List { family: &'static str, name: &'static str, stderr: String },
    /// `iptables-save` or `ip6tables-save` failed; its standard error.
    Save { tool: &'static str, stderr: String },
    /// The kernel refused the nf_tables batch; nothing was changed.
    Kernel(Box<super::native::Refusal>),
    /// The nf_tables netlink exchange failed (the socket, the send, a
    /// malformed reply); a batch is committed whole or not at all.
    Netlink(io::Error),
}

impl LoadError {
    pub(crate) fn tool(&self) -> &'static str {
        match self {
            LoadError::Missing(t)
            | LoadError::Run { tool: t, .. }
            | LoadError::TimedOut(t)
            | LoadError::Killed(t)
            | LoadError::Rejected { tool: t, .. }
            | LoadError::Save { tool: t, .. } => t,
            LoadError::List { .. } => "nft",
            LoadError::Kernel(_) | LoadError::Netlink(_) => "nf_tables",
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Missing(t) => write!(f, "`{t}` is not on PATH: nothing was loaded"),
            LoadError::Run { tool, source } => write!(f, "{tool} could not run: {source}"),
            LoadError::TimedOut(t) => write!(f, "{t} did not finish within {} s", TOOL_TIMEOUT.as_secs()),
            LoadError::Killed(t) => write!(f, "{t} was killed by a signal before it finished (it crashed?)"),
            LoadError::Rejected { tool, detail } => write!(f, "{tool} rejected the rule set: {detail}"),
            LoadError::List { family, name, stderr } => write!(f, "nft list table {family} {name}: {stderr}"),
            LoadError::Save { tool, stderr } => write!(f, "{tool} failed: {stderr}"),
            LoadError::Kernel(r) => r.fmt(f),
            LoadError::Netlink(e) => write!(f, "netlink: {e}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Run { source, .. } | LoadError::Netlink(source) => Some(source),
            _ => None,
        }
    }
}

/// Several failed loads (one per backend tried), "; " between them.
pub(crate) struct Joined<'a>(pub &'a [LoadError]);

impl fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            e.fmt(f)?;
        }
        Ok(())
    }
}

fn run(seams: &mut Seams<'_>, tool: &'static str, args: &[&str], stdin: Option<&[u8]>) -> Result<Output, LoadError> {
    let cmd = Cmd { program: tool, args, stdin, timeout: TOOL_TIMEOUT };
    log::debug!("running {}", cmd.display());
    match seams.runner.run(&cmd) {
        Ok(o) => Ok(o),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(LoadError::Missing(tool)),
        Err(source) => Err(LoadError::Run { tool, source }),
    }
}

/// The first line of a tool's complaint, and the line of `text` it points
/// at. nft says `/dev/stdin:12:3-9: Error: ...`; iptables-restore says
/// `line 12 failed` or `Error occurred at line: 12`.
pub(crate) fn explain(stderr: &[u8], text: &str) -> String {
    let err = String::from_utf8_lossy(stderr);
    let first = err.lines().find(|l| !l.trim().is_empty()).unwrap_or("(no message)").trim();
    let line_no = err.lines().find_map(line_number);
    match line_no.and_then(|n| text.lines().nth(n.checked_sub(1)?).map(|l| (n, l))) {
        Some((n, l)) => format!("{first} (line {n}: `{}`)", l.trim()),
        None => first.to_string(),
    }
}

fn line_number(l: &str) -> Option<usize> {
    // nft: FILE:LINE:COLUMNS: Error: ...
    if let Some((head, _)) = l.split_once(": Error:") {
        let mut parts = head.rsplitn(3, ':');
        let _cols = parts.next()?;
        return parts.next()?.parse().ok();
    }
    // iptables-restore: "line 12 failed", "at line: 12", "line 12:".
    let at = l.find("line")?;
    let rest = l[at + 4..].trim_start_matches([':', ' ']);
    let digits: &str = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len())];
    digits.parse().ok()
}

fn checked(out: Output, tool: &'static str, text: &str) -> Result<(), LoadError> {
    if out.success() {
        return Ok(());
    }
    Err(if out.timed_out {
        LoadError::TimedOut(tool)
    } else if out.code.is_none() {
        // A crash (or a kill): whatever it printed is not the reason.
        LoadError::Killed(tool)
    } else {
        LoadError::Rejected { tool, detail: explain(&out.stderr, text) }
    })
}

/// Whether the kernel has IPv6 (`/proc/sys/net/ipv6` is there): the
/// ip6tables files are loaded and saved only then. Asked where an
/// iptables tool is about to run, or for a router's forwarding sysctls,
/// not by every observation (a /proc read an nftables board's apply has no
/// use for).
pub(crate) fn kernel_has_ipv6(seams: &mut Seams<'_>) -> bool {
    seams.sysctl.get("net.ipv6.conf.all.disable_ipv6").is_ok()
}

/// Load one rule set. nftables: one transaction, through netlink or
/// `nft -f -`, which the kernel commits whole or not at all, so there is
/// no check pass. iptables: both families are checked
/// (`--test`) before either loads.
pub(crate) fn check_and_load(rs: &Loadable, seams: &mut Seams<'_>) -> Result<(), LoadError> {
    match rs.backend {
        Backend::Nftables => match (&rs.native, rs.via) {
            (Native::Rules(r), Via::Netlink) => super::native::load(r, seams),
            (Native::Saved(saved), _) => super::native::load_saved(saved, seams),
            _ => {
                if seams.runner.which("nft").is_none() {
                    return Err(LoadError::Missing("nft"));
                }
                let text = rs.v4();
                let out = run(seams, "nft", &["-f", "-"], Some(text.as_bytes()))?;
                checked(out, "nft", text)
            }
        },
        Backend::Iptables => {
            let mut files: heapless::Vec<(&'static str, &str), 2> = heapless::Vec::new();
            let _ = files.push(("iptables-restore", rs.v4()));
            if !rs.v6().is_empty() && kernel_has_ipv6(seams) {
                let _ = files.push(("ip6tables-restore", rs.v6()));
            }
            for (tool, _) in &files {
                if seams.runner.which(tool).is_none() {
                    return Err(LoadError::Missing(tool));
                }
            }
            let (test, load): (&[&str], &[&str]) = if rs.noflush { (&["--test", "--noflush"], &["--noflush"]) } else { (&["--test"], &[]) };
            for (tool, text) in &files {
                let out = run(seams, tool, test, Some(text.as_bytes()))?;
                checked(out, tool, text)?;
            }
            for (tool, text) in &files {
                let out = run(seams, tool, load, Some(text.as_bytes()))?;
                checked(out, tool, text)?;
            }
            Ok(())
        }
    }
}

/// Load the fallback: with `backend`, or failing that with the other one.
/// Returns what was loaded, or why neither loaded.
fn load_fallback(lan: &Ifaces, backend: Backend, via: Via, seams: &mut Seams<'_>) -> Result<Backend, Vec<LoadError>> {
    let mut why = Vec::new();
    for b in [backend, backend.other()] {
        match check_and_load(&super::fallback(lan, b, via), seams) {
            Ok(()) => return Ok(b),
            Err(e) => why.push(e),
        }
    }
    Err(why)
}

/// Load a rule set; if it is rejected, load `instead` (what `auto` would
/// have chosen without the ingress hooks or the flowtable) if given, and
/// succeed; failing that, with `fallback_lan`, load the fallback and fail.
/// A missing tool changes nothing.
pub(crate) fn load(rules: &Loadable, instead: Option<&Instead>, fallback_lan: Option<&Ifaces>, seams: &mut Seams<'_>) -> Result<(), Error> {
    let e = match check_and_load(rules, seams) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    let missing = matches!(e, LoadError::Missing(_));
    if let (false, Some(i)) = (missing, instead) {
        if check_and_load(&i.rules, seams).is_ok() {
            log::warn!("{e}; loaded {}", i.what);
            return Ok(());
        }
    }
    let then = match fallback_lan {
        _ if missing => Then::KeptPrevious,
        None => Then::NoFallback,
        Some(lan) => match load_fallback(lan, rules.backend, rules.via, seams) {
            Ok(b) => Then::FellBack(b),
            Err(why) => Then::FallbackFailed(why),
        },
    };
    Err(Error::Load { source: e, then })
}

/// Load the emergency rule set (a profile that cannot be read at boot):
/// with `backend`, or failing that the other one.
pub(crate) fn load_emergency(backend: Backend, via: Via, seams: &mut Seams<'_>) -> Result<Backend, Error> {
    let mut tried = Vec::new();
    for b in [backend, backend.other()] {
        match check_and_load(&super::emergency(b, via), seams) {
            Ok(()) => return Ok(b),
            Err(e) => tried.push(e),
        }
    }
    Err(Error::Emergency { tried })
}

/// For the boot scripts when the profile cannot be read: choose a backend
/// from what the board offers (as `auto` would) and load the emergency
/// rule set (see the module documentation of `firewall`).
pub(crate) fn lock_down(seams: &mut Seams<'_>) -> Result<Backend, Error> {
    use crate::config::firewall::{Backend as B, Loader};
    let kernel = seams.sysctl.get("kernel.osrelease").ok().and_then(|r| super::backend::kernel_version(&r));
    let netlink = seams.nft.tables().err().map(|e| e.raw_os_error().unwrap_or(nix::libc::EIO));
    let offer = super::backend::offer(kernel, netlink, B::Auto, Loader::Auto, |tool| seams.runner.which(tool).is_some());
    let via = super::backend::via(crate::config::firewall::Loader::Auto, offer);
    load_emergency(super::backend::auto(offer), via, seams)
}

/// Empty tables for an iptables rollback, for tables nasboot's rule set
/// touches that were not loaded before (a full restore resets a table to
/// exactly what the file lists).
const EMPTY_FILTER: &str = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n";
const EMPTY_RAW: &str = "*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n";
const EMPTY_NAT: &str = "*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\nCOMMIT\n";

pub(crate) fn complete(saved: &str, new: &str, out: &mut String) {
    out.push_str(saved);
    // A dump without its final newline would glue the first table added
    // to its last line (found by the tool_output fuzz target).
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    for (table, empty) in [("*filter", EMPTY_FILTER), ("*raw", EMPTY_RAW), ("*nat", EMPTY_NAT)] {
        let touched = new.lines().any(|l| l == table);
        if touched && !saved.lines().any(|l| l.trim_end() == table) {
            out.push_str(empty);
        }
    }
}

/// `nft list table FAMILY NAME`, or None when the table does not exist.
fn nft_list(seams: &mut Seams<'_>, family: &'static str, name: &'static str) -> Result<Option<String>, LoadError> {
    let out = run(seams, "nft", &["list", "table", family, name], None)?;
    if out.success() {
        return Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("No such file or directory") || err.contains("does not exist") {
        return Ok(None);
    }
    Err(LoadError::List { family, name, stderr: err.trim().to_string() })
}

/// Append `tool`'s dump, completed with empty tables for those `new` touches.
fn iptables_save(seams: &mut Seams<'_>, tool: &'static str, new: &str, text: &mut String) -> Result<(), LoadError> {
    if seams.runner.which(tool).is_none() {
        return Err(LoadError::Missing(tool));
    }
    let out = run(seams, tool, &[], None)?;
    if !out.success() {
        return Err(LoadError::Save { tool, stderr: String::from_utf8_lossy(&out.stderr).trim().to_string() });
    }
    complete(&String::from_utf8_lossy(&out.stdout), new, text);
    Ok(())
}

/// The rule set that puts back what is loaded now, for a rollback.
pub(crate) fn save_previous(new: &Loadable, seams: &mut Seams<'_>) -> Result<Loadable, LoadError> {
    match new.backend {
        Backend::Nftables if new.via == Via::Netlink => {
            let saved = super::native::save(seams)?;
            let text = format!("# nasboot: the rule set before, saved through netlink ({} messages)\n", saved.starts.len());
            let v6_at = text.len();
            Ok(Loadable { backend: Backend::Nftables, text, v6_at, noflush: true, native: Native::Saved(saved), via: new.via })
        }
        Backend::Nftables => {
            let mut text = String::from("table inet nasboot {}\ndelete table inet nasboot\n");
            if let Some(t) = nft_list(seams, "inet", "nasboot")? {
                text.push_str(&t);
            }
            text.push_str("table ip nasboot_nat {}\ndelete table ip nasboot_nat\n");
            if let Some(t) = nft_list(seams, "ip", "nasboot_nat")? {
                text.push_str(&t);
            }
            let v6_at = text.len();
            Ok(Loadable { backend: Backend::Nftables, text, v6_at, noflush: true, native: Native::TextOnly, via: new.via })
        }
        Backend::Iptables => {
            let mut text = String::new();
            iptables_save(seams, "iptables-save", new.v4(), &mut text)?;
            let v6_at = text.len();
            if kernel_has_ipv6(seams) {
                iptables_save(seams, "ip6tables-save", new.v6(), &mut text)?;
            }
            Ok(Loadable { backend: Backend::Iptables, text, v6_at, noflush: false, native: Native::TextOnly, via: new.via })
        }
    }
}

/// `--confirm`: how long, and the token this apply waits for.
pub(crate) struct Confirm<'a> {
    pub seconds: u32,
    pub token: &'a str,
}

fn read_text(seams: &mut Seams<'_>, path: &str) -> String {
    seams.files.read(Path::new(path)).map(|b| String::from_utf8_lossy(&b).trim().to_string()).unwrap_or_default()
}

fn write(seams: &mut Seams<'_>, path: &'static str, data: &[u8]) -> Result<(), Error> {
    seams.files.replace(Path::new(path), data).map(|_| ()).map_err(|source| Error::Write { path, source })
}

/// Apply with `--confirm` (see the module documentation). `sleep` waits
/// between polls (the real clock in `main`, a counter in tests); `say`
/// tells the operator what to do.
pub(crate) fn load_confirmed(
    rules: &Loadable,
    instead: Option<&Instead>,
    fallback_lan: Option<&Ifaces>,
    c: &Confirm<'_>,
    seams: &mut Seams<'_>,
    sleep: &mut dyn FnMut(Duration),
    say: &mut dyn FnMut(&str),
) -> Result<(), Error> {
    let previous = save_previous(rules, seams).map_err(|source| Error::Save { source })?;
    write(seams, paths::FIREWALL_PREVIOUS, previous.text.as_bytes())?;
    load(rules, instead, fallback_lan, seams)?;
    write(seams, paths::FIREWALL_PENDING, c.token.as_bytes())?;
    say(&format!("firewall applied; run `nasboot firewall confirm` within {} s, or the previous rule set comes back", c.seconds));
    let polls = u64::from(c.seconds) * 1000 / POLL.as_millis() as u64;
    for _ in 0..polls {
        sleep(POLL);
        if read_text(seams, paths::FIREWALL_CONFIRM) == c.token {
            write(seams, paths::FIREWALL_PENDING, b"")?;
            say("firewall confirmed");
            return Ok(());
        }
    }
    write(seams, paths::FIREWALL_PENDING, b"")?;
    match check_and_load(&previous, seams) {
        Ok(()) => Err(Error::NotConfirmed { seconds: c.seconds }),
        Err(source) => {
            let lan = fallback_lan.cloned().unwrap_or_default();
            let fallback = load_fallback(&lan, rules.backend, rules.via, seams);
            Err(Error::Rollback { seconds: c.seconds, source, fallback })
        }
    }
}

/// `nasboot firewall confirm`: confirm the waiting apply, if any.
pub(crate) fn confirm(seams: &mut Seams<'_>) -> Result<(), Error> {
    let token = read_text(seams, paths::FIREWALL_PENDING);
    if token.is_empty() {
        return Err(Error::NotWaiting);
    }
    write(seams, paths::FIREWALL_CONFIRM, token.as_bytes())
}

/// Ignore SIGHUP and SIGPIPE, for the `--confirm` wait: a dropped SSH
/// session must not stop the rollback (signal(7)). Called from `main`.
pub fn ignore_hangup() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    for s in [Signal::SIGHUP, Signal::SIGPIPE] {
        // SAFETY: SIG_IGN installs no handler code, so no async-signal
        // safety question arises.
        if let Err(e) = unsafe { signal(s, SigHandler::SigIgn) } {
            log::warn!("cannot ignore {s}: {e}");
        }
    }
}
