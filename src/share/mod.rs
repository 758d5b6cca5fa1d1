//! Shares, NFS and SMB: the export table, nfsd's knobs, the files the board's
//! NFS init scripts read, and the SMB server's configuration (an smb.conf
//! include for smbd, or ksmbd.conf for the kernel's ksmbd).
//!
//! - [`exports`]: /etc/exports (or /etc/exports.d/nasboot.exports with
//!   `exports_d = true`), rendered purely, replaced atomically (the old
//!   file stays on any write error; a `.bak` is kept), then `exportfs -ra`
//!   only when the file changed; its file:line errors are reported.
//! - [`nfsd`]: threads, versions and max_block_size under /proc/fs/nfsd,
//!   and the thread sizing formula.
//! - [`distro`]: /etc/default/nfs-kernel-server and nfs.conf.
//! - [`samba`]: the smb.conf include.
//! - [`ksmbd`]: ksmbd.conf, its users (provisioned by the operator with
//!   `ksmbd.adduser`; passwords are never in the profile), reload or
//!   restart.
//! - [`smb`]: which of the two serves (`[samba] backend`).
//!
//! Nothing is planned for NFS when the profile has no exports and sets no
//! nfsd knob, so a board whose exports are managed by hand is left alone.

pub(crate) mod distro;
pub(crate) mod exports;
pub(crate) mod ksmbd;
pub(crate) mod nfsd;
pub(crate) mod samba;
pub(crate) mod smb;

use std::fmt;
use std::io;
use std::path::Path;
use std::time::Duration;

use crate::config::Profile;
use crate::exit::{ExitStatus, Status};
use crate::paths;
use crate::seam::{Cmd, Ended, Files, Replaced, Seams};

use nfsd::Knob;

/// The drop-in export file.
pub(crate) const EXPORTS_DROP_IN: &str = "/etc/exports.d/nasboot.exports";
/// nasboot's nfs.conf drop-in.
pub(crate) const NFS_CONF_DROP_IN: &str = "/etc/nfs.conf.d/nasboot.conf";

/// One NFS or Samba change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Replace the export table, then `exportfs -ra` if it changed and
    /// `reload` is set (it is not under `--root`: exportfs always reads
    /// this machine's /etc/exports). A revert (`cmd::confirm`) writes
    /// every share file so; for ksmbd.conf, `reload` is a running ksmbd's
    /// `ksmbd.control --reload` (its Display, for plans, never has one).
    Exports { path: String, text: String, reload: bool },
    /// Replace a configuration file (init script settings, smb include).
    WriteFile { path: String, text: String },
    /// Write an nfsd control file under /proc/fs/nfsd.
    Nfsd { knob: Knob, value: String, from: Option<String> },
    /// Make a running ksmbd take its new ksmbd.conf.
    Ksmbd(ksmbd::Change),
    /// The SMB step cannot be done: applying it fails with this (3).
    Refuse(smb::Refusal),
}

impl Action {
    pub(crate) fn rendered(&self) -> Option<(String, &str)> {
        match self {
            Action::Exports { path, text, .. } | Action::WriteFile { path, text } => Some((path.clone(), text)),
            Action::Nfsd { .. } | Action::Ksmbd(_) | Action::Refuse(_) => None,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Exports { path, text, reload } => write!(
                f,
                "write {path} ({} export(s)){}",
                text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()).count(),
                if *reload { ", then exportfs -ra" } else { "" }
            ),
            Action::WriteFile { path, text } => write!(f, "write {path} ({} bytes)", text.len()),
            Action::Nfsd { knob, value, from } => {
                write!(f, "nfsd {knob} = {value}")?;
                if let Some(old) = from {
                    write!(f, " (now {old})")?;
                }
                Ok(())
            }
            Action::Ksmbd(ksmbd::Change::Reload) => f.write_str("ksmbd.control --reload (shares or users changed)"),
            Action::Ksmbd(ksmbd::Change::Restart) => {
                f.write_str("ksmbd.control --shutdown, then ksmbd.mountd (global settings changed: a reload does not take them)")
            }
            Action::Refuse(r) => write!(f, "refused: {r}"),
        }
    }
}

