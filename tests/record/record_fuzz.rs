//! The fuzz targets' functions (fuzz/fuzz_targets/) on stable Rust: over
//! the checked-in corpora and many random mutations of them, with the
//! frames' CRCs recomputed after mutating so the damage reaches the
//! decoders behind them (as a fuzzing build, which skips CRCs, does).
//! A panic anywhere fails the test; so does a run whose damage the
//! decoders never saw, or an input slower than linear.
use std::path::Path;

use schedtop::fuzz::{
    decode_bytes, decompressed_total, expand, linear, read_bytes, Census, Decoder, EXPAND,
};
use schedtop::record::format::{HEADER_LEN, MAGIC, MAX_PAYLOAD};

/// Unoptimised test builds run several times slower than the fuzz build.
const SLACK: u32 = 8;
use schedtop::record::testdata::Rng;

/// The reader's corpus and its kept slow failures (fuzz/regressions/).
fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut c = files_in(&root.join("fuzz/corpus/reader"));
    c.extend(files_in(&root.join("fuzz/regressions/reader")));
    c
}

fn corpus_of(target: &str) -> Vec<(String, Vec<u8>)> {
    files_in(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/corpus")
            .join(target),
    )
}

fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("fuzz corpus directory")
        .map(|e| {
            let p = e.expect("entry").path();
            (p.display().to_string(), std::fs::read(&p).expect("read"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn seed_corpus_reads() {
    let c = corpus();
    assert!(c.len() >= 4, "seed corpus missing");
    for (name, bytes) in &c {
        let file = expand(bytes);
        let n = linear(file.len(), SLACK, || read_bytes(&file));
        if name.ends_with("fixture-v1") || name.ends_with("small-clean") {
            assert!(n > 0, "{name}: no Sample read");
        }
    }
}

fn mutate(rng: &mut Rng, b: &mut Vec<u8>) {
    if b.is_empty() {
        b.push(rng.below(256) as u8);
        return;
    }
    let len = b.len() as u64;
    match rng.below(8) {
        0 => {
            let i = rng.below(len) as usize;
            b[i] ^= 1 << rng.below(8);
        }
        1 => {
            let i = rng.below(len) as usize;
            b[i] = [0, 0xff, 0x7f, 0x80, 0xa5][rng.below(5) as usize];
        }
        2 => b.truncate(rng.below(len) as usize),
        3 => {
            // a run of 0xff (huge varints and lengths)
            let i = rng.below(len) as usize;
            let n = (rng.below(12) as usize).min(b.len() - i);
            b[i..i + n].fill(0xff);
        }
        4 => {
            // duplicate a chunk elsewhere (repeated frames, overlapping magic)
            let i = rng.below(len) as usize;
            let n = (rng.below(200) as usize).min(b.len() - i);
            let chunk = b[i..i + n].to_vec();
            let at = rng.below(len) as usize;
            b.splice(at..at, chunk);
        }
        5 => {
            let i = rng.below(len) as usize;
            let n = (rng.below(64) as usize).min(b.len() - i);
            b.drain(i..i + n);
        }
        6 => {
            // overwrite a little-endian u32 (lengths, offsets)
            if b.len() >= 4 {
                let i = rng.below(len - 3) as usize;
                let v = [0u32, 1, u32::MAX, 0x7fff_ffff, 1 << 25][rng.below(5) as usize];
                b[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        _ => {
            let i = rng.below(len) as usize;
            b.insert(i, rng.below(256) as u8);
        }
    }
}

/// Make every frame header in `b` whole again: its payload CRC and its
/// header CRC recomputed (from the end, so an enclosing frame's CRC covers
/// the fixed inner one).
fn recompute_crcs(b: &mut [u8]) {
    let starts: Vec<usize> = (0..b.len().saturating_sub(HEADER_LEN - 1))
        .filter(|&i| b[i..i + 4] == MAGIC)
        .collect();
    for &i in starts.iter().rev() {
        let len = u32::from_le_bytes(b[i + 8..i + 12].try_into().unwrap());
        let end = i + HEADER_LEN + len as usize;
        if len <= MAX_PAYLOAD && end <= b.len() {
            let crc = crc32fast::hash(&b[i + HEADER_LEN..end]);
            b[i + 12..i + 16].copy_from_slice(&crc.to_le_bytes());
        }
        let crc = crc32fast::hash(&b[i..i + 32]);
        b[i + 32..i + 36].copy_from_slice(&crc.to_le_bytes());
    }
}

#[test]
fn random_mutations_reach_the_decoders_and_never_panic() {
    let c = corpus();
    let mut rng = Rng(0x5eed);
    let mut census = Census::default();
    for (_, seed) in &c {
        // a recipe for a large file, or a few KB that decompress to
        // hundreds of MB: read whole above; too slow to mutate 300 times
        let before = decompressed_total();
        read_bytes(seed);
        if seed.first() == Some(&EXPAND) || decompressed_total() - before > 16 << 20 {
            continue;
        }
        for _ in 0..300 {
            let mut b = seed.clone();
            for _ in 0..1 + rng.below(4) {
                mutate(&mut rng, &mut b);
            }
            recompute_crcs(&mut b);
            linear(b.len(), SLACK, || census.run(|| read_bytes(&b)));
        }
    }
    eprintln!("{}", census.report("reader (stable)"));
    // damaged data got past the frame layer into every decoder: with the
    // CRCs left as the mutation made them, the Sample and index decoders
    // saw almost none of it
    let n = census.inputs;
    for d in [
        Decoder::Decompress,
        Decoder::Sample,
        Decoder::Index,
        Decoder::Header,
    ] {
        assert!(
            census.get(d) * 2 > n,
            "{d:?} reached by {} of {n}",
            census.get(d)
        );
    }
    // (index frames are a small part of each file: fewer mutations land there)
    for (d, per_100) in [
        (Decoder::Decompress, 5),
        (Decoder::Sample, 5),
        (Decoder::Index, 1),
    ] {
        assert!(
            census.rejected_by(d) * 100 > n * per_100,
            "{d:?} rejected only {} of {n}: the damage never reached it",
            census.rejected_by(d)
        );
    }
}

#[test]
fn decoder_corpus_and_mutations() {
    let c = corpus_of("decoders");
    assert!(c.len() >= 5, "decoder seeds missing");
    let mut rng = Rng(0xdec0de);
    let mut census = Census::default();
    for (_, seed) in &c {
        census.run(|| decode_bytes(seed));
        for _ in 0..300 {
            let mut b = seed.clone();
            for _ in 0..1 + rng.below(4) {
                mutate(&mut rng, &mut b);
            }
            linear(b.len(), SLACK, || census.run(|| decode_bytes(&b)));
        }
    }
    eprintln!("{}", census.report("decoders (stable)"));
    for d in [
        Decoder::Decompress,
        Decoder::Sample,
        Decoder::Index,
        Decoder::Header,
    ] {
        assert!(census.rejected_by(d) > 0, "{d:?} never rejected anything");
    }
}
