//! Writes the format-2 compatibility fixture (tests/fixtures/v2.schedtop):
//! run from the repository root with `cargo run --example
//! record_fixture_v2`. Checked in; never regenerate it for a later format,
//! add a new one next to it.
//!
//! Six Samples of eight synthetic threads, key frames every 3: each thread's
//! nice is (tid % 40) - 20, except tid 1003, renice'd to 10 from Sample 4 on
//! (an attribute change carried by a delta frame).
use std::path::Path;

use schedtop::model::ThreadAttrs;
use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::{OpenMode, WriteOptions, Writer};

fn main() {
    let o = SynthOptions {
        threads: 8,
        samples: 6,
        seed: 7,
        ..Default::default()
    };
    let path = Path::new("tests/fixtures/v2.schedtop");
    let opts = WriteOptions {
        mode: OpenMode::CreateNew,
        key_every: 3,
        ..Default::default()
    };
    let mut w =
        Writer::open(path, &synthetic_host(&o), opts).expect("create (remove the old file first)");
    for (i, mut s) in synthetic_samples(&o).into_iter().enumerate() {
        for t in &mut s.threads {
            let nice = if t.tid == 1003 && i >= 4 {
                10
            } else {
                (t.tid % 40) as i8 - 20
            };
            t.attrs = ThreadAttrs {
                nice: Some(nice),
                ..Default::default()
            };
        }
        w.write_sample(&s).expect("write");
    }
    w.finish().expect("finish");
    println!("wrote {}", path.display());
}
