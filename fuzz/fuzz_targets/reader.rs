//! Fuzz the recording reader: any bytes, opened as a recording, read in
//! every way a user can (open, every Sample, seeks, dump). It must never
//! panic, hang or allocate without bound. CRCs are not checked under
//! `--cfg fuzzing` so inputs reach the decoders behind them.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    schedtop::fuzz::read_bytes(data);
});
