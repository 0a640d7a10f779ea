//! Matching and rates of `compare`, on hand-made Samples whose figures
//! are computed here by hand.
use std::sync::Arc;

use super::*;
use crate::model::finding_window::window_end;
use crate::model::{ThreadSample, Topology};

const S: u64 = 1_000_000_000;

fn host() -> HostInfo {
    HostInfo {
        hostname: "h".into(),
        kernel: "6".into(),
        topology: Topology::default(),
        source: crate::model::SourceKind::Bpf,
        degraded_reason: None,
        sched_ext: None,
        interval_ns: S,
    }
}

/// A thread whose counters grew by `k` times a fixed amount: `k` seconds
/// of the same behaviour.
fn spinner(tid: u32, pid: u32, name: &str, k: u64) -> ThreadSample {
    // k·99 waits of ~100 µs and 2k of ~10 ms: a p99 among the long ones
    let mut w = Log2Hist::new();
    for _ in 0..k * 99 {
        w.record_us(100);
    }
    for _ in 0..k * 2 {
        w.record_us(10_000);
    }
    ThreadSample {
        tid,
        pid,
        comm: Arc::from(name),
        process_comm: Arc::from(name),
        start_time_ns: 5,
        voluntary: 100 * k,
        involuntary: 40 * k,
        oncpu_ns: k * S / 2,
        wait_ns: k * S / 4,
        wait_hist: Some(w),
        slice_hist: Some(Log2Hist::new()),
        ..ThreadSample::default()
    }
}

fn at(mono_s: u64, threads: Vec<ThreadSample>) -> Sample {
    Sample {
        time_ns: mono_s * S,
        mono_ns: mono_s * S,
        threads: threads.into(),
        ..Sample::default()
    }
}

/// A window of `secs` seconds over which every thread behaved the same.
fn window(secs: u64, threads: &[(u32, u32, &str)]) -> Window {
    let at_k = |k: u64| -> Vec<ThreadSample> {
        threads
            .iter()
            .map(|&(tid, pid, n)| {
                let mut t = spinner(tid, pid, n, k);
                if k == 0 {
                    t.wait_hist = Some(Log2Hist::new());
                }
                t
            })
            .collect()
    };
    let samples = vec![
        at(100, at_k(0)),
        at(100 + secs / 2, at_k(secs / 2)),
        at(100 + secs, at_k(secs)),
    ];
    Window {
        host: host(),
        end: window_end(&samples).unwrap(),
        first: samples.into_iter().next().unwrap(),
        live: false,
        label: "x".into(),
    }
}

fn fig(c: &Compared, name: &str) -> (Option<f64>, Option<f64>, Option<f64>) {
    let f = FIGURES.iter().find(|f| f.name == name).unwrap();
    let side = |s: &Option<Figures>| s.as_ref().and_then(|x| (f.get)(x));
    (side(&c.before), side(&c.after), c.change(f))
}

#[test]
fn windows_of_10_and_60_seconds_compare_as_rates_not_totals() {
    let b = window(10, &[(10, 10, "db")]);
    let a = window(60, &[(77, 77, "db")]);
    let all = compare(&b, &a, &[]).unwrap();
    let p = all
        .iter()
        .find(|c| c.level == Level::Process)
        .expect("the db process");
    assert_eq!(p.matched, Match::Both);
    assert_eq!(
        p.key,
        Key::Process {
            comm: "db".into(),
            ordinal: 0
        }
    );
    // 1,000 switches in 10 s and 6,000 in 60 s: 100/s on both sides
    let (vb, va, dv) = fig(p, "voluntary_per_s");
    assert!((vb.unwrap() - 100.0).abs() < 1e-9 && (va.unwrap() - 100.0).abs() < 1e-9);
    assert!(
        dv.unwrap().abs() < 1e-9,
        "same rate: no change, whatever the totals"
    );
    let (cb, ca, _) = fig(p, "cpu_pct");
    assert!((cb.unwrap() - 50.0).abs() < 1e-9 && (ca.unwrap() - 50.0).abs() < 1e-9);
    // the merged histogram: 990 + 20 waits in 10 s, 5,940 + 120 in 60 s, the
    // same shape: the same p99 (from the counts, not an average of p99s)
    let (pb, pa, dp) = fig(p, "wait_p99_us");
    assert_eq!(pb, pa);
    assert_eq!(dp, Some(0.0));
    let hb = p
        .before
        .as_ref()
        .unwrap()
        .wait_hist
        .as_ref()
        .unwrap()
        .total();
    let ha = p
        .after
        .as_ref()
        .unwrap()
        .wait_hist
        .as_ref()
        .unwrap()
        .total();
    assert_eq!((hb, ha), (1010, 6060), "each window's own histogram");
    assert!(p.weight() < 1e-9, "nothing changed: sorts last");
}

