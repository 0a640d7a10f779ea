//! `schedtop diff` through the real binary: two recordings of a known
//! workload (four spinners pinned to one CPU, then the same four spread
//! over two CPUs, as new processes), compared, and each figure checked
//! against the two recordings read on their own; a workload present only
//! in AFTER; a recording against this machine now (`-`); and errors.
//! Workloads are C programs (tests/workloads/why_load.c) in their own
//! process groups, killed with them however a test ends.
use crate::common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use schedtop::model::{Log2Hist, Sample};
use schedtop::record::Reader;
use serde_json::Value;

/// The workload built once, reachable under `name` (a symlink: the
/// process's comm is the name it was started by).
fn workload(name: &str) -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    let bin = BUILT.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff_load");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads/why_load.c");
        let ok = Command::new("cc")
            .args(["-O2", "-pthread", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(out)
    });
    let Some(bin) = bin else {
        common::cannot_run("no C compiler (cc) to build the workload");
        return None;
    };
    let link = bin.with_file_name(name);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(bin, &link).unwrap();
    Some(link)
}

/// A workload process group, killed when dropped.
struct Load(Child);

impl Load {
    /// In a session of its own (see `own_session`), its output discarded.
    fn start(name: &str, args: &[&str]) -> Option<Load> {
        let mut cmd = Command::new(workload(name)?);
        cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null());
        own_session(&mut cmd);
        let child = cmd.spawn().unwrap();
        boost(child.id());
        Some(Load(child))
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Its `n` worker threads (not the main one), once they all exist.
    fn threads(&self, n: usize) -> Vec<u32> {
        for _ in 0..200 {
            let mut v: Vec<u32> = std::fs::read_dir(format!("/proc/{}/task", self.pid()))
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .filter(|&t| t != self.pid())
                .collect();
            if v.len() >= n {
                v.sort_unstable();
                return v;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the workload did not start its {n} threads");
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        // SAFETY: kill of the process group this test made.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_schedtop"))
}

/// A child in a session of its own, killed if this test's thread dies
/// before its Drop runs (a killed test must not leave spinners behind).
fn own_session(cmd: &mut Command) {
    // SAFETY: setsid and prctl are async-signal-safe; the child is not a
    // group leader after fork, so setsid succeeds (and it leads its group).
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}

/// The autogroup of session `pid` at nice -10. With autogroups on
/// (Debian's default) the machine's other sessions (a build) would
/// otherwise take their share of the spinners' CPUs, and the waits
/// measured would be theirs. Not -20: that left the recorder, in a session
/// at the default weight, ~1 % of a CPU beside the spinners; the recorder
/// and diff run boosted alike.
fn boost(pid: u32) {
    let _ = std::fs::write(format!("/proc/{pid}/autogroup"), "-10");
}

/// `cmd` run to its end in a boosted session of its own.
fn run_boosted(mut cmd: Command) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    own_session(&mut cmd);
    let child = cmd.spawn().unwrap();
    boost(child.id());
    child.wait_with_output().unwrap()
}

/// `schedtop record -o FILE` for `secs` seconds, with the probes.
fn record(file: &Path, secs: u32) {
    let mut cmd = bin();
    cmd.args([
        "record",
        "--require-bpf",
        "--duration",
        &format!("{secs}s"),
        "-o",
    ])
    .arg(file);
    let out = run_boosted(cmd);
    assert!(
        out.status.success(),
        "record failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `schedtop diff ARGS --batch`: the summary and the entity lines.
fn diff_batch(args: &[&str]) -> (Value, Vec<Value>) {
    let mut cmd = bin();
    cmd.arg("diff").args(args).arg("--batch");
    let out = run_boosted(cmd);
    assert!(
        out.status.success(),
        "diff {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect::<Vec<_>>();
    assert!(!lines.is_empty());
    let summary = lines.remove(0);
    assert_eq!(summary["level"], "summary");
    (summary, lines)
}

fn process<'a>(lines: &'a [Value], comm: &str) -> &'a Value {
    let found: Vec<&Value> = lines
        .iter()
        .filter(|l| l["level"] == "process" && l["key"]["comm"] == comm)
        .collect();
    assert_eq!(found.len(), 1, "one {comm} process: {found:?}");
    found[0]
}

/// A process's figures over a whole recording, read straight from its
/// first and last Samples (no window code): involuntary switches per
/// second and the p99 of the merged wait histogram of its threads.
struct OnItsOwn {
    pid: u32,
    involuntary_per_s: f64,
    wait_p99_us: u64,
}

fn on_its_own(file: &Path, comm: &str) -> OnItsOwn {
    let mut r = Reader::open(file).unwrap();
    assert_eq!(r.segments(), 1);
    let first: Sample = r.sample(0).unwrap();
    let last: Sample = r.sample(r.len() - 1).unwrap();
    let pid = last
        .threads
        .iter()
        .find(|t| &*t.process_comm == comm)
        .expect("the workload is in the recording")
        .pid;
    let mut inv = 0u64;
    let mut waits = Log2Hist::new();
    for t in last.threads.iter().filter(|t| t.pid == pid) {
        let before = first
            .threads
            .iter()
            .find(|b| b.tid == t.tid && b.start_time_ns == t.start_time_ns)
            .expect("the workload ran before the recording started");
        inv += t.involuntary - before.involuntary;
        let (now, then) = (t.wait_hist.as_ref(), before.wait_hist.as_ref());
        waits.merge(&now.unwrap().since(then.unwrap()));
    }
    let secs = (last.mono_ns - first.mono_ns) as f64 / 1e9;
    OnItsOwn {
        pid,
        involuntary_per_s: inv as f64 / secs,
        wait_p99_us: waits.quantile_us(0.99).unwrap(),
    }
}

fn bpf_here() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root || !Path::new("/sys/kernel/btf/vmlinux").exists() {
        common::skip::bpf_unavailable("schedtop diff's recordings need root and kernel BTF");
        return false;
    }
    if common::allowed_cpus().len() < 2 {
        return common::cannot_run("spreading spinners needs two CPUs");
    }
    true
}

#[test]
fn spinners_spread_over_two_cpus_wait_less_than_pinned_to_one() {
    let _serial = common::serial();
    if !bpf_here() {
        return;
    }
    let cpus = common::allowed_cpus();
    let (c0, c1) = (cpus[0].to_string(), cpus[1]);
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = (
        dir.path().join("before.schedtop"),
        dir.path().join("after.schedtop"),
    );

    let pinned = Load::start("diffspin", &["spin", "4", &c0, "0"]).unwrap();
    pinned.threads(4);
    std::thread::sleep(Duration::from_millis(300));
    record(&before, 4);
    let before_pid = pinned.pid();
    drop(pinned);

    let spread = Load::start("diffspin", &["spin", "4", "-1", "0"]).unwrap();
    for (i, tid) in spread.threads(4).into_iter().enumerate() {
        common::set_affinity(tid, if i % 2 == 0 { cpus[0] } else { c1 });
    }
    // present only in AFTER
    let newcomer = Load::start("diffnew", &["sleep", "2"]).unwrap();
    newcomer.threads(2);
    std::thread::sleep(Duration::from_millis(300));
    record(&after, 4);

    let b = on_its_own(&before, "diffspin");
    let a = on_its_own(&after, "diffspin");
    assert_eq!(b.pid, before_pid);
    assert_eq!(a.pid, spread.pid());
    let (summary, lines) = diff_batch(&[before.to_str().unwrap(), after.to_str().unwrap()]);
    assert!(summary["live"].is_null(), "{summary}");
    let p = process(&lines, "diffspin");
    eprintln!("diffspin: {p}");
    assert_eq!(p["match"], "both", "matched by command across pids");
    assert_eq!(p["before"]["pid"], b.pid);
    assert_eq!(p["after"]["pid"], a.pid);
    assert_ne!(b.pid, a.pid);
    // each side as its recording shows it on its own
    let close = |x: &Value, y: f64| (x.as_f64().unwrap() - y).abs() <= 1e-6 * y.abs().max(1.0);
    assert!(
        close(&p["before"]["involuntary_per_s"], b.involuntary_per_s),
        "{p}"
    );
    assert!(
        close(&p["after"]["involuntary_per_s"], a.involuntary_per_s),
        "{p}"
    );
    assert!(close(
        &p["change"]["involuntary_per_s"],
        a.involuntary_per_s - b.involuntary_per_s
    ));
    assert_eq!(p["before"]["wait_p99_us"], b.wait_p99_us);
    assert_eq!(p["after"]["wait_p99_us"], a.wait_p99_us);
    let dp = p["change"]["wait_p99_us"].as_i64().unwrap();
    assert_eq!(dp, a.wait_p99_us as i64 - b.wait_p99_us as i64);
    eprintln!(
        "wait p99 {} -> {} us, involuntary {:.1} -> {:.1}/s",
        b.wait_p99_us, a.wait_p99_us, b.involuntary_per_s, a.involuntary_per_s
    );
    // three others on its CPU against one: a spinner waits less
    assert!(dp < 0, "the p99 wait falls when the spinners spread: {p}");
    // the four threads matched by name and ordinal
    let threads: Vec<&Value> = lines
        .iter()
        .filter(|l| l["level"] == "thread" && l["key"]["process"]["comm"] == "diffspin")
        .collect();
    assert_eq!(
        threads.iter().filter(|t| t["match"] == "both").count(),
        5,
        "four spinners and the main thread: {threads:?}"
    );
    // the summary names it among the improvements, with the same figures
    let named = summary["improvements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["key"]["comm"] == "diffspin" && h["figure"] == "wait_p99_us");
    if let Some(h) = named {
        assert_eq!(h["change"], p["change"]["wait_p99_us"]);
    } else {
        let better = &summary["improvements"];
        // only busier processes' larger changes may stand before it
        assert_eq!(better.as_array().unwrap().len(), 5, "{summary}");
    }
    let only = process(&lines, "diffnew");
    assert_eq!(only["match"], "only_after");
    assert!(only["before"].is_null() && only["change"].is_null());
    assert_eq!(only["after"]["pid"], newcomer.pid());
    assert!(summary["entities"]["only_after"].as_u64().unwrap() >= 1);

    // the recording against this machine now: AFTER's spinners still run
    let (summary, lines) =
        diff_batch(&[before.to_str().unwrap(), "-", "-d", "2s", "--require-bpf"]);
    assert_eq!(summary["live"], "after", "{summary}");
    assert_eq!(summary["after"]["source"], "live");
    assert!(summary["after"]["path"].is_null());
    let w = summary["after"]["window_s"].as_f64().unwrap();
    assert!((1.5..3.5).contains(&w), "a 2 s watch: {w}");
    let p = process(&lines, "diffspin");
    assert_eq!(p["match"], "both");
    assert_eq!(p["after"]["pid"], spread.pid());
    drop(spread);
    drop(newcomer);
}

fn fixture() -> String {
    format!("{}/tests/fixtures/v2.schedtop", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn bad_arguments_get_one_line() {
    for args in [
        vec!["-", "-"],
        vec![&fixture(), "/nonexistent.schedtop"],
        vec![&fixture(), &fixture(), "--match", "pid:999999=pid:1000"],
        vec![&fixture(), &fixture(), "--from", "+10m"],
    ] {
        let out = bin().arg("diff").args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = bin()
        .args(["diff", &fixture(), &fixture(), "--match", "123=456"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("pid:BEFORE=pid:AFTER"));
}

#[test]
fn the_same_recording_split_in_two_compares_as_rates_and_csv_agrees() {
    // 1 s (+1 s to +2.5 s: Samples 1 and 2) against the 3 s from +2 s, of one recording: the same process
    let f = fixture();
    let (s, lines) = diff_batch(&[
        &f,
        &f,
        "--before-from",
        "+1s",
        "--before-to",
        "+2500ms",
        "--after-from",
        "+2s",
    ]);
    let (wb, wa) = (
        s["before"]["window_s"].as_f64().unwrap(),
        s["after"]["window_s"].as_f64().unwrap(),
    );
    assert!(wa > 2.0 * wb, "windows of different lengths: {wb} {wa}");
    let p = process(&lines, "svc-1000");
    // by hand from the Samples: involuntary switches over each window
    let mut r = Reader::open(Path::new(&f)).unwrap();
    let all: Vec<Sample> = (0..r.len()).map(|i| r.sample(i).unwrap()).collect();
    let t0 = all[0].time_ns;
    let at = |ms: u64| {
        all.iter()
            .rposition(|s| s.time_ns <= t0 + ms * 1_000_000)
            .unwrap()
    };
    let rate = |i: usize, j: usize| {
        let inv = |s: &Sample| s.threads.iter().map(|t| t.involuntary).sum::<u64>();
        (inv(&all[j]) - inv(&all[i])) as f64 / ((all[j].mono_ns - all[i].mono_ns) as f64 / 1e9)
    };
    let first_after = all
        .iter()
        .position(|s| s.time_ns >= t0 + 2_000_000_000)
        .unwrap();
    let (rb, ra) = (
        rate(at(1000) + 1, at(2500)),
        rate(first_after, all.len() - 1),
    );
    let got = |x: &Value| x.as_f64().unwrap();
    assert!(
        (got(&p["before"]["involuntary_per_s"]) - rb).abs() < 1e-6,
        "{p} {rb}"
    );
    assert!(
        (got(&p["after"]["involuntary_per_s"]) - ra).abs() < 1e-6,
        "{p} {ra}"
    );
    // --csv: the same figures, one row per entity
    let out = bin()
        .args([
            "diff",
            &f,
            &f,
            "--before-from",
            "+1s",
            "--before-to",
            "+2500ms",
            "--after-from",
            "+2s",
            "--csv",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let row: Vec<&str> = rows
        .find(|r| r.starts_with("process,both,svc-1000#0,"))
        .unwrap()
        .split(',')
        .collect();
    let v: f64 = row[col("after_involuntary_per_s")].parse().unwrap();
    assert!((v - ra).abs() < 1e-6);
    assert_eq!(text.lines().count(), lines.len() + 1, "a row per entity");
}

#[test]
fn a_directory_of_recordings_is_a_side_like_its_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(), dir.path().join("a.schedtop")).unwrap();
    let d = dir.path().to_str().unwrap();
    let (s, lines) = diff_batch(&[d, &fixture()]);
    assert_eq!(s["before"]["path"], d);
    assert_eq!(s["before"]["window_s"], s["after"]["window_s"]);
    assert_eq!(s["entities"]["only_before"], 0);
    assert_eq!(s["entities"]["only_after"], 0);
    // the same Samples on both sides: every figure unchanged
    for l in &lines {
        assert_eq!(l["before"], l["after"], "{l}");
        for (name, v) in l["change"].as_object().unwrap() {
            assert!(v.is_null() || v.as_f64() == Some(0.0), "{name}: {l}");
        }
    }
    let r = Reader::open(Path::new(&fixture())).unwrap();
    let cpus = lines.iter().filter(|l| l["level"] == "cpu").count();
    assert_eq!(cpus, r.host().topology.cpus.len(), "a line per CPU");
}

#[test]
fn a_closed_stdout_ends_diff_quietly() {
    use std::os::fd::{FromRawFd, OwnedFd};
    for fmt in ["--batch", "--csv", "--from=+0s"] {
        let mut fds = [0; 2];
        // SAFETY: pipe fills two descriptors; the read end is closed at once
        // (a reader that went away), the write end is handed to the child.
        let write = unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            libc::close(fds[0]);
            Stdio::from(OwnedFd::from_raw_fd(fds[1]))
        };
        let out = bin()
            .args(["diff", &fixture(), &fixture(), fmt])
            .stdout(write)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.is_empty(), "{fmt}: {err}");
        // ended by SIGPIPE at the first write, as cat or grep are
        use std::os::unix::process::ExitStatusExt;
        let quiet = out.status.success() || out.status.signal() == Some(libc::SIGPIPE);
        assert!(quiet, "{fmt}: {:?}", out.status);
    }
}
