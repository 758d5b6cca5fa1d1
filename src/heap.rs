//! The global allocator: power-of-two size classes cut from 64 KiB chunks
//! mapped on demand, each class with its own free list; memory goes back
//! to the kernel only when the watchdog daemon trims it, once.
//!
//! Why: musl's allocator (mallocng) gives a size class's group back to the
//! kernel as soon as its last block is freed, and maps it again at the
//! next allocation of that size. A boot-time command allocates and frees
//! the same few sizes over and over (a file's contents, a netlink
//! message), and on the emulated 24K each such round trip costs some
//! 2 ms of guest time: a mmap, a munmap and a page fault
//! (scripts/README.md, "What one operation costs"). Here a freed block
//! waits on its class's list for the next allocation of that class.
//!
//! What it costs: a block is rounded up to a power of two (at most twice
//! its size; a `Vec` grows by doubling anyway), and the memory a
//! short-lived command once used stays mapped until it exits.
//! Blocks over `MAX` bytes, and alignments over 16, go to the system
//! allocator (musl's; glibc's on SPARC), as everything did before.
//! Thread-safe behind a spin lock, which nothing contends: nasboot runs
//! on one thread (the runner polls its tools' pipes, src/seam/real/runner.rs).
//!
//! The watchdog daemon, which lives on, gives back what its start left
//! free ([`trim`], from src/watchdog/memory.rs): the whole pages of the
//! free blocks of a page or more and of the current chunk's unused rest.
//! Its loop then takes its few blocks from the free lists, or from chunks
//! of a page (so that `mlockall`'s MCL_FUTURE locks no unused memory).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

/// The smallest block (and every block's alignment).
const MIN: usize = 16;
/// The largest block taken from a chunk.
const MAX: usize = 16 * 1024;
/// Size classes: MIN, 2 MIN, ... MAX.
const CLASSES: usize = (MAX / MIN).trailing_zeros() as usize + 1;
/// The memory mapped at a time.
const CHUNK: usize = 64 * 1024;

pub(crate) struct Heap {
    lock: AtomicBool,
    state: UnsafeCell<State>,
}

struct State {
    /// The free part of the current chunk: [next, end).
    next: usize,
    end: usize,
    /// Each class's freed blocks; a free block's first word is the next.
    free: [*mut u8; CLASSES],
    /// The size of the next chunk mapped: a page after `trim`; 0 for
    /// CHUNK (so that the heap starts all zero, in .bss).
    chunk: usize,
}

/// The heap the binary installs as its global allocator (src/main.rs,
/// [`Global`]); the daemon trims it. The unit tests run on the system
/// allocator: there it stays empty and `trim` finds nothing.
static HEAP: Heap = Heap::new();

/// The global allocator: [`HEAP`].
pub struct Global;

// SAFETY: forwarded as is to HEAP, which upholds the contract.
unsafe impl GlobalAlloc for Global {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { HEAP.alloc(layout) }
    }
    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { HEAP.dealloc(block, layout) }
    }
    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        unsafe { HEAP.realloc(block, layout, new_size) }
    }
}

/// Give the kernel back what the global heap holds free; the bytes
/// unmapped (see [`Heap::trim`]).
pub(crate) fn trim() -> usize {
    HEAP.trim()
}

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    match unsafe { nix::libc::sysconf(nix::libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => 4096,
    }
}

/// munmap the whole pages of [lo, hi); the bytes unmapped.
fn unmap_pages(lo: usize, hi: usize, page: usize) -> usize {
    let (lo, hi) = (lo.next_multiple_of(page), hi / page * page);
    // SAFETY: the caller gives a range of a chunk that no block in use or
    // on a free list overlaps.
    if hi > lo && unsafe { nix::libc::munmap(lo as *mut nix::libc::c_void, hi - lo) } == 0 {
        hi - lo
    } else {
        0
    }
}

// SAFETY: `state` is only touched with `lock` held.
unsafe impl Sync for Heap {}

impl Default for Heap {
    fn default() -> Self {
        Heap::new()
    }
}

impl Heap {
    pub(crate) const fn new() -> Heap {
        Heap { lock: AtomicBool::new(false), state: UnsafeCell::new(State { next: 0, end: 0, free: [ptr::null_mut(); CLASSES], chunk: 0 }) }
    }