#[test]
fn processes_match_by_comm_and_ordinal_and_the_rest_is_kept() {
    let b = window(10, &[(10, 10, "web"), (11, 11, "web"), (12, 12, "cron")]);
    let a = window(10, &[(50, 50, "web"), (60, 60, "batch")]);
    let all = compare(&b, &a, &[]).unwrap();
    let procs: Vec<_> = all.iter().filter(|c| c.level == Level::Process).collect();
    let find = |comm: &str, ord: u32| {
        procs
            .iter()
            .find(|c| {
                c.key
                    == Key::Process {
                        comm: comm.into(),
                        ordinal: ord,
                    }
            })
            .unwrap()
    };
    let web0 = find("web", 0);
    assert_eq!(web0.matched, Match::Both);
    assert_eq!(
        (
            web0.before.as_ref().unwrap().id,
            web0.after.as_ref().unwrap().id
        ),
        (10, 50)
    );
    assert_eq!(find("web", 1).matched, Match::OnlyBefore);
    assert_eq!(find("cron", 0).matched, Match::OnlyBefore);
    assert_eq!(find("batch", 0).matched, Match::OnlyAfter);
    assert_eq!(procs.len(), 4, "nothing dropped");
    // threads follow their process: the batch thread is only after too
    let t = all
        .iter()
        .find(|c| c.level == Level::Thread && c.after.as_ref().is_some_and(|f| f.id == 60))
        .unwrap();
    assert_eq!(t.matched, Match::OnlyAfter);
}

#[test]
fn a_pin_pairs_two_processes_whatever_their_names() {
    let b = window(10, &[(10, 10, "old-name")]);
    let a = window(10, &[(20, 20, "new-name")]);
    let pin = parse_pin("pid:10=pid:20").unwrap();
    let all = compare(&b, &a, &[pin]).unwrap();
    let p = all.iter().find(|c| c.level == Level::Process).unwrap();
    assert_eq!(p.matched, Match::Both);
    assert_eq!(
        p.key,
        Key::Pinned {
            comm: "old-name".into(),
            before_pid: 10,
            after_pid: 20
        }
    );
    assert_eq!(all.iter().filter(|c| c.level == Level::Process).count(), 1);
    assert!(compare(&b, &a, &[parse_pin("pid:11=pid:20").unwrap()])
        .unwrap_err()
        .contains("no process 11 in BEFORE"));
    for bad in ["pid:1", "1=2", "pid:x=pid:2", "pid:1=tid:2"] {
        assert!(
            parse_pin(bad).unwrap_err().starts_with("bad --match"),
            "{bad}"
        );
    }
}

/// `w` with cgroup `path` throttled for `ms_per_s` of each second.
fn throttled(mut w: Window, path: &str, ms_per_s: u64) -> Window {
    let secs = (w.end.mono_ns - w.first.mono_ns) / S;
    let cg = |ns: u64| crate::model::CgroupSample {
        path: path.into(),
        throttled_ns: Some(ns),
        ..Default::default()
    };
    w.first.cgroups = vec![cg(0)];
    w.end.cgroups = vec![cg(ms_per_s * 1_000_000 * secs)];
    w
}

#[test]
fn cgroups_match_by_path_and_the_summary_ranks_what_got_better_and_worse() {
    let b = throttled(window(10, &[(10, 10, "app")]), "/app", 400);
    let a = throttled(window(60, &[(90, 90, "app")]), "/app", 100);
    // the after side's process waits longer: twice the 10 ms waits
    let mut a = a;
    for t in a.end.threads.iter_mut() {
        let mut w = t.wait_hist.clone().unwrap();
        for _ in 0..200 {
            w.record_us(40_000);
        }
        t.wait_hist = Some(w);
    }
    let all = compare(&b, &a, &[]).unwrap();
    let cg = all
        .iter()
        .find(|c| {
            c.key
                == Key::Cgroup {
                    path: "/app".into(),
                }
        })
        .unwrap();
    assert_eq!(cg.matched, Match::Both);
    let (tb, ta, dt) = fig(cg, "throttled_ms_per_s");
    // 4 s of 10 throttled against 6 s of 60: 400 and 100 ms per second
    assert!((tb.unwrap() - 400.0).abs() < 1e-6 && (ta.unwrap() - 100.0).abs() < 1e-6);
    assert!((dt.unwrap() + 300.0).abs() < 1e-6);
    let (better, worse) = highlights(&all, 5);
    assert!(
        better
            .iter()
            .any(|h| h.figure.name == "throttled_ms_per_s" && h.entity.level == Level::Cgroup),
        "{better:?}"
    );
    let p99 = worse
        .iter()
        .find(|h| h.figure.name == "wait_p99_us" && h.entity.level == Level::Process)
        .expect("the longer waits are a regression");
    assert!(p99.change > 0.0);
    assert!(better.iter().all(|h| h.change < 0.0) && worse.iter().all(|h| h.change > 0.0));
}
