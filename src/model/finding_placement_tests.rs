//! rt_hog and wakeup_placement on hand-built intervals whose cause is
//! known (physics-checked like every finding fixture), at the edges of
//! their thresholds, and the loads where they must stay silent.
use std::sync::Arc;

use super::tests::{hist_at, kinds, num, Fx, DT, S};
use crate::model::findings::{Scope, Value};
use crate::model::why::WhySample;
use crate::model::ThreadAttrs;

const OTHER: u8 = 0;
const FIFO: u8 = 1;

fn attrs(policy: u8, rt_priority: u8, cpus_allowed: u32) -> ThreadAttrs {
    ThreadAttrs {
        nice: Some(0),
        policy: Some(policy),
        rt_priority: Some(rt_priority),
        cpus_allowed: Some(cpus_allowed),
        ppid: None,
    }
}

/// A spinner (pid 70) of `policy` taking `hog_s` of CPU 1's 10 s, and a
/// normal victim (pid 40) pinned there running the rest: with the kernel's
/// RT throttling (950 ms of each second) the victim runs ~50 ms a second,
/// and each of its 10 waits begins when the spinner takes the CPU back.
fn rt_box(policy: u8, hog_s: f64, preempted: bool) -> Vec<super::Finding> {
    let mut fx = Fx::new(&[2]);
    let hog_ns = (hog_s * 1e9) as u64;
    let victim_on = DT - hog_ns;
    fx.thread(40, 40, "victim", |t| {
        t.cpu = 1;
        t.attrs = attrs(OTHER, 0, 1);
        t.oncpu_ns = victim_on;
        t.wait_ns = hog_ns;
        let each = hog_ns / 10;
        if preempted {
            t.involuntary = 10;
            t.preempt_wait_hist = Some(hist_at(each, 10));
        } else {
            t.voluntary = 10;
            t.wakeup_wait_hist = Some(hist_at(each, 10));
        }
        t.why = Some(Arc::new(WhySample {
            preempted_by: if preempted { vec![(70, 10)] } else { vec![] },
            ..Default::default()
        }));
    });
    fx.thread(70, 70, "rt_spin", |t| {
        t.cpu = 1;
        t.attrs = attrs(policy, if policy == FIFO { 50 } else { 0 }, 1);
        t.oncpu_ns = hog_ns;
        t.involuntary = 10;
    });
    fx.cpu(1, 1.0, 1.0);
    fx.find(&Scope::default())
}

#[test]
fn a_fifo_spinner_starving_a_normal_thread_is_an_rt_hog_not_an_antagonist() {
    let v = rt_box(FIFO, 9.5, true);
    assert_eq!(kinds(&v), ["rt_hog"], "{v:#?}");
    let h = &v[0];
    assert_eq!(h.subject.id, Value::Int(70));
    assert_eq!(h.subject.name, "rt_spin");
    assert_eq!(h.evidence.get("policy"), Some(&Value::Text("FIFO".into())));
    assert_eq!(num(h, "rt_priority"), 50.0);
    assert_eq!(h.evidence.get("cpus"), Some(&Value::Text("1".into())));
    assert_eq!(num(h, "hog_cpu_pct"), 95.0);
    assert_eq!(num(h, "starved_wait_s"), 9.5);
    assert_eq!(num(h, "preempted_by_hog_pct"), 100.0);
    assert!(
        h.text.contains("rt_spin (pid 70), FIFO priority 50") && h.text.contains("CPU 1"),
        "{}",
        h.text
    );
    // all of the victim's 9.5 s wait of its 10 s runnable time
    assert!((h.impact - 0.95).abs() < 0.01, "{}", h.impact);
}

#[test]
fn rt_hog_edges() {
    // the same spinner at SCHED_OTHER (a nice -20 one): an antagonist
    assert_eq!(kinds(&rt_box(OTHER, 9.5, true)), ["antagonist"]);
    // a FIFO thread using 40 % of the CPU takes less than most of it
    let v = rt_box(FIFO, 4.0, true);
    assert!(!kinds(&v).contains(&"rt_hog"), "{v:#?}");
    // the victim's waits began at wakeups: it was not preempted by it
    assert!(!kinds(&rt_box(FIFO, 9.5, false)).contains(&"rt_hog"));
}

