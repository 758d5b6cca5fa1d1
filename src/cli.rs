//! Command line: `nasboot [OPTIONS] COMMAND [ARGS]`, parsed with lexopt.
//!
//! Only parsing lives here; `cmd/` runs the commands.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

use crate::paths;

/// The subcommands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Validate the profile only.
    Check,
    /// Print the ordered actions and rendered files; no side effects.
    Plan,
    /// Apply once; idempotent.
    Apply,
    /// Apply, then keep the watchdog in the foreground.
    Run,
    /// Show the board's current state against the profile.
    Status,
    /// Run the watchdog manager alone, in the foreground.
    Watchdog,
    /// Keep the candidate of `apply --confirm`.
    Confirm,
    /// Go back to the last good profile now.
    Rollback,
    /// The holder of a pending candidate's revert (started by `apply
    /// --confirm`, not for people).
    ConfirmHold,
    /// `firewall render|apply|confirm`.
    Firewall(FirewallCommand),
    /// `--help`.
    Help,
    /// `--version`.
    Version,
}

/// `nasboot firewall ...`
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirewallCommand {
    /// Print the rule set for the chosen backend.
    Render,
    /// Apply the firewall alone.
    Apply,
    /// Keep a rule set applied with `--confirm`.
    Confirm,
    /// Close everything but loopback and replies (a profile that cannot be read).
    LockDown,
}

/// Firewall backend override from the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendArg {
    Nftables,
    Iptables,
}

/// nftables loader override from the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoaderArg {
    /// nasboot's own netlink batch where the kernel takes it.
    Auto,
    /// The nft tool.
    Nft,
}

/// Everything the command line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cli {
    pub command: Command,
    pub config: PathBuf,
    pub root: Option<PathBuf>,
    pub dry_run: bool,
    /// -1 quiet, 0 default, 1.. verbose.
    pub verbosity: i8,
    pub strict: bool,
    pub backend: Option<BackendArg>,
    pub loader: Option<LoaderArg>,
    /// `firewall apply --confirm SECONDS`, `apply --confirm SECONDS`.
    pub confirm: Option<u32>,
    /// `apply --confirm SECS FILE`: the candidate profile.
    pub candidate: Option<PathBuf>,
    /// `apply --rollback-first`: a pending candidate is rolled back first.
    pub rollback_first: bool,
    /// `run --background`: the daemon goes on in a child once the apply
    /// is in force, and the command returns with the apply's status.
    pub background: bool,
    /// `run --background --pidfile FILE`: the daemon's pid, written
    /// before the command returns.
    pub pidfile: Option<PathBuf>,
    /// `run --background --log FILE`: the daemon's standard error,
    /// appended to FILE.
    pub log: Option<PathBuf>,
}

/// A usage error; exits with status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "usage: {}; see `nasboot --help`", self.0)
    }
}

impl From<lexopt::Error> for UsageError {
    fn from(e: lexopt::Error) -> Self {
        UsageError(e.to_string())
    }
}

pub(crate) const HELP: &str = "\
nasboot: NICs, a minimal firewall, NFS exports and the hardware watchdog
for slow NAS and router boards, from one TOML profile.

usage: nasboot [OPTIONS] COMMAND

commands:
  check               validate the profile only
  plan                print the ordered actions and rendered files (no changes)
  apply               apply once; re-applying changes only what differs
  apply --confirm SECS [FILE]
                      apply FILE (else the profile) as a candidate: it is
                      reverted to the last good profile after SECS unless
                      `nasboot confirm` runs, even across a crash or reboot
  confirm             keep the pending candidate
  rollback            go back to the last good profile now
  run                 apply, then keep the watchdog in the foreground
                      (-b: in the background once the apply is in force)
  status              show the current state against the profile
  watchdog            run the watchdog manager alone, in the foreground
  firewall render     print the rule set
  firewall apply      apply the firewall alone (--confirm SECONDS to roll back
                      unless `nasboot firewall confirm` runs in time)
  firewall confirm    keep the rule set applied with --confirm
  firewall lock-down  without reading the profile: drop everything except
                      loopback and replies (for boot when `check` fails)

