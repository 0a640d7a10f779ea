//! stolen_time and the wakers of a blocking finding on hand-built
//! intervals whose cause is known (physics-checked like every finding
//! fixture: interrupt time within the CPU's interval and the thread's CPU
//! time), at the edges of their thresholds, and loads that stay silent.
use std::sync::Arc;

use super::tests::{hist_at, kinds, num, Fx, DT, S};
use crate::model::counters::{Counters, CTR_STOLEN_HARDIRQ_NS, CTR_STOLEN_SOFTIRQ_NS};
use crate::model::findings::{Scope, Severity, SubjectType, Value};
use crate::model::why::{BlockReason, WhySample, PSEUDO_WAKER_BASE};
use crate::model::CpuIrqSample;

/// NET_RX is softirq vector 3: its slot follows the hardirq one.
const NET_RX: usize = CTR_STOLEN_SOFTIRQ_NS + 3;
const MS: u64 = 1_000_000;

/// Interrupt figures at zero on every CPU of the first Sample, and these
/// (ns over the 10 s) on `cpu` at the end: /proc/stat's (irq, softirq,
/// steal) and the probes' (hardirq, softirq) where they are on.
fn irq(fx: &mut Fx, cpu: usize, stat: [u64; 3], probes: Option<[u64; 2]>) {
    for s in [&mut fx.prev, &mut fx.cur] {
        for c in &mut s.cpus {
            c.irq.get_or_insert(CpuIrqSample {
                probe_irq_ns: probes.map(|_| 0),
                probe_softirq_ns: probes.map(|_| 0),
                ..Default::default()
            });
        }
    }
    fx.cur.cpus[cpu].irq = Some(CpuIrqSample {
        stat_irq_ns: stat[0],
        stat_softirq_ns: stat[1],
        stat_steal_ns: stat[2],
        probe_irq_ns: probes.map(|p| p[0]),
        probe_softirq_ns: probes.map(|p| p[1]),
    });
}

/// A spinner (tid 50) on CPU 1 for 9.9 s of the 10 s, losing `net_rx` ns
/// to NET_RX softirqs and 50 ms to hardirqs (the counters of the
/// interrupt-time probes; `probes` false: they are off and count nothing),
/// and the UDP sender (tid 60) busy on CPU 0. CPU 1's interrupt time:
/// `cpu1_softirq` of softirq and 100 ms of hardirq.
fn flood(net_rx: u64, cpu1_softirq: u64, probes: bool) -> Fx {
    let mut fx = Fx::new(&[2]);
    fx.thread(50, 50, "stolenspin", |t| {
        t.cpu = 1;
        t.oncpu_ns = DT - DT / 100;
        t.counters = if probes {
            Counters::of(&[(CTR_STOLEN_HARDIRQ_NS, 50 * MS), (NET_RX, net_rx)])
        } else {
            Counters::zero()
        };
    });
    fx.thread(60, 60, "udpsend", |t| {
        t.cpu = 0;
        t.oncpu_ns = DT - DT / 10;
    });
    fx.cpu(0, 0.9, 0.0);
    fx.cpu(1, 1.0, 0.0);
    let stat = [0, cpu1_softirq - cpu1_softirq / 20, 0];
    irq(&mut fx, 1, stat, probes.then_some([100 * MS, cpu1_softirq]));
    fx
}

