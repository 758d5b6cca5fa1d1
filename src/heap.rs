//! The global allocator: power-of-two size classes cut from 64 KiB chunks
//! mapped on demand, each class with its own free list; memory goes back
//! to the kernel only when the watchdog daemon trims it, once.
//!
//! Why: musl's allocator (mallocng) gives a size class's group back to the
//! kernel as soon as its last block is freed, and maps it again at the
//! next allocation of that size. A boot-time command allocates and frees
//! the same few sizes over and over (a file's contents, a netlink
//! message), and each such round trip is a mmap, a munmap and a page
//! fault, which a slow board pays for in its boot (scripts/bench-boot).
//! Here a freed block
//! waits on its class's list for the next allocation of that class.
//!
//! What it costs: a block is rounded up to a power of two (at most twice
//! its size; a `Vec` grows by doubling anyway), and the memory a
//! short-lived command once used stays mapped until it exits.
//! A block over `MAX` bytes, or aligned over 16, is a mapping of its own,
//! rounded up to whole pages; the last one freed is kept for the next of
//! the same length (a netlink receive buffer, asked for once a request),
//! except in the watchdog daemon once it has trimmed its heap.
//!
//! The static musl builds also route C's `malloc`, `calloc`, `realloc`
//! and `free` here ([`c_malloc`] and the rest, exported by src/main.rs),
//! for what musl itself allocates (a directory stream, a spawn's file
//! actions, the environment): musl's allocator then stays out of the
//! binary (`scripts/build` prints its size). The glibc builds keep
//! glibc's for C.
//! Thread-safe behind a spin lock, which nothing contends: nasboot runs
//! on one thread (the runner polls its tools' pipes, src/seam/real/runner.rs).
//!
//! The watchdog daemon, which lives on, gives back what its start left
//! free ([`trim`], from src/watchdog/memory.rs): the whole pages of the
//! free blocks of a page or more and of the current chunk's unused rest.
//! Its loop then takes its few blocks from the free lists, or from chunks
//! of a page (so that `mlockall`'s MCL_FUTURE locks no unused memory).

use std::alloc::{GlobalAlloc, Layout};
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
    /// The last big block freed, kept for the next of its length: its
    /// address and length (0: none).
    spare: (usize, usize),
}

/// The heap the binary installs as its global allocator (src/main.rs,
/// [`Global`]); the daemon trims it. The unit tests run on the system
/// allocator: there it stays empty and `trim` finds nothing.
static HEAP: Heap = Heap::new();

