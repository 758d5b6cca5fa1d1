//! Global sysctls: the shipped presets plus the profile's own values.
//!
//! The "slow-cpu-nas" preset, and why:
//! - `net.core.rmem_max` / `net.core.wmem_max` = 1 MiB, and the maxima of
//!   `net.ipv4.tcp_rmem` / `tcp_wmem` raised to 1 MiB: lets TCP autotuning
//!   grow windows for a gigabit LAN client without setting SO_RCVBUF or
//!   SO_SNDBUF anywhere (setting those on a socket turns autotuning off;
//!   see the Samba note in board/README.md). Defaults and minima stay the kernel's.
//! - `net.core.netdev_max_backlog` = 2000: a slow CPU drains the backlog
//!   in bursts; a deeper queue drops fewer packets under NFS read bursts.
//! - `net.ipv4.tcp_sack` = 1 and `net.ipv4.tcp_window_scaling` = 1: the
//!   defaults, pinned because old vendor images switched them off.
//! - `vm.min_free_kbytes` is not touched: it depends on RAM size.
//! - Nothing here disables `tcp_moderate_rcvbuf` (autotuning).

use crate::config::firewall::Profile as FwProfile;
use crate::config::system::SysctlPreset;
use crate::config::Profile;

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

pub(crate) use crate::config::firewall::LOCAL_PORT_RANGE;

/// The wanted values, in order: the preset, the stateless firewall's local
/// port range, then the profile's own (which win).
pub(crate) fn wanted(p: &Profile) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let preset: &[(&str, &str)] = match p.sysctl.preset {
        Some(SysctlPreset::SlowCpuNas) => SLOW_CPU_NAS,
        None => &[],
    };
    for (k, v) in preset {
        out.push((k.to_string(), v.to_string()));
    }
    if p.firewall.profile == FwProfile::Stateless {
        // The firewall lets replies in to this range only (firewall/nft.rs,
        // `stateless_replies`): the kernel must pick local ports from it.
        let r = p.firewall.local_port_range;
        out.push((LOCAL_PORT_RANGE.to_string(), format!("{} {}", r.lo(), r.hi())));
    }
    for (k, v) in p.sysctl.set.iter() {
        match out.iter_mut().find(|(ok, _)| ok == k.as_str()) {
            Some(slot) => slot.1 = v.to_string(),
            None => out.push((k.to_string(), v.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stateless_profile_sets_the_kernel_range_it_filters_by() {
        let parse = |t: &str| crate::config::parse_bytes("t.toml", t.as_bytes()).unwrap().profile;
        let w = wanted(&parse("[board]\nname = \"t\"\n[firewall]\nlocal_port_range = \"40000-50000\"\n"));
        assert!(w.contains(&(LOCAL_PORT_RANGE.to_string(), "40000 50000".to_string())), "{w:?}");
        assert!(wanted(&parse("[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n")).is_empty());
    }

    #[test]
    fn preset_never_disables_autotuning() {
        for (k, _) in SLOW_CPU_NAS {
            assert_ne!(*k, "net.ipv4.tcp_moderate_rcvbuf");
        }
    }
}
