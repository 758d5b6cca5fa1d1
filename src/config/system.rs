//! `[sysctl]` and `[[storage]]`: global kernel knobs and block devices.

use serde::Deserialize;

use super::types::{Name, SysctlKey, SysctlValue};

pub(crate) const MAX_SYSCTLS: usize = 32;
pub(crate) const MAX_STORAGE: usize = 8;

/// Shipped sysctl presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SysctlPreset {
    /// See `net::preset`: larger socket buffer maxima and backlog for a
    /// slow CPU serving files, leaving TCP autotuning on.
    SlowCpuNas,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sysctl {
    pub preset: Option<SysctlPreset>,
    /// Explicit values; they win over the preset. Boxed and deserialized
    /// in a frame of its own, like the profile's other big members (4.5 KB
    /// inline): see `Profile`.
    #[serde(default, deserialize_with = "super::boxed")]
    pub set: Box<heapless::LinearMap<SysctlKey, SysctlValue, MAX_SYSCTLS>>,
}

/// One `[[storage]]`: a block device's queue settings.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    /// The name under /sys/block, e.g. "sda".
    pub device: super::Spanned<Name>,
    /// /sys/block/DEV/queue/read_ahead_kb.
    pub read_ahead_kb: Option<u32>,
}
