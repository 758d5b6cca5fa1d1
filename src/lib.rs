//! nasboot: NICs, a minimal firewall, NFS exports and the hardware
//! watchdog for slow NAS and router boards, from one TOML profile.
//!
//! Stages: [`config`] parses and validates the profile into fixed-capacity
//! newtypes; [`plan`] observes the board and builds the ordered actions
//! (pure); the subsystems render their files (pure, golden-tested);
//! [`apply`] carries the plan out through the [`seam`]s passed in from
//! `main`. `cmd` holds one file per subcommand.

pub mod apply;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod exit;
pub mod firewall;
pub mod logger;
pub mod net;
pub mod nfs;
pub mod paths;
pub mod plan;
pub mod seam;
pub mod storage;
pub mod sysctl;
pub mod watchdog;
