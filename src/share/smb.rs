//! Which server serves `[samba]`'s shares, and what a running ksmbd needs.
//!
//! `[samba] backend`, chosen as the firewall's is:
//!
//! - `smbd`: Samba, through the smb.conf include (`samba`);
//! - `ksmbd`: the kernel's server, through ksmbd.conf (`ksmbd`);
//! - `auto` (default): smbd where it is on PATH, else ksmbd where the
//!   kernel has the module (`kmod`: loaded, built in or installed; where
//!   the board's module lists cannot tell, ksmbd where ksmbd-tools is
//!   installed), else neither.
//!
//! With neither, SMB is not served: the plan says so as a step of its own,
//! which fails when applied (exit status 3, the rest of the profile
//! applied). The same holds for a ksmbd user without a password in
//! ksmbdpwd.db. `plan` names the server and why it was chosen.

use std::fmt;
use std::path::Path;

use crate::config::nfs::{Samba, SmbBackend};
use crate::kmod::{Has, Kmods};
use crate::paths;
use crate::seam::Seams;

use super::ksmbd;

/// The module's directory under kernel/ before 6.4 (fs/smb/server since);
/// modules.dep finds either.
const KSMBD_SUBDIR: &str = "fs/ksmbd";

/// A server of SMB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Server {
    Smbd,
    Ksmbd,
}

impl fmt::Display for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Server::Smbd => "smbd",
            Server::Ksmbd => "ksmbd",
        })
    }
}

/// What the board offers for SMB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    /// smbd is on PATH (asked only for `auto`).
    pub smbd: bool,
    /// The kernel has ksmbd (asked only when ksmbd may serve).
    pub ksmbd: Has,
    /// ksmbd.mountd (ksmbd-tools) is on PATH.
    pub mountd: bool,
    /// ksmbd.mountd runs: its lock file names a live process.
    pub running: bool,
}

/// Read what the choice needs, and no more.
pub(crate) fn observe(s: &Samba, seams: &mut Seams<'_>) -> Observed {
    let mut now = Observed::default();
    if s.backend == SmbBackend::Auto {
        now.smbd = seams.runner.which("smbd").is_some();
    }
    if s.backend == SmbBackend::Smbd || now.smbd {
        return now;
    }
    let release = seams.sysctl.get("kernel.osrelease").ok();
    now.ksmbd = Kmods::new(release.as_deref()).has(seams, "ksmbd", KSMBD_SUBDIR);
    now.mountd = seams.runner.which("ksmbd.mountd").is_some();
    now.running = mountd_running(seams);
    now
}

/// Whether ksmbd.mountd runs: its lock file names a live process (a stale
/// lock file, from a ksmbd.mountd killed without its clean-up, does not
/// count).
pub(crate) fn mountd_running(seams: &mut Seams<'_>) -> bool {
    let pid = seams.files.read(Path::new(paths::KSMBD_LOCK)).ok().and_then(|b| ksmbd::lock_pid(&String::from_utf8_lossy(&b)));
    pid.is_some_and(|pid| seams.files.exists(Path::new(&format!("/proc/{pid}"))))
}

/// The server, and why, for `plan`'s note. None: SMB is not served.
pub(crate) fn choose(backend: SmbBackend, now: &Observed) -> (Option<Server>, &'static str) {
    match backend {
        SmbBackend::Smbd => (Some(Server::Smbd), "backend = \"smbd\""),
        SmbBackend::Ksmbd => (Some(Server::Ksmbd), "backend = \"ksmbd\""),
        SmbBackend::Auto if now.smbd => (Some(Server::Smbd), "auto: smbd is installed"),
        SmbBackend::Auto if now.ksmbd == Has::Yes => (Some(Server::Ksmbd), "auto: no smbd, and the kernel has ksmbd"),
        SmbBackend::Auto if now.ksmbd == Has::Unknown && now.mountd => {
            (Some(Server::Ksmbd), "auto: no smbd; ksmbd-tools is installed and the kernel's module lists cannot tell")
        }
        SmbBackend::Auto => (None, "auto: no smbd on PATH, and the kernel has no ksmbd module"),
    }
}

/// Why the SMB step is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Neither smbd nor ksmbd is there; `why` says what was looked at.
    Unserved { why: &'static str },
    /// Users named in the profile with no password in ksmbdpwd.db:
    /// (user, key).
    Unprovisioned { users: Vec<(String, String)> },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Unserved { why } => write!(f, "SMB is not served ({why}); the rest of the profile applies"),
            Refusal::Unprovisioned { users } => {
                f.write_str("ksmbd: ")?;
                for (i, (user, key)) in users.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "user `{user}` ({key})")?;
                }
                write!(
                    f,
                    " has no password in {}: provision it with `ksmbd.adduser -a USER`; {} is not written",
                    paths::KSMBD_PWDDB,
                    paths::KSMBD_CONF
                )
            }
        }
    }
}

/// The users `s` names that ksmbdpwd.db (`db`, None: absent) lacks.
pub(crate) fn unprovisioned(s: &Samba, db: Option<&str>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (u, key) in ksmbd::users(s) {
        if !db.is_some_and(|d| ksmbd::provisioned(d, u)) {
            out.push((u.to_string(), key));
        }
    }
    out
}

/// Notes on a chosen ksmbd that cannot serve yet.
pub(crate) fn ksmbd_notes(now: &Observed, notes: &mut Vec<String>) {
    if now.ksmbd == Has::No {
        notes.push("ksmbd: the kernel has no ksmbd module (CONFIG_SMB_SERVER): the file is written, but nothing serves it".into());
    }
    if !now.mountd {
        notes.push("ksmbd: ksmbd.mountd is not on PATH: install ksmbd-tools".into());
    }
}
