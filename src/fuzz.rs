//! The body of the reader fuzz target (fuzz/fuzz_targets/reader.rs), here so
//! a stable-Rust test can run it over the corpus and random mutations.
use crate::export::dump::{dump, DumpOptions, Format};
use crate::record::codec;
use crate::record::reader::Reader;
use crate::record::timeexpr::TimeExpr;

/// Read everything the bytes hold the ways a user can; must never panic.
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
    // the Sample decoder on its own, as a key frame and on a base
    if let Ok(s) = codec::decode(data, None) {
        let _ = codec::decode(data, Some(&s));
    }
    let _ = codec::decompress(data);
    let _ = crate::record::index::decode(data);
    seen
}