/// The global allocator: the one `Heap` of the process (`HEAP`).
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
        Heap {
            lock: AtomicBool::new(false),
            state: UnsafeCell::new(State { next: 0, end: 0, free: [ptr::null_mut(); CLASSES], chunk: 0, spare: (0, 0) }),
        }
    }

    /// Give the kernel back the whole pages of the current chunk's unused
    /// rest and of every free block that holds one (such a block leaves
    /// its free list for good; its partial pages stay mapped, unused),
    /// and map later chunks a page at a time. The bytes unmapped.
    pub(crate) fn trim(&self) -> usize {
        let page = page();
        self.with(|s| {
            let mut freed = unmap_pages(s.next, s.end, page);
            let (spare, len) = std::mem::take(&mut s.spare);
            freed += unmap_pages(spare, spare + len, page);
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

    /// Where a layout's blocks come from.
    fn kind(layout: Layout) -> Kind {
        if layout.align() <= MIN && layout.size() <= MAX {
            let size = layout.size().max(MIN).next_power_of_two();
            return Kind::Small((size / MIN).trailing_zeros() as usize);
        }
        let page = page();
        if layout.align() > page {
            return Kind::Never;
        }
        Kind::Big(layout.size().max(1).next_multiple_of(page))
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

/// Where a block comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A size class's free list, or the current chunk.
    Small(usize),
    /// A mapping of its own, this many bytes (whole pages).
    Big(usize),
    /// Aligned beyond a page: not served (nothing in nasboot asks).
    Never,
}

/// A private anonymous mapping of `len` bytes, or null.
fn map(len: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping; no memory is touched.
    let p = unsafe {
        nix::libc::mmap(
            ptr::null_mut(),
            len,
            nix::libc::PROT_READ | nix::libc::PROT_WRITE,
            nix::libc::MAP_PRIVATE | nix::libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == nix::libc::MAP_FAILED {
        ptr::null_mut()
    } else {
        p.cast()
    }
}

impl State {
    fn take_big(&mut self, len: usize) -> *mut u8 {
        if self.spare.1 == len {
            return std::mem::take(&mut self.spare).0 as *mut u8;
        }
        map(len)
    }

    /// Keep a freed big block as the spare, unmapping the one before; once
    /// trimmed (the watchdog daemon, whose memory is locked), keep none.
    fn give_big(&mut self, block: *mut u8, len: usize) {
        let (old, old_len) =
            if self.chunk == 0 { std::mem::replace(&mut self.spare, (block as usize, len)) } else { (block as usize, len) };
        if old_len > 0 {
            // SAFETY: a whole mapping of that length, which nothing uses.
            unsafe { nix::libc::munmap(old as *mut nix::libc::c_void, old_len) };
        }
    }

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
            let chunk = map(len);
            if chunk.is_null() {
                return chunk;
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

// SAFETY: blocks are disjoint (cut once from a chunk, or a mapping of
// their own, then only passed between the caller and the free lists or the
// spare), at least the layout's size (a big block's length is the size
// rounded up to pages, the same at alloc and dealloc) and aligned to MIN
// (chunks are page-aligned, sizes multiples of MIN) or to a page.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::kind(layout) {
            Kind::Small(c) => self.with(|s| s.take(c)),
            Kind::Big(len) => self.with(|s| s.take_big(len)),
            Kind::Never => ptr::null_mut(),
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match Self::kind(layout) {
            Kind::Small(c) => self.with(|s| s.give(block, c)),
            Kind::Big(len) => self.with(|s| s.give_big(block, len)),
            Kind::Never => {}
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract makes this layout valid.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if Self::kind(layout) == Self::kind(new) {
            return block;
        }
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

/// C's allocator on the heap: each block starts with a header of MIN
/// bytes (keeping the alignment) that holds the block's whole size, which
/// `free` is not told.
fn c_layout(size: usize) -> Option<Layout> {
    Layout::from_size_align(size.checked_add(MIN)?, MIN).ok()
}

fn c_block(block: *mut u8, size: usize) -> *mut u8 {
    if block.is_null() {
        // SAFETY: errno is this thread's; C's malloc sets ENOMEM.
        unsafe { *nix::libc::__errno_location() = nix::libc::ENOMEM };
        return block;
    }
    // SAFETY: the block holds MIN header bytes, aligned for a usize.
    unsafe {
        block.cast::<usize>().write(size);
        block.add(MIN)
    }
}

/// C's `malloc`.
///
/// # Safety
///
/// C's contract for `malloc`.
pub unsafe fn c_malloc(size: usize) -> *mut u8 {
    match c_layout(size) {
        // SAFETY: a non-zero layout.
        Some(l) => c_block(unsafe { HEAP.alloc(l) }, l.size()),
        None => c_block(ptr::null_mut(), 0),
    }
}

/// C's `calloc`.
///
/// # Safety
///
/// C's contract for `calloc`.
pub unsafe fn c_calloc(n: usize, size: usize) -> *mut u8 {
    let Some(len) = n.checked_mul(size) else { return c_block(ptr::null_mut(), 0) };
    // SAFETY: C's contract, passed on.
    let p = unsafe { c_malloc(len) };
    if !p.is_null() {
        // SAFETY: p holds len bytes (a freed block may hold old data).
        unsafe { ptr::write_bytes(p, 0, len) };
    }
    p
}

/// The header and layout of a block `c_malloc` gave.
///
/// Safety: `p` came from `c_malloc`, `c_calloc` or `c_realloc`.
unsafe fn c_whole(p: *mut u8) -> (*mut u8, Layout) {
    // SAFETY: the header is MIN bytes before, written by c_block.
    unsafe {
        let block = p.sub(MIN);
        (block, Layout::from_size_align_unchecked(block.cast::<usize>().read(), MIN))
    }
}

/// C's `free`.
///
/// # Safety
///
/// C's contract for `free`.
pub unsafe fn c_free(p: *mut u8) {
    if !p.is_null() {
        // SAFETY: C's contract: p came from our malloc.
        unsafe {
            let (block, layout) = c_whole(p);
            HEAP.dealloc(block, layout);
        }
    }
}

/// C's `realloc`.
///
/// # Safety
///
/// C's contract for `realloc`.
pub unsafe fn c_realloc(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() {
        // SAFETY: C's contract, passed on.
        return unsafe { c_malloc(size) };
    }
    let Some(new) = c_layout(size) else { return c_block(ptr::null_mut(), 0) };
    // SAFETY: C's contract: p came from our malloc; on failure it stays.
    unsafe {
        let (block, layout) = c_whole(p);
        c_block(HEAP.realloc(block, layout, new.size()), new.size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_powers_of_two_from_16_to_16_kib_then_pages() {
        let kind = |size, align| Heap::kind(Layout::from_size_align(size, align).unwrap());
        assert_eq!(CLASSES, 11);
        assert_eq!(kind(0, 1), Kind::Small(0));
        assert_eq!(kind(16, 8), Kind::Small(0));
        assert_eq!(kind(17, 1), Kind::Small(1));
        assert_eq!(kind(1024, 4), Kind::Small(6));
        assert_eq!(kind(MAX, 8), Kind::Small(CLASSES - 1));
        assert_eq!(kind(MAX + 1, 8), Kind::Big((MAX + 1).next_multiple_of(page())));
        assert_eq!(kind(64, 32), Kind::Big(page()));
        assert_eq!(kind(64, page() * 2), Kind::Never);
    }

    /// A big block is a mapping of its own; the last one freed is given
    /// again for the same length, another length gets a new one, and
    /// `trim` unmaps the spare.
    #[test]
    fn big_blocks_are_mappings_and_the_last_freed_is_kept() {
        let heap = Heap::new();
        let l = Layout::from_size_align(64 * 1024, 8).unwrap();
        // SAFETY: non-zero layouts; every block written within its size.
        unsafe {
            let a = heap.alloc(l);
            assert_eq!(a as usize % page(), 0);
            ptr::write_bytes(a, 3, l.size());
            heap.dealloc(a, l);
            assert_eq!(heap.alloc(l), a, "the spare, for the same length");
            let other = Layout::from_size_align(40 * 1024 + 8, 8).unwrap();
            heap.dealloc(a, l);
            let b = heap.alloc(other);
            assert_ne!(b, a);
            ptr::write_bytes(b, 4, other.size());
            assert_eq!(heap.trim(), l.size(), "the spare unmapped");
            // Trimmed (the daemon's): a freed big block is unmapped, not kept.
            let c = heap.alloc(l);
            heap.dealloc(c, l);
            assert_eq!(heap.trim(), 0, "no spare after trim");
            let grown = heap.realloc(b, other, 41 * 1024);
            assert_eq!(grown, b, "the same pages: in place");
            let moved = heap.realloc(grown, Layout::from_size_align(41 * 1024, 8).unwrap(), 100);
            assert!(std::slice::from_raw_parts(moved, 100).iter().all(|x| *x == 4));
            heap.dealloc(moved, Layout::from_size_align(100, 8).unwrap());
        }
    }

    /// C's functions on the global heap: sizes kept in the header, calloc
    /// zeroes a reused block, realloc keeps the contents, free(NULL) and
    /// an overflowing calloc are C's.
    #[test]
    fn c_allocator_keeps_sizes_zeroes_and_moves() {
        // SAFETY: C's contract, kept by each call.
        unsafe {
            let p = c_malloc(100);
            assert_eq!(p as usize % MIN, 0);
            ptr::write_bytes(p, 0xee, 100);
            c_free(p);
            let z = c_calloc(10, 10);
            assert!(std::slice::from_raw_parts(z, 100).iter().all(|x| *x == 0), "calloc zeroes a reused block");
            ptr::write_bytes(z, 9, 100);
            let big = c_realloc(z, 100_000);
            assert!(std::slice::from_raw_parts(big, 100).iter().all(|x| *x == 9));
            ptr::write_bytes(big, 1, 100_000);
            let small = c_realloc(big, 10);
            assert!(std::slice::from_raw_parts(small, 10).iter().all(|x| *x == 1));
            c_free(small);
            c_free(ptr::null_mut());
            assert!(c_calloc(usize::MAX / 2, 3).is_null());
            assert!(c_malloc(usize::MAX).is_null());
            let n = c_realloc(ptr::null_mut(), 8);
            assert!(!n.is_null());
            c_free(n);
        }
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
