//! Each rule on hand-built intervals whose cause is known, at the edges of
//! its thresholds, and the loads where every rule must stay silent. The
//! fixtures obey physics (model/physics.rs checks each one): threads' CPU
//! time within the CPUs' busy time, switches that add up, throttling
//! within the periods.
use std::sync::Arc;

use crate::model::findings::{
    findings, Finding, FindingKind, IntervalFacts, Scope, Severity, Value,
};
use crate::model::hist::slot_of_ns;
use crate::model::why::{BlockReason, MigCause, WhySample};
use crate::model::{
    CgroupSample, CpuSample, CpuTopology, Log2Hist, MigrationCount, RqSample, Sample, ThreadSample,
    Topology,
};

pub(super) const S: u64 = 1_000_000_000;
/// every fixture interval is 10 s long
pub(super) const DT: u64 = 10 * S;

pub(super) struct Fx {
    topo: Topology,
    pub(super) prev: Sample,
    pub(super) cur: Sample,
}

pub(super) fn hist_at(ns: u64, n: u64) -> Log2Hist {
    let mut h = Log2Hist::new();
    if n > 0 {
        h.add_at(slot_of_ns(ns), n);
    }
    h
}

impl Fx {
    /// `nodes[i]` CPUs on node i, each idle so far.
    pub(super) fn new(nodes: &[u32]) -> Fx {
        let mut cpus = Vec::new();
        for (node, &n) in nodes.iter().enumerate() {
            for _ in 0..n {
                let cpu = cpus.len() as u32;
                cpus.push(CpuTopology {
                    cpu,
                    node: node as u32,
                    llc: node as u32,
                });
            }
        }
        let samples: Vec<CpuSample> = cpus
            .iter()
            .map(|c| CpuSample {
                irq: None,
                cpu: c.cpu,
                rq: Some(RqSample {
                    freq_hz: 99,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        let prev = Sample {
            mono_ns: 100 * S,
            time_ns: 1_800_000_000 * S,
            cpus: samples.clone(),
            ..Default::default()
        };
        let mut cur = prev.clone();
        cur.mono_ns += DT;
        cur.time_ns += DT;
        Fx {
            topo: Topology { cpus },
            prev,
            cur,
        }
    }

    /// A thread that existed (at zero) in the first Sample; `f` sets its
    /// counts at the end of the interval.
    pub(super) fn thread(
        &mut self,
        tid: u32,
        pid: u32,
        comm: &str,
        f: impl FnOnce(&mut ThreadSample),
    ) {
        let t = ThreadSample {
            tid,
            pid,
            comm: comm.into(),
            process_comm: comm.into(),
            start_time_ns: u64::from(tid),
            migrations: Some(0),
            counters: crate::model::counters::Counters::zero(),
            wait_hist: Some(Log2Hist::new()),
            wakeup_wait_hist: Some(Log2Hist::new()),
            preempt_wait_hist: Some(Log2Hist::new()),
            why: Some(Arc::new(WhySample::default())),
            ..Default::default()
        };
        self.prev.threads.push(t.clone());
        let mut t = t;
        f(&mut t);
        let mut w = t.wakeup_wait_hist.clone().unwrap_or_default();
        w.merge(t.preempt_wait_hist.as_ref().unwrap_or(&Log2Hist::new()));
        t.wait_hist = Some(w);
        self.cur.threads.push(t);
    }

    /// CPU `cpu` busy for `busy` of the interval with `rq` tasks waiting on
    /// average (sampled at 99 Hz).
    pub(super) fn cpu(&mut self, cpu: u32, busy: f64, rq: f64) {
        let c = &mut self.cur.cpus[cpu as usize];
        c.busy_ns = (busy * DT as f64) as u64;
        let r = c.rq.as_mut().unwrap();
        r.samples = 990;
        r.sum = (rq * 990.0).round() as u64;
        let full = r.sum / 990;
        r.hist = vec![0; full as usize + 2];
        r.hist[full as usize] = 990 - r.sum % 990;
        r.hist[full as usize + 1] = r.sum % 990;
    }

    /// Make the switch counts add up, check physics, and find.
    pub(super) fn find(&mut self, scope: &Scope) -> Vec<Finding> {
        let all: u64 = self
            .cur
            .threads
            .iter()
            .map(|t| t.voluntary + t.involuntary)
            .sum();
        self.cur.system.context_switches = all;
        let n = self.cur.cpus.len() as u64;
        for (i, c) in self.cur.cpus.iter_mut().enumerate() {
            c.switches = all / n + u64::from((i as u64) < all % n);
        }
        let bad = crate::model::physics::check_all(&[self.prev.clone(), self.cur.clone()]);
        assert!(bad.is_empty(), "the fixture breaks physics: {bad:?}");
        let derived = crate::model::interval::derive(Some(&self.prev), &self.cur, 0.0);
        let cpus = crate::model::cpus::derive(&self.topo, Some(&self.prev), &self.cur);
        findings(&IntervalFacts {
            topology: &self.topo,
            prev: &self.prev,
            cur: &self.cur,
            derived: &derived,
            cpus: cpus.as_ref(),
            scope,
        })
    }
}

pub(super) fn kinds(v: &[Finding]) -> Vec<&'static str> {
    v.iter().map(|f| f.kind.key()).collect()
}

pub(super) fn num(f: &Finding, figure: &str) -> f64 {
    match f.evidence.get(figure) {
        Some(Value::Num(x)) => *x,
        Some(Value::Int(n)) => *n as f64,
        other => panic!("{figure}: {other:?}"),
    }
}

/// 16 spinners in cgroup /svc/app, limited to 0.5 CPU on a 2-CPU box:
/// 5 s of CPU in 10 s, 9.6875 s of waiting each; `throttled` of the 100
/// periods throttled.
fn quota_box(throttled: u64, spinners: u32) -> Fx {
    let mut fx = Fx::new(&[2]);
    let g = |n, t, ns| CgroupSample {
        path: "/svc/app".into(),
        quota_cpus: Some(0.5),
        nr_periods: Some(n),
        nr_throttled: Some(t),
        throttled_ns: Some(ns),
        ..Default::default()
    };
    fx.prev.cgroups = vec![g(0, 0, 0)];
    fx.cur.cgroups = vec![g(100, throttled, throttled * 90_000_000)];
    let each = 5 * S / u64::from(spinners);
    for i in 0..spinners {
        fx.thread(100 + i, 100, "spin", |t| {
            t.cgroup = Some(0);
            t.oncpu_ns = each;
            t.wait_ns = DT - each;
            t.involuntary = 200;
            t.preempt_wait_hist = Some(hist_at(40_000_000, 200));
        });
    }
    // the box: 2.5 s on each CPU, 1.5 CPUs idle
    fx.cpu(0, 0.25, 0.0);
    fx.cpu(1, 0.25, 0.0);
    fx
}

#[test]
fn a_throttled_quota_is_named_first_with_its_figures() {
    let v = quota_box(95, 16).find(&Scope::default());
    assert_eq!(kinds(&v), ["cpu_quota", "too_many_threads"], "{v:#?}");
    let q = &v[0];
    assert_eq!(q.severity, Severity::Warning);
    assert_eq!(q.subject.id, Value::Text("/svc/app".into()));
    assert_eq!(q.subject.name, "app");
    assert_eq!(num(q, "quota_cpus"), 0.5);
    assert_eq!(num(q, "throttled_periods_pct"), 95.0);
    assert_eq!(num(q, "box_idle_cpus"), 1.5);
    // 155 s waited of 160 s runnable
    assert!((q.impact - 155.0 / 160.0).abs() < 1e-9, "{}", q.impact);
    assert!(q.text.contains("app") && q.text.contains("0.50 CPUs") && q.text.contains("95%"));
    assert!(q.text.contains("1.5 CPUs idle"), "{}", q.text);
    let t = &v[1];
    assert_eq!(num(t, "allowed_cpus"), 0.5);
    assert_eq!(
        t.evidence.get("limited_by"),
        Some(&Value::Text("quota".into()))
    );
    assert_eq!(num(t, "runnable_threads"), 16.0);
    assert_eq!(num(t, "involuntary_per_s"), 320.0);
}

#[test]
fn quota_edges_throttled_share_and_scope() {
    // 9 of 100 periods: under a tenth
    assert!(!kinds(&quota_box(9, 16).find(&Scope::default())).contains(&"cpu_quota"));
    assert!(kinds(&quota_box(10, 16).find(&Scope::default())).contains(&"cpu_quota"));
    // another cgroup asked for: nothing of this one
    let other = Scope {
        cgroup: Some("/elsewhere".into()),
        ..Default::default()
    };
    assert!(quota_box(95, 16).find(&other).is_empty());
    // asked for a cgroup below the quota: the quota above it still applies
    let below = Scope {
        cgroup: Some("/svc".into()),
        ..Default::default()
    };
    assert_eq!(kinds(&quota_box(95, 16).find(&below))[0], "cpu_quota");
}

#[test]
fn too_many_threads_edges() {
    // k spinners of one process on a 2-CPU box, each waiting as much as
    // the CPUs leave it; the CPUs show no queue, so no saturation
    let run = |k: u32| {
        let mut fx = Fx::new(&[2]);
        let each = 2 * DT / u64::from(k);
        for i in 0..k {
            fx.thread(10 + i, 10, "pool", |t| {
                t.oncpu_ns = each;
                t.wait_ns = DT - each;
                t.involuntary = 100;
            });
        }
        fx.cpu(0, 1.0, 0.0);
        fx.cpu(1, 1.0, 0.0);
        fx.find(&Scope::default())
    };
    // 4 runnable on 2 CPUs: exactly twice as many, two more
    assert_eq!(kinds(&run(4)), ["too_many_threads"]);
    assert!(run(3).is_empty(), "3 on 2 CPUs is sharing");
}

#[test]
fn saturation_needs_busy_cpus_queues_and_pressure() {
    let run = |busy: f64, rq: f64, psi_us: u64| {
        let mut fx = Fx::new(&[2]);
        // four single-thread processes, 5 s on CPU and 5 s waiting each
        for p in 0..4 {
            fx.thread(20 + p, 20 + p, "job", |t| {
                t.oncpu_ns = 5 * S * (busy * 100.0) as u64 / 100;
                t.wait_ns = 5 * S;
                t.involuntary = 500;
            });
        }
        fx.cpu(0, busy, rq);
        fx.cpu(1, busy, rq);
        let p = |us| {
            Some(Box::new(crate::model::Pressure {
                some_total_us: us,
                ..Default::default()
            }))
        };
        fx.prev.system.cpu_pressure = p(0);
        fx.cur.system.cpu_pressure = p(psi_us);
        fx.find(&Scope::default())
    };
    let v = run(1.0, 1.0, 5_000_000);
    assert_eq!(kinds(&v), ["cpu_saturation"], "{v:#?}");
    assert_eq!(num(&v[0], "psi_some_pct"), 50.0);
    assert_eq!(num(&v[0], "rq_waiting_per_cpu"), 1.0);
    assert!(run(0.85, 1.0, 5_000_000).is_empty(), "a CPU had room");
    assert!(run(1.0, 0.4, 5_000_000).is_empty(), "short queues");
    assert!(run(1.0, 1.0, 1_000_000).is_empty(), "little pressure");
}

/// A victim thread on CPU 1 preempted `by` (preemptor tid, count) with
/// `preempted` of its waits after preemptions (4 ms each) and the rest
/// after wakeups (4 ms each too); the spinner (pid 50) runs the rest.
fn victim(by: Vec<(u32, u64)>, preempted: u64, woken: u64) -> Vec<Finding> {
    let mut fx = Fx::new(&[2]);
    let n = preempted + woken;
    fx.thread(40, 40, "victim", |t| {
        t.cpu = 1;
        t.oncpu_ns = S;
        t.wait_ns = n * 4_000_000;
        t.involuntary = preempted;
        t.voluntary = woken;
        t.preempt_wait_hist = Some(hist_at(4_000_000, preempted));
        t.wakeup_wait_hist = Some(hist_at(4_000_000, woken));
        t.why = Some(Arc::new(WhySample {
            preempted_by: by,
            blocked_on: [0, woken, 0, 0, 0, 0, 0, 0, 0],
            ..Default::default()
        }));
    });
    for (tid, pid, comm) in [(50, 50, "spinner"), (60, 60, "other"), (61, 61, "third")] {
        fx.thread(tid, pid, comm, |t| {
            t.cpu = 1;
            t.oncpu_ns = 2 * S;
        });
    }
    fx.cpu(1, 1.0, 0.0);
    fx.find(&Scope::default())
}

#[test]
fn an_antagonist_is_named_with_its_process_and_the_cpu() {
    let v = victim(vec![(50, 1800)], 1800, 50);
    assert_eq!(kinds(&v), ["antagonist"], "{v:#?}");
    let a = &v[0];
    assert_eq!(a.subject.id, Value::Int(40));
    assert_eq!(a.subject.name, "victim");
    assert_eq!(
        a.evidence.get("preempted_by"),
        Some(&Value::Text("spinner (pid 50, 100%)".into()))
    );
    assert_eq!(a.evidence.get("cpus"), Some(&Value::Text("1".into())));
    assert!(
        a.text.contains("spinner (pid 50") && a.text.contains("CPU 1"),
        "{}",
        a.text
    );
    // 7.2 s of 7.4 s waited after preemptions, of 8.4 s runnable
    assert!((a.impact - 7.2 / 8.4).abs() < 0.01, "{}", a.impact);
}

#[test]
fn antagonist_edges() {
    // waits mostly after wakeups: latency, not an antagonist
    assert!(victim(vec![(50, 1000)], 1000, 1000).is_empty());
    // 60 % after preemptions (2,000 waits of ~4 ms and 1 s on CPU fit 10 s)
    assert_eq!(kinds(&victim(vec![(50, 1200)], 1200, 800)), ["antagonist"]);
    // preempted by its own process: not an antagonist
    assert!(victim(vec![(40, 1800)], 1800, 50).is_empty());
    // spread over three processes: a busy box, not one antagonist
    let spread = vec![(50, 700), (60, 600), (61, 500)];
    assert!(victim(spread, 1800, 50).is_empty());
    // switched to idle while runnable (throttling): not an antagonist
    assert!(victim(vec![(0, 1800)], 1800, 50).is_empty());
}

/// `k` threads of one process blocking `per_thread` times in 10 s, 95 %
/// for `reason`, each 0.5 s on CPU.
fn blockers(k: u32, per_thread: u64, reason: BlockReason) -> Vec<Finding> {
    let mut fx = Fx::new(&[2]);
    for i in 0..k {
        fx.thread(70 + i, 70, "locker", |t| {
            t.oncpu_ns = S / 2;
            t.wait_ns = S / 10;
            t.voluntary = per_thread;
            t.wakeup_wait_hist = Some(hist_at(10_000, per_thread));
            let mut b = [0u64; 9];
            b[reason as usize] = per_thread * 95 / 100;
            b[BlockReason::Other as usize] += per_thread - per_thread * 95 / 100;
            t.why = Some(Arc::new(WhySample {
                blocked_on: b,
                ..Default::default()
            }));
        });
    }
    fx.cpu(0, 0.5, 0.0);
    fx.cpu(1, 0.5, 0.0);
    fx.find(&Scope::default())
}

#[test]
fn blocking_on_a_futex_by_many_threads_is_a_warning() {
    let v = blockers(8, 20_000, BlockReason::Futex);
    assert_eq!(kinds(&v), ["blocking"], "{v:#?}");
    let b = &v[0];
    assert_eq!(b.severity, Severity::Warning);
    assert_eq!(b.evidence.get("reason"), Some(&Value::Text("futex".into())));
    assert_eq!(num(b, "blocks_per_s"), 15_200.0);
    // blocked 9.4 s of each 10 s, 95 % of it on the futex
    assert!((b.impact - 0.94 * 0.95).abs() < 1e-6, "{}", b.impact);
    assert!(b.text.contains("futex"), "{}", b.text);
}

#[test]
fn blocking_edges() {
    assert!(
        blockers(2, 50_000, BlockReason::Futex).is_empty(),
        "a ping-pong pair"
    );
    // 3 threads, 3,000 switches each in 10 s: 855 a second on the futex
    assert!(blockers(3, 3_000, BlockReason::Futex).is_empty());
    assert_eq!(kinds(&blockers(3, 4_000, BlockReason::Futex)), ["blocking"]);
    // pipes are how such a program works: a note, no warning
    let p = blockers(8, 20_000, BlockReason::Pipe);
    assert_eq!(p[0].severity, Severity::Info);
}

/// Load-balancer moves on a 2-node box (CPUs 0-1 node 0, 2-3 node 1):
/// `cross` moves 0→2 and half as many 2→0, and a thread at `busy` CPU
/// that the balancer moved across.
fn churn(cross: u64, busy: f64, nodes: &[u32]) -> Vec<Finding> {
    let mut fx = Fx::new(nodes);
    let back = cross / 2;
    let m = |f, t, count| MigrationCount {
        from_cpu: f,
        to_cpu: t,
        count,
    };
    let mut by_cause = vec![Vec::new(); 5];
    by_cause[MigCause::LoadBalance as usize] = vec![m(0, 2, cross), m(2, 0, back)];
    fx.prev.system.migrations_by_cause = vec![Vec::new(); 5];
    fx.cur.system.migrations_by_cause = by_cause;
    fx.cur.migrations = vec![m(0, 2, cross), m(2, 0, back)];
    let moved = cross + back;
    fx.thread(90, 90, "crunch", |t| {
        t.oncpu_ns = (busy * DT as f64) as u64;
        t.migrations = Some(moved);
        t.counters = crate::model::counters::Counters::of(&[(
            crate::model::counters::CTR_CROSS_NODE_MIGRATIONS,
            moved,
        )]);
        let mut c = [0u64; 5];
        c[MigCause::LoadBalance as usize] = moved;
        t.why = Some(Arc::new(WhySample {
            migrations_by_cause: c,
            ..Default::default()
        }));
    });
    fx.cpu(0, busy / 2.0, 0.0);
    fx.cpu(2, busy / 2.0, 0.0);
    fx.find(&Scope::default())
}

#[test]
fn cross_node_churn_names_the_flows() {
    let v = churn(40, 0.9, &[2, 2]);
    assert_eq!(kinds(&v), ["cross_node_churn"], "{v:#?}");
    let c = &v[0];
    assert_eq!(c.subject.id, Value::Int(0));
    assert_eq!(
        c.evidence.get("flows"),
        Some(&Value::Text("0→1 40, 1→0 20".into()))
    );
    assert_eq!(num(c, "cross_node_balance_moves"), 60.0);
    assert_eq!(num(c, "busy_threads_moved"), 1.0);
    assert!(
        c.text.contains("0→1 40") && c.text.contains("crunch"),
        "{}",
        c.text
    );
}

#[test]
fn cross_node_churn_edges() {
    // 13 + 6 = 19 moves: under the floor of 20
    assert!(churn(13, 0.9, &[2, 2]).is_empty());
    assert_eq!(kinds(&churn(14, 0.9, &[2, 2])), ["cross_node_churn"]);
    // the thread it moved was not busy
    assert!(churn(40, 0.4, &[2, 2]).is_empty());
    // one node: nothing to cross
    assert!(churn(40, 0.9, &[4]).is_empty());
}

#[test]
fn healthy_loads_find_nothing() {
    // idle: threads that sleep
    let mut idle = Fx::new(&[2]);
    for i in 0..20 {
        idle.thread(200 + i, 200, "sleeper", |t| {
            t.oncpu_ns = 1_000_000;
            t.voluntary = 100;
            t.wakeup_wait_hist = Some(hist_at(5_000, 100));
            t.wait_ns = 500_000;
        });
    }
    assert!(idle.find(&Scope::default()).is_empty());
    // one busy thread per CPU: a few short preemptions by a kworker
    let mut own = Fx::new(&[2]);
    for cpu in 0..2 {
        own.thread(300 + cpu, 300, "spin", |t| {
            t.cpu = cpu;
            t.oncpu_ns = DT - 20_000_000;
            t.wait_ns = 20_000_000;
            t.involuntary = 1000;
            t.preempt_wait_hist = Some(hist_at(20_000, 1000));
            t.why = Some(Arc::new(WhySample {
                preempted_by: vec![(9, 1000)],
                ..Default::default()
            }));
        });
        own.cpu(cpu, 1.0, 0.0);
    }
    own.thread(9, 9, "kworker", |t| t.oncpu_ns = 20_000_000);
    assert!(own.find(&Scope::default()).is_empty());
    // a ping-pong pair over a pipe: 60,000 wakeups each, µs waits
    let mut pp = Fx::new(&[2]);
    for i in 0..2 {
        pp.thread(400 + i, 400, "pingpong", |t| {
            t.cpu = i;
            t.oncpu_ns = 4 * S;
            t.wait_ns = 60_000 * 5_000;
            t.voluntary = 60_000;
            t.wakeup_wait_hist = Some(hist_at(5_000, 60_000));
            let mut b = [0u64; 9];
            b[BlockReason::Pipe as usize] = 60_000;
            t.why = Some(Arc::new(WhySample {
                blocked_on: b,
                ..Default::default()
            }));
        });
        pp.cpu(i, 0.4, 0.0);
    }
    assert!(pp.find(&Scope::default()).is_empty());
}

#[test]
fn findings_rank_by_impact_warnings_first_and_serialise_the_contract() {
    let v = quota_box(95, 16).find(&Scope::default());
    assert!(v.windows(2).all(|w| w[0].severity <= w[1].severity));
    let j: serde_json::Value = serde_json::to_value(&v[0]).unwrap();
    assert_eq!(j["kind"], "cpu_quota");
    assert_eq!(j["severity"], "warning");
    assert_eq!(j["subject"]["type"], "cgroup");
    assert_eq!(j["subject"]["id"], "/svc/app");
    assert_eq!(j["subject"]["name"], "app");
    assert_eq!(j["evidence"]["quota_cpus"], 0.5);
    assert!(j["impact"].as_f64().unwrap() > 0.9 && j["text"].is_string());
    // the evidence keeps its order in the JSON text
    let s = serde_json::to_string(&v[0]).unwrap();
    assert!(s.find("quota_cpus").unwrap() < s.find("box_idle_cpus").unwrap());
    let all: Vec<&str> = FindingKind::ALL.iter().map(|k| k.key()).collect();
    assert_eq!(
        all,
        [
            "cpu_quota",
            "cpu_saturation",
            "too_many_threads",
            "rt_hog",
            "antagonist",
            "wakeup_placement",
            "blocking",
            "cross_node_churn",
            "stolen_time"
        ]
    );
}
