//! `[watchdog]`: the hardware watchdog, its health checks, the repair
//! policy, boot-loop backoff and the real-time knobs. Every check is
//! optional; documented defaults are the `*_default` functions below.

use std::fmt;

use super::decode::{self as dec, Decode, Error, Fields, Value};
use super::types::{AbsPath, IfName};

/// Pidfiles watched at most.
pub(crate) const MAX_PIDFILES: usize = 4;
/// Words in a command line (program included).
pub(crate) const MAX_ARGV: usize = 8;

/// Seconds, 1..=3600.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seconds(pub u32);

impl Decode for Seconds {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        dec::int_in_range(v, 1, 3600, "seconds:").map(|n| Seconds(n as u32))
    }
}

/// A load average limit in hundredths (`max_load1 = 4.5` is 450), so the
/// model keeps `Eq`. 0.01 to 1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Load(pub u32);

/// A float or an integer. The value is not echoed in the error: printing
/// a float would link core's float formatting (config/decode.rs).
impl Decode for Load {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let x = dec::float_or_int(v, "a load average from 0.01 to 1000")?;
        if (0.01..=1000.0).contains(&x) {
            Ok(Load((x * 100.0).round() as u32))
        } else {
            Err(Error::msg("load average out of range (0.01 to 1000)".to_string()))
        }
    }
}

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

/// A command: program and arguments, run without a shell.
pub(crate) type Argv = heapless::Vec<heapless::String<63>, MAX_ARGV>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watchdog {
    /// Device; default /dev/watchdog0, then /dev/watchdog.
    pub device: Option<AbsPath>,
    /// Hardware timeout requested from the driver (clamped to its limits).
    pub timeout: Seconds,
    /// Pet interval; default and maximum timeout/2.
    pub interval: Option<Seconds>,

    // Health checks, each optional.
    /// 1, 5 and 15 minute load average limits (/proc/loadavg).
    pub max_load1: Option<Load>,
    pub max_load5: Option<Load>,
    pub max_load15: Option<Load>,
    /// Least MemAvailable, in kB (/proc/meminfo).
    pub min_memory_kb: Option<u64>,
    /// Processes that must be alive (the pid in each file).
    pub pidfiles: heapless::Vec<AbsPath, MAX_PIDFILES>,
    /// A file some service touches; it must be younger than `heartbeat_max_age`.
    pub heartbeat_file: Option<AbsPath>,
    /// Default 60 s.
    pub heartbeat_max_age: Option<Seconds>,
    /// An interface whose received-bytes counter must keep advancing.
    pub rx_interface: Option<IfName>,
    /// A temperature input in millidegrees (hwmon `tempK_input`) and its limit in °C.
    pub temperature_sensor: Option<AbsPath>,
    pub max_temperature: Option<u32>,
    /// A test program: exit 0 is healthy; killed at `test_timeout` (default 10 s).
    pub test_command: Argv,
    pub test_timeout: Option<Seconds>,

    // Repair policy.
    /// Run when a check has failed for `retry_timeout`; killed at `repair_timeout` (default 60 s).
    pub repair_command: Argv,
    pub repair_timeout: Option<Seconds>,
    /// How long a check may keep failing before repair (or reset). Default 60 s.
    pub retry_timeout: Option<Seconds>,
    /// Repairs tried before giving up and letting the hardware reset. Default 1.
    pub max_repairs: Option<u32>,

    // Boot-loop backoff.
    /// After this many watchdog resets within `boot_loop_window`, boot in the
    /// safe profile. Default 3; 0 turns backoff off.
    pub boot_loop_resets: Option<u32>,
    /// Seconds; default 3600.
    pub boot_loop_window: Option<u32>,

    // Hand-over and real time.
    /// Run on SIGUSR2 with the open device inherited (`WDTFD=<fd>`).
    pub handover_command: Argv,
    /// mlockall(MCL_CURRENT|MCL_FUTURE) before petting.
    pub mlock: bool,
    /// SCHED_RR with this priority (1 to 99).
    pub rt_priority: Option<u8>,
}

impl Decode for Watchdog {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(
            v,
            "struct Watchdog",
            &[
                "device",
                "timeout",
                "interval",
                "max_load1",
                "max_load5",
                "max_load15",
                "min_memory_kb",
                "pidfiles",
                "heartbeat_file",
                "heartbeat_max_age",
                "rx_interface",
                "temperature_sensor",
                "max_temperature",
                "test_command",
                "test_timeout",
                "repair_command",
                "repair_timeout",
                "retry_timeout",
                "max_repairs",
                "boot_loop_resets",
                "boot_loop_window",
                "handover_command",
                "mlock",
                "rt_priority",
            ],
        )?;
        Ok(Watchdog {
            device: f.opt("device")?,
            timeout: f.req("timeout")?,
            interval: f.opt("interval")?,
            max_load1: f.opt("max_load1")?,
            max_load5: f.opt("max_load5")?,
            max_load15: f.opt("max_load15")?,
            min_memory_kb: f.opt("min_memory_kb")?,
            pidfiles: f.or_default("pidfiles")?,
            heartbeat_file: f.opt("heartbeat_file")?,
            heartbeat_max_age: f.opt("heartbeat_max_age")?,
            rx_interface: f.opt("rx_interface")?,
            temperature_sensor: f.opt("temperature_sensor")?,
            max_temperature: f.opt("max_temperature")?,
            test_command: f.or_default("test_command")?,
            test_timeout: f.opt("test_timeout")?,
            repair_command: f.or_default("repair_command")?,
            repair_timeout: f.opt("repair_timeout")?,
            retry_timeout: f.opt("retry_timeout")?,
            max_repairs: f.opt("max_repairs")?,
            boot_loop_resets: f.opt("boot_loop_resets")?,
            boot_loop_window: f.opt("boot_loop_window")?,
            handover_command: f.or_default("handover_command")?,
            mlock: f.or_default("mlock")?,
            rt_priority: f.opt("rt_priority")?,
        })
    }
}

impl Watchdog {
    pub fn heartbeat_max_age(&self) -> u32 {
        self.heartbeat_max_age.map_or(60, |s| s.0)
    }
    pub fn test_timeout(&self) -> u32 {
        self.test_timeout.map_or(10, |s| s.0)
    }
    pub fn repair_timeout(&self) -> u32 {
        self.repair_timeout.map_or(60, |s| s.0)
    }
    pub fn retry_timeout(&self) -> u32 {
        self.retry_timeout.map_or(60, |s| s.0)
    }
    pub fn max_repairs(&self) -> u32 {
        self.max_repairs.unwrap_or(1)
    }
    pub fn boot_loop_resets(&self) -> u32 {
        self.boot_loop_resets.unwrap_or(3)
    }
    pub fn boot_loop_window(&self) -> u32 {
        self.boot_loop_window.unwrap_or(3600)
    }
    /// Whether any health check is configured.
    pub fn has_checks(&self) -> bool {
        self.max_load1.is_some()
            || self.max_load5.is_some()
            || self.max_load15.is_some()
            || self.min_memory_kb.is_some()
            || !self.pidfiles.is_empty()
            || self.heartbeat_file.is_some()
            || self.rx_interface.is_some()
            || self.temperature_sensor.is_some()
            || !self.test_command.is_empty()
    }
}