options:
  -c, --config FILE   profile (default /etc/nasboot.toml)
  -r, --root DIR      relocate every file path under DIR
  -n, --dry-run       print what would change, change nothing
      --backend B     firewall backend: nftables or iptables (default: auto)
      --loader L      nftables loader: auto (netlink where the kernel takes
                      it, else the nft tool) or nft (the tool always)
      --confirm SECS  with `apply` or `firewall apply`: roll back unless
                      confirmed within SECS (1 to 3600)
      --rollback-first  with `apply`: roll a pending candidate back first
                      (else apply refuses while one is pending, exit 2)
  -b, --background    with `run`: return once the apply is in force, with
                      its status; the watchdog daemon goes on in a child
      --pidfile FILE  with `run -b`: the daemon's pid, written before return
      --log FILE      with `run -b`: the daemon's log (its standard error)
                      appended to FILE
      --strict        treat warnings about the profile as errors
  -v, --verbose       more logging (repeatable)
  -q, --quiet         errors only, no summaries
  -h, --help          this text
  -V, --version       the version

exit status: 0 ok, 1 runtime failure, 2 usage or profile error,
3 applied partially (each failed knob is reported).
";

/// Parse the arguments (without the program name).
pub fn parse<I>(args: I) -> Result<Cli, UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    use lexopt::prelude::*;

    let mut parser = lexopt::Parser::from_args(args);
    let mut words: Vec<String> = Vec::new();
    let mut cli = Cli {
        command: Command::Help,
        config: PathBuf::from(paths::DEFAULT_CONFIG),
        root: None,
        dry_run: false,
        verbosity: 0,
        strict: false,
        backend: None,
        loader: None,
        confirm: None,
        candidate: None,
        rollback_first: false,
        background: false,
        pidfile: None,
        log: None,
    };
    let mut asked_help = false;
    let mut asked_version = false;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('c') | Long("config") => cli.config = parser.value()?.into(),
            Short('r') | Long("root") => cli.root = Some(parser.value()?.into()),
            Short('n') | Long("dry-run") => cli.dry_run = true,
            Short('v') | Long("verbose") => cli.verbosity = cli.verbosity.saturating_add(1),
            Short('q') | Long("quiet") => cli.verbosity = -1,
            Long("strict") => cli.strict = true,
            Long("backend") => cli.backend = Some(backend(&parser.value()?.string()?)?),
            Long("loader") => cli.loader = Some(loader(&parser.value()?.string()?)?),
            Long("confirm") => cli.confirm = Some(confirm_secs(&parser.value()?.string()?)?),
            Long("rollback-first") => cli.rollback_first = true,
            Short('b') | Long("background") => cli.background = true,
            Long("pidfile") => cli.pidfile = Some(parser.value()?.into()),
            Long("log") => cli.log = Some(parser.value()?.into()),
            Short('h') | Long("help") => asked_help = true,
            Short('V') | Long("version") => asked_version = true,
            Value(v) => words.push(v.string()?),
            _ => return Err(arg.unexpected().into()),
        }
    }
    if asked_help {
        cli.command = Command::Help;
        return Ok(cli);
    }
    if asked_version {
        cli.command = Command::Version;
        return Ok(cli);
    }
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    (cli.command, cli.candidate) = command(&words, cli.confirm.is_some())?;
    combinations(&cli)?;
    Ok(cli)
}

/// `--backend`'s value.
fn backend(v: &str) -> Result<BackendArg, UsageError> {
    match v {
        "nftables" | "nft" => Ok(BackendArg::Nftables),
        "iptables" => Ok(BackendArg::Iptables),
        other => Err(UsageError(format!("--backend takes nftables or iptables, not `{other}`"))),
    }
}

