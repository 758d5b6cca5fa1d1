//! nfsd's knobs under /proc/fs/nfsd (nfsd(7)) and how many threads a
//! small board should run.
//!
//! - `threads`: writable at any time; nasboot writes it only while nfsd is
//!   running (a live resize). Writing it while nfsd is stopped would start
//!   a server without the listeners, rpcbind registration and mountd that
//!   the board's init script sets up, so then the count goes only to the
//!   init script's files (`share::distro`).
//! - `versions` ("+3 -4") and `max_block_size`: the kernel refuses them
//!   with EBUSY while nfsd runs. They are written before `threads`, only
//!   when nfsd is stopped; when it runs the plan says so and skips them.
//!   nfsd runs when `threads` reads above 0 or `portlist` is non-empty.
//!
//! # Thread count
//!
//! Unset `threads` is sized from `MemTotal` (/proc/meminfo) and the
//! online CPUs. `MemTotal` is a little under the RAM fitted (the kernel
//! keeps its image and reserved areas), and boards carry a power of two,
//! so RAM is taken as MemTotal rounded up to the next power of two MiB:
//!
//! ```text
//! default:   threads = clamp(ram_mib / 32, 2, 8 * cpus), at most 64
//! slow-cpu:  threads = clamp(ram_mib / 64, 2, 4 * cpus), at most 16
//! ```
//!
//! 64 MB gives 2 threads either way, 256 MB gives 8 (slow-cpu: 4), 1 GB
//! on two cores gives 16 (8). Debian's fixed 8 (RPCNFSDCOUNT) costs a
//! 64 MB board memory for threads that only wait on one disk.
//!
//! # Memory per thread (an estimate, shown by `nasboot plan`)
//!
//! Each thread holds request and reply pages for the largest block
//! (max_block_size / page size + 2 pages, net/sunrpc/svc.c
//! `svc_init_buffer`), a kernel stack (8 KiB on the 32-bit boards) and
//! about 8 KiB of task and svc_rqst bookkeeping. When `max_block_size` is
//! unset the kernel picks it from low memory (fs/nfsd/nfssvc.c
//! `nfsd_get_default_max_blksize`): 1 MiB halved while above RAM/4096,
//! not below 8 KiB; 8 KiB on 64 MB, 32 KiB on 256 MB.
//!
//! # The slow-cpu preset
//!
//! NFSv3 only: no NFSv4 client state, leases or idmapping, so less kernel
//! memory and no rpc.idmapd; clients must mount with vers=3 (and NFSv3
//! needs mountd, whose port the firewall pins). Half the threads: a
//! single-core board with one disk gains nothing from more, and each
//! costs memory. Exports keep no_subtree_check (the default, written
//! explicitly) and sync. `wdelay` is left alone: it only gathers stable
//! writes, which NFSv3 clients rarely send, and has no effect with async.

use std::fmt;

use crate::config::nfs::{NfsPreset, NfsVersion};

/// An nfsd control file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Knob {
    Versions,
    MaxBlockSize,
    Threads,
}

impl Knob {
    pub(crate) fn file(self) -> &'static str {
        match self {
            Knob::Versions => "versions",
            Knob::MaxBlockSize => "max_block_size",
            Knob::Threads => "threads",
        }
    }
}

impl fmt::Display for Knob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.file())
    }
}

/// nfsd as read from /proc/fs/nfsd.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct State {
    /// /proc/fs/nfsd is there (the nfsd file system is mounted).
    pub present: bool,
    pub threads: Option<u32>,
    /// `portlist` has at least one listener.
    pub listening: bool,
    pub versions: Option<String>,
    pub max_block_size: Option<u32>,
}

impl State {
    /// nfsd is running: threads above 0 or listeners open.
    pub(crate) fn running(&self) -> bool {
        self.threads.is_some_and(|t| t > 0) || self.listening
    }
}

/// 32-bit boards: THREAD_SIZE is 8 KiB on powerpc32, mips32 and sparc32.
pub(crate) const KERNEL_STACK: u32 = 8 * 1024;
/// task_struct, svc_rqst and friends, roughly.
pub(crate) const THREAD_BOOKKEEPING: u32 = 8 * 1024;
const PAGE: u32 = 4096;

/// RAM as fitted: MemTotal rounded up to a power of two MiB.
pub(crate) fn ram_mib(mem_total_kib: u64) -> u64 {
    mem_total_kib.div_ceil(1024).max(1).next_power_of_two()
}

/// Threads for a board, per the formula in the module docs.
pub(crate) fn default_threads(mem_total_kib: u64, cpus: u16, preset: Option<NfsPreset>) -> u16 {
    let ram = ram_mib(mem_total_kib);
    let cpus = u64::from(cpus.max(1));
    let (per, cap_per_cpu, cap) = match preset {
        Some(NfsPreset::SlowCpu) => (64, 4, 16),
        None => (32, 8, 64),
    };
    (ram / per).clamp(2, (cap_per_cpu * cpus).max(2)).min(cap) as u16
}

