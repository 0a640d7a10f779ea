//! A Sample over the frame cap (codec::MAX_DECODED, ~190,000 real threads)
//! no longer stops the recorder: it is written without its idle threads
//! first, then the least busy, and counted. Shown with a lowered cap (a
//! crafted Sample through the writer; SCHEDTOP_TEST_MAX_DECODED for the
//! real `record -o` and `record --dir`), not with 190,000 threads.
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use schedtop::model::{Sample, ThreadSample};
use schedtop::record::codec::decoded_size;
use schedtop::record::dir::recording_files;
use schedtop::record::testdata::{synthetic_host, SynthOptions};
use schedtop::record::{LeftOut, Reader, WriteOptions, Writer};

fn thread(tid: u32, oncpu_ns: u64) -> ThreadSample {
    ThreadSample {
        tid,
        pid: tid,
        oncpu_ns,
        voluntary: 3,
        ..Default::default()
    }
}

#[test]
fn idle_threads_are_left_out_first_and_counted() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("big.schedtop");
    // A: threads 1..=100; B: the same, 1..=30 ran 1 ms more, and 50 new
    // threads 101..=150 that never ran
    let a = Sample {
        time_ns: 1_000_000_000,
        threads: (1..=100).map(|t| thread(t, 5_000_000)).collect(),
        cpus: vec![Default::default(); 2],
        ..Default::default()
    };
    let b = Sample {
        time_ns: 2_000_000_000,
        threads: (1..=150)
            .map(|t| match t {
                1..=30 => thread(t, 6_000_000),
                31..=100 => thread(t, 5_000_000),
                _ => ThreadSample {
                    tid: t,
                    pid: t,
                    ..Default::default()
                },
            })
            .collect(),
        cpus: vec![Default::default(); 2],
        ..Default::default()
    };
    // room for exactly A: B must lose 50 threads, all idle; of the 120
    // idle ones the first 50 in the list (31..=80) go
    let cap = decoded_size(&a);
    let opts = WriteOptions {
        max_decoded: cap,
        ..Default::default()
    };
    let mut w = Writer::open(&path, &synthetic_host(&SynthOptions::default()), opts).unwrap();
    w.write_sample(&a).unwrap();
    assert_eq!(w.left_out(), LeftOut::default());
    w.write_sample(&b).unwrap();
    assert_eq!(
        w.left_out(),
        LeftOut {
            trimmed_samples: 1,
            threads: 50,
            idle_threads: 50,
            skipped_samples: 0
        }
    );
    w.finish().unwrap();
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.len(), 2);
    let back = r.sample(1).unwrap();
    let tids: Vec<u32> = back.threads.iter().map(|t| t.tid).collect();
    let want: Vec<u32> = (1..=30).chain(81..=150).collect();
    assert_eq!(tids, want);
    for t in back.threads.iter() {
        assert_eq!(
            t.oncpu_ns,
            b.threads[t.tid as usize - 1].oncpu_ns,
            "tid {}",
            t.tid
        );
    }
    assert!(decoded_size(&back) <= cap);
}

fn run(args: &[&str], cap: usize) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(args)
        .env("SCHEDTOP_TEST_MAX_DECODED", cap.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    struct Kill(u32);
    impl Drop for Kill {
        fn drop(&mut self) {
            // SAFETY: kill has no memory preconditions.
            unsafe { libc::kill(-(self.0 as i32), libc::SIGKILL) };
        }
    }
    let _k = Kill(child.id());
    child.wait_with_output().unwrap()
}

/// Ends the parked threads when the test ends, however it ends.
struct Unpark(
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    Vec<std::thread::JoinHandle<()>>,
);

impl Drop for Unpark {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        for h in self.1.drain(..) {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

fn threads_on_the_machine() -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read_dir(e.path().join("task")).ok())
        .map(|t| t.count())
        .sum()
}

/// Every Sample of `path` under `cap`, and fewer threads than run here.
fn check_file(path: &Path, cap: usize, machine: usize) -> usize {
    let mut r = Reader::open(path).unwrap();
    for i in 0..r.len() {
        let s = r.sample(i).unwrap();
        assert!(decoded_size(&s) <= cap, "Sample {i}: {}", decoded_size(&s));
        assert!(
            !s.threads.is_empty() && s.threads.len() * 2 < machine,
            "{} of {machine} threads",
            s.threads.len()
        );
    }
    r.len()
}

#[test]
fn record_and_record_dir_write_trimmed_samples_and_keep_going() {
    // idle threads of our own, so there is something to trim on a quiet
    // machine too (a fresh one runs under 100 threads); parked until the
    // test ends
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let idle: Vec<_> = (0..150)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::park_timeout(std::time::Duration::from_millis(500));
                }
            })
        })
        .collect();
    let _unpark = Unpark(stop, idle);
    let machine = threads_on_the_machine();
    assert!(machine > 100, "{machine} threads: too few to trim");
    // about 30 threads' worth (a thread counts ~250 bytes decoded here)
    let cap = 8192;
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("one.schedtop");
    let f = file.to_str().unwrap();
    let args = ["-i", "0.2", "--procfs", "--duration", "2s"];
    let out = run(&[&["record", "-o", f][..], &args].concat(), cap);
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert!(out.status.success(), "{err}");
    // said once as it happens (the closing line repeats the total)
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("is too large for a frame"))
            .count(),
        1,
        "said once: {err}"
    );
    let n = check_file(&file, cap, machine);
    assert!(n >= 8, "{n} Samples in 2 s at 0.2 s");
    assert!(
        err.contains(&format!(
            "too large for a frame: {n} Sample(s) written without"
        )),
        "{err}"
    );

    let dir = d.path().join("bb");
    let out = run(
        &[
            &[
                "record",
                "--dir",
                dir.to_str().unwrap(),
                "--rotate",
                "1s",
                "--keep-free",
                "0",
            ][..],
            &args,
        ]
        .concat(),
        cap,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert!(out.status.success(), "{err}");
    let n: usize = recording_files(&dir)
        .unwrap()
        .iter()
        .map(|p| check_file(p, cap, machine))
        .sum();
    assert!(n >= 8, "{n} Samples in 2 s at 0.2 s");
    assert!(
        err.contains(&format!(
            "too large for a frame: {n} Sample(s) written without"
        )),
        "{err}"
    );
}
