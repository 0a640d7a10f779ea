//! A directory of 5,000 recordings (a month of `record --dir --rotate 10m`
//! is more) dumps under a 256-descriptor limit: the reader lists the files
//! and opens a few at a time. Every interval written comes out once, in
//! time order; a file that cannot be read is named, costs only its own
//! Samples, and makes the exit status non-zero.
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use schedtop::model::Sample;
use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::{WriteOptions, Writer};

const FILES: usize = 5_000;
const PER_FILE: usize = 2;
const FD_LIMIT: libc::rlim_t = 256;

/// `schedtop dump --format json DIR` with RLIMIT_NOFILE at 256, in its own
/// process group (killed if the test ends first).
fn dump_limited(dir: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedtop"));
    cmd.args(["dump", "--format", "json", dir.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: FD_LIMIT,
                rlim_max: FD_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    struct Kill(u32);
    impl Drop for Kill {
        fn drop(&mut self) {
            unsafe { libc::kill(-(self.0 as i32), libc::SIGKILL) };
        }
    }
    let _k = Kill(child.id());
    child.wait_with_output().unwrap()
}

/// The end time of every interval dumped, in output order.
fn dumped_times(out: &Output) -> Vec<u64> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["time_ns"].as_u64().unwrap()
        })
        .collect()
}

#[test]
fn five_thousand_files_dump_under_256_descriptors() {
    // tmpfs where there is one: the writer syncs each new file and its
    // directory, 10,000 syncs that a disk makes slow and that are not what
    // is tested here
    let shm = Path::new("/dev/shm");
    let t = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let dir = t.path();
    let t0 = std::time::Instant::now();
    let o = SynthOptions {
        threads: 2,
        samples: FILES * PER_FILE,
        ..Default::default()
    };
    let all: Vec<Sample> = synthetic_samples(&o);
    let host = synthetic_host(&o);
    // one second apart, PER_FILE Samples a file: one unbroken timeline
    // (rotation keeps rates, so every Sample but the first ends an interval)
    for (k, chunk) in all.chunks(PER_FILE).enumerate() {
        let path = dir.join(format!("part-{k:05}.schedtop"));
        let mut w = Writer::open(&path, &host, WriteOptions::default()).unwrap();
        for s in chunk {
            w.write_sample(s).unwrap();
        }
        w.finish().unwrap();
    }
    let written: Vec<u64> = all.iter().map(|s| s.time_ns).collect();
    assert!(written.windows(2).all(|w| w[1] > w[0]), "a sane timeline");

    eprintln!(
        "{FILES} files written in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let t0 = std::time::Instant::now();
    let out = dump_limited(dir);
    eprintln!("dumped in {:.1} s", t0.elapsed().as_secs_f64());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(err.is_empty(), "nothing to report: {err}");
    assert_eq!(
        dumped_times(&out),
        written[1..],
        "every interval of the {FILES} files, once, in order"
    );

    // one file damaged past reading (cut to 10 bytes): named, non-zero,
    // everything else dumped
    let bad_k = FILES / 2;
    let bad = dir.join(format!("part-{bad_k:05}.schedtop"));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&bad)
        .unwrap()
        .set_len(10)
        .unwrap();
    let out = dump_limited(dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("part-{bad_k:05}.schedtop")),
        "the file is named: {err}"
    );
    let (lost_from, lost_to) = (bad_k * PER_FILE, (bad_k + 1) * PER_FILE);
    let mut want: Vec<u64> = written[1..].to_vec();
    want.retain(|t| !written[lost_from..lost_to].contains(t));
    // the Sample after the hole has rates only if the gap is at most three
    // intervals (the rule that keeps rates across a rotation): the
    // synthetic Samples are a little over 1 s apart, so 3 s and a bit is not
    let gap = written[lost_to] - written[lost_from - 1];
    if gap > 3 * host.interval_ns {
        want.retain(|&t| t != written[lost_to]);
    }
    assert_eq!(dumped_times(&out), want, "{err}");
}

/// `snapshot --from DIR` draws from what reads, then fails for the file
/// that does not, naming it.
#[test]
fn snapshot_of_a_directory_with_an_unreadable_file_draws_and_fails() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let o = SynthOptions {
        threads: 2,
        samples: 6,
        ..Default::default()
    };
    let all = synthetic_samples(&o);
    for (k, chunk) in all.chunks(3).enumerate() {
        let path = dir.join(format!("part-{k}.schedtop"));
        let mut w = Writer::open(&path, &synthetic_host(&o), WriteOptions::default()).unwrap();
        for s in chunk {
            w.write_sample(s).unwrap();
        }
        w.finish().unwrap();
    }
    std::fs::write(dir.join("broken.schedtop"), b"\x00not a recording").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args([
            "snapshot",
            "--from",
            dir.to_str().unwrap(),
            "--format",
            "txt",
        ])
        .args(["--size", "100x20"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("broken.schedtop: left out"), "{err}");
    // the screen is there all the same: the host the Samples name
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().count() >= 20, "{text}");
    assert!(text.contains(&synthetic_host(&o).hostname), "{text}");
}
