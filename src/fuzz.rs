//! The bodies of the fuzz targets (fuzz/fuzz_targets/), here so a
//! stable-Rust test can run them over the corpus and random mutations.
use std::time::Duration;

use crate::export::dump::{dump, DumpOptions, Format};
use crate::record::codec;
pub use crate::record::fuzz_tally::*;
use crate::record::reader::Reader;
use crate::record::timeexpr::TimeExpr;

/// Inputs starting with this byte describe a large file in a few bytes:
/// `[0xEE, reps (u16 LE), split (u16 LE), bytes...]` is `bytes[..split]`
/// then `bytes[split..]` repeated `reps * 64` times (at most 16 MiB), so
/// the fuzzer reaches the sizes where superlinear work shows.
pub const EXPAND: u8 = 0xEE;
const EXPAND_MAX: usize = 16 << 20;

pub fn expand(data: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if data.len() < 6 || data[0] != EXPAND {
        return data.into();
    }
    let reps = u16::from_le_bytes([data[1], data[2]]) as usize * 64;
    let rest = &data[5..];
    let split = (u16::from_le_bytes([data[3], data[4]]) as usize).min(rest.len());
    let (head, unit) = rest.split_at(split);
    let mut out = head.to_vec();
    if !unit.is_empty() {
        let n = reps.min((EXPAND_MAX - out.len().min(EXPAND_MAX)) / unit.len());
        out.reserve(n * unit.len());
        for _ in 0..n {
            out.extend_from_slice(unit);
        }
    }
    out.into()
}

/// Time an input of `len` bytes that decompressed to `unpacked` more may
/// take: linear in both. A reader that reads a payload at every one of many
/// frame headers (quadratic) blows it at a few MiB, where the linear one
/// takes a fraction of it.
pub fn time_allowed(len: usize, unpacked: u64) -> Duration {
    Duration::from_millis(500) + Duration::from_nanos(2_000 * (len as u64 + unpacked))
}

/// Run `f` on an input of `len` bytes; panic if it took more than
/// `time_allowed` (times `slack`, for unoptimised builds).
pub fn linear<T>(len: usize, slack: u32, f: impl FnOnce() -> T) -> T {
    let before = decompressed_total();
    let t = std::time::Instant::now();
    let out = f();
    let took = t.elapsed();
    let unpacked = decompressed_total() - before;
    assert!(
        took <= time_allowed(len, unpacked) * slack,
        "{len} bytes (+{unpacked} decompressed) took {took:?}: more than linear time"
    );
    out
}

/// Read everything the bytes hold the ways a user can; must never panic.
/// Returns how many Samples read.
pub fn read_bytes(data: &[u8]) -> usize {
    let mut seen = 0;
    if let Ok(mut r) = Reader::from_storage(data.to_vec()) {
        let _ = r.host();
        let _ = (r.first_time(), r.last_time(), r.damage().len());
        let n = r.len().min(64);
        for i in 0..n {
            if r.sample(i).is_ok() {
                seen += 1;
            }
        }
        // random access: backwards, then by time
        for i in (0..n).rev().step_by(3) {
            let _ = r.sample(i);
        }
        if let Some(t) = r.last_time() {
            if let Some(i) = r.index_at_time(t / 2) {
                let _ = r.sample(i);
            }
        }
        let opts = DumpOptions {
            format: Format::Csv,
            from: Some(TimeExpr::FromStart(1)),
            to: None,
            pids: vec![],
        };
        let _ = dump(&mut r, &opts, &mut std::io::sink());
    }
    seen
}

/// The decoders on their own, below the frame layer and its CRCs: the
/// first byte picks one, the rest is its input.
pub fn decode_bytes(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    match sel % 5 {
        0 => {
            if let Ok(raw) = codec::decompress(rest) {
                let _ = codec::decode(&raw, None);
            }
        }
        1 => {
            // a Sample, then (if it decoded) a delta on it
            if let Ok(s) = codec::decode(rest, None) {
                let _ = codec::decode(rest, Some(&s));
            }
        }
        // the delta base is generated test data: not in a release build
        #[cfg(any(test, feature = "testdata"))]
        2 => {
            let base = delta_base();
            let _ = codec::decode(rest, Some(&base));
        }
        3 => {
            let _ = crate::record::index::decode(rest);
        }
        _ => {
            if let Some(h) = crate::record::header::FileHeader::from_bytes(rest) {
                let _ = h.host();
            }
        }
    }
}

/// The Sample the `decode_bytes` delta inputs are encoded on (the seeds
/// in fuzz/corpus/decoders are deltas on it).
#[cfg(any(test, feature = "testdata"))]
pub fn delta_base() -> crate::model::Sample {
    crate::record::crafted::samples(2, 9).swap_remove(0)
}