/// `--loader`'s value.
fn loader(v: &str) -> Result<LoaderArg, UsageError> {
    match v {
        "auto" => Ok(LoaderArg::Auto),
        "nft" => Ok(LoaderArg::Nft),
        other => Err(UsageError(format!("--loader takes auto or nft, not `{other}`"))),
    }
}

/// `--confirm`'s value: whole seconds, 1 to 3600.
fn confirm_secs(v: &str) -> Result<u32, UsageError> {
    let secs: u32 = v.parse().map_err(|_| UsageError(format!("--confirm takes whole seconds, not `{v}`")))?;
    if secs == 0 || secs > 3600 {
        return Err(UsageError(format!("--confirm takes 1 to 3600 seconds, not {secs}")));
    }
    Ok(secs)
}

/// The command the words name, and `apply --confirm`'s candidate file.
fn command(words: &[&str], confirm: bool) -> Result<(Command, Option<PathBuf>), UsageError> {
    let command = match words {
        ["check"] => Command::Check,
        ["plan"] => Command::Plan,
        ["apply"] => Command::Apply,
        ["apply", file] if confirm => return Ok((Command::Apply, Some(PathBuf::from(file)))),
        ["confirm"] => Command::Confirm,
        ["rollback"] => Command::Rollback,
        ["confirm-hold"] => Command::ConfirmHold,
        ["run"] => Command::Run,
        ["status"] => Command::Status,
        ["watchdog"] => Command::Watchdog,
        ["firewall", "render"] => Command::Firewall(FirewallCommand::Render),
        ["firewall", "apply"] => Command::Firewall(FirewallCommand::Apply),
        ["firewall", "confirm"] => Command::Firewall(FirewallCommand::Confirm),
        ["firewall", "lock-down"] => Command::Firewall(FirewallCommand::LockDown),
        ["firewall"] => return Err(UsageError("firewall needs render, apply, confirm or lock-down".into())),
        ["help"] => Command::Help,
        [] => return Err(UsageError("a command is needed".into())),
        other => return Err(UsageError(format!("unknown command `{}`", other.join(" ")))),
    };
    Ok((command, None))
}