#[test]
fn a_softirq_flood_on_a_cpu_names_the_vector_and_the_thread_it_robbed() {
    let v = flood(1_200 * MS, 1_800 * MS, true).find(&Scope::default());
    assert_eq!(kinds(&v), ["stolen_time"], "{v:#?}");
    let s = &v[0];
    assert_eq!(s.severity, Severity::Warning);
    assert_eq!(s.subject.kind, SubjectType::Cpu);
    assert_eq!(s.subject.id, Value::Int(1));
    // 1.9 s of 10 s: 19 %, 18 of it softirq, from the probes
    assert_eq!(num(s, "stolen_pct"), 19.0);
    assert_eq!(num(s, "softirq_pct"), 18.0);
    assert_eq!(num(s, "hardirq_pct"), 1.0);
    assert_eq!(
        s.evidence.get("top_kind"),
        Some(&Value::Text("net_rx".into()))
    );
    assert_eq!(
        s.evidence.get("irq_source"),
        Some(&Value::Text("probes".into()))
    );
    assert!((s.impact - 0.19).abs() < 1e-9, "{}", s.impact);
    assert_eq!(num(s, "top_thread_tid"), 50.0);
    assert_eq!(num(s, "top_thread_lost_ms_per_s"), 125.0);
    // 1.25 s of its 9.9 s on CPU
    assert_eq!(num(s, "top_thread_lost_share_pct"), 12.6);
    // the spinner lost 1.25 s in 10 s: 125 ms/s
    assert!(
        s.text.starts_with("NET_RX softirq took 18% of CPU 1")
            && s.text.contains("thread stolenspin (tid 50) lost 125 ms/s"),
        "{}",
        s.text
    );
    // the CPU's finding names the thread: no second finding for it
    assert_eq!(v.len(), 1);
}

#[test]
fn without_the_probes_the_cpu_figure_comes_from_proc_stat_and_the_thread_is_said_off() {
    let v = flood(0, 2_000 * MS, false).find(&Scope::default());
    assert_eq!(kinds(&v), ["stolen_time"], "{v:#?}");
    let s = &v[0];
    // /proc/stat: 1.9 s of softirq in 10 s
    assert_eq!(num(s, "softirq_pct"), 19.0);
    assert_eq!(
        s.evidence.get("irq_source"),
        Some(&Value::Text("/proc/stat".into()))
    );
    assert_eq!(s.evidence.get("threads"), Some(&Value::None));
    assert!(s.text.contains("per-thread figure is off"), "{}", s.text);
    // no vector known without the per-thread counters
    assert!(
        s.text.starts_with("Softirqs took 19% of CPU 1"),
        "{}",
        s.text
    );
}

#[test]
fn hypervisor_steal_is_named_as_such() {
    let mut fx = Fx::new(&[2]);
    fx.thread(70, 70, "guestwork", |t| {
        t.cpu = 0;
        t.oncpu_ns = 6 * S;
    });
    fx.cpu(0, 0.6, 0.0);
    irq(&mut fx, 0, [0, 0, 3 * S], None);
    let v = fx.find(&Scope::default());
    assert_eq!(kinds(&v), ["stolen_time"], "{v:#?}");
    assert_eq!(num(&v[0], "steal_pct"), 30.0);
    assert!(
        v[0].text
            .starts_with("The hypervisor (steal) took 30% of CPU 0")
            && v[0].text.contains("the host ran something else"),
        "{}",
        v[0].text
    );
}

#[test]
fn stolen_time_edges() {
    // 9.5 % of CPU 1 (0.85 s softirq + 0.1 s hardirq): under a tenth
    assert!(flood(700 * MS, 850 * MS, true)
        .find(&Scope::default())
        .is_empty());
    // 10.5 %: a finding
    assert_eq!(
        kinds(&flood(700 * MS, 950 * MS, true).find(&Scope::default())),
        ["stolen_time"]
    );
    // scoped to a process that never ran on CPU 1: not its trouble
    let only_sender = Scope {
        pids: vec![60],
        cgroup: None,
    };
    assert!(flood(1_200 * MS, 1_800 * MS, true)
        .find(&only_sender)
        .is_empty());
}

/// A thread (tid 80) on CPU 0 for 3 s losing `stolen` to NET_RX, CPU 0's
/// interrupts no more than that (under the CPU's threshold).
fn one_thread(stolen: u64) -> Vec<super::Finding> {
    let mut fx = Fx::new(&[2]);
    fx.thread(80, 80, "rx-worker", |t| {
        t.cpu = 0;
        t.oncpu_ns = 3 * S;
        t.counters = Counters::of(&[(NET_RX, stolen)]);
    });
    fx.cpu(0, 0.3, 0.0);
    irq(&mut fx, 0, [0, 0, 0], Some([0, stolen]));
    fx.find(&Scope::default())
}

