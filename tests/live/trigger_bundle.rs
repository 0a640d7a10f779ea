//! `record --dir D --trigger 'proc:wait_p99>5ms'` while this process puts
//! 4 spinners on one CPU 5 s in: exactly one incident bundle appears, its
//! recording starts before the burst, its summary names this process, and
//! a second burst inside the cooldown makes no second bundle (the trigger
//! fires again, and stderr says the cooldown held it back).
use crate::common;
use common::incident_bundles as bundles;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{allowed_cpus, bpf_source, getpid, serial, Workload};
use schedtop::record::Reader;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_schedtop")
}

/// Kills the recorder's process group if the test ends early.
struct Group(i32);
impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: signalling a process group we started.
        unsafe { libc::kill(-self.0, libc::SIGKILL) };
    }
}

fn sleep_until(t0: Instant, secs: f64) {
    let at = t0 + Duration::from_secs_f64(secs);
    if let Some(d) = at.checked_duration_since(Instant::now()) {
        std::thread::sleep(d);
    }
}

#[test]
fn one_bundle_per_burst_and_the_cooldown_holds() {
    let _g = serial();
    // BPF measures run-queue waits; procfs has no histogram to compare
    if bpf_source(vec![getpid()]).is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let inc = d.path().join("incidents");
    std::fs::create_dir(&inc).unwrap();
    let rec = d.path().join("rec");
    let pid = getpid().to_string();
    let child = Command::new(bin())
        .args([
            "record",
            "--dir",
            rec.to_str().unwrap(),
            "--trigger",
            "proc:wait_p99>5ms",
            "--incident-dir",
            inc.to_str().unwrap(),
            "--after",
            "3s",
            // the second burst ends at 17 s; three intervals more let it
            // fire (it was 24 s: 7 s of nothing at the end)
            "--duration",
            "20s",
            "-i",
            "1",
            "--require-bpf",
            // only this process: other work on the machine cannot fire it
            "-p",
            &pid,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let _group = Group(child.id() as i32);
    let t0 = Instant::now();
    let cpu = allowed_cpus()[0];
    sleep_until(t0, 5.0);
    let burst_wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let w = Workload::spinners(4, cpu);
    sleep_until(t0, 9.0);
    drop(w);
    // the bundle's recording has closed (fired by ~7 s, --after 3 s)
    sleep_until(t0, 13.0);
    let after_first = bundles(&inc);
    let w = Workload::spinners(4, cpu);
    sleep_until(t0, 17.0);
    drop(w);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");

    let all = bundles(&inc);
    assert_eq!(
        after_first.len(),
        1,
        "one bundle for the first burst\n{err}"
    );
    assert_eq!(
        all, after_first,
        "no second bundle inside the cooldown\n{err}"
    );
    assert_eq!(err.matches("fired; bundle written").count(), 1, "{err}");
    // the second burst did fire the trigger: held back, and said so
    assert!(err.contains("fired; no bundle: cooldown"), "{err}");
    // BPF measures the figure: idle intervals are quiet, not unmeasured
    assert!(!err.contains("not evaluated"), "{err}");

    let b = &all[0];
    let mode = |p: &Path| std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(b), 0o700);
    for name in [
        "recording.schedtop",
        "summary.txt",
        "summary.json",
        "threads.txt",
        "threads.svg",
        "cpus.txt",
        "cpus.svg",
        "cgroups.txt",
        "cgroups.svg",
    ] {
        assert_eq!(mode(&b.join(name)), 0o600, "{name}");
    }
    // the recording starts before the burst and reaches past the firing
    let r = Reader::open(&b.join("recording.schedtop")).unwrap();
    let times: Vec<u64> = (0..r.len()).filter_map(|i| r.time_of(i)).collect();
    assert!(times.len() >= 6, "{times:?}");
    assert!(times[0] < burst_wall, "starts before the burst: {times:?}");
    assert!(*times.last().unwrap() > burst_wall + 3_000_000_000);

    // the summary names this process, over 5 ms
    let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
    let comm = comm.trim();
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b.join("summary.json")).unwrap()).unwrap();
    assert_eq!(j["fired_by"], "proc:wait_p99>5ms");
    assert_eq!(j["figure"], "wait_p99");
    assert!(j["value"].as_f64().unwrap() > 5e6, "{j}");
    assert_eq!(j["hits"][0]["id"], getpid(), "{j}");
    assert_eq!(j["hits"][0]["name"], comm, "{j}");
    assert_eq!(j["top_processes"][0]["id"], getpid(), "{j}");
    let txt = std::fs::read_to_string(b.join("summary.txt")).unwrap();
    assert!(txt.contains(&format!("({} {comm})", getpid())), "{txt}");
    assert!(txt.contains("fired by:   proc:wait_p99>5ms"), "{txt}");
    // the threads screenshot shows the spinners waiting
    let shot = std::fs::read_to_string(b.join("threads.txt")).unwrap();
    assert!(shot.contains("P99WAIT"), "{shot}");
}

