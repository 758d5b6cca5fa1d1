//! Give back the memory only start-up needed, before the daemon settles
//! into its loop: parsing the profile touches most of the program's code,
//! deep stack frames and heap that the loop never uses again.
//!
//! - the program text (`__executable_start`..`etext`, a clean private file
//!   mapping; each mapped part of it): madvise(MADV_DONTNEED) unmaps it;
//!   the few pages the loop runs fault back in from the page cache
//!   (madvise(2));
//! - the main stack below the current frame (dead: no handlers run on it):
//!   madvise(MADV_DONTNEED), found through /proc/self/maps (proc(5));
//! - the heap: nasboot's own allocator gives back its free pages and the
//!   big block it kept (src/heap.rs, `trim`); under glibc, whose allocator
//!   still serves what C code allocates itself, also malloc_trim(0)
//!   (malloc_trim(3)).
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

/// The address range of one /proc/self/maps line.
fn range(line: &str) -> Option<(usize, usize)> {
    let (lo, hi) = line.split_whitespace().next()?.split_once('-')?;
    Some((usize::from_str_radix(lo, 16).ok()?, usize::from_str_radix(hi, 16).ok()?))
}

/// The `[stack]` mapping (the main thread's).
fn main_stack(maps: &str) -> Option<(usize, usize)> {
    range(maps.lines().find(|l| l.ends_with("[stack]"))?)
}

/// Drop the mapped parts of [lo, hi): a linker may leave an unmapped page
/// between the read-only and the executable segment (rust-lld does), and
/// madvise over a hole fails with ENOMEM.
fn release_text(maps: &str, lo: usize, hi: usize) -> bool {
    let mut any = false;
    for (a, b) in maps.lines().filter_map(range) {
        let (a, b) = (a.max(lo), b.min(hi));
        if a < b {
            if !dontneed(a, b) {
                return false;
            }
            any = true;
        }
    }
    any
}

#[inline(never)]
fn release_stack(maps: &str) -> bool {
    let marker = 0u8;
    let sp = std::hint::black_box(&marker) as *const u8 as usize;
    let stack = main_stack(maps);
    // The text of `{stack:x?}`, without linking Debug's tuple machinery.
    match stack {
        Some((lo, hi)) => log::debug!("stack Some(({lo:x}, {hi:x})), this frame at {sp:#x}"),
        None => log::debug!("stack None, this frame at {sp:#x}"),
    }
    match stack {
        // Only on the main thread's stack; keep 16 KiB below this frame
        // for the calls still to come.
        Some((lo, hi)) if sp > lo + 16384 && sp < hi => dontneed(lo, sp - 16384),
        _ => false,
    }
}

/// Drop start-up pages; returns what worked, for the debug log.
pub(crate) fn trim() -> (bool, bool, bool) {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let stack = release_stack(&maps);
    let unmapped = crate::heap::trim();
    #[cfg(target_env = "gnu")]
    // SAFETY: malloc_trim has no preconditions.
    let heap = unsafe { libc::malloc_trim(0) } != 0 || unmapped > 0;
    #[cfg(not(target_env = "gnu"))]
    let heap = unmapped > 0;
    // The text last, so the code above does not fault back in.
    // Only the addresses of the linker-defined symbols are taken.
    let (text_lo, text_hi) = (&raw const __executable_start as usize, &raw const etext as usize);
    let text = release_text(&maps, text_lo, text_hi);
    log::debug!(
        "start-up pages released: text {text} ({text_lo:#x}..{text_hi:#x}), stack {stack}, heap {heap} ({unmapped} bytes unmapped)"
    );
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
