//! `[sysctl]` and `[[storage]]`: global kernel knobs and block devices.

use super::decode::{boxed, decode_enum, Decode, Error, Fields, Value};
use super::types::{Name, SysctlKey, SysctlValue};

pub(crate) const MAX_SYSCTLS: usize = 32;
pub(crate) const MAX_STORAGE: usize = 8;

/// Shipped sysctl presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysctlPreset {
    /// See `net::preset`: larger socket buffer maxima and backlog for a
    /// slow CPU serving files, leaving TCP autotuning on.
    SlowCpuNas,
}

decode_enum!(SysctlPreset { "slow-cpu-nas" => SlowCpuNas });

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sysctl {
    pub preset: Option<SysctlPreset>,
    /// Explicit values; they win over the preset. Boxed and decoded in a
    /// frame of its own, like the profile's other big members (its
    /// capacity is inline): see `Profile`.
    pub set: Box<heapless::LinearMap<SysctlKey, SysctlValue, MAX_SYSCTLS>>,
}

/// One `[[storage]]`: a block device's queue settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Storage {
    /// The name under /sys/block, e.g. "sda".
    pub device: super::Spanned<Name>,
    /// /sys/block/DEV/queue/read_ahead_kb.
    pub read_ahead_kb: Option<u32>,
}

impl Decode for Sysctl {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(v, "struct Sysctl", &["preset", "set"])?;
        Ok(Sysctl { preset: f.opt("preset")?, set: boxed(&f, "set")? })
    }
}

impl Decode for Storage {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let f = Fields::new(v, "struct Storage", &["device", "read_ahead_kb"])?;
        Ok(Storage { device: f.req("device")?, read_ahead_kb: f.opt("read_ahead_kb")? })
    }
}
