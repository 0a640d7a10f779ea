//! The reader fuzz target's function (fuzz/fuzz_targets/reader.rs) on
//! stable Rust: over the checked-in seed corpus and many random mutations
//! of it. A panic anywhere fails the test.
use std::path::Path;

use schedtop::fuzz::read_bytes;
use schedtop::record::testdata::Rng;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/reader");
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("fuzz/corpus/reader")
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
        let n = read_bytes(bytes);
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

#[test]
fn random_mutations_never_panic() {
    let c = corpus();
    let mut rng = Rng(0x5eed);
    let mut runs = 0;
    for (_, seed) in &c {
        for _ in 0..400 {
            let mut b = seed.clone();
            for _ in 0..1 + rng.below(4) {
                mutate(&mut rng, &mut b);
            }
            read_bytes(&b);
            runs += 1;
        }
    }
    assert_eq!(runs, c.len() * 400);
}