#[test]
fn a_thread_robbed_on_a_cpu_that_is_mostly_idle_is_its_own_finding() {
    // 400 ms of 3 s: 13 %, 40 ms/s; the CPU lost only 4 %
    let v = one_thread(400 * MS);
    assert_eq!(kinds(&v), ["stolen_time"], "{v:#?}");
    let s = &v[0];
    assert_eq!(s.subject.kind, SubjectType::Thread);
    assert_eq!(s.subject.id, Value::Int(80));
    assert_eq!(num(s, "stolen_ms_per_s"), 40.0);
    assert_eq!(num(s, "stolen_share_pct"), 13.3);
    assert_eq!(num(s, "top_kind_share_pct"), 100.0);
    assert!(s.text.contains("NET_RX softirq"), "{}", s.text);
    // 250 ms of 3 s: 8 %, under a tenth of its CPU time
    assert!(one_thread(250 * MS).is_empty());
}

#[test]
fn quiet_spinners_lose_only_the_tick_and_find_nothing() {
    let mut fx = Fx::new(&[2]);
    for cpu in 0..2u32 {
        fx.thread(300 + cpu, 300, "spin", |t| {
            t.cpu = cpu;
            t.oncpu_ns = DT - DT / 100;
            // the timer tick: ~2 µs 250 times a second
            t.counters = Counters::of(&[(CTR_STOLEN_HARDIRQ_NS, 5 * MS)]);
        });
        fx.cpu(cpu, 1.0, 0.0);
    }
    irq(&mut fx, 0, [10 * MS, 0, 0], Some([5 * MS, MS]));
    irq(&mut fx, 1, [0, 10 * MS, 0], Some([5 * MS, MS]));
    assert!(fx.find(&Scope::default()).is_empty());
}

/// `k` threads of "reader" (pid 70) blocking 20,000 times each on a futex
/// in 10 s, each wakeup listed: `by_writer` of them by the writer thread
/// (tid 80, process "writer" pid 80, or tid 71 of their own process when
/// `own`), the rest by hardirqs. The writer blocks on disk I/O (1,000
/// times, 900 of them) and is woken by hardirqs 950 times.
fn woken_blockers(k: u32, by_writer: u64, own: bool, counted: bool) -> Vec<super::Finding> {
    let mut fx = Fx::new(&[2]);
    let per = 20_000u64;
    let waker = if own { 71 } else { 80 };
    for i in 0..k {
        fx.thread(70 + i, 70, "reader", |t| {
            t.oncpu_ns = S / 2;
            t.wait_ns = S / 10;
            t.voluntary = per;
            t.wakeup_wait_hist = Some(hist_at(10_000, per));
            let mut b = [0u64; 9];
            b[BlockReason::Futex as usize] = per;
            t.why = Some(Arc::new(if counted {
                WhySample {
                    blocked_on: b,
                    woken_by: vec![(waker, by_writer), (PSEUDO_WAKER_BASE, per - by_writer)],
                    wakeups: Some(per),
                    ..Default::default()
                }
            } else {
                WhySample {
                    blocked_on: b,
                    ..Default::default()
                }
            }));
        });
    }
    if !own {
        fx.thread(80, 80, "writer", |t| {
            t.oncpu_ns = S;
            t.voluntary = 1_000;
            t.wakeup_wait_hist = Some(hist_at(10_000, 1_000));
            t.wait_ns = 10 * MS;
            let mut b = [0u64; 9];
            b[BlockReason::DiskIo as usize] = 900;
            b[BlockReason::Other as usize] = 100;
            t.why = Some(Arc::new(WhySample {
                blocked_on: b,
                woken_by: vec![(PSEUDO_WAKER_BASE, 950), (70, 50)],
                wakeups: Some(1_000),
                ..Default::default()
            }));
        });
    }
    fx.cpu(0, 0.6, 0.0);
    fx.cpu(1, 0.6, 0.0);
    fx.find(&Scope::default())
}

