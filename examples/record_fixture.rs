//! Writes the compatibility fixture (tests/fixtures/v1.schedtop) and the
//! reader fuzz seed corpus (fuzz/corpus/reader/). Run from the repository
//! root: `cargo run --example record_fixture`. The fixture is checked in and
//! must keep reading with every later version: do not regenerate it for a
//! new format version, add a new one next to it.
//!
//! The fixture: a segment of 12 Samples whose writer was killed with the
//! last frame torn in half, then a second segment appended (other interval),
//! closed cleanly. Key frames every 4 Samples, index frames every 5 frames.
use std::path::Path;

use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::{OpenMode, Reader, WriteOptions, Writer};

pub fn segment_a() -> SynthOptions {
    SynthOptions {
        threads: 20,
        samples: 12,
        churn: 0.1,
        seed: 5,
        ..Default::default()
    }
}

pub fn segment_b() -> SynthOptions {
    SynthOptions {
        threads: 6,
        samples: 3,
        seed: 6,
        interval_ns: 2_000_000_000,
        start_ns: 1_795_302_600_000_000_000,
        ..Default::default()
    }
}

fn write(path: &Path, o: &SynthOptions, mode: OpenMode, finish: bool) {
    let opts = WriteOptions {
        mode,
        key_every: 4,
        index_every: 5,
        ..Default::default()
    };
    let mut w = Writer::open(path, &synthetic_host(o), opts).expect("open");
    for s in synthetic_samples(o) {
        w.write_sample(&s).expect("write");
    }
    if finish {
        w.finish().expect("finish");
    }
}

fn main() {
    let fixture = Path::new("tests/fixtures/v1.schedtop");
    std::fs::create_dir_all("tests/fixtures").expect("mkdir");
    let _ = std::fs::remove_file(fixture);
    write(fixture, &segment_a(), OpenMode::CreateNew, false);
    let r = Reader::open(fixture).expect("read back");
    let (s, e) = r.frame_range(r.len() - 1).expect("last frame");
    drop(r);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(fixture)
        .expect("open");
    f.set_len((s + e) / 2).expect("tear");
    drop(f);
    write(fixture, &segment_b(), OpenMode::Append, true);
    println!(
        "wrote {} ({} bytes)",
        fixture.display(),
        std::fs::metadata(fixture).expect("stat").len()
    );

    // fuzz seeds: the fixture, a small clean recording, a torn one
    let corpus = Path::new("fuzz/corpus/reader");
    std::fs::create_dir_all(corpus).expect("mkdir");
    std::fs::copy(fixture, corpus.join("fixture-v1")).expect("copy");
    let small = SynthOptions {
        threads: 3,
        samples: 5,
        churn: 0.3,
        seed: 9,
        ..Default::default()
    };
    let p = corpus.join("small-clean");
    let _ = std::fs::remove_file(&p);
    write(&p, &small, OpenMode::CreateNew, true);
    let p2 = corpus.join("small-torn");
    let _ = std::fs::remove_file(&p2);
    write(&p2, &small, OpenMode::CreateNew, false);
    let bytes = std::fs::read(&p2).expect("read");
    std::fs::write(&p2, &bytes[..bytes.len() - 7]).expect("write");
    // one raw encoded Sample (the codec on its own)
    let s = synthetic_samples(&small);
    std::fs::write(
        corpus.join("raw-sample"),
        schedtop::record::codec::encode(&s[1], None),
    )
    .expect("write");
    println!("wrote seeds in {}", corpus.display());
}
