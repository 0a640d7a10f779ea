//! Memory of the live view's rewind history with 10,000 threads: ten
//! minutes of 1 s Samples (600) are pushed as live pushes them; the bytes
//! kept are printed (the README's figure) and must stay under the cap, and
//! with a small cap the bound holds while the oldest are dropped and
//! counted. `cargo test --release --test history_mem -- --nocapture` shows
//! the figures.
use schedtop::collect::Seekable;
use schedtop::record::testdata::{synthetic_host, SynthGen, SynthOptions};
use schedtop::ui::history::{History, DEFAULT_BYTE_CAP, DEFAULT_WINDOW_NS, KEY_EVERY};

const THREADS: usize = 10_000;
const SAMPLES: usize = 600;

fn opts() -> SynthOptions {
    SynthOptions {
        threads: THREADS,
        samples: SAMPLES,
        cpus: 64,
        // a busy machine: 1 % of the threads replaced every second
        churn: 0.01,
        ..Default::default()
    }
}

#[test]
fn ten_minutes_of_10000_threads_fit_the_cap() {
    let o = opts();
    let mut g = SynthGen::new(o.clone());
    let mut h = History::new(synthetic_host(&o), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let mut last = None;
    let mut pushing = std::time::Duration::ZERO;
    for _ in 0..SAMPLES {
        let s = g.next_sample();
        let t = std::time::Instant::now();
        h.push(&s);
        pushing += t.elapsed();
        last = Some(s);
    }
    let per = h.bytes() / SAMPLES;
    println!(
        "history: {:.1} ms per push",
        pushing.as_secs_f64() * 1e3 / SAMPLES as f64
    );
    println!(
        "history: {SAMPLES} Samples of {THREADS} threads: {} bytes kept ({:.1} MiB, {per} bytes/Sample, key every {KEY_EVERY}), {:.1} MiB resident, cap {} MiB",
        h.bytes(),
        h.bytes() as f64 / 1048576.0,
        h.resident_bytes() as f64 / 1048576.0,
        DEFAULT_BYTE_CAP >> 20
    );
    // all ten minutes kept, within the cap
    assert_eq!(h.dropped(), 0);
    assert_eq!(h.len(), SAMPLES);
    assert!(h.bytes() <= DEFAULT_BYTE_CAP);
    // and what is kept reads back exactly
    assert_eq!(h.sample(SAMPLES - 1).unwrap(), last.unwrap());
    // what a T press costs at most: a read far from the cache decodes
    // from its key frame (KEY_EVERY - 1 deltas at worst)
    let t = std::time::Instant::now();
    let worst = KEY_EVERY - 1 + KEY_EVERY * 3;
    let s = h.sample(worst).unwrap();
    println!(
        "history: reading Sample {worst} from its key frame: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(s.threads.len(), h.sample(worst).unwrap().threads.len());
}

#[test]
fn a_small_cap_holds_and_counts_what_went() {
    let o = opts();
    let mut g = SynthGen::new(o.clone());
    let cap = 8 << 20;
    let mut h = History::new(synthetic_host(&o), DEFAULT_WINDOW_NS, cap);
    let mut max = 0;
    let mut dropped = 0;
    for _ in 0..150 {
        dropped += h.push(&g.next_sample());
        // over the cap for at most the push that starts a new key group
        if h.len() > KEY_EVERY + 1 {
            max = max.max(h.bytes());
        }
    }
    println!(
        "cap {cap}: at most {max} bytes, {} kept, {dropped} dropped",
        h.len()
    );
    assert!(max <= cap, "{max} > {cap}");
    assert!(dropped > 0);
    assert_eq!(h.dropped(), dropped as u64);
    assert_eq!(h.len() + dropped, 150);
}
