//! `nasboot firewall render|apply|confirm`.


use super::Io;
use crate::cli::{Cli, FirewallCommand};
use crate::exit::Status;
use crate::plan::{self, Action};
use crate::seam::Seams;

pub fn run(cli: &Cli, sub: FirewallCommand, seams: &mut Seams<'_>, io: &mut Io<'_>) -> Status {
    let loaded = match super::load(cli, seams, io) {
        Ok(l) => l,
        Err(status) => return status,
    };
    let now = plan::observe(&loaded.profile, seams);
    let actions = crate::firewall::plan(&loaded.profile, &now.firewall);
    match sub {
        FirewallCommand::Render => {
            for a in &actions {
                if let Some((_, text)) = Action::Firewall(a.clone()).rendered() {
                    let _ = io.out.write_all(text.as_bytes());
                }
            }
            Status::Ok
        }
        FirewallCommand::Apply | FirewallCommand::Confirm => {
            let _ = writeln!(io.err, "nasboot: firewall {sub:?}: not implemented yet");
            Status::Failure
        }
    }
}
