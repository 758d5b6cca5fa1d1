//! Global sysctls: the shipped presets plus the profile's own values,
//! written through /proc/sys. Only values that differ are written.
//!
//! The "slow-cpu-nas" preset, and why:
//! - `net.core.rmem_max` / `net.core.wmem_max` = 1 MiB, and the maxima of
//!   `net.ipv4.tcp_rmem` / `tcp_wmem` raised to 1 MiB: lets TCP autotuning
//!   grow windows for a gigabit LAN client without setting SO_RCVBUF or
//!   SO_SNDBUF anywhere (setting those on a socket turns autotuning off;
//!   see the Samba note in README). Defaults and minima stay the kernel's.
//! - `net.core.netdev_max_backlog` = 2000: a slow CPU drains the backlog
//!   in bursts; a deeper queue drops fewer packets under NFS read bursts.
//! - `net.ipv4.tcp_sack` = 1 and `net.ipv4.tcp_window_scaling` = 1: the
//!   defaults, pinned because old vendor images switched them off.
//! - `vm.min_free_kbytes` is not touched: it depends on RAM size.
//! - Nothing here disables `tcp_moderate_rcvbuf` (autotuning).

use std::fmt;

use crate::config::system::SysctlPreset;
use crate::config::Profile;
use crate::seam::Seams;
use crate::step::StepError;

/// The "slow-cpu-nas" preset.
pub(crate) const SLOW_CPU_NAS: &[(&str, &str)] = &[
    ("net.core.rmem_max", "1048576"),
    ("net.core.wmem_max", "1048576"),
    ("net.ipv4.tcp_rmem", "4096 87380 1048576"),
    ("net.ipv4.tcp_wmem", "4096 16384 1048576"),
    ("net.core.netdev_max_backlog", "2000"),
    ("net.ipv4.tcp_sack", "1"),
    ("net.ipv4.tcp_window_scaling", "1"),
];

/// Set one sysctl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Action {
    pub key: String,
    pub value: String,
    /// The current value, if it could be read.
    pub from: Option<String>,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.from {
            Some(old) => write!(f, "{} = {} (now {})", self.key, self.value, old),
            None => write!(f, "{} = {}", self.key, self.value),
        }
    }
}

/// The wanted values, in order: the preset, then the profile's own (which win).
pub(crate) fn wanted(p: &Profile) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let preset: &[(&str, &str)] = match p.sysctl.preset {
        Some(SysctlPreset::SlowCpuNas) => SLOW_CPU_NAS,
        None => &[],
    };
    for (k, v) in preset {
        out.push((k.to_string(), v.to_string()));
    }
    for (k, v) in p.sysctl.set.iter() {
        match out.iter_mut().find(|(ok, _)| ok == k.as_str()) {
            Some(slot) => slot.1 = v.to_string(),
            None => out.push((k.to_string(), v.to_string())),
        }
    }
    out
}

/// Current values of the wanted keys (absent if unreadable).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Observed {
    pub values: Vec<(String, Option<String>)>,
}

pub(crate) fn observe(p: &Profile, seams: &mut Seams<'_>) -> Observed {
    Observed {
        values: wanted(p)
            .into_iter()
            .map(|(k, _)| {
                let v = seams.sysctl.get(&k).ok();
                (k, v)
            })
            .collect(),
    }
}

/// Kernel values use tabs or runs of spaces between numbers.
fn same(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

pub(crate) fn plan(p: &Profile, now: &Observed) -> Vec<Action> {
    wanted(p)
        .into_iter()
        .filter_map(|(key, value)| {
            let from = now.values.iter().find(|(k, _)| *k == key).and_then(|(_, v)| v.clone());
            match &from {
                Some(cur) if same(cur, &value) => None,
                _ => Some(Action { key, value, from }),
            }
        })
        .collect()
}

pub(crate) fn apply(a: &Action, seams: &mut Seams<'_>) -> Result<(), StepError> {
    seams.sysctl.set(&a.key, &a.value).map_err(|e| StepError::partial(format!("sysctl {}", a.key), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_never_disables_autotuning() {
        for (k, _) in SLOW_CPU_NAS {
            assert_ne!(*k, "net.ipv4.tcp_moderate_rcvbuf");
        }
    }

    #[test]
    fn equal_values_with_other_spacing_are_not_rewritten() {
        assert!(same("4096\t87380\t1048576", "4096 87380 1048576"));
        assert!(!same("4096 87380 6291456", "4096 87380 1048576"));
    }
}