/// The kernel's own max_block_size for this much memory.
pub(crate) fn kernel_default_max_block(mem_total_kib: u64) -> u32 {
    // KiB * 1024 / 4096, without the multiplication that overflowed for
    // an absurd MemTotal (found by the proc_files fuzz target).
    let target = mem_total_kib / 4;
    let mut b: u32 = 1024 * 1024;
    while u64::from(b) > target && b >= 16 * 1024 {
        b /= 2;
    }
    b
}

/// Estimated kernel memory of one nfsd thread, in bytes.
pub(crate) fn bytes_per_thread(max_block_size: u32) -> u32 {
    (max_block_size.div_ceil(PAGE) + 2) * PAGE + KERNEL_STACK + THREAD_BOOKKEEPING
}

/// What nfsd will run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sizing {
    pub threads: u16,
    /// From the profile rather than the formula.
    pub threads_set: bool,
    pub max_block_size: u32,
    /// Estimated kernel memory of all threads, KiB.
    pub memory_kib: u32,
}

/// Threads and memory for a board. `mem_total_kib` None: MemTotal was
/// unreadable, so the rpc.nfsd default of 8 threads and a 32 KiB block.
pub(crate) fn sizing(
    mem_total_kib: Option<u64>,
    cpus: u16,
    preset: Option<NfsPreset>,
    threads: Option<u16>,
    max_block_size: Option<u32>,
) -> Sizing {
    let threads_n = threads.unwrap_or_else(|| mem_total_kib.map_or(8, |m| default_threads(m, cpus, preset)));
    let block = max_block_size.unwrap_or_else(|| mem_total_kib.map_or(32 * 1024, kernel_default_max_block));
    Sizing {
        threads: threads_n,
        threads_set: threads.is_some(),
        max_block_size: block,
        memory_kib: u32::try_from(u64::from(threads_n) * u64::from(bytes_per_thread(block)) / 1024).unwrap_or(u32::MAX),
    }
}

/// The versions nfsd is to offer: the profile's, else the preset's.
pub(crate) fn wanted_versions(versions: Option<&[NfsVersion]>, preset: Option<NfsPreset>) -> Option<Vec<NfsVersion>> {
    match (versions, preset) {
        (Some(v), _) => Some(v.to_vec()),
        (None, Some(NfsPreset::SlowCpu)) => Some(vec![NfsVersion::V3]),
        (None, None) => None,
    }
}

/// (name, on) for each version token nasboot states: 3 and 4 always,
/// 4.1 and 4.2 only when the profile names a minor version (kernels
/// before 2.6.38 know no minor versions).
pub(crate) fn version_flags(v: &[NfsVersion]) -> Vec<(&'static str, bool)> {
    let mut out = vec![("3", v.contains(&NfsVersion::V3)), ("4", v.contains(&NfsVersion::V4))];
    if v.contains(&NfsVersion::V4_1) || v.contains(&NfsVersion::V4_2) {
        out.push(("4.1", v.contains(&NfsVersion::V4_1)));
        out.push(("4.2", v.contains(&NfsVersion::V4_2)));
    }
    out
}

/// The line for /proc/fs/nfsd/versions, e.g. "+3 -4".
pub(crate) fn versions_line(v: &[NfsVersion]) -> String {
    let flags = version_flags(v);
    let parts: Vec<String> = flags.iter().map(|(n, on)| format!("{}{n}", if *on { '+' } else { '-' })).collect();
    parts.join(" ")
}

/// Whether the kernel's current versions (e.g. "-2 +3 +4 +4.1 +4.2")
/// already agree with every token of `line`. A version to be off that
/// the kernel does not list at all is off: a kernel built without NFSv4
/// reads "+3" before and after "+3 -4" is written (seen on the
/// big-endian boards' 6.1), and asking again would fail with EBUSY once
/// nfsd runs.
pub(crate) fn versions_match(current: &str, line: &str) -> bool {
    line.split_whitespace().all(|want| {
        let listed = |name: &str| current.split_whitespace().any(|have| have.get(1..) == Some(name));
        current.split_whitespace().any(|have| have == want) || (want.starts_with('-') && !listed(&want[1..]))
    })
}

