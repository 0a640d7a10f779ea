//! `record --dir`: rotation and retention in a real 30 s run, a directory
//! read as one timeline by `dump DIR --from --to` (every Sample, across
//! files, checked against each file read on its own), a damaged file that
//! costs only itself (a full disk: record_dir_floor.rs).
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use schedtop::record::dir::recording_files;
use schedtop::record::Reader;
use schedtop::util::clock::rfc3339;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_schedtop")
}

/// Run to completion in its own process group (killed if the test ends first).
fn run(args: &[&str]) -> Output {
    let child = Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    struct Kill(u32);
    impl Drop for Kill {
        fn drop(&mut self) {
            unsafe { libc::kill(-(self.0 as i32), libc::SIGKILL) };
        }
    }
    let _k = Kill(child.id());
    child.wait_with_output().unwrap()
}

fn times_of(path: &Path) -> Vec<u64> {
    let r = Reader::open(path).unwrap();
    (0..r.len()).filter_map(|i| r.time_of(i)).collect()
}

fn sorted_files(dir: &Path) -> Vec<PathBuf> {
    let mut f = recording_files(dir).unwrap();
    f.sort_by_key(|p| times_of(p).first().copied().unwrap_or(0));
    f
}

#[test]
fn rotation_retention_and_one_timeline() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("black-box");
    let pid = std::process::id().to_string();
    let out = run(&[
        "record",
        "--dir",
        dir.to_str().unwrap(),
        // the floor is tested in record_dir_floor.rs; this disk may be fuller
        "--keep-free",
        "0",
        "--rotate",
        "5s",
        "--retain",
        "12s",
        "--duration",
        "30s",
        "-i",
        "1",
        "--procfs",
        "-p",
        &pid,
    ]);
    let end = SystemTime::now();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("removed"), "old files were deleted: {err}");
    let files = sorted_files(&dir);
    // 30 s in 5 s files, 12 s kept: the newest two or three remain
    assert!((2..=4).contains(&files.len()), "{files:?}\n{err}");
    for f in &files {
        let m = std::fs::metadata(f).unwrap();
        let age = end
            .duration_since(m.modified().unwrap())
            .unwrap_or_default();
        assert!(
            age <= Duration::from_secs(13),
            "{} is {age:?} old",
            f.display()
        );
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777,
            0o600
        );
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            name.starts_with("schedtop-") && name.ends_with(".schedtop"),
            "{name}"
        );
    }

    // a window from inside the second-to-last file to inside the last
    let a = times_of(&files[files.len() - 2]);
    let b = times_of(&files[files.len() - 1]);
    // the last file may hold only a Sample or two: the 30 s can end just
    // after a rotation
    assert!(a.len() >= 3 && !b.is_empty(), "{a:?} {b:?}");
    let (from, to) = (a[1], b[b.len().min(3) - 1]);
    let want: Vec<u64> = a
        .iter()
        .chain(&b)
        .copied()
        .filter(|&t| t >= from && t <= to)
        .collect();
    let out = run(&[
        "dump",
        dir.to_str().unwrap(),
        "--from",
        &rfc3339(from),
        "--to",
        &rfc3339(to + 999_999),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["time_ns"]
                .as_u64()
                .unwrap()
        })
        .collect();
    // rfc3339 has millisecond resolution: the window is widened to whole ms
    let want: Vec<u64> = want
        .into_iter()
        .filter(|&t| t >= from / 1_000_000 * 1_000_000)
        .collect();
    assert_eq!(
        got, want,
        "every Sample across the two files, the boundary included"
    );

    // snapshot --from DIR at a moment in the last file (its first Sample:
    // its rates come from the file before)
    let out = run(&[
        "snapshot",
        "--from",
        dir.to_str().unwrap(),
        "--at",
        &rfc3339(b[0]),
        "--format",
        "txt",
        "--size",
        "100x20",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("no rates"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).lines().count() >= 20);

    // a cut-short file and a stranger cost only themselves
    let last = &files[files.len() - 1];
    let len = std::fs::metadata(last).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(last)
        .unwrap()
        .set_len(len - 40)
        .unwrap();
    std::fs::write(dir.join("junk.schedtop"), b"\x00garbage").unwrap();
    let readable: usize = recording_files(&dir)
        .unwrap()
        .iter()
        .filter_map(|p| Reader::open(p).ok())
        .map(|r| r.len())
        .sum();
    let out = run(&["dump", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    // everything readable is dumped, then the unreadable file fails it
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("junk.schedtop: left out"), "{err}");
    let intervals = String::from_utf8_lossy(&out.stdout).lines().count();
    // every readable Sample but the very first (it only starts an interval)
    assert_eq!(intervals, readable - 1, "{err}");
}

#[test]
fn bad_arguments_are_one_line() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("d");
    let f = t.path().join("f.schedtop");
    let (d, f) = (d.to_str().unwrap(), f.to_str().unwrap());
    for (args, want) in [
        (vec!["record", "--dir", d, "--rotate", "0s"], "--rotate"),
        (vec!["record", "--dir", d, "--retain", "soon"], "--retain"),
        (
            vec!["record", "--dir", d, "--retain-size", "lots"],
            "--retain-size",
        ),
        (vec!["record", "--retain", "7d", "-o", f], "--dir"),
        (vec!["record", "--dir", d, "-o", f], "--output"),
        (
            vec!["record", "--dir", d, "--keep-free", "100%"],
            "--keep-free",
        ),
        (vec!["record", "--keep-free", "1G", "-o", f], "--dir"),
        (vec!["dump", "/nonexistent-dir-xyz/"], "nonexistent"),
    ] {
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert!(
        !Path::new(f).exists() && !Path::new(d).exists(),
        "nothing created"
    );
    let empty = tempfile::tempdir().unwrap();
    let out = run(&["dump", empty.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no readable recordings"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn kill_9_mid_run_loses_nothing_written() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("bb");
    let pid = std::process::id().to_string();
    let mut child = Command::new(bin())
        .args([
            "record",
            "--dir",
            dir.to_str().unwrap(),
            // the floor is tested in record_dir_floor.rs; this disk may be fuller
            "--keep-free",
            "0",
            "--rotate",
            "1s",
            "-i",
            "0.2",
        ])
        .args(["--procfs", "-p", &pid])
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3500));
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
    // what each file holds, read on its own
    let files = sorted_files(&dir);
    assert!(files.len() >= 3, "{files:?}");
    let written: usize = files.iter().map(|f| times_of(f).len()).sum();
    assert!(written >= 12, "{written} Samples in 3.5 s at 0.2 s");
    // the directory as one timeline: every one of them, rates across files
    let out = run(&["dump", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let intervals = String::from_utf8_lossy(&out.stdout).lines().count();
    assert_eq!(intervals, written - 1);
}