    /// Give the kernel back the whole pages of the current chunk's unused
    /// rest and of every free block that holds one (such a block leaves
    /// its free list for good; its partial pages stay mapped, unused),
    /// and map later chunks a page at a time. The bytes unmapped.
    pub(crate) fn trim(&self) -> usize {
        let page = page();
        self.with(|s| {
            let mut freed = unmap_pages(s.next, s.end, page);
            s.end = s.end.min(s.next.next_multiple_of(page));
            s.chunk = page;
            for (class, head) in s.free.iter_mut().enumerate() {
                let size = MIN << class;
                let mut kept: *mut u8 = ptr::null_mut();
                let mut block = *head;
                while !block.is_null() {
                    // SAFETY: a free block holds the next free block's address.
                    let next = unsafe { block.cast::<*mut u8>().read() };
                    let (lo, hi) = (block as usize, block as usize + size);
                    if hi / page * page > lo.next_multiple_of(page) {
                        freed += unmap_pages(lo, hi, page);
                    } else {
                        // SAFETY: as in `give`: the block is free and ours.
                        unsafe { block.cast::<*mut u8>().write(kept) };
                        kept = block;
                    }
                    block = next;
                }
                *head = kept;
            }
            freed
        })
    }

    /// The class of a layout, or None for the system allocator.
    fn class(layout: Layout) -> Option<usize> {
        if layout.align() > MIN || layout.size() > MAX {
            return None;
        }
        let size = layout.size().max(MIN).next_power_of_two();
        Some((size / MIN).trailing_zeros() as usize)
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        while self.lock.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
        }
        // SAFETY: the lock is held, so this is the only reference.
        let r = f(unsafe { &mut *self.state.get() });
        self.lock.store(false, Ordering::Release);
        r
    }
}

