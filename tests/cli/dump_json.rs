//! `dump --format json` against figures worked out by hand: two hand-written
//! Samples (tests/common/hand_samples.rs, whose table derives every figure
//! checked here) through a recording and `dump`.
use crate::common;

use common::hand_samples;
use schedtop::export::dump::{dump, DumpOptions, Format};
use schedtop::record::Reader;

/// `f` within a millionth of `want` (rates are worked out by hand as exact
/// decimals; the division may round in the last bit).
fn near(v: &serde_json::Value, want: f64) -> bool {
    v.as_f64()
        .is_some_and(|f| (f - want).abs() <= 1e-6 * want.abs().max(1.0))
}

#[test]
fn dump_json_holds_the_figures_worked_out_by_hand() {
    // tests/common/hand_samples.rs: every figure below is derived there
    let dir = tempfile::tempdir().unwrap();
    let path = hand_samples::recording(dir.path());
    let opts = DumpOptions {
        format: Format::Json,
        from: None,
        to: None,
        pids: vec![],
    };
    let mut out = Vec::new();
    let rep = dump(&mut Reader::open(&path).unwrap(), &opts, &mut out).unwrap();
    assert_eq!(rep.intervals, 1, "two Samples make one interval");
    let text = String::from_utf8(out).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(v["time_ns"].as_u64(), Some(hand_samples::B_TIME_NS));
    // 1,795,000,002.5 s after the epoch: day 20,775 (2026-11-18) + 40,002.5 s
    assert_eq!(v["time"], "2026-11-18T11:06:42.500Z");
    // the monotonic clock's 2.0 s, not the stepped wall clock's 2.5 s
    assert!(near(&v["interval_s"], 2.0), "{}", v["interval_s"]);
    assert_eq!(v["source"], "bpf");
    assert_eq!(v["host"], "hand");

    let thread = |tid: u64| {
        v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tid"].as_u64() == Some(tid))
            .unwrap_or_else(|| panic!("thread {tid} missing: {text}"))
            .clone()
    };
    assert_eq!(v["threads"].as_array().unwrap().len(), 4);
    let s = thread(100);
    assert_eq!(s["pid"], 100);
    assert_eq!(s["comm"], "server");
    assert_eq!(s["process"], "server");
    assert_eq!(s["cpu"], 1);
    assert_eq!(s["voluntary"], 1600, "cumulative, as the kernel counts");
    assert_eq!(s["involuntary"], 90);
    assert!(near(&s["voluntary_per_s"], 300.0), "{s}");
    assert!(near(&s["involuntary_per_s"], 20.0), "{s}");
    assert_eq!(s["oncpu_ns"], 1_500_000_000u64);
    assert_eq!(s["wait_ns"], 400_000_000u64);
    assert_eq!(s["migrations"], 6);
    assert_eq!(s["cross_node_migrations"], 1);
    assert_eq!(s["slice_hist_us"], serde_json::json!([[512, 30], [640, 5]]));
    assert_eq!(s["wait_hist_us"], serde_json::json!([[1, 2], [2, 3]]));
    assert!(s["wakeup_wait_hist_us"].is_null());
    assert_eq!(s["exited"], false);
    assert_eq!(
        s["migrations_by_cause"],
        serde_json::json!({"wakeup": 2, "load_balance": 1, "numa_balance": 0,
            "affinity": 0, "other": 3})
    );
    assert_eq!(
        s["blocked_on"],
        serde_json::json!({"futex": 300, "sleep": 150, "poll": 0, "pipe": 0,
            "socket": 0, "disk_io": 0, "page_fault": 0, "child": 0, "other": 150})
    );

    // new, from its baseline
    let w = thread(101);
    assert_eq!(
        (w["pid"].clone(), w["process"].clone()),
        (100.into(), "server".into())
    );
    assert!(near(&w["voluntary_per_s"], 10.0), "{w}");
    assert!(near(&w["involuntary_per_s"], 1.0), "{w}");
    assert_eq!(w["oncpu_ns"], 200_000_000u64);
    assert_eq!(w["migrations"], 4);
    assert!(w["blocked_on"].is_null(), "no why figures: null");

    let g = thread(102);
    assert_eq!(g["exited"], true);
    assert!(near(&g["voluntary_per_s"], 4.0), "{g}");
    assert_eq!(
        g["blocked_on"]["sleep"], 9,
        "the probe's count, not clipped"
    );
    assert_eq!(g["blocked_on"]["other"], 0);

    // a reused tid with no baseline: nothing to compare with
    let r = thread(103);
    assert_eq!(r["comm"], "new");
    assert_eq!(r["voluntary"], 3);
    assert!(
        r["voluntary_per_s"].is_null() && r["oncpu_ns"].is_null(),
        "{r}"
    );

    let cpus = v["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 2);
    assert_eq!(
        (cpus[0]["cpu"].clone(), cpus[0]["node"].clone()),
        (0.into(), 0.into())
    );
    assert!(near(&cpus[0]["switches_per_s"], 200.0), "{}", cpus[0]);
    assert!(near(&cpus[0]["busy_pct"], 60.0), "{}", cpus[0]);
    assert_eq!(
        (cpus[1]["cpu"].clone(), cpus[1]["node"].clone()),
        (1.into(), 1.into())
    );
    assert!(near(&cpus[1]["switches_per_s"], 0.0), "{}", cpus[1]);
    assert!(
        near(&cpus[1]["busy_pct"], 100.0),
        "105 % capped: {}",
        cpus[1]
    );

    let mut moves: Vec<(u64, u64, u64)> = v["migrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let n = |k: &str| m[k].as_u64().unwrap();
            (n("from_cpu"), n("to_cpu"), n("count"))
        })
        .collect();
    moves.sort_unstable();
    assert_eq!(moves, [(0, 1, 3), (1, 0, 2)]);

    let sys = &v["system"];
    assert!(near(&sys["context_switches_per_s"], 450.0), "{sys}");
    assert_eq!(sys["procs_running"], 3);
    assert_eq!(sys["procs_blocked"], 1);
    assert_eq!(sys["load"], serde_json::json!([0.5, 0.25, 0.125]));
    assert_eq!(sys["lost_updates"], 3);
    assert_eq!(sys["counter_anomalies"], 0);
}