/// Runs `schedtop args` in its own process group to the end (killed if
/// the test ends first), sending SIGUSR1 after `usr1_after` when given.
fn run(args: &[&str], usr1_after: Option<Duration>) -> std::process::Output {
    let child = Command::new(bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let _group = Group(child.id() as i32);
    if let Some(d) = usr1_after {
        std::thread::sleep(d);
        // SAFETY: signalling the child we started.
        unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    }
    child.wait_with_output().unwrap()
}

#[test]
fn sigusr1_writes_a_bundle_by_hand_and_recording_goes_on() {
    let _serial = common::serial();
    let d = tempfile::tempdir().unwrap();
    let out_file = d.path().join("r.schedtop");
    let pid = getpid().to_string();
    let out = run(
        &[
            "record",
            "-o",
            out_file.to_str().unwrap(),
            "--incident-dir",
            d.path().to_str().unwrap(),
            "--after",
            "1s",
            "--duration",
            "5s",
            "-i",
            "0.5",
            "--procfs",
            "-p",
            &pid,
        ],
        Some(Duration::from_millis(2500)),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "SIGUSR1 must not end it: {err}");
    let b = bundles(d.path());
    assert_eq!(b.len(), 1, "{err}");
    let sum = std::fs::read_to_string(b[0].join("summary.txt")).unwrap();
    assert!(sum.contains("fired by:   SIGUSR1"), "{sum}");
    // the bundle's recording: the Samples before the signal and 1 s after
    let r = Reader::open(&b[0].join("recording.schedtop")).unwrap();
    assert!(r.len() >= 5, "{} Samples", r.len());
    // the main recording went on to the end
    let main = Reader::open(&out_file).unwrap();
    assert!(main.len() >= 9, "{} Samples", main.len());
}

#[test]
fn bad_triggers_and_unusable_directories_are_one_line() {
    let _serial = common::serial();
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("r.schedtop");
    let file = d.path().join("plain");
    std::fs::write(&file, "").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (&["--trigger", "proc:wiat_p99>5ms"], "\"wiat_p99\""),
        (&["--trigger", "cpu:rq_len>8 for ever"], "\"ever\""),
        (
            &[
                "--trigger",
                "proc:wait_p99>5ms",
                "--incident-dir",
                "/nonexistent/x",
            ],
            "--incident-dir /nonexistent/x",
        ),
        (
            &[
                "--trigger",
                "proc:wait_p99>5ms",
                "--incident-dir",
                file.to_str().unwrap(),
            ],
            "not a directory",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec![
            "record",
            "-o",
            f.to_str().unwrap(),
            "--procfs",
            "--duration",
            "1s",
        ];
        args.extend_from_slice(extra);
        let out = run(&args, None);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?}");
        assert!(err.contains(want), "{extra:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        // clap adds a usage hint after its one-line error
        assert!(lines[0].contains(want), "{extra:?}: {err}");
        assert!(!f.exists(), "nothing recorded on a bad argument");
    }
}

#[test]
fn serve_writes_a_bundle_on_sigusr1_and_keeps_serving() {
    let _serial = common::serial();
    let d = tempfile::tempdir().unwrap();
    let pid = getpid().to_string();
    let mut child = Command::new(bin())
        .args([
            "serve",
            "--procfs",
            "-i",
            "0.5",
            "--listen",
            "127.0.0.1:0",
            "-p",
            &pid,
            "--incident-dir",
            d.path().to_str().unwrap(),
            "--after",
            "1s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let _group = Group(child.id() as i32);
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    let t0 = Instant::now();
    while !bundles(d.path())
        .first()
        .is_some_and(|b| b.join("summary.json").exists())
    {
        assert!(t0.elapsed() < Duration::from_secs(20), "no bundle");
        std::thread::sleep(Duration::from_millis(100));
    }
    // the bundle's --after: then stop it as a service manager would
    std::thread::sleep(Duration::from_millis(2000));
    assert!(
        child.try_wait().unwrap().is_none(),
        "SIGUSR1 must not end it"
    );
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("SIGUSR1 fired; bundle written"), "{err}");
    assert!(err.contains("complete ("), "{err}");
    let b = bundles(d.path());
    assert_eq!(b.len(), 1);
    let r = Reader::open(&b[0].join("recording.schedtop")).unwrap();
    // 2.5 s before at 0.5 s, then 1 s after: a readable, closed recording
    assert!(r.len() >= 6, "{} Samples", r.len());
    assert!(r.damage().is_empty(), "{:?}", r.damage());
}
