//! Kernel ABI, and nothing else: the structures, constants and request
//! numbers of the kernel interfaces nasboot calls directly, each checked
//! by a layout test on every target (the tests run under qemu-user for
//! powerpc, mips and sparc too). Everything may import this module; it
//! imports nothing of nasboot.
//!
//! - [`ethtool`]: SIOCETHTOOL's command structures (include/uapi/linux/ethtool.h);
//! - [`rtnl`]: rtnetlink's link messages (ifinfomsg, IFLA_* attributes);
//! - [`tc`]: traffic control's messages (tcmsg, the qdiscs, the HTB class,
//!   the u32 filter with its mirred action, the counters);
//! - [`time`]: the wall clock and file times past 2038 on the 32-bit musl
//!   builds (musl's `__clock_gettime64`, statx);
//! - [`proc_stat_runs`]: a process's state from /proc/PID/stat;
//! - [`watchdog`]: the watchdog API (include/uapi/linux/watchdog.h) and the
//!   `_IOC` encoding per architecture.

pub(crate) mod ethtool;
pub(crate) mod nftnl;
pub(crate) mod rtnl;
pub(crate) mod tc;
pub(crate) mod time;
pub(crate) mod watchdog;

/// The running kernel's release (uname(2)'s `release`: "6.1.0-50-4kc-malta").
pub fn kernel_release() -> Option<String> {
    // SAFETY: all-zero is a valid utsname, which uname(2) fills.
    let mut u: nix::libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    if unsafe { nix::libc::uname(&mut u) } != 0 {
        return None;
    }
    // SAFETY: uname(2) NUL-terminates the release within its field.
    Some(unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }.to_string_lossy().into_owned())
}

/// Whether a process runs, from its /proc/PID/stat ("PID (COMM) STATE
/// ...", proc(5)): there, and its state not Z. A zombie keeps its /proc
/// entry until its parent reaps it, and `nasboot run` reaps none of the
/// processes it starts. COMM may hold spaces and parentheses.
pub(crate) fn proc_stat_runs(stat: &[u8]) -> bool {
    let state = stat.iter().rposition(|&b| b == b')').and_then(|i| stat.get(i + 2));
    state.is_some_and(|&s| s != b'Z')
}
