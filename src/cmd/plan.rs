//! `nasboot plan`: read the board's state, print the ordered actions and
//! the rendered files. Changes nothing.

use super::Io;
use crate::cli::Cli;
use crate::exit::Status;
use crate::seam::Seams;
use crate::{firewall, plan};

pub(crate) fn run(cli: &Cli, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let now = plan::observe(&loaded.profile, seams);
    let mut plan = plan::plan(&loaded.profile, &now);
    plan.notes.extend(firewall::listeners::notes(&loaded.profile, seams));
    let _ = writeln!(io.out, "# nasboot plan for board {} ({})", loaded.profile.board.name, cli.config.display());
    let _ = write!(io.out, "{plan}");
    Status::Ok
}
