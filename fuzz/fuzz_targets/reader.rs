//! Fuzz the recording reader: any bytes, opened as a recording, read in
//! every way a user can (open, every Sample, seeks, dump). It must never
//! panic, hang, allocate without bound or take more than linear time
//! (inputs starting 0xEE expand to files of up to 16 MiB: see
//! `schedtop::fuzz::expand`). CRCs are not checked under `--cfg fuzzing` so
//! inputs reach the decoders behind them; at exit it prints how many
//! inputs reached each decoder.
#![no_main]
use std::sync::{Mutex, Once};

use libfuzzer_sys::fuzz_target;

#[path = "mem.rs"]
mod mem;

#[global_allocator]
static ALLOC: mem::Counting = mem::Counting;
use schedtop::fuzz::{expand, read_bytes, linear, Census};

static CENSUS: Mutex<Census> = Mutex::new(Census {
    inputs: 0,
    reached: [0; 4],
    rejected: [0; 4],
});
static AT_EXIT: Once = Once::new();

extern "C" fn report() {
    if let Ok(c) = CENSUS.lock() {
        eprintln!("{}", c.report("reader"));
    }
}

fuzz_target!(|data: &[u8]| {
    // SAFETY: registers a function with no arguments that only prints.
    AT_EXIT.call_once(|| unsafe {
        libc::atexit(report);
    });
    let file = expand(data);
    let len = file.len();
    let mut census = CENSUS.lock().unwrap();
    linear(len, 1, || mem::bounded(len, || census.run(|| read_bytes(&file))));
});