impl State {
    fn take(&mut self, class: usize) -> *mut u8 {
        let head = self.free[class];
        if !head.is_null() {
            // SAFETY: a free block holds the next free block's address.
            self.free[class] = unsafe { head.cast::<*mut u8>().read() };
            return head;
        }
        let size = MIN << class;
        if self.end - self.next < size {
            // The rest of this chunk (less than MAX bytes) is left unused.
            let len = if self.chunk == 0 { CHUNK } else { self.chunk.max(size) };
            // SAFETY: an anonymous private mapping; no memory is touched.
            let chunk = unsafe {
                nix::libc::mmap(
                    ptr::null_mut(),
                    len,
                    nix::libc::PROT_READ | nix::libc::PROT_WRITE,
                    nix::libc::MAP_PRIVATE | nix::libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if chunk == nix::libc::MAP_FAILED {
                return ptr::null_mut();
            }
            self.next = chunk as usize;
            self.end = self.next + len;
        }
        let block = self.next as *mut u8;
        self.next += size;
        block
    }

    fn give(&mut self, block: *mut u8, class: usize) {
        // SAFETY: the block is at least MIN bytes, aligned, and ours again.
        unsafe { block.cast::<*mut u8>().write(self.free[class]) };
        self.free[class] = block;
    }
}

// SAFETY: blocks are disjoint (cut once from a chunk, then only passed
// between the caller and the free lists), at least the layout's size and
// aligned to MIN (chunks are page-aligned, sizes multiples of MIN); the
// rest is the system allocator's.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::class(layout) {
            Some(c) => self.with(|s| s.take(c)),
            // SAFETY: the caller's contract, passed on.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match Self::class(layout) {
            Some(c) => self.with(|s| s.give(block, c)),
            // SAFETY: the caller's contract: it came from System.alloc.
            None => unsafe { System.dealloc(block, layout) },
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract makes this layout valid.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (Self::class(layout), Self::class(new)) {
            (Some(a), Some(b)) if a == b => block,
            // SAFETY: both layouts are the system allocator's.
            (None, None) => unsafe { System.realloc(block, layout, new_size) },
            _ => {
                // SAFETY: the caller's contract, passed on.
                let moved = unsafe { self.alloc(new) };
                if !moved.is_null() {
                    // SAFETY: both blocks hold at least the smaller size.
                    unsafe {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                }
                moved
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_powers_of_two_from_16_to_16_kib() {
        let class = |size, align| Heap::class(Layout::from_size_align(size, align).unwrap());
        assert_eq!(CLASSES, 11);
        assert_eq!(class(0, 1), Some(0));
        assert_eq!(class(16, 8), Some(0));
        assert_eq!(class(17, 1), Some(1));
        assert_eq!(class(1024, 4), Some(6));
        assert_eq!(class(MAX, 8), Some(CLASSES - 1));
        assert_eq!(class(MAX + 1, 8), None);
        assert_eq!(class(64, 32), None);
    }

    /// `trim` unmaps free pages only: live blocks keep their contents,
    /// freed small blocks are still given again, and the heap goes on.
    #[test]
    fn trim_gives_back_free_pages_and_keeps_live_blocks() {
        let heap = Heap::new();
        let big = Layout::from_size_align(16 * 1024, 8).unwrap();
        let small = Layout::from_size_align(100, 8).unwrap();
        // SAFETY: non-zero layouts; every block written within its size.
        unsafe {
            let live = heap.alloc(small);
            ptr::write_bytes(live, 0x5a, 100);
            let free_small = heap.alloc(small);
            let bigs = [heap.alloc(big), heap.alloc(big)];
            for b in bigs {
                ptr::write_bytes(b, 1, big.size());
                heap.dealloc(b, big);
            }
            heap.dealloc(free_small, small);
            let freed = heap.trim();
            // Both big blocks' whole pages (16 KiB at any 16-byte offset
            // holds at least 16 KiB / page - 1 of them: 3 of 4 KiB, 1 of 8
            // KiB, as SPARC's) and the chunk's untouched rest.
            let per_block = (big.size() / page()).saturating_sub(1) * page();
            assert!(freed > 0 && freed >= 2 * per_block && freed % page() == 0, "{freed} (page {})", page());
            assert!(std::slice::from_raw_parts(live, 100).iter().all(|b| *b == 0x5a));
            assert_eq!(heap.alloc(small), free_small, "the small free block is kept");
            // A big block again: a new mapping of its size, usable whole.
            let again = heap.alloc(big);
            assert!(!bigs.contains(&again));
            ptr::write_bytes(again, 2, big.size());
            assert_eq!(heap.trim(), 0, "nothing free to give back");
        }
    }

    /// Blocks are disjoint, aligned, keep what was written into them
    /// across other allocations, and a freed block is the next one given
    /// for its class (no new memory).
    #[test]
    fn blocks_are_disjoint_reused_and_keep_their_contents() {
        let heap = Heap::new();
        let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
        let mut seed = 0x2545_f491_u32;
        let mut rand = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for i in 0..5000u32 {
            if rand() % 3 == 0 && !live.is_empty() {
                let (p, l, fill) = live.swap_remove(rand() as usize % live.len());
                // SAFETY: allocated below with this layout and filled.
                unsafe {
                    assert!(std::slice::from_raw_parts(p, l.size()).iter().all(|b| *b == fill));
                    heap.dealloc(p, l);
                }
                continue;
            }
            let size = [1, 8, 16, 24, 100, 1000, 1024, 3000, 16384, 20000][rand() as usize % 10];
            let l = Layout::from_size_align(size, [1, 4, 8, 16][rand() as usize % 4]).unwrap();
            // SAFETY: a non-zero layout.
            let p = unsafe { heap.alloc(l) };
            assert!(!p.is_null());
            assert_eq!(p as usize % l.align(), 0);
            let fill = i as u8;
            // SAFETY: p holds l.size() bytes.
            unsafe { ptr::write_bytes(p, fill, l.size()) };
            for (q, m, _) in &live {
                let (a, b) = (p as usize, *q as usize);
                assert!(a + l.size() <= b || b + m.size() <= a, "overlap");
            }
            live.push((p, l, fill));
        }
        let l = Layout::from_size_align(1000, 8).unwrap();
        // SAFETY: as above.
        unsafe {
            let p = heap.alloc(l);
            heap.dealloc(p, l);
            assert_eq!(heap.alloc(l), p, "the freed block is given again");
            let grown = heap.realloc(p, l, 1020);
            assert_eq!(grown, p, "same class: in place");
            ptr::write_bytes(grown, 7, 1020);
            let moved = heap.realloc(grown, Layout::from_size_align(1020, 8).unwrap(), 5000);
            assert!(std::slice::from_raw_parts(moved, 1020).iter().all(|b| *b == 7));
        }
    }
}