/// MemTotal in KiB from /proc/meminfo.
pub(crate) fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The number of CPUs in a sysfs CPU list such as "0-1,3".
pub(crate) fn parse_cpu_list(text: &str) -> Option<u16> {
    let mut n: u32 = 0;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        // Checked: "0-4294967295" overflowed the count.
        n = n.checked_add(match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                b.checked_sub(a)?.checked_add(1)?
            }
            None => {
                part.parse::<u32>().ok()?;
                1
            }
        })?;
    }
    u16::try_from(n).ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MemTotal as a 64 MB and a 256 MB board report it.
    const MB64: u64 = 61_412;
    const MB256: u64 = 254_100;

    #[test]
    fn absurd_board_files_saturate_instead_of_overflowing() {
        // Fuzz regression (tests/fuzz/regressions/proc_files): MemTotal
        // 5949734504624029768 kB overflowed kernel_default_max_block.
        let huge = parse_meminfo("MemTotal:   0000000005949734504624029768 kB\n").unwrap();
        assert_eq!(kernel_default_max_block(huge), 1024 * 1024);
        assert_eq!(ram_mib(u64::MAX), 1 << 54);
        assert_eq!(default_threads(u64::MAX, 1, None), 8);
        assert_eq!(parse_cpu_list("0-4294967295"), None);
        assert_eq!(parse_cpu_list("0-65535,0-65535"), None);
        assert_eq!(sizing(None, 1, None, Some(u16::MAX), Some(1024 * 1024)).memory_kib, 65535 * (bytes_per_thread(1024 * 1024) / 1024));
    }

    #[test]
    fn thread_counts_for_small_boards() {
        assert_eq!(default_threads(MB64, 1, None), 2);
        assert_eq!(default_threads(MB64, 1, Some(NfsPreset::SlowCpu)), 2);
        assert_eq!(default_threads(MB256, 1, None), 8);
        assert_eq!(default_threads(MB256, 1, Some(NfsPreset::SlowCpu)), 4);
        assert_eq!(default_threads(128 * 1024, 1, None), 4);
        assert_eq!(default_threads(1_000_000, 2, None), 16);
        assert_eq!(default_threads(1_000_000, 1, None), 8, "capped at 8 per CPU");
        assert_eq!(default_threads(64 * 1024 * 1024, 64, None), 64, "never above 64");
        assert_eq!(default_threads(16 * 1024, 1, None), 2, "never below 2");
    }

    #[test]
    fn kernel_block_size_follows_ram() {
        assert_eq!(kernel_default_max_block(MB64), 8 * 1024);
        assert_eq!(kernel_default_max_block(128 * 1024), 32 * 1024);
        assert_eq!(kernel_default_max_block(MB256), 32 * 1024);
        assert_eq!(kernel_default_max_block(4 * 1024 * 1024), 1024 * 1024);
        assert_eq!(kernel_default_max_block(16 * 1024), 8 * 1024);
    }

    #[test]
    fn memory_for_a_64_and_a_256_mb_board() {
        let s64 = sizing(Some(MB64), 1, None, None, None);
        assert_eq!((s64.threads, s64.max_block_size, s64.memory_kib), (2, 8192, 64));
        let s256 = sizing(Some(MB256), 1, None, None, None);
        assert_eq!((s256.threads, s256.max_block_size, s256.memory_kib), (8, 32768, 448));
        let slow = sizing(Some(MB256), 1, Some(NfsPreset::SlowCpu), None, None);
        assert_eq!((slow.threads, slow.memory_kib), (4, 224));
        let debian = sizing(Some(MB64), 1, None, Some(8), None);
        assert_eq!((debian.threads, debian.memory_kib, debian.threads_set), (8, 256, true));
        let unknown = sizing(None, 1, None, None, None);
        assert_eq!((unknown.threads, unknown.max_block_size), (8, 32768));
    }

    #[test]
    fn versions_lines() {
        assert_eq!(versions_line(&[NfsVersion::V3]), "+3 -4");
        assert_eq!(versions_line(&[NfsVersion::V3, NfsVersion::V4]), "+3 +4");
        assert_eq!(versions_line(&[NfsVersion::V4, NfsVersion::V4_2]), "-3 +4 -4.1 +4.2");
        assert!(versions_match("-2 +3 -4 -4.0 -4.1 -4.2", "+3 -4"));
        assert!(!versions_match("-2 +3 +4 +4.1 +4.2", "+3 -4"));
        // A kernel without NFSv4 lists no 4: "-4" holds, "+4" does not.
        assert!(versions_match("+3", "+3 -4"));
        assert!(versions_match("-2 +3", "+3 -4"));
        assert!(!versions_match("+3", "+3 +4"));
        assert!(!versions_match("-3", "+3 -4"));
        assert!(!versions_match("", "+3 -4"));
        assert_eq!(wanted_versions(None, Some(NfsPreset::SlowCpu)), Some(vec![NfsVersion::V3]));
        assert_eq!(wanted_versions(None, None), None);
    }

    #[test]
    fn proc_parsers() {
        assert_eq!(parse_meminfo("MemTotal:          61412 kB\nMemFree: 1 kB\n"), Some(61412));
        assert_eq!(parse_meminfo("MemFree: 1 kB\n"), None);
        assert_eq!(parse_cpu_list("0\n"), Some(1));
        assert_eq!(parse_cpu_list("0-1\n"), Some(2));
        assert_eq!(parse_cpu_list("0-3,6,8-9"), Some(7));
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(parse_cpu_list(""), None);
    }
}
