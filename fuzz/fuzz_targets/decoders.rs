//! Fuzz the decoders on their own, below the frame layer (no magic, length
//! or CRC to get past): the first byte picks decompress+decode, a key
//! Sample, a delta Sample, an index or a segment header. At exit it prints
//! how many inputs reached each decoder.
#![no_main]
use std::sync::{Mutex, Once};

use libfuzzer_sys::fuzz_target;

#[path = "mem.rs"]
mod mem;

#[global_allocator]
static ALLOC: mem::Counting = mem::Counting;
use schedtop::fuzz::{decode_bytes, linear, Census};

static CENSUS: Mutex<Census> = Mutex::new(Census {
    inputs: 0,
    reached: [0; 4],
    rejected: [0; 4],
});
static AT_EXIT: Once = Once::new();

extern "C" fn report() {
    if let Ok(c) = CENSUS.lock() {
        eprintln!("{}", c.report("decoders"));
    }
}

fuzz_target!(|data: &[u8]| {
    // SAFETY: registers a function with no arguments that only prints.
    AT_EXIT.call_once(|| unsafe {
        libc::atexit(report);
    });
    let len = data.len();
    let mut census = CENSUS.lock().unwrap();
    linear(len, 1, || mem::bounded(len, || census.run(|| decode_bytes(data))));
});
