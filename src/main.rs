//! The `nasboot` binary: parse the command line, pick the seams (real or
//! dry-run), run the command, exit with its status.

use std::io::{self, Write};
use std::process::ExitCode;

use nasboot::cli;
use nasboot::cmd::{self, Io};
use nasboot::seam::dryrun::{DryRunFiles, DryRunNetif, DryRunRunner, DryRunSysctl, DryRunWatchdogPort};
use nasboot::seam::real::{files::RealFiles, netif::RealNetif, runner::RealRunner, sysctl::RealSysctl};
use nasboot::seam::real::{watchdog::RealWatchdogPort, Root};
use nasboot::seam::Seams;

fn main() -> ExitCode {
    let cli = match cli::parse(std::env::args_os().skip(1)) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(io::stderr(), "nasboot: {e}");
            return ExitCode::from(nasboot::exit::Status::Usage.code());
        }
    };
    let level = match cli.verbosity {
        i8::MIN..=-1 => log::LevelFilter::Error,
        0 => log::LevelFilter::Warn,
        1 => log::LevelFilter::Info,
        _ => log::LevelFilter::Debug,
    };
    nasboot::logger::init(level);

    if cli.confirm.is_some() && !cli.dry_run {
        // `firewall apply --confirm` must outlive a dropped SSH session to
        // roll back (firewall::apply).
        nasboot::firewall::apply::ignore_hangup();
    }
    let root = Root::new(cli.root.clone());
    let stdout = io::stdout();
    let stderr = io::stderr();
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    let mut io = Io { out: &mut out, err: &mut err };
    let status = if cli.dry_run {
        let mut files = DryRunFiles::new(root.clone());
        let mut sysctl = DryRunSysctl::new(root);
        let mut runner = DryRunRunner::default();
        let mut netif = DryRunNetif::default();
        let mut watchdog = DryRunWatchdogPort;
        let mut seams = Seams { files: &mut files, sysctl: &mut sysctl, runner: &mut runner, netif: &mut netif, watchdog: &mut watchdog };
        cmd::dispatch(&cli, &mut seams, &mut io)
    } else {
        let mut files = RealFiles::new(root.clone());
        let mut sysctl = RealSysctl::new(root.clone());
        let mut runner = RealRunner;
        let mut netif = RealNetif::new();
        let mut watchdog = RealWatchdogPort::new(root);
        let mut seams = Seams { files: &mut files, sysctl: &mut sysctl, runner: &mut runner, netif: &mut netif, watchdog: &mut watchdog };
        cmd::dispatch(&cli, &mut seams, &mut io)
    };
    ExitCode::from(status.code())
}
