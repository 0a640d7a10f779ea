//! `stolen_time`: CPU time interrupts (hardirq, softirq) or the hypervisor
//! (steal) took. Per CPU from the interrupt figures of the Samples (the
//! probes' own where they are on, else /proc/stat's irq and softirq, and
//! /proc/stat's steal always); per thread from the probes' per-thread
//! counters (model/counters.rs `STOLEN`), which are on only with
//! SCHEDTOP_IRQ_TIME=1. Without CONFIG_IRQ_TIME_ACCOUNTING (Debian's
//! kernels) the kernel counts the interrupts a thread suffered as that
//! thread's own CPU time: the thread looks busy while others' work ran.
use std::collections::BTreeSet;

use super::counters::STOLEN;
use super::finding_capacity::pct;
use super::finding_thresholds::THRESHOLDS;
use super::finding_types::{
    Evidence, Finding, FindingKind, IntervalFacts, Severity, Subject, SubjectType, Value,
};
use super::interval::Row;
use super::rates::{cpu_intervals, CpuIrqShares};

/// A CPU's interrupt and steal shares of the interval (%), and whether
/// hardirq and softirq are the probes' (exact) or /proc/stat's (the timer
/// ticks that landed in an interrupt: coarse, but unbiased over seconds).
struct CpuLoss {
    cpu: u32,
    hardirq: f64,
    softirq: f64,
    steal: f64,
    probes: bool,
}

impl CpuLoss {
    fn of(cpu: u32, s: &CpuIrqShares) -> CpuLoss {
        let probes = s.probe_irq_pct.is_some() && s.probe_softirq_pct.is_some();
        CpuLoss {
            cpu,
            hardirq: s.probe_irq_pct.unwrap_or(s.irq_pct),
            softirq: s.probe_softirq_pct.unwrap_or(s.softirq_pct),
            steal: s.steal_pct,
            probes,
        }
    }

    fn total(&self) -> f64 {
        self.hardirq + self.softirq + self.steal
    }
}

/// A thread's stolen time of the interval by kind (the counter family's
/// labels: "hardirq", then the softirq vectors), if the probes counted.
fn by_kind(r: &Row) -> Option<Vec<(&'static str, u64)>> {
    STOLEN.by_label(&r.counters)
}

/// The kind that took most of `kinds`, in words ("NET_RX softirq").
fn kind_words(kind: &str) -> String {
    if kind == "hardirq" {
        "hardirqs".to_string()
    } else {
        format!("{} softirq", kind.to_uppercase())
    }
}