/// The board's NFS and Samba state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    /// Current text of each file nasboot may write or check (None: absent).
    pub files: Vec<(&'static str, Option<String>)>,
    /// /etc/nfs.conf.d exists.
    pub nfs_conf_d: bool,
    pub nfsd: nfsd::State,
    pub mem_total_kib: Option<u64>,
    pub cpus: Option<u16>,
    /// Files are relocated under `--root` (an image or a sandbox).
    pub relocated: bool,
    /// What the board offers for SMB (with `[samba]` only).
    pub smb: smb::Observed,
}

impl Observed {
    /// The current text of a file read by `observe`.
    pub(crate) fn file(&self, path: &str) -> Option<&str> {
        self.files.iter().find(|(p, _)| *p == path).and_then(|(_, t)| t.as_deref())
    }
}

/// Whether the profile asks for any NFS work at all.
fn uses_nfs(p: &Profile) -> bool {
    let n = &p.nfs;
    !n.export.is_empty() || n.threads.is_some() || n.versions.is_some() || n.max_block_size.is_some() || n.preset.is_some()
}

fn read_text(files: &mut dyn Files, path: &str) -> Option<String> {
    files.read(Path::new(path)).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn nfsd_file(knob: &str) -> String {
    format!("{}/{knob}", paths::PROC_NFSD)
}

pub(crate) fn observe(p: &Profile, seams: &mut Seams<'_>) -> Observed {
    let mut now = Observed { relocated: seams.files.relocated(), ..Observed::default() };
    let mut wanted: Vec<&'static str> = Vec::new();
    if uses_nfs(p) {
        wanted.extend([paths::EXPORTS, EXPORTS_DROP_IN, paths::DEFAULT_NFS_KERNEL_SERVER, paths::NFS_CONF, NFS_CONF_DROP_IN]);
        now.nfs_conf_d = seams.files.exists(Path::new(paths::NFS_CONF_D));
        let f = &mut *seams.files;
        let threads = read_text(f, &nfsd_file("threads"));
        now.nfsd = nfsd::State {
            present: threads.is_some(),
            threads: threads.and_then(|t| t.trim().parse().ok()),
            listening: read_text(f, &nfsd_file("portlist")).is_some_and(|t| !t.trim().is_empty()),
            versions: read_text(f, &nfsd_file("versions")).map(|t| t.trim().to_string()),
            max_block_size: read_text(f, &nfsd_file("max_block_size")).and_then(|t| t.trim().parse().ok()),
        };
        now.mem_total_kib = read_text(f, paths::PROC_MEMINFO).and_then(|t| nfsd::parse_meminfo(&t));
        now.cpus = read_text(f, paths::SYS_CPU_ONLINE).and_then(|t| nfsd::parse_cpu_list(&t));
    }
    if let Some(s) = &p.samba {
        now.smb = smb::observe(s, seams);
        match smb::choose(s.backend, &now.smb).0 {
            Some(smb::Server::Smbd) => wanted.extend([paths::SMB_INCLUDE, paths::SMB_CONF]),
            Some(smb::Server::Ksmbd) => wanted.extend([paths::KSMBD_CONF, paths::KSMBD_PWDDB]),
            None => {}
        }
    }
    for path in wanted {
        let text = read_text(seams.files, path);
        now.files.push((path, text));
    }
    now
}

/// What nfsd will run with on this board.
pub(crate) fn sizing(p: &Profile, now: &Observed) -> nfsd::Sizing {
    nfsd::sizing(now.mem_total_kib, now.cpus.unwrap_or(1), p.nfs.preset, p.nfs.threads, p.nfs.max_block_size)
}

/// The actions, in order (export table, nfsd control files with versions
/// and max_block_size before threads, init script files, Samba), and
/// notes for the operator.
pub(crate) fn plan(p: &Profile, now: &Observed) -> (Vec<Action>, Vec<String>) {
    let mut actions = Vec::new();
    let mut notes = Vec::new();
    let write = |actions: &mut Vec<Action>, path: &str, text: String, exports: bool| {
        if now.file(path) != Some(text.as_str()) {
            let path = path.to_string();
            actions.push(if exports { Action::Exports { path, text, reload: !now.relocated } } else { Action::WriteFile { path, text } });
        }
    };
    if uses_nfs(p) {
        if !p.nfs.export.is_empty() {
            if p.nfs.exports_d && now.file(paths::EXPORTS).is_none() {
                // exportfs fails ("can't open /etc/exports") without it,
                // even though it loads the drop-in.
                let text = format!("# The board's own exports. nasboot's are in {EXPORTS_DROP_IN}.\n");
                write(&mut actions, paths::EXPORTS, text, false);
            }
            let path = if p.nfs.exports_d { EXPORTS_DROP_IN } else { paths::EXPORTS };
            write(&mut actions, path, exports::render(p, p.nfs.exports_d), true);
            if now.relocated {
                notes.push(format!(
                    "--root: {path} is written under the root, but exportfs -ra is not run (it reads this \
                     machine's /etc/exports); the board's nfs init script exports it at boot"
                ));
            }
        }
        let size = sizing(p, now);
        notes.push(format!(
            "nfsd: {} thread(s) ({}), max_block_size {} KiB{}: about {} KiB of kernel memory",
            size.threads,
            if size.threads_set {
                "set in the profile".to_string()
            } else {
                match now.mem_total_kib {
                    Some(m) => format!("sized for {} MiB RAM, {} CPU(s)", nfsd::ram_mib(m), now.cpus.unwrap_or(1)),
                    None => "MemTotal unreadable: rpc.nfsd's default".to_string(),
                }
            },
            size.max_block_size / 1024,
            if p.nfs.max_block_size.is_some() { "" } else { " (kernel default)" },
            size.memory_kib
        ));
        let versions = nfsd::wanted_versions(p.nfs.versions.as_deref(), p.nfs.preset);
        nfsd_actions(p, now, &size, versions.as_deref(), &mut actions, &mut notes);
        let settings = distro::Settings {
            threads: size.threads,
            versions,
            mountd_port: p.firewall.mountd_port.get(),
            statd_port: p.firewall.statd_port.get(),
            lockd_port: p.firewall.lockd_port.get(),
        };
        if let Some(old) = now.file(paths::DEFAULT_NFS_KERNEL_SERVER) {
            write(&mut actions, paths::DEFAULT_NFS_KERNEL_SERVER, distro::default_file(old, &settings), false);
        }
        if now.nfs_conf_d {
            write(&mut actions, NFS_CONF_DROP_IN, distro::nfs_conf_drop_in(&settings), false);
        } else if let Some(old) = now.file(paths::NFS_CONF) {
            write(&mut actions, paths::NFS_CONF, distro::nfs_conf_in_place(old, &settings), false);
        }
    }
    if let Some(s) = &p.samba {
        let (server, why) = smb::choose(s.backend, &now.smb);
        match server {
            Some(smb::Server::Smbd) => {
                notes.push(format!("SMB: smbd ({why})"));
                write(&mut actions, paths::SMB_INCLUDE, samba::render(p, s), false);
                match now.file(paths::SMB_CONF) {
                    Some(conf) if samba::includes_us(conf) => {}
                    Some(_) => notes.push(format!(
                        "{} does not include {}: add `include = {}` as its last line",
                        paths::SMB_CONF,
                        paths::SMB_INCLUDE,
                        paths::SMB_INCLUDE
                    )),
                    None => notes.push(format!("{} is missing: Samba is not installed or configured", paths::SMB_CONF)),
                }
            }
            Some(smb::Server::Ksmbd) => {
                notes.push(format!("SMB: ksmbd ({why})"));
                ksmbd_plan(p, s, now, &mut actions, &mut notes);
            }
            None => actions.push(Action::Refuse(smb::Refusal::Unserved { why })),
        }
    }
    (actions, notes)
}

/// ksmbd.conf, then a reload or a restart of a running ksmbd; or the
/// refusal naming the users without a password.
fn ksmbd_plan(p: &Profile, s: &crate::config::nfs::Samba, now: &Observed, actions: &mut Vec<Action>, notes: &mut Vec<String>) {
    smb::ksmbd_notes(&now.smb, notes);
    let users = smb::unprovisioned(s, now.file(paths::KSMBD_PWDDB));
    if !users.is_empty() {
        actions.push(Action::Refuse(smb::Refusal::Unprovisioned { users }));
        return;
    }
    let text = ksmbd::render(p, s);
    let Some(change) = ksmbd::change(now.file(paths::KSMBD_CONF), &text) else { return };
    actions.push(Action::WriteFile { path: paths::KSMBD_CONF.to_string(), text });
    if now.smb.running && !now.relocated {
        actions.push(Action::Ksmbd(change));
    } else if !now.relocated {
        notes.push("ksmbd.mountd is not running: it reads the new file when it starts (its init script, or `ksmbd.mountd`)".into());
    }
}

fn nfsd_actions(
    p: &Profile,
    now: &Observed,
    size: &nfsd::Sizing,
    versions: Option<&[crate::config::nfs::NfsVersion]>,
    actions: &mut Vec<Action>,
    notes: &mut Vec<String>,
) {
    let st = &now.nfsd;
    if !st.present {
        notes.push(format!("{} is not mounted (nfsd not loaded): nfsd settings go to the init script's files only", paths::PROC_NFSD));
        return;
    }
    let mut stopped_only: Vec<(Knob, String, Option<String>)> = Vec::new();
    if let Some(v) = versions {
        let line = nfsd::versions_line(v);
        if !st.versions.as_deref().is_some_and(|cur| nfsd::versions_match(cur, &line)) {
            stopped_only.push((Knob::Versions, line, st.versions.clone()));
        }
    }
    if let Some(b) = p.nfs.max_block_size {
        if st.max_block_size != Some(b) {
            stopped_only.push((Knob::MaxBlockSize, b.to_string(), st.max_block_size.map(|x| x.to_string())));
        }
    }
    if st.running() {
        if !stopped_only.is_empty() {
            let what: Vec<String> = stopped_only.iter().map(|(k, v, _)| format!("{k} = {v}")).collect();
            notes.push(format!(
                "nfsd is running, so {} cannot change now (the kernel allows it only while nfsd is stopped): \
                 stop the NFS server (e.g. /etc/init.d/nfs-kernel-server stop), run nasboot apply again, then start it",
                what.join(" and ")
            ));
        }
        let want = u32::from(size.threads);
        if st.threads != Some(want) {
            actions.push(Action::Nfsd { knob: Knob::Threads, value: want.to_string(), from: st.threads.map(|t| t.to_string()) });
        }
    } else {
        for (knob, value, from) in stopped_only {
            actions.push(Action::Nfsd { knob, value, from });
        }
        notes.push(format!("nfsd is stopped: its init script starts it with {} thread(s) from the files nasboot writes", size.threads));
    }
}

/// How long exportfs may take (it may resolve host names).
const EXPORTFS_TIMEOUT: Duration = Duration::from_secs(60);

/// Why an NFS or Samba step failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// A file could not be replaced; the previous one is unchanged (1).
    Write { path: String, source: io::Error },
    /// nfsd refused a knob under /proc/fs/nfsd (EBUSY: it is running).
    Nfsd { knob: Knob, value: String, source: io::Error },
    /// exportfs is not on PATH: `written` is written but not loaded.
    ExportfsMissing { written: String },
    /// exportfs could not be run.
    ExportfsRun { source: io::Error },
    /// `exportfs -ra` did not finish in time.
    ExportfsTimedOut,
    /// `exportfs -ra` failed without naming a file line: how it ended,
    /// and the first line it printed.
    ExportfsFailed { ended: Ended, first: String },
    /// `exportfs -ra` refused lines of the export table.
    ExportfsRejected { errors: Vec<exports::ExportfsError> },
    /// The plan refused the SMB step.
    Refused(smb::Refusal),
    /// A ksmbd tool could not be run (not on PATH, or spawn failed).
    KsmbdRun { program: &'static str, source: io::Error },
    /// A ksmbd tool failed: its argv, how it ended, its first line.
    KsmbdFailed { argv: String, ended: Ended, first: String },
    /// `ksmbd.control --shutdown` returned, but ksmbd.mountd still runs:
    /// a new one is not started beside it.
    KsmbdStillRunning,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Write { path, source } => write!(f, "{path}: cannot write: {source}; the previous file is unchanged"),
            Error::Nfsd { knob, value, source } => {
                write!(f, "nfsd {knob}: cannot write {value} to {}/{}: {source}", paths::PROC_NFSD, knob.file())?;
                if source.raw_os_error() == Some(nix::libc::EBUSY) {
                    f.write_str(": nfsd is running (EBUSY); stop it and apply again")?;
                }
                Ok(())
            }
            Error::ExportfsMissing { written } => {
                write!(f, "exportfs: not found on PATH: {written} is written but not loaded; install nfs-utils (nfs-kernel-server)")
            }
            Error::ExportfsRun { source } => write!(f, "exportfs: {source}"),
            Error::ExportfsTimedOut => write!(f, "exportfs: exportfs -ra timed out after {} s", EXPORTFS_TIMEOUT.as_secs()),
            Error::ExportfsFailed { ended, first } => write!(f, "exportfs: exportfs -ra failed ({ended}): {first}"),
            Error::ExportfsRejected { errors } => {
                f.write_str("exportfs: ")?;
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            Error::Refused(r) => r.fmt(f),
            Error::KsmbdRun { program, source } => write!(f, "{program}: {source}"),
            Error::KsmbdFailed { argv, ended, first } => write!(f, "{argv} failed ({ended}): {first}"),
            Error::KsmbdStillRunning => write!(
                f,
                "ksmbd: ksmbd.mountd (the pid in {}) still runs {} s after ksmbd.control --shutdown: it is not started again",
                paths::KSMBD_LOCK,
                KSMBD_STOP_TIMEOUT.as_secs()
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Write { source, .. } | Error::Nfsd { source, .. } | Error::ExportfsRun { source } | Error::KsmbdRun { source, .. } => {
                Some(source)
            }
            Error::ExportfsMissing { .. }
            | Error::ExportfsTimedOut
            | Error::ExportfsFailed { .. }
            | Error::ExportfsRejected { .. }
            | Error::Refused(_)
            | Error::KsmbdFailed { .. }
            | Error::KsmbdStillRunning => None,
        }
    }
}

impl ExitStatus for Error {
    /// A file that could not be written: 1. A knob or a reload: 3, the
    /// file is in place.
    fn exit_status(&self) -> Status {
        match self {
            Error::Write { .. } => Status::Failure,
            _ => Status::Partial,
        }
    }
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), Error> {
    match a {
        Action::Exports { path, text, reload } => {
            if replace(seams, path, text)? == Replaced::Unchanged || !reload {
                return Ok(());
            }
            // (ksmbd.conf only from a revert: cmd::confirm)
            if path == paths::KSMBD_CONF {
                return ksmbd_control(seams, ksmbd::Change::Reload);
            }
            exportfs(seams, path)
        }
        Action::WriteFile { path, text } => replace(seams, path, text).map(|_| ()),
        Action::Ksmbd(change) => ksmbd_control(seams, *change),
        Action::Refuse(r) => Err(Error::Refused(r.clone())),
        Action::Nfsd { knob, value, .. } => seams
            .files
            .write_kernel(Path::new(&nfsd_file(knob.file())), format!("{value}\n").as_bytes())
            .map_err(|source| Error::Nfsd { knob: *knob, value: value.clone(), source }),
    }
}

fn replace(seams: &mut Seams<'_>, path: &str, text: &str) -> Result<Replaced, Error> {
    seams.files.replace(Path::new(path), text.as_bytes()).map_err(|source| Error::Write { path: path.to_string(), source })
}

/// How long a ksmbd tool may take, and ksmbd.mountd to go after
/// `--shutdown`.
const KSMBD_TIMEOUT: Duration = Duration::from_secs(10);
const KSMBD_STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// Run a ksmbd tool (argv, through the runner seam).
fn ksmbd_tool(seams: &mut Seams<'_>, program: &'static str, args: &[&str]) -> Result<(), Error> {
    let cmd = Cmd { program, args, stdin: None, timeout: KSMBD_TIMEOUT };
    let out = seams.runner.run(&cmd).map_err(|source| Error::KsmbdRun { program, source })?;
    if out.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(if out.stderr.is_empty() { &out.stdout } else { &out.stderr }).into_owned();
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    Err(Error::KsmbdFailed { argv: cmd.display(), ended: out.ended(), first })
}

/// A reload: `ksmbd.control --reload`. A restart: `ksmbd.control
/// --shutdown`, wait for ksmbd.mountd's lock file to go, then start
/// `ksmbd.mountd` (it detaches itself).
fn ksmbd_control(seams: &mut Seams<'_>, change: ksmbd::Change) -> Result<(), Error> {
    match change {
        ksmbd::Change::Reload => ksmbd_tool(seams, "ksmbd.control", &["--reload"]),
        ksmbd::Change::Restart => {
            ksmbd_tool(seams, "ksmbd.control", &["--shutdown"])?;
            let step = Duration::from_millis(50);
            let mut waited = Duration::ZERO;
            while smb::mountd_running(seams) {
                if waited >= KSMBD_STOP_TIMEOUT {
                    return Err(Error::KsmbdStillRunning);
                }
                std::thread::sleep(step);
                waited += step;
            }
            let program = "ksmbd.mountd";
            let path = seams.runner.which(program).ok_or_else(|| Error::KsmbdRun {
                program,
                source: io::Error::new(io::ErrorKind::NotFound, "not found on PATH: install ksmbd-tools"),
            })?;
            let path = path.to_string_lossy().into_owned();
            seams
                .runner
                .start(&Cmd { program: &path, args: &[], stdin: None, timeout: KSMBD_TIMEOUT })
                .map_err(|source| Error::KsmbdRun { program, source })
        }
    }
}

/// `exportfs -ra`, with its file:line complaints in the error.
fn exportfs(seams: &mut Seams<'_>, written: &str) -> Result<(), Error> {
    if seams.runner.which("exportfs").is_none() {
        return Err(Error::ExportfsMissing { written: written.to_string() });
    }
    let cmd = Cmd { program: "exportfs", args: &["-ra"], stdin: None, timeout: EXPORTFS_TIMEOUT };
    let out = seams.runner.run(&cmd).map_err(|source| Error::ExportfsRun { source })?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let located = exports::parse_exportfs_stderr(&stderr);
    if out.success() {
        for e in &located {
            log::warn!("exportfs: {e}");
        }
        return Ok(());
    }
    Err(if !located.is_empty() {
        Error::ExportfsRejected { errors: located }
    } else if out.timed_out {
        Error::ExportfsTimedOut
    } else {
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        Error::ExportfsFailed { ended: out.ended(), first: first.to_string() }
    })
}

#[cfg(test)]
mod tests;
