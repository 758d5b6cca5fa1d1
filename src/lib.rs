//! nasboot: NICs, a minimal firewall, NFS exports and the hardware
//! watchdog for slow NAS and router boards, from one TOML profile.
//!
//! Stages: [`config`] parses and validates the profile into fixed-capacity
//! newtypes; [`plan`] observes the board and builds the ordered actions
//! (pure); the subsystems render their files (pure, golden-tested);
//! [`apply`] carries the plan out through the [`seam`]s passed in from
//! `main`. `cmd` holds one file per subcommand.

#![warn(unreachable_pub)]

// Every module is private: the binary (src/main.rs) is the library's
// only user, so what it does not reach is dead code, and rustc says so.
mod apply;
mod cli;
mod cmd;
mod config;
mod exit;
mod firewall;
mod logger;
mod net;
mod paths;
mod plan;
mod seam;
mod share;
mod step;
mod storage;
mod sys;
mod sysctl;
mod watchdog;

// What src/main.rs wires together.
pub use cli::{parse as parse_args, Cli};
pub use cmd::{dispatch, Io};
pub use exit::Status;
pub use firewall::load::ignore_hangup;
pub use logger::init as init_logger;
pub use seam::dryrun::{DryRunFiles, DryRunNetif, DryRunRunner, DryRunSysctl, DryRunWatchdogPort};
pub use seam::real::{files::RealFiles, netif::RealNetif, runner::RealRunner, sysctl::RealSysctl, watchdog::RealWatchdogPort, Root};
pub use seam::Seams;

/// What tests/alloc_tick.rs drives: the watchdog daemon over a counting
/// device. It needs a global allocator of its own, so it is an
/// integration test and not a unit test.
#[doc(hidden)]
pub mod daemon_test {
    pub use crate::config::parse_bytes;
    pub use crate::config::watchdog::Watchdog as Config;
    pub use crate::seam::watchdog::{Support, WatchdogDevice};
    pub use crate::watchdog::daemon::{serve, Host, Outcome, Sig};
    pub use crate::watchdog::health::Failure;
    pub use crate::watchdog::Device;
}
