//! The wall clock and file times past 2038 on every target.
//!
//! The libc crate declares musl's 32-bit `time_t` for the 32-bit musl
//! targets (mips, mipsel, powerpc: what the boards ship) and links musl
//! 1.2's time32 compatibility symbols: `clock_gettime` fails with
//! EOVERFLOW from 2038-01-19 03:14:08 UTC (std's `SystemTime::now`
//! would panic), and `stat`'s times are cut to 32 bits. So there nasboot
//! asks musl 1.2 (which the builds link) for its 64-bit calls itself:
//! `__clock_gettime64` and `__stat_time64`. Everywhere else std's calls
//! are 64-bit already (glibc 2.34's `__clock_gettime64`, statx; the
//! 64-bit targets).

use std::io;
use std::path::Path;
use std::time::Duration;

/// CLOCK_REALTIME since the epoch; None if the clock reads before 1970
/// or cannot be read.
pub(crate) fn wall_clock() -> Option<Duration> {
    imp::wall_clock()
}

/// A file's modification time since the epoch (`stat`'s st_mtime,
/// following links); a time before 1970 reads as the epoch.
pub(crate) fn modified(path: &Path) -> io::Result<Duration> {
    imp::modified(path)
}

#[cfg(all(target_env = "musl", target_pointer_width = "32"))]
mod imp {
    use std::io;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::time::Duration;

    use nix::libc;

    /// musl's `struct timespec` with a 64-bit `time_t` (its alltypes.h):
    /// the seconds, then the 32-bit nanoseconds and 32 bits of padding,
    /// the padding first on a big-endian CPU.
    #[repr(C)]
    struct Timespec64 {
        sec: i64,
        first: i32,
        second: i32,
    }

    impl Timespec64 {
        fn nsec(&self) -> i32 {
            if cfg!(target_endian = "big") {
                self.second
            } else {
                self.first
            }
        }
    }

    extern "C" {
        /// musl 1.2's clock_gettime of the 64-bit `time_t` (the plain
        /// symbol is the time32 one).
        fn __clock_gettime64(clock: libc::clockid_t, ts: *mut Timespec64) -> libc::c_int;
    }

    pub(super) fn wall_clock() -> Option<Duration> {
        let mut ts = Timespec64 { sec: 0, first: 0, second: 0 };
        // SAFETY: a valid clock id and a pointer to a struct of the layout
        // musl writes.
        if unsafe { __clock_gettime64(libc::CLOCK_REALTIME, &mut ts) } != 0 {
            return None;
        }
        // The kernel's nanoseconds are below 10^9; before 1970 is None.
        Some(Duration::new(u64::try_from(ts.sec).ok()?, ts.nsec() as u32))
    }

    /// musl 1.2's `struct stat` with 64-bit times (its arch/*/bits/stat.h):
    /// 160 bytes on mips and mipsel, 152 on powerpc; st_mtim, a
    /// [`Timespec64`], at byte 120 on all three.
    const STAT_WORDS: usize = 160 / 8;
    const ST_MTIM: usize = 120;
    #[cfg(not(any(target_arch = "mips", target_arch = "powerpc")))]
    compile_error!("musl's struct stat: its layout for this architecture is not known here");

    extern "C" {
        /// musl 1.2's stat of the 64-bit `time_t` (statx, or the older
        /// stat calls on kernels before 4.11).
        fn __stat_time64(path: *const libc::c_char, st: *mut [u64; STAT_WORDS]) -> libc::c_int;
    }

    pub(super) fn modified(path: &Path) -> io::Result<Duration> {
        // u64s for the struct's 8-byte alignment.
        let mut st = [0u64; STAT_WORDS];
        // The path NUL-terminated on the stack, allocation-free (the
        // heartbeat check runs every interval): a profile's path is at
        // most 255 bytes, 512 leaves room for a --root. Neither holds a
        // NUL (a profile's path has no control characters; argv cannot).
        let bytes = path.as_os_str().as_bytes();
        let mut c = [0u8; 512];
        if bytes.len() >= c.len() {
            return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        c[..bytes.len()].copy_from_slice(bytes);
        // SAFETY: a NUL-terminated path and a buffer the size of musl's
        // struct stat.
        if unsafe { __stat_time64(c.as_ptr().cast(), &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: st_mtim lies within the buffer, 8-aligned.
        let ts: Timespec64 = unsafe { std::ptr::read(st.as_ptr().add(ST_MTIM / 8).cast()) };
        Ok(Duration::new(u64::try_from(ts.sec).unwrap_or(0), ts.nsec() as u32))
    }
}

#[cfg(not(all(target_env = "musl", target_pointer_width = "32")))]
mod imp {
    use std::io;
    use std::path::Path;
    use std::time::{Duration, SystemTime};

    pub(super) fn wall_clock() -> Option<Duration> {
        SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).ok()
    }

    pub(super) fn modified(path: &Path) -> io::Result<Duration> {
        Ok(std::fs::metadata(path)?.modified()?.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    #[test]
    fn the_wall_clock_is_the_system_time() {
        let ours = wall_clock().unwrap();
        let std = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap();
        assert!(ours.abs_diff(std) < Duration::from_secs(5), "{ours:?} {std:?}");
        assert!(ours.subsec_nanos() < 1_000_000_000);
    }

    #[test]
    fn a_file_time_is_read_whole() {
        let dir = std::env::temp_dir().join(format!("nasboot-mtime-{}", std::process::id()));
        std::fs::write(&dir, b"x").unwrap();
        let ours = modified(&dir).unwrap();
        let std = std::fs::metadata(&dir).unwrap().modified().unwrap();
        assert_eq!(ours, std.duration_since(SystemTime::UNIX_EPOCH).unwrap());
        std::fs::remove_file(&dir).unwrap();
        assert_eq!(modified(&dir).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    /// A modification time past 2038 (set by coreutils' touch: the libc
    /// crate's utimensat is the time32 one, and qemu-user 7.2 does not
    /// know utimensat_time64 on every architecture): read back whole.
    #[cfg(all(target_env = "musl", target_pointer_width = "32"))]
    #[test]
    fn a_file_time_past_2038_is_read_whole() {
        let path = std::env::temp_dir().join(format!("nasboot-y2038-{}", std::process::id()));
        std::fs::write(&path, b"x").unwrap();
        let touched = std::process::Command::new("touch").args(["-d", "2040-01-01 00:00:00.5 UTC"]).arg(&path).status().unwrap();
        assert!(touched.success());
        let m = modified(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(m, Duration::new(2_208_988_800, 500_000_000));
    }
}
