//! The recorder killed with SIGKILL mid-recording: every Sample written
//! before the kill reads back, `dump` works on the file, and `--append`
//! adds to it. Runs the real binary with whatever source this machine
//! gives (BPF as root, /proc otherwise).
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schedtop::record::Reader;

fn schedtop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_schedtop"))
}

/// Samples readable now (0 while the file is not there yet).
fn readable(path: &Path) -> usize {
    match Reader::open(path) {
        Ok(mut r) => (0..r.len()).take_while(|&i| r.sample(i).is_ok()).count(),
        Err(_) => 0,
    }
}

#[test]
fn kill_9_loses_nothing_already_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.schedtop");
    let mut child = schedtop()
        .args(["record", "-i", "0.1", "-o"])
        .arg(&path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // wait for Samples to arrive (BPF takes a moment to load)
    let t0 = Instant::now();
    while readable(&path) < 15 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "recorder wrote nothing in 60 s"
        );
        if let Some(st) = child.try_wait().unwrap() {
            panic!("recorder exited early: {st}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // what was on disk a moment before the kill must all be there after it
    let before = readable(&path);
    std::thread::sleep(Duration::from_millis(1050));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let mut r = Reader::open(&path).unwrap();
    assert!(
        r.len() >= before + 5,
        "{} Samples, {} before",
        r.len(),
        before
    );
    for i in 0..r.len() {
        let s = r.sample(i).unwrap_or_else(|e| panic!("sample {i}: {e:#}"));
        assert!(!s.threads.is_empty(), "sample {i} has no threads");
    }
    // at most one torn frame at the end
    assert!(r.damage().len() <= 1, "{:?}", r.damage());
    let n = r.len();

    let out = schedtop()
        .args(["dump", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8(out.stdout).unwrap();
    assert_eq!(lines.lines().count(), n - 1);
    for l in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(v["threads"].as_array().is_some_and(|t| !t.is_empty()));
        assert!(v["interval_s"].as_f64().unwrap() > 0.05);
    }
    let out = schedtop()
        .args(["dump", "--format", "csv", "--from", "+0.5s"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(csv.starts_with("time,time_ns,"));
    assert!(csv.lines().count() > 10);

    // appending to the killed recording
    let out = schedtop()
        .args([
            "record",
            "--append",
            "-i",
            "0.1",
            "--duration",
            "0.5s",
            "-o",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.segments(), 2);
    assert!(r.len() >= n + 5, "{} after append, {n} before", r.len());
    for i in 0..r.len() {
        r.sample(i)
            .unwrap_or_else(|e| panic!("sample {i} after append: {e:#}"));
    }
}

#[test]
fn user_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.schedtop");
    std::fs::write(&path, b"not a recording").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["record", "-o"], "--append"),
        (
            vec!["record", "--duration", "5 parsecs", "-o"],
            "--duration",
        ),
        (vec!["record", "--max-size", "lots", "-o"], "--max-size"),
        (vec!["dump", "--from", "yesterday"], "bad time"),
        (vec!["dump", "--to", "-5q"], "bad time"),
        (vec!["dump", "--format", "xml"], "csv, json or cgroups-csv"),
        (vec!["dump"], "not a schedtop recording"),
    ];
    for (args, want) in cases {
        let out = schedtop().args(&args).arg(&path).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"not a recording");
}