/// Two LLCs of two CPUs. `k` workers (pid 80) allowed on `allowed` CPUs,
/// woken 1,000 times each onto CPU 0, where a batch thread runs, each wait
/// `wait_us`; CPU 1 is busy too and CPUs 2-3 are `far_busy` busy: the
/// kernel looks for an idle CPU in the waking CPU's LLC only, so the far
/// ones stay idle while the workers queue (seed 002's shape).
fn woken_onto_busy(k: u32, allowed: u32, wait_us: u64, far_busy: f64) -> Vec<super::Finding> {
    let mut fx = Fx::new(&[2, 2]);
    let on = 500_000_000;
    for i in 0..k {
        fx.thread(81 + i, 80, "worker", |t| {
            t.cpu = 0;
            t.attrs = attrs(OTHER, 0, allowed);
            t.oncpu_ns = on;
            t.voluntary = 1000;
            t.wait_ns = 1000 * wait_us * 1000;
            t.wakeup_wait_hist = Some(hist_at(wait_us * 1000, 1000));
        });
    }
    fx.thread(90, 90, "batch", |t| {
        t.cpu = 0;
        t.attrs = attrs(OTHER, 0, 1);
        t.oncpu_ns = DT - u64::from(k) * on;
        t.involuntary = 1000 * u64::from(k);
    });
    fx.thread(91, 91, "batch1", |t| {
        t.cpu = 1;
        t.attrs = attrs(OTHER, 0, 1);
        t.oncpu_ns = DT;
    });
    fx.cpu(0, 1.0, 1.0);
    fx.cpu(1, 1.0, 0.0);
    for cpu in [2, 3] {
        fx.thread(92 + cpu, 92 + cpu, "light", |t| {
            t.cpu = cpu;
            t.attrs = attrs(OTHER, 0, 1);
            t.oncpu_ns = (far_busy * DT as f64) as u64;
        });
        fx.cpu(cpu, far_busy, 0.0);
    }
    fx.find(&Scope::default())
}

#[test]
fn wakeups_queued_on_a_busy_cpu_while_allowed_cpus_idle_are_named() {
    let v = woken_onto_busy(2, 4, 6000, 0.1);
    assert_eq!(kinds(&v), ["wakeup_placement"], "{v:#?}");
    let w = &v[0];
    assert_eq!(w.subject.id, Value::Int(80));
    assert_eq!(num(w, "threads"), 2.0);
    // 2 x 1,000 waits of ~6 ms
    assert!((num(w, "wakeup_wait_s") - 12.0).abs() < 0.01, "{w:#?}");
    assert!(num(w, "p99_wakeup_wait_ms") >= 6.0, "{w:#?}");
    assert_eq!(
        w.evidence.get("last_ran_on_cpus"),
        Some(&Value::Text("0".into()))
    );
    // CPUs 1-3 are the others; the three least idle of them: 0 + 0.9 + 0.9
    assert_eq!(num(w, "idle_allowed_cpus"), 1.8);
    // 12 s waiting of 13 s runnable
    assert!((w.impact - 12.0 / 13.0).abs() < 0.01, "{}", w.impact);
    assert!(w.text.contains("worker (pid 80)"), "{}", w.text);
}

#[test]
fn wakeup_placement_edges() {
    // allowed on two CPUs, which may be 0 and the busy 1: nothing known idle
    assert!(woken_onto_busy(2, 2, 6000, 0.1).is_empty());
    // pinned: no other CPU to be placed on
    assert!(woken_onto_busy(2, 1, 6000, 0.1).is_empty());
    // short waits (2 ms: within a slice of the thread running there)
    assert!(woken_onto_busy(2, 4, 2000, 0.1).is_empty());
    // the far CPUs busy as well: no idle CPU to have used
    assert!(woken_onto_busy(2, 4, 6000, 0.9).is_empty());
    // one worker, fewer waits than the floor: 1,000 x 6 ms = 0.6 CPU, kept
    assert_eq!(
        kinds(&woken_onto_busy(1, 4, 6000, 0.1)),
        ["wakeup_placement"]
    );
}

#[test]
fn affinity_and_policy_known_healthy_loads_stay_silent() {
    // sleepers allowed everywhere, waking to µs waits on an idle box
    let mut idle = Fx::new(&[2]);
    for i in 0..20 {
        idle.thread(200 + i, 200, "sleeper", |t| {
            t.attrs = attrs(OTHER, 0, 2);
            t.oncpu_ns = 1_000_000;
            t.voluntary = 100;
            t.wakeup_wait_hist = Some(hist_at(5_000, 100));
            t.wait_ns = 500_000;
        });
    }
    assert!(idle.find(&Scope::default()).is_empty());
    // one FIFO spinner per CPU, each alone: real-time but starving no one
    let mut own = Fx::new(&[2]);
    for cpu in 0..2 {
        own.thread(300 + cpu, 300, "rt_own", |t| {
            t.cpu = cpu;
            t.attrs = attrs(FIFO, 10, 1);
            t.oncpu_ns = DT - S / 20;
        });
        own.cpu(cpu, 1.0, 0.0);
    }
    assert!(own.find(&Scope::default()).is_empty());
}
