//! Give back the memory only start-up needed, before the daemon settles
//! into its loop: parsing the profile touches most of the program's code,
//! deep stack frames and heap that the loop never uses again.
//!
//! - the program text (`__executable_start`..`etext`, a clean private file
//!   mapping): madvise(MADV_DONTNEED) unmaps it; the few pages the loop runs
//!   fault back in from the page cache (madvise(2));
//! - the main stack below the current frame (dead: no handlers run on it):
//!   madvise(MADV_DONTNEED), found through /proc/self/maps (proc(5));
//! - glibc's heap: malloc_trim(0) (malloc_trim(3)).
//!
//! Must run before mlockall (locked pages cannot be dropped). Failures are
//! harmless and only logged at debug level.

use nix::libc;

extern "C" {
    // Defined by the GNU and LLVM linkers for executables.
    static __executable_start: u8;
    static etext: u8;
}

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

fn dontneed(start: usize, end: usize) -> bool {
    let pg = page();
    let start = start.div_ceil(pg) * pg;
    let end = end / pg * pg;
    if end <= start {
        return false;
    }
    // SAFETY: [start, end) is page aligned and holds either clean program
    // text (re-read from the file on access) or dead stack below the
    // current frame (zero-filled on access); no live data is dropped.
    unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) == 0 }
}

/// The `[stack]` mapping (the main thread's), from /proc/self/maps.
fn main_stack() -> Option<(usize, usize)> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[stack]"))?;
    let range = line.split_whitespace().next()?;
    let (lo, hi) = range.split_once('-')?;
    Some((usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?))
}

#[inline(never)]
fn release_stack() -> bool {
    let marker = 0u8;
    let sp = std::hint::black_box(&marker) as *const u8 as usize;
    let stack = main_stack();
    log::debug!("stack {stack:x?}, this frame at {sp:#x}");
    match stack {
        // Only on the main thread's stack; keep 16 KiB below this frame
        // for the calls still to come.
        Some((lo, hi)) if sp > lo + 16384 && sp < hi => dontneed(lo, sp - 16384),
        _ => false,
    }
}

/// Drop start-up pages; returns what worked, for the debug log.
pub(crate) fn trim() -> (bool, bool, bool) {
    let stack = release_stack();
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim has no preconditions.
    let heap = unsafe { libc::malloc_trim(0) } != 0;
    #[cfg(not(target_env = "gnu"))]
    let heap = false;
    // The text last, so the code above does not fault back in.
    // Only the addresses of the linker-defined symbols are taken.
    let (text_lo, text_hi) = (&raw const __executable_start as usize, &raw const etext as usize);
    let text = dontneed(text_lo, text_hi);
    log::debug!("start-up pages released: text {text} ({text_lo:#x}..{text_hi:#x}), stack {stack}, heap {heap}");
    (text, stack, heap)
}

#[cfg(test)]
mod tests {
    #[test]
    fn trimming_keeps_the_program_running() {
        let v: Vec<u32> = (0..1000).collect();
        let (text, _, _) = super::trim();
        assert!(text, "madvise on the program text failed");
        // Code and data still work after the pages were dropped.
        assert_eq!(v.iter().sum::<u32>(), 499_500);
        assert_eq!(format!("{}", 42), "42");
    }
}
