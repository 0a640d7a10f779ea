//! Memory per input: a global allocator that keeps the peak of live heap
//! bytes, so a target can check that an input cost memory in proportion
//! to what it holds (its bytes, and what they decompress to), not to a
//! count it claims.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

/// Run `f`; panic if the heap grew past `32 MiB + 80 x (len + unpacked)`
/// at any point: a decoded thread takes 224 bytes for the 16 it needs
/// before compression (14x), and reading holds up to five Samples at once
/// (the reader's cache, the current and previous ones, their copies).
pub fn bounded<T>(len: usize, f: impl FnOnce() -> T) -> T {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let unpacked0 = schedtop::fuzz::decompressed_total();
    let out = f();
    let unpacked = (schedtop::fuzz::decompressed_total() - unpacked0) as usize;
    let grew = PEAK.load(Ordering::Relaxed).saturating_sub(base);
    let allowed = (32 << 20) + 80 * (len + unpacked);
    assert!(
        grew <= allowed,
        "{len} bytes (+{unpacked} decompressed) took {grew} bytes of heap (allowed {allowed})"
    );
    out
}
