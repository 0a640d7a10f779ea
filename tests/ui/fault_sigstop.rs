//! schedtop stopped (SIGSTOP) for 10 s and resumed: the next interval spans
//! the real elapsed time and rates do not spike. Ten 1 s intervals are
//! enough: a rate divided by the nominal 1 s would be ~10x, four times the
//! largest ratio allowed.
use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{gettid, Workload};

/// How long schedtop stays stopped.
const STOP_S: f64 = 10.0;

fn rate_of(line: &str, tid: u32) -> (f64, f64) {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    let t = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tid"].as_u64() == Some(tid as u64))
        .unwrap_or_else(|| panic!("thread {tid} missing"));
    (
        v["interval_s"].as_f64().unwrap(),
        t["voluntary_per_s"].as_f64().unwrap_or(-1.0),
    )
}

#[test]
fn stopped_for_10s_rates_use_real_elapsed_time() {
    let _ = gettid();
    // ~250 voluntary switches per second, steady
    let cpu = common::allowed_cpus()[0];
    let sleeper = Workload::sleepers(1, cpu, Duration::from_millis(4));
    let tid = sleeper.tids[0];
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(["--batch", "-i", "1", "-p", &std::process::id().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    let (_, before) = rate_of(&next(), tid);
    let (_, before2) = rate_of(&next(), tid);
    assert!(
        before > 10.0 && before2 > 10.0,
        "sleeper rate {before}, {before2}"
    );

    // SAFETY: plain signals to our own child
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_secs_f64(STOP_S));
    unsafe { libc::kill(pid, libc::SIGCONT) };

    let (dt, after) = rate_of(&next(), tid);
    let (dt2, after2) = rate_of(&next(), tid);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        (STOP_S - 1.0..STOP_S + 4.0).contains(&dt),
        "interval after the stop: {dt} s"
    );
    for (what, r) in [("across the stop", after), ("after it", after2)] {
        // a rate taken over the nominal 1 s instead of the real 10 s would be ~10x
        let ratio = r / before2;
        assert!(
            (0.4..2.5).contains(&ratio),
            "rate {what}: {r:.0}/s against {before2:.0}/s before"
        );
    }
    assert!(
        (0.5..1.6).contains(&dt2),
        "the next interval is normal again: {dt2}"
    );
}