fn top_kind(kinds: &[(&'static str, u64)]) -> Option<(&'static str, u64)> {
    kinds
        .iter()
        .copied()
        .filter(|&(_, n)| n > 0)
        .max_by_key(|&(k, n)| (n, std::cmp::Reverse(k)))
}

/// The per-thread figure is known: the interval's Samples carry the
/// probes' per-CPU interrupt time (they run together).
fn probes_on(f: &IntervalFacts) -> bool {
    f.cur
        .cpus
        .iter()
        .any(|c| c.irq.as_ref().is_some_and(|i| i.probe_irq_ns.is_some()))
}

/// One thread's loss: (stolen ns, its share of the thread's CPU time).
fn thread_loss(r: &Row) -> Option<(u64, f64)> {
    let stolen = r.counter(&STOLEN)?;
    let oncpu = r.oncpu_ns?;
    (oncpu > 0 && stolen > 0).then(|| (stolen, stolen as f64 / oncpu as f64))
}

/// "thread X (tid N) lost 120 ms/s" of the scope's threads that lost most.
fn victims_words(rows: &[(&Row, u64)], dt: f64) -> String {
    rows.iter()
        .take(3)
        .map(|(r, n)| {
            format!(
                "thread {} (tid {}) lost {:.0} ms/s",
                r.comm,
                r.id,
                *n as f64 / 1e6 / dt
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn stolen_time(f: &IntervalFacts) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    let probes = probes_on(f);
    // every row only where a CPU lost enough to name them (a quiet thread
    // that last ran there is listed too)
    let mut threads: Option<Vec<&Row>> = None;
    let whole_box = f.scope.pids.is_empty() && f.scope.cgroup.is_none();
    let mut out = Vec::new();
    let mut flagged: BTreeSet<u32> = BTreeSet::new();
    for iv in cpu_intervals(Some(f.prev), f.cur, dt) {
        let Some(shares) = iv.irq.as_ref() else {
            continue;
        };
        let loss = CpuLoss::of(iv.cpu, shares);
        if loss.total() < t.stolen_min_cpu_pct {
            continue;
        }
        // the scope's threads that last ran there, those that lost most first
        let mut on: Vec<(&Row, u64)> = threads
            .get_or_insert_with(|| f.threads().collect())
            .iter()
            .filter(|r| r.cpu == Some(loss.cpu))
            .map(|r| (*r, thread_loss(r).map_or(0, |x| x.0)))
            .collect();
        if !whole_box && on.is_empty() {
            continue;
        }
        on.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.id.cmp(&b.0.id)));
        flagged.insert(loss.cpu);
        out.push(cpu_finding(&loss, &on, probes, dt));
    }
    if !probes {
        return out;
    }
    // a quiet thread lost nothing: no time on a CPU
    for r in f.busy_threads() {
        let Some((stolen, share)) = thread_loss(r) else {
            continue;
        };
        let ms_per_s = stolen as f64 / 1e6 / dt;
        if share < t.stolen_min_thread_share
            || ms_per_s < t.stolen_min_thread_ms_per_s
            || r.cpu.is_some_and(|c| flagged.contains(&c))
        {
            continue;
        }
        out.push(thread_finding(f, r, stolen, share, dt));
    }
    out
}

fn cpu_finding(loss: &CpuLoss, on: &[(&Row, u64)], probes: bool, dt: f64) -> Finding {
    // the softirq vector from the threads' own counters, where counted
    let mut kinds: Vec<(&'static str, u64)> = Vec::new();
    for (r, _) in on {
        for (k, n) in by_kind(r).unwrap_or_default() {
            match kinds.iter_mut().find(|(x, _)| *x == k) {
                Some(e) => e.1 = e.1.saturating_add(n),
                None => kinds.push((k, n)),
            }
        }
    }
    let (what, share) = if loss.steal >= loss.hardirq.max(loss.softirq) {
        ("The hypervisor (steal)".to_string(), loss.steal)
    } else if loss.hardirq >= loss.softirq {
        ("Hardirqs".to_string(), loss.hardirq)
    } else {
        let softirqs: Vec<_> = kinds
            .iter()
            .copied()
            .filter(|(k, _)| *k != "hardirq")
            .collect();
        let what = top_kind(&softirqs).map_or("Softirqs".to_string(), |(k, _)| kind_words(k));
        (what, loss.softirq)
    };
    // a thread that lost under 1 ms/s is not worth a name
    let losers: Vec<(&Row, u64)> = on
        .iter()
        .copied()
        .filter(|(_, n)| *n as f64 / 1e6 / dt >= 1.0)
        .collect();
    let who = if !probes {
        "the per-thread figure is off (SCHEDTOP_IRQ_TIME=1 counts it)".to_string()
    } else if losers.is_empty() {
        "no thread in view lost 1 ms/s or more to it".to_string()
    } else {
        victims_words(&losers, dt)
    };
    let source = if loss.probes { "probes" } else { "/proc/stat" };
    let mut ev = Evidence::default();
    ev.push("cpu", Value::Int(u64::from(loss.cpu)));
    ev.push("stolen_pct", Value::round(loss.total(), 1));
    ev.push("hardirq_pct", Value::round(loss.hardirq, 1));
    ev.push("softirq_pct", Value::round(loss.softirq, 1));
    ev.push("steal_pct", Value::round(loss.steal, 1));
    ev.push("irq_source", Value::Text(source.into()));
    if let Some((k, _)) = top_kind(&kinds) {
        ev.push("top_kind", Value::Text(k.into()));
    }
    ev.push(
        "threads",
        if probes {
            Value::Text(victims_words(&losers, dt))
        } else {
            Value::None
        },
    );
    if let Some(&(r, n)) = losers.first() {
        ev.push("top_thread_tid", Value::Int(u64::from(r.id)));
        ev.push(
            "top_thread_lost_ms_per_s",
            Value::round(n as f64 / 1e6 / dt, 1),
        );
        let share = thread_loss(r).map_or(0.0, |x| x.1);
        ev.push("top_thread_lost_share_pct", Value::round(share * 100.0, 1));
    }
    let meaning = if loss.steal >= loss.hardirq.max(loss.softirq) {
        "the host ran something else while this CPU had work"
    } else {
        "interrupt work ran there instead of the threads, and counts as their CPU time"
    };
    Finding {
        kind: FindingKind::StolenTime,
        severity: Severity::Warning,
        subject: Subject {
            kind: SubjectType::Cpu,
            id: Value::Int(u64::from(loss.cpu)),
            name: format!("CPU {}", loss.cpu),
        },
        impact: (loss.total() / 100.0).clamp(0.0, 1.0),
        evidence: ev,
        text: format!(
            "{what} took {share:.0}% of CPU {} ({:.0}% in all: hardirq {:.1}%, softirq {:.1}%, steal {:.1}%, from {source}); {who}: {meaning}.",
            loss.cpu,
            loss.total(),
            loss.hardirq,
            loss.softirq,
            loss.steal,
        ),
    }
}

fn thread_finding(f: &IntervalFacts, r: &Row, stolen: u64, share: f64, dt: f64) -> Finding {
    let kinds = by_kind(r).unwrap_or_default();
    let top = top_kind(&kinds);
    let process = f.process_name(r.pid).unwrap_or("").to_string();
    let mut ev = Evidence::default();
    ev.push("stolen_ms_per_s", Value::round(stolen as f64 / 1e6 / dt, 1));
    ev.push("stolen_share_pct", Value::round(share * 100.0, 1));
    ev.push(
        "top_kind",
        top.map_or(Value::None, |(k, _)| Value::Text(k.into())),
    );
    ev.push(
        "top_kind_share_pct",
        top.map_or(Value::None, |(_, n)| {
            Value::round(n as f64 * 100.0 / stolen as f64, 1)
        }),
    );
    ev.push(
        "cpu",
        r.cpu.map_or(Value::None, |c| Value::Int(u64::from(c))),
    );
    let mostly = top.map_or(String::new(), |(k, n)| {
        format!(
            ", {} of it {}",
            pct(n as f64 / stolen as f64),
            kind_words(k)
        )
    });
    let on = r
        .cpu
        .map_or(String::new(), |c| format!(" (last on CPU {c})"));
    Finding {
        kind: FindingKind::StolenTime,
        severity: Severity::Warning,
        subject: Subject {
            kind: SubjectType::Thread,
            id: Value::Int(u64::from(r.id)),
            name: r.comm.to_string(),
        },
        impact: share.min(1.0),
        evidence: ev,
        text: format!(
            "Thread {} (tid {}) of {process} (pid {}){on} lost {:.0} ms/s to interrupts, {} of its CPU time{mostly}: interrupt work ran while it was on the CPU and counts as its own CPU time.",
            r.comm,
            r.id,
            r.pid,
            stolen as f64 / 1e6 / dt,
            pct(share),
        ),
    }
}
