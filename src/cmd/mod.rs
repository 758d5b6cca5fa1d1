//! The subcommands, one file each. Every command gets the parsed command
//! line, the seams and two output streams, and returns an exit status.

pub(crate) mod apply;
mod background;
pub(crate) mod check;
pub(crate) mod confirm;
pub(crate) mod firewall;
pub(crate) mod plan;
pub(crate) mod run;
pub(crate) mod status;
pub(crate) mod watchdog;

#[cfg(test)]
mod tests;

use std::io::Write;

use crate::cli::{Cli, Command};
use crate::config::{self, Loaded};
use crate::exit::Status;
use crate::seam::{Lock, Seams};

/// Where a command writes: results to `out`, diagnostics to `err`.
pub struct Io<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

/// Run the command the command line names.
pub fn dispatch(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    match &cli.command {
        Command::Help => {
            let _ = io.out.write_all(crate::cli::HELP.as_bytes());
            Status::Ok
        }
        Command::Version => {
            let _ = writeln!(io.out, "nasboot {}", env!("CARGO_PKG_VERSION"));
            Status::Ok
        }
        Command::Check => check::run(cli, seams, io),
        Command::Plan => plan::run(cli, seams, io),
        Command::Apply => apply::run(cli, seams, io),
        Command::Run => run::run(cli, seams, io),
        Command::Status => status::run(cli, seams, io),
        Command::Confirm => confirm::confirm(cli, seams, io),
        Command::Rollback => confirm::rollback(cli, seams, io),
        Command::ConfirmHold => confirm::hold(cli, seams, io),
        Command::Watchdog => watchdog::run(cli, seams, io),
        Command::Firewall(sub) => firewall::run(cli, *sub, seams, io),
    }
}

/// The plan's notes, on stderr: what a human should know before it is
/// carried out (`apply`, `firewall apply`).
pub(crate) fn say_notes(notes: &[String], io: &mut Io<'_>) {
    for n in notes {
        let _ = writeln!(io.err, "nasboot: note: {n}");
    }
}

/// Take the apply lock (`paths::APPLY_LOCK`), before the profile is read:
/// a command that changes the board, started while another runs (udev's
/// `firewall apply` on a hotplug, the init script's `run`, one by hand),
/// waits for it, then reads the profile as it is then, so the one started
/// last decides the end state. A lock that cannot be taken at all (a
/// read-only /run, or one not mounted yet) is said, and the command goes on
/// without it: a board's boot is not stopped for it.
pub(crate) fn lock(seams: &mut Seams<'_>, io: &mut Io<'_>) -> Lock {
    let path = std::path::Path::new(crate::paths::APPLY_LOCK);
    let mut e = match seams.files.lock(path, false) {
        Ok(held) => return held,
        Err(e) => e,
    };
    if e.kind() == std::io::ErrorKind::WouldBlock {
        let _ = writeln!(io.err, "nasboot: {}: another nasboot is changing the board; waiting for it", path.display());
        e = match seams.files.lock(path, true) {
            Ok(held) => return held,
            Err(e) => e,
        };
    }
    let _ = writeln!(io.err, "nasboot: {}: cannot take the lock ({e}); going on without it", path.display());
    Lock::none()
}

/// Read and validate the profile named on the command line (relocated
/// under `--root`). On error the message names the file, line, column and
/// key, and the status is 2: callers apply nothing.
pub(crate) fn load(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Result<Loaded, Status> {
    let file = cli.config.display().to_string();
    let bytes = match seams.files.read(&cli.config) {
        Ok(b) => b,
        Err(e) => {
            let _ = writeln!(io.err, "nasboot: {file}: cannot read the profile: {e}");
            return Err(Status::Usage);
        }
    };
    let mut loaded = match parse_on_board(&file, &bytes, seams, io) {
        Ok((l, _)) => l,
        Err(_) => return Err(Status::Usage),
    };
    for w in &loaded.warnings {
        let _ = writeln!(io.err, "nasboot: {w}");
    }
    if cli.strict && !loaded.warnings.is_empty() {
        let _ = writeln!(io.err, "nasboot: --strict: {} warning(s) count as errors", loaded.warnings.len());
        return Err(Status::Usage);
    }
    // `--backend` wins over `[firewall] backend`.
    if let Some(b) = cli.backend {
        loaded.profile.firewall.backend = match b {
            crate::cli::BackendArg::Nftables => config::firewall::Backend::Nftables,
            crate::cli::BackendArg::Iptables => config::firewall::Backend::Iptables,
        };
    }
    // `--loader` wins over `[firewall] loader`.
    if let Some(l) = cli.loader {
        loaded.profile.firewall.loader = match l {
            crate::cli::LoaderArg::Auto => config::firewall::Loader::Auto,
            crate::cli::LoaderArg::Nft => config::firewall::Loader::Nft,
        };
    }
    Ok(loaded)
}

/// Parse `bytes` as the profile `file`, then check its export and share
/// paths on the board: they must exist (warnings; errors with `[nfs]
/// strict = true`). The profile with every warning, and the board's
/// warnings apart (a candidate's check counts only those). An error is
/// said; Err(true) when the profile does not parse.
pub(crate) fn parse_on_board(file: &str, bytes: &[u8], seams: &mut Seams<'_>, io: &mut Io<'_>) -> Result<(Loaded, usize), bool> {
    let mut loaded = match config::parse_bytes(file, bytes) {
        Ok(l) => l,
        Err(e) => {
            let _ = writeln!(io.err, "nasboot: {e}");
            return Err(true);
        }
    };
    // The text parsed as UTF-8 above.
    let src = config::Source { file, text: std::str::from_utf8(bytes).unwrap_or("") };
    match config::validate::board_paths(&loaded.profile, &src, &mut |p| on_board(seams.files, p)) {
        Ok(w) => {
            let board = w.len();
            loaded.warnings.extend(w);
            Ok((loaded, board))
        }
        Err(e) => {
            let _ = writeln!(io.err, "nasboot: {e}");
            Err(false)
        }
    }
}

/// What stands at an export or share path on the board, for
/// `config::validate::board_paths`.
pub(crate) fn on_board(files: &mut dyn crate::seam::Files, p: &std::path::Path) -> config::validate::OnBoard {
    match (files.exists(p), files.is_dir(p)) {
        (false, _) => config::validate::OnBoard::Missing,
        (true, true) => config::validate::OnBoard::Dir,
        (true, false) => config::validate::OnBoard::Other,
    }
}
