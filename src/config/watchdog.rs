//! `[watchdog]`: the hardware watchdog and its health checks.

use serde::Deserialize;

use super::types::AbsPath;

/// Seconds, 1..=3600.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seconds(pub u32);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::types::int_in_range(d, 1, 3600, "seconds:").map(|n| Seconds(n as u32))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Watchdog {
    /// Device; default /dev/watchdog0, then /dev/watchdog.
    pub device: Option<AbsPath>,
    /// Hardware timeout requested from the driver (clamped to its limits).
    pub timeout: Seconds,
    /// Pet interval; default and maximum timeout/2.
    pub interval: Option<Seconds>,
}
