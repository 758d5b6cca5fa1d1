//! `nasboot check`: validate the profile, name the listeners the stateless
//! firewall would expose (`firewall::listeners`), apply nothing.

use super::Io;
use crate::cli::Cli;
use crate::exit::Status;
use crate::firewall;
use crate::seam::Seams;

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let p = &loaded.profile;
    if cli.verbosity < 0 {
        return Status::Ok;
    }
    let _ = writeln!(
        io.out,
        "{}: ok: board {}, {} interface(s), {} export(s), firewall {}, watchdog {}",
        cli.config.display(),
        p.board.name,
        p.interface.len(),
        p.nfs.export.len(),
        p.firewall.profile,
        if p.watchdog.is_some() { "on" } else { "off" },
    );
    for n in firewall::listeners::notes(p, seams) {
        let _ = writeln!(io.out, "note: {n}");
    }
    Status::Ok
}
