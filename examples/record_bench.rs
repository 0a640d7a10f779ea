//! Recording benchmarks (bench/record.sh runs this in release mode):
//!
//! 1. size: bytes per active thread per Sample, 1,000 threads that all run
//!    every interval, 1 s interval, histograms included;
//! 2. a synthetic 24 h recording at 1 s: time to open it, and time to seek
//!    to a random instant (index lookup + decoding the Sample there).
//!
//! 3. history: the live view's rewind buffer over its whole window.
//!
//! Usage: record_bench [size|day|history|decode|streams|all] [--threads N]
//! [--dir DIR] [--from RECORDING (its last two Samples, for history,
//! decode and streams)]
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
/// Two consecutive Samples: the last two of a real recording (`--from`),
/// or synthetic ones of `threads` threads of mixed character.
fn two_samples(args: &[String], threads: usize) -> Vec<schedtop::model::Sample> {
    match arg(args, "--from") {
        Some(f) => {
            let mut r = Reader::open(std::path::Path::new(&f)).expect("open");
            let n = r.len();
            assert!(n >= 2, "{f}: fewer than two Samples");
            vec![
                r.sample(n - 2).expect("read"),
                r.sample(n - 1).expect("read"),
            ]
        }
        None => schedtop::record::testdata::synthetic_samples(&SynthOptions {
            threads,
            samples: 2,
            ..Default::default()
        }),
    }
}

fn decode_bench(s: &[schedtop::model::Sample]) {
    use schedtop::record::codec;
    let threads = s[1].threads.len();
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

/// The live view's rewind buffer over a whole 10-minute window, the
/// threads of the second Sample idle throughout: bytes held, the cost of a
/// push, and the cost of reading the newest and the oldest Sample.
fn history_bench(s: &[schedtop::model::Sample]) {
    use schedtop::collect::Seekable;
    use schedtop::ui::history::{History, DEFAULT_BYTE_CAP, DEFAULT_WINDOW_NS};
    let threads = s[1].threads.len();
    let host = synthetic_host(&SynthOptions::default());
    let mut h = History::new(host, DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let (mut total, mut worst) = (0.0f64, 0.0f64);
    let n = 600u64;
    for k in 0..n {
        let mut x = s[1].clone();
        x.time_ns += k * 1_000_000_000;
        x.mono_ns += k * 1_000_000_000;
        let x = std::sync::Arc::new(x);
        let t0 = Instant::now();
        h.push_shared(&x);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        total += ms;
        worst = worst.max(ms);
    }
    let read = |h: &mut History, i: usize| {
        let t0 = Instant::now();
        h.sample(i).expect("read");
        t0.elapsed().as_secs_f64() * 1e3
    };
    let last = h.len() - 1;
    let (newest, oldest) = (read(&mut h, last), read(&mut h, 0));
    println!(
        "== history: {threads} idle threads, {n} Samples at 1 s: {:.2} MiB held; push {:.2} ms on average, {worst:.2} ms at most; reading the newest {newest:.1} ms, the oldest {oldest:.1} ms",
        h.bytes() as f64 / (1 << 20) as f64,
        total / n as f64
    );
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
        let s = two_samples(&args, threads);
        let threads = s[1].threads.len();
        let level: i32 = arg(&args, "--level")
            .and_then(|l| l.parse().ok())
            .unwrap_or(3);
        for (label, prev) in [("key", None), ("delta", Some(&s[0]))] {
            println!("-- {label} frame, {threads} threads, zstd level {level}");
            for (n, raw, z) in schedtop::record::codec_sizes::stream_sizes(&s[1], prev, level) {
                println!(
                    "{n:>6}: raw {:.2} B/thread, zstd {:.2} B/thread",
                    raw as f64 / threads as f64,
                    z as f64 / threads as f64
                );
            }
        }
    }
    if what == "decode" || what == "all" {
        decode_bench(&two_samples(&args, threads));
    }
    if what == "history" || what == "all" {
        history_bench(&two_samples(&args, threads));
    }
    if what == "size" || what == "all" {
        size_bench(&dir, threads);
    }
    if what == "day" || what == "all" {
        day_bench(&dir, threads);
    }
}