#[test]
fn a_blocking_finding_names_who_wakes_the_threads_and_what_that_waker_waits_for() {
    let v = woken_blockers(4, 18_400, false, true);
    assert_eq!(kinds(&v), ["blocking"], "{v:#?}");
    let b = &v[0];
    assert_eq!(b.subject.id, Value::Int(70));
    // 4 × 18,400 of 4 × 20,000 wakeups
    assert_eq!(num(b, "woken_by_share_pct"), 92.0);
    assert_eq!(num(b, "woken_by_pid"), 80.0);
    assert_eq!(num(b, "wakeups"), 80_000.0);
    assert_eq!(
        b.evidence.get("woken_by"),
        Some(&Value::Text("writer (pid 80)".into()))
    );
    // the second hop: the writer's own block reason and waker
    assert_eq!(
        b.evidence.get("waker_blocks_on"),
        Some(&Value::Text("disk_io".into()))
    );
    assert_eq!(num(b, "waker_blocks_on_pct"), 90.0);
    assert_eq!(
        b.evidence.get("waker_woken_by"),
        Some(&Value::Text("hardirq".into()))
    );
    assert_eq!(num(b, "waker_woken_by_pct"), 95.0);
    assert!(
        b.text.contains(
            "futex (a lock or condition variable the threads contend for); woken 92% by writer (pid 80"
        ) && b
            .text
            .contains("which itself blocks 90% on disk_io and is woken 95% by hardirq"),
        "{}",
        b.text
    );
}

#[test]
fn blocking_wakers_of_the_same_process_interrupts_and_none_counted() {
    // a lock handed between its own threads: no second hop into itself
    let v = woken_blockers(4, 19_000, true, true);
    assert_eq!(kinds(&v), ["blocking"], "{v:#?}");
    assert!(
        v[0].text
            .contains("woken 95% by its own threads (mostly reader, tid 71)"),
        "{}",
        v[0].text
    );
    assert!(v[0].evidence.get("waker_blocks_on").is_none());
    // mostly woken from interrupt context: the kind, never a thread
    let v = woken_blockers(4, 4_000, false, true);
    assert_eq!(
        v[0].evidence.get("woken_by"),
        Some(&Value::Text("hardirq".into()))
    );
    assert_eq!(num(&v[0], "woken_by_share_pct"), 80.0);
    assert_eq!(v[0].evidence.get("woken_by_pid"), Some(&Value::None));
    // wakers not counted (SCHEDTOP_WAKERS off): nothing said about them
    let v = woken_blockers(4, 0, false, false);
    assert_eq!(kinds(&v), ["blocking"]);
    assert!(v[0].evidence.get("woken_by").is_none());
    assert!(!v[0].text.contains("woken"), "{}", v[0].text);
}

#[test]
fn physics_rejects_interrupt_time_beyond_the_cpu_or_the_thread() {
    let check = |fx: &Fx| crate::model::physics::check_all(&[fx.prev.clone(), fx.cur.clone()]);
    // the thread ran 3 s: interrupts cannot have taken 4 s of it
    let mut fx = Fx::new(&[2]);
    fx.thread(80, 80, "rx-worker", |t| {
        t.cpu = 0;
        t.oncpu_ns = 3 * S;
        t.counters = Counters::of(&[(NET_RX, 4 * S)]);
    });
    fx.cpu(0, 0.3, 0.0);
    let bad = check(&fx);
    assert!(
        bad.iter().any(|m| m.contains("interrupts took 4000000 us")),
        "{bad:?}"
    );
    // 11 s of softirq and steal in a 10 s interval
    let mut fx = Fx::new(&[2]);
    irq(&mut fx, 1, [0, 6 * S, 5 * S], None);
    let bad = check(&fx);
    assert!(
        bad.iter().any(|m| m.contains("CPU 1: 11000000 us")),
        "{bad:?}"
    );
}
