//! `--trigger` in the live view, in a real terminal, with the flight
//! recorder on: 4 spinners of this process on one CPU fire
//! `proc:wait_p99>5ms`, the screen says an incident bundle was written, and
//! the bundle holds the recording, the screenshots and the flight
//! recorder's Perfetto trace; the `i` key inside the cooldown is held back
//! and the screen says so.
//!
//! Needs tmux and BPF. Without them the test skips, unless
//! SCHEDTOP_REQUIRE_ALL=1 / SCHEDTOP_REQUIRE_BPF=1 (CI), where it fails.
use crate::common;
use common::incident_bundles as bundles;

use std::time::{Duration, Instant};

use common::tmux::{have_tmux, Tmux};
use common::{allowed_cpus, bpf_source, getpid, serial, Workload};

#[test]
fn a_live_trigger_writes_a_bundle_with_the_flight_trace_and_says_so() {
    let _g = serial();
    if !have_tmux() || bpf_source(vec![getpid()]).is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let tmux = Tmux::start("trigger", 200, 40, Some(d.path()));
    tmux.run_schedtop(&format!(
        "-p {} --trigger 'proc:wait_p99>5ms' --incident-dir {} --after 2s --flight 10",
        getpid(),
        d.path().display()
    ));
    std::thread::sleep(Duration::from_secs(2));
    assert!(bundles(d.path()).is_empty(), "fired before the burst");
    let w = Workload::spinners(4, allowed_cpus()[0]);
    tmux.wait_for("the bundle said on screen", 30, |s| {
        s.contains("fired; bundle written")
            || s.contains("incident bundle: flight trace")
            || s.contains("complete (")
    });
    drop(w);
    let b = bundles(d.path());
    assert_eq!(b.len(), 1, "{b:?}");
    // the trace is written on the recorder's thread: wait for it
    let t0 = Instant::now();
    let trace = loop {
        let t = std::fs::read_dir(&b[0])
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "pftrace"));
        if let Some(t) = t {
            break t;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "no trace in {b:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let t0 = Instant::now();
    while std::fs::metadata(&trace).map_or(0, |m| m.len()) == 0 {
        assert!(t0.elapsed() < Duration::from_secs(20), "empty trace");
        std::thread::sleep(Duration::from_millis(200));
    }
    // the screens, then the recording, are written on the bundle's own
    // thread, which ends with --after: the status line says when
    tmux.wait_for("the bundle complete", 20, |s| s.contains("complete ("));
    for f in [
        "recording.schedtop",
        "summary.txt",
        "threads.svg",
        "cpus.txt",
    ] {
        assert!(b[0].join(f).exists(), "{f}");
    }
    let sum = std::fs::read_to_string(b[0].join("summary.txt")).unwrap();
    assert!(sum.contains("fired by:   proc:wait_p99>5ms"), "{sum}");
    // by hand, inside the cooldown: held back, and said (the bundle's
    // --after is over: before, `i` is held back because that bundle is
    // still recording)
    tmux.send(&["i"]);
    tmux.wait_for("the cooldown said", 10, |s| {
        s.contains("no bundle: cooldown")
    });
    assert_eq!(bundles(d.path()).len(), 1);
    tmux.send(&["q"]);
    tmux.wait_for("schedtop ended", 10, |s| s.contains("SCHEDTOP_EXIT=0"));
}