/// Options that go only with some commands, or not together.
fn combinations(cli: &Cli) -> Result<(), UsageError> {
    if cli.confirm.is_some() && !matches!(cli.command, Command::Apply | Command::Firewall(FirewallCommand::Apply)) {
        return Err(UsageError("--confirm goes with `apply` or `firewall apply`".into()));
    }
    if cli.confirm.is_some() && cli.command == Command::Apply && cli.dry_run {
        return Err(UsageError("`apply --confirm` and --dry-run do not go together (a dry run has nothing to confirm)".into()));
    }
    if cli.rollback_first && cli.command != Command::Apply {
        return Err(UsageError("--rollback-first goes with `apply`".into()));
    }
    if cli.background && cli.command != Command::Run {
        return Err(UsageError("--background goes with `run`".into()));
    }
    if cli.pidfile.is_some() && !cli.background {
        return Err(UsageError("--pidfile goes with `run --background`".into()));
    }
    if cli.log.is_some() && !cli.background {
        return Err(UsageError("--log goes with `run --background`".into()));
    }
    if cli.background && cli.dry_run {
        return Err(UsageError("--background and --dry-run do not go together (a dry run starts no daemon)".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Cli, UsageError> {
        parse(args.iter().copied())
    }

    #[test]
    fn defaults() {
        let cli = p(&["check"]).unwrap();
        assert_eq!(cli.command, Command::Check);
        assert_eq!(cli.config, PathBuf::from("/etc/nasboot.toml"));
        assert_eq!(cli.root, None);
        assert!(!cli.dry_run);
        assert_eq!(cli.verbosity, 0);
    }

    #[test]
    fn options_anywhere() {
        let cli = p(&["-v", "apply", "--root", "/tmp/r", "-c", "x.toml", "-n", "-v"]).unwrap();
        assert_eq!(cli.command, Command::Apply);
        assert_eq!(cli.root, Some(PathBuf::from("/tmp/r")));
        assert_eq!(cli.config, PathBuf::from("x.toml"));
        assert!(cli.dry_run);
        assert_eq!(cli.verbosity, 2);
    }

    #[test]
    fn firewall_subcommands() {
        let cli = p(&["firewall", "apply", "--loader", "nft"]).unwrap();
        assert_eq!(cli.loader, Some(LoaderArg::Nft));
        let cli = p(&["firewall", "apply", "--confirm", "30", "--backend", "iptables"]).unwrap();
        assert_eq!(cli.command, Command::Firewall(FirewallCommand::Apply));
        assert_eq!(cli.confirm, Some(30));
        assert_eq!(cli.backend, Some(BackendArg::Iptables));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let cases: &[(&[&str], &str)] = &[
            (&[], "a command is needed"),
            (&["frobnicate"], "unknown command `frobnicate`"),
            (&["firewall"], "firewall needs render, apply, confirm or lock-down"),
            (&["check", "--bogus"], "--bogus"),
            (&["check", "--confirm", "10"], "--confirm goes with `apply` or `firewall apply`"),
            (&["apply", "--confirm", "10", "-n"], "do not go together"),
            (&["status", "--rollback-first"], "--rollback-first goes with `apply`"),
            (&["apply", "b.toml"], "unknown command `apply b.toml`"),
            (&["firewall", "apply", "--confirm", "ten"], "whole seconds"),
            (&["firewall", "apply", "--confirm", "0"], "1 to 3600"),
            (&["firewall", "render", "--backend", "pf"], "nftables or iptables"),
            (&["firewall", "apply", "--loader", "netlink"], "--loader takes auto or nft, not `netlink`"),
            (&["check", "--config"], "missing argument"),
            (&["apply", "-b"], "--background goes with `run`"),
            (&["run", "--pidfile", "/run/nasboot.pid"], "--pidfile goes with `run --background`"),
            (&["run", "-b", "-n"], "do not go together"),
            (&["run", "--log", "/var/log/nasboot.log"], "--log goes with `run --background`"),
        ];
        for (args, want) in cases {
            let err = p(args).expect_err(&format!("{args:?} should fail"));
            assert!(err.to_string().contains(want), "{args:?}: {err} lacks `{want}`");
        }
    }

    #[test]
    fn apply_confirm_takes_a_candidate_file() {
        let cli = p(&["apply", "--confirm", "30", "b.toml"]).unwrap();
        assert_eq!((cli.command, cli.confirm, cli.candidate), (Command::Apply, Some(30), Some(PathBuf::from("b.toml"))));
        let cli = p(&["apply", "--confirm", "3", "--rollback-first"]).unwrap();
        assert!(cli.rollback_first && cli.candidate.is_none());
        assert_eq!(p(&["confirm"]).unwrap().command, Command::Confirm);
        assert_eq!(p(&["rollback"]).unwrap().command, Command::Rollback);
    }

    #[test]
    fn run_in_the_background() {
        let cli = p(&["run", "-b", "--pidfile", "/run/nasboot.pid", "--log", "/var/log/nasboot.log"]).unwrap();
        assert_eq!(cli.log, Some(PathBuf::from("/var/log/nasboot.log")));
        assert_eq!(cli.command, Command::Run);
        assert!(cli.background);
        assert_eq!(cli.pidfile, Some(PathBuf::from("/run/nasboot.pid")));
        let cli = p(&["--background", "run"]).unwrap();
        assert!(cli.background && cli.pidfile.is_none());
    }

    #[test]
    fn help_wins() {
        assert_eq!(p(&["apply", "--help"]).unwrap().command, Command::Help);
        assert_eq!(p(&["-V"]).unwrap().command, Command::Version);
    }
}
