//! `nasboot status`: the board's current state against the profile.


use super::Io;
use crate::cli::Cli;
use crate::exit::Status;
use crate::plan;
use crate::seam::Seams;

pub fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let p = &loaded.profile;
    let now = plan::observe(p, seams);
    let pending = plan::plan(p, &now);
    let _ = writeln!(io.out, "board {} ({})", p.board.name, cli.config.display());
    for (name, state) in &now.net.links {
        match state {
            Some(s) => {
                let _ = writeln!(
                    io.out,
                    "  {name}: {} mtu {} txqueuelen {}{}",
                    if s.up { "up" } else { "down" },
                    s.mtu,
                    s.txqueuelen,
                    if s.carrier { " carrier" } else { "" }
                );
            }
            None => {
                let _ = writeln!(io.out, "  {name}: missing");
            }
        }
    }
    if pending.actions.is_empty() {
        let _ = writeln!(io.out, "in sync with the profile");
    } else {
        let _ = writeln!(io.out, "{} change(s) pending:", pending.actions.len());
        for a in &pending.actions {
            let _ = writeln!(io.out, "  {:<8}  {a}", a.phase());
        }
    }
    Status::Ok
}
