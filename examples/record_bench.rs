//! Recording benchmarks (bench/record.sh runs this in release mode):
//!
//! 1. size: bytes per active thread per Sample, 1,000 threads that all run
//!    every interval, 1 s interval, histograms included;
//! 2. a synthetic 24 h recording at 1 s: time to open it, and time to seek
//!    to a random instant (index lookup + decoding the Sample there).
//!
//! Usage: record_bench [size|day|all] [--threads N] [--dir DIR]
use std::path::PathBuf;
use std::time::Instant;

use schedtop::record::testdata::{synthetic_host, Rng, SynthGen, SynthOptions};
use schedtop::record::{Reader, WriteOptions, Writer};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn size_bench(dir: &std::path::Path, threads: usize) {
    let samples = 600;
    println!("== size: {threads} active threads, 1 s interval, {samples} Samples, histograms on");
    for (uniform, level, key_every) in [
        (false, 3, 20),
        (false, 3, 60),
        (false, 9, 20),
        (true, 3, 20),
    ] {
        let o = SynthOptions {
            threads,
            samples,
            uniform,
            ..Default::default()
        };
        let path = dir.join(format!("size-{level}-{key_every}.schedtop"));
        let _ = std::fs::remove_file(&path);
        let mut w = Writer::open(
            &path,
            &synthetic_host(&o),
            WriteOptions {
                level,
                key_every,
                ..Default::default()
            },
        )
        .expect("create");
        let mut g = SynthGen::new(o);
        let t0 = Instant::now();
        for _ in 0..samples {
            w.write_sample(&g.next_sample()).expect("write");
        }
        w.finish().expect("finish");
        let write_s = t0.elapsed().as_secs_f64();
        let bytes = std::fs::metadata(&path).expect("stat").len();
        println!(
            "{}, zstd level {level}, key frame every {key_every}: {:>6.2} B per thread per Sample ({bytes} bytes; {:.2} ms to encode+write a Sample)",
            if uniform { "worst case (every thread alike, lengths spread evenly)" } else { "threads of mixed character" },
            bytes as f64 / (threads * samples) as f64,
            write_s * 1e3 / samples as f64
        );
        let _ = std::fs::remove_file(&path);
    }
}

fn day_bench(dir: &std::path::Path, threads: usize) {
    let samples = 86_400;
    let path = dir.join("day.schedtop");
    let _ = std::fs::remove_file(&path);
    let o = SynthOptions {
        threads,
        samples,
        churn: 0.001,
        ..Default::default()
    };
    println!("== 24 h at 1 s: {samples} Samples of {threads} threads (0.1 % churn per interval)");
    let mut w = Writer::open(&path, &synthetic_host(&o), WriteOptions::default()).expect("create");
    let mut g = SynthGen::new(o);
    let t0 = Instant::now();
    for _ in 0..samples {
        w.write_sample(&g.next_sample()).expect("write");
    }
    w.finish().expect("finish");
    let bytes = std::fs::metadata(&path).expect("stat").len();
    println!(
        "wrote {:.1} MiB in {:.1} s",
        bytes as f64 / (1 << 20) as f64,
        t0.elapsed().as_secs_f64()
    );
    // open: the page cache is warm (the file was just written)
    let mut opens = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let r = Reader::open(&path).expect("open");
        opens.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(r.len(), samples);
    }
    opens.sort_by(f64::total_cmp);
    println!("open: median {:.2} ms (of 5)", opens[2]);
    let mut r = Reader::open(&path).expect("open");
    let (first, last) = (r.first_time().unwrap(), r.last_time().unwrap());
    let mut rng = Rng(42);
    let mut times = Vec::new();
    for _ in 0..200 {
        let t = first + rng.below(last - first);
        let t0 = Instant::now();
        let i = r.index_at_time(t).expect("index");
        let s = r.sample(i).expect("sample");
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        assert!(s.time_ns <= t);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "seek to a random instant + decode: median {:.2} ms, p95 {:.2} ms, max {:.2} ms (of {})",
        times[times.len() / 2],
        times[times.len() * 95 / 100],
        times[times.len() - 1],
        times.len()
    );
    let t0 = Instant::now();
    for i in 1000..1100 {
        r.sample(i).expect("sample");
    }
    println!(
        "step forward (replay): {:.3} ms per Sample",
        t0.elapsed().as_secs_f64() * 1e3 / 100.0
    );
    let _ = std::fs::remove_file(&path);
}

/// Time to encode and decode one Sample (key frame and delta), no file.
fn decode_bench(threads: usize) {
    use schedtop::record::codec;
    let o = SynthOptions {
        threads,
        samples: 2,
        ..Default::default()
    };
    let s = schedtop::record::testdata::synthetic_samples(&o);
    println!("== codec: one Sample of {threads} threads, in memory");
    for (name, base) in [("key frame", None), ("delta", Some(&s[0]))] {
        let (raw, splits) = codec::encode_split(&s[1], base);
        let z = codec::compress(&raw, &splits, 3);
        let n = 50;
        let t0 = Instant::now();
        for _ in 0..n {
            std::hint::black_box(codec::encode_split(&s[1], base));
        }
        let enc = t0.elapsed().as_secs_f64() * 1e3 / n as f64;
        let t0 = Instant::now();
        for _ in 0..n {
            std::hint::black_box(codec::compress(&raw, &splits, 3));
        }
        let comp = t0.elapsed().as_secs_f64() * 1e3 / n as f64;
        let t0 = Instant::now();
        for _ in 0..n {
            std::hint::black_box(codec::decompress(&z).expect("decompress"));
        }
        let dec = t0.elapsed().as_secs_f64() * 1e3 / n as f64;
        let t0 = Instant::now();
        for _ in 0..n {
            std::hint::black_box(codec::decode(&raw, base).expect("decode"));
        }
        let de = t0.elapsed().as_secs_f64() * 1e3 / n as f64;
        println!(
            "{name:>9}: {} -> {} bytes; encode {enc:.3} ms, compress {comp:.3} ms, decompress {dec:.3} ms, decode {de:.3} ms",
            raw.len(),
            z.len()
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).cloned().unwrap_or_else(|| "all".into());
    let threads: usize = arg(&args, "--threads")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let dir = PathBuf::from(
        arg(&args, "--dir").unwrap_or_else(|| std::env::temp_dir().display().to_string()),
    );
    if what == "streams" {
        let o = SynthOptions {
            threads,
            samples: 3,
            ..Default::default()
        };
        let s = schedtop::record::testdata::synthetic_samples(&o);
        for (n, raw, z) in schedtop::record::codec::stream_sizes(&s[2], Some(&s[1]), 3) {
            println!(
                "{n:>6}: raw {:.2} B/thread, zstd {:.2} B/thread",
                raw as f64 / threads as f64,
                z as f64 / threads as f64
            );
        }
    }
    if what == "decode" || what == "all" {
        decode_bench(threads);
    }
    if what == "size" || what == "all" {
        size_bench(&dir, threads);
    }
    if what == "day" || what == "all" {
        day_bench(&dir, threads);
    }
}
