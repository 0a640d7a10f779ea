//! Findings that name who or what took the time: another process
//! preempting a thread (`antagonist`), threads blocking mostly for one
//! reason (`blocking`), and the load balancer moving busy threads across
//! NUMA nodes (`cross_node_churn`).
use std::collections::{BTreeMap, BTreeSet};

use super::finding_capacity::{pct, Time};
use super::finding_thresholds::THRESHOLDS;
use super::finding_types::{
    Evidence, Finding, FindingKind, IntervalFacts, Severity, Subject, SubjectType, Value,
};
use super::flows::node_flows;
use super::hist::{octave_high_us, octave_low_us, slot_high_ns, slot_low_ns, HIST_SLOTS};
use super::interval::Row;
use super::rates::migration_deltas;
use super::why::{cause_moves, BlockReason, MigCause, BLOCK_REASONS};
use super::Log2Hist;

/// A histogram's total time, each count at its bucket's middle (the open
/// last bucket at its lower bound): within a bucket's width of the truth,
/// which is all a share of two such sums needs.
pub(crate) fn approx_total_ns(h: &Log2Hist) -> f64 {
    let mut sum = 0.0;
    for slot in 0..HIST_SLOTS {
        let n = h.get(slot);
        if n == 0 {
            continue;
        }
        let (low, high) = if h.octaves_only {
            let o = slot / 4;
            let low = octave_low_us(o) * 1000;
            (low, octave_high_us(o).map_or(low, |u| u * 1000))
        } else {
            let low = slot_low_ns(slot);
            (low, slot_high_ns(slot).unwrap_or(low))
        };
        sum += n as f64 * (low as f64 + high as f64) / 2.0;
    }
    sum
}

/// Share of a row's run-queue wait that began at a preemption (None
/// where the source has no wait split or nothing waited).
fn preempted_share(r: &Row) -> Option<f64> {
    let p = approx_total_ns(r.preempt_wait_hist()?);
    let w = approx_total_ns(r.wakeup_wait_hist()?);
    (p + w > 0.0).then(|| p / (p + w))
}

/// "0-3,6" for a set of CPUs.
pub(crate) fn cpu_list(cpus: &BTreeSet<u32>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut it = cpus.iter().copied().peekable();
    while let Some(start) = it.next() {
        let mut end = start;
        while it.peek() == Some(&(end + 1)) {
            end += 1;
            it.next();
        }
        parts.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(",")
}

/// The threads of one process that another process kept off the CPU.
#[derive(Default)]
struct Victims<'a> {
    rows: Vec<&'a Row>,
    time: Time,
    preempted_ns: f64,
    /// preempting pid -> preemptions, and the name the list gave it
    by: BTreeMap<u32, (u64, String)>,
    preemptions: u64,
    cpus: BTreeSet<u32>,
    p99_preempt_wait_us: u32,
}

/// `quota`: the interval's cpu_quota findings (a throttled thread is the
/// quota's, whoever ran while it was held back); `rt`: the CPUs of the
/// interval's real-time hogs (a thread waiting there waits for the hog:
/// rt_hog's finding).
pub fn antagonists(f: &IntervalFacts, quota: &[Finding], rt: &BTreeSet<u32>) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    let mut per_process: BTreeMap<u32, Victims> = BTreeMap::new();
    for r in f.busy_threads() {
        if super::finding_capacity::under_throttled(r, quota) {
            continue;
        }
        let mut one = Time::default();
        one.add(r);
        if !one.lost_enough(dt) {
            continue;
        }
        let Some(share) = preempted_share(r) else {
            continue;
        };
        let Some(why) = r.why.as_ref() else { continue };
        if share < t.antagonist_min_preempt_share {
            continue;
        }
        let total = why
            .preempted_by
            .iter()
            .fold(why.preempted_by_rest, |a, p| a.saturating_add(p.count));
        let others: Vec<_> = why
            .preempted_by
            .iter()
            .filter(|p| p.pid != 0 && p.pid != r.pid)
            .collect();
        let mut by_pid: BTreeMap<u32, u64> = BTreeMap::new();
        for p in &others {
            let e = by_pid.entry(p.pid).or_default();
            *e = e.saturating_add(p.count);
        }
        let top = by_pid.values().copied().max().unwrap_or(0);
        if total == 0 || (top as f64) < t.antagonist_min_top_share * total as f64 {
            continue;
        }
        if r.cpu.is_some_and(|c| rt.contains(&c)) {
            continue;
        }
        let v = per_process.entry(r.pid).or_default();
        v.rows.push(r);
        v.time.add(r);
        v.preempted_ns += share * r.wait_ns.unwrap_or(0) as f64;
        v.preemptions = v.preemptions.saturating_add(total);
        for p in others {
            let e = v.by.entry(p.pid).or_insert((0, p.comm.clone()));
            e.0 = e.0.saturating_add(p.count);
        }
        if let Some(c) = r.cpu {
            v.cpus.insert(c);
        }
        v.p99_preempt_wait_us = v
            .p99_preempt_wait_us
            .max(r.p99_preempt_wait_us.unwrap_or(0));
    }
    let mut out = Vec::new();
    for (pid, v) in per_process {
        let mut by: Vec<(u32, u64, String)> =
            v.by.into_iter()
                .map(|(p, (n, comm))| {
                    let name = f.process_name(p).map_or(comm, str::to_string);
                    (p, n, name)
                })
                .collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let named: Vec<String> = by
            .iter()
            .take(3)
            .map(|(p, n, name)| {
                format!(
                    "{name} (pid {p}, {})",
                    pct(*n as f64 / v.preemptions as f64)
                )
            })
            .collect();
        let process = f.process_name(pid).unwrap_or("").to_string();
        let (subject, who) = if let [r] = v.rows[..] {
            (
                Subject {
                    kind: SubjectType::Thread,
                    id: Value::Int(u64::from(r.id)),
                    name: r.comm.to_string(),
                },
                format!("Thread {} (tid {}) of {process} (pid {pid})", r.comm, r.id),
            )
        } else {
            (
                Subject {
                    kind: SubjectType::Process,
                    id: Value::Int(u64::from(pid)),
                    name: process.clone(),
                },
                format!("{} threads of {process} (pid {pid})", v.rows.len()),
            )
        };
        let all = v.time.oncpu_ns as f64 + v.time.wait_ns as f64;
        let impact = if all > 0.0 { v.preempted_ns / all } else { 0.0 };
        let preempted_pct = v.preempted_ns / (v.time.wait_ns.max(1) as f64);
        let cpus = cpu_list(&v.cpus);
        let mut ev = Evidence::default();
        ev.push("wait_s", Value::round(v.time.wait_s(), 3));
        ev.push(
            "wait_share_pct",
            Value::round(v.time.wait_share() * 100.0, 1),
        );
        ev.push("preempted_wait_pct", Value::round(preempted_pct * 100.0, 1));
        ev.push("preemptions", Value::Int(v.preemptions));
        ev.push("preempted_by", Value::Text(named.join(", ")));
        ev.push(
            "preempted_by_pids",
            Value::Text(
                by.iter()
                    .take(3)
                    .map(|(p, _, _)| p.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        );
        ev.push("cpus", Value::Text(cpus.clone()));
        ev.push(
            "p99_preempt_wait_ms",
            Value::round(f64::from(v.p99_preempt_wait_us) / 1000.0, 2),
        );
        let on = if v.cpus.len() == 1 { "CPU" } else { "CPUs" };
        let (its, they) = if v.rows.len() == 1 {
            ("its", "it")
        } else {
            ("their", "they")
        };
        out.push(Finding {
            kind: FindingKind::Antagonist,
            severity: Severity::Warning,
            subject,
            impact,
            evidence: ev,
            text: format!(
                "{who} waited {:.2} s for a CPU, {} of {its} runnable time, {} of it after being preempted, mostly by {} on {on} {cpus} (where {they} last ran): another process took the CPU from under a running thread.",
                v.time.wait_s(),
                pct(v.time.wait_share()),
                pct(preempted_pct),
                named.join(" and "),
            ),
        });
    }
    out
}

/// What a reason means, in one clause, and whether blocking on it a lot
/// is trouble (a warning) or how the program works (a note).
fn reason_words(r: BlockReason) -> (&'static str, Severity) {
    match r {
        BlockReason::Futex => (
            "a futex (a lock or condition variable the threads contend for)",
            Severity::Warning,
        ),
        BlockReason::DiskIo => (
            "disk I/O (the device, not the CPU, is the wait)",
            Severity::Warning,
        ),
        BlockReason::PageFault => (
            "page faults (memory being read in or allocated)",
            Severity::Warning,
        ),
        BlockReason::Sleep => ("sleeps they asked for", Severity::Info),
        BlockReason::Poll => ("poll/epoll/select (waiting for events)", Severity::Info),
        BlockReason::Pipe => ("pipes", Severity::Info),
        BlockReason::Socket => ("sockets", Severity::Info),
        BlockReason::Child => ("child processes", Severity::Info),
        BlockReason::Other => ("reasons the probe cannot tell apart", Severity::Info),
    }
}

#[derive(Default)]
struct Blocked {
    /// per reason: switches, threads blocking on it at all, their
    /// estimated blocked time, their on-CPU time
    switches: [u64; BLOCK_REASONS],
    threads: [u32; BLOCK_REASONS],
    blocked_ns: [f64; BLOCK_REASONS],
    oncpu_ns: [u64; BLOCK_REASONS],
}

pub fn blocking(f: &IntervalFacts) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    let mut per: BTreeMap<u32, Blocked> = BTreeMap::new();
    for r in f.busy_threads() {
        let Some(why) = r.why.as_ref() else { continue };
        let total = why
            .blocked_on
            .iter()
            .fold(0u64, |a, &n| a.saturating_add(n));
        if total == 0 {
            continue;
        }
        // off the CPU and not waiting for it: blocked, apportioned to the
        // reasons by their counts
        let off =
            (dt * 1e9 - r.oncpu_ns.unwrap_or(0) as f64 - r.wait_ns.unwrap_or(0) as f64).max(0.0);
        let b = per.entry(r.pid).or_default();
        for (i, &n) in why.blocked_on.iter().enumerate() {
            if n == 0 {
                continue;
            }
            b.switches[i] = b.switches[i].saturating_add(n);
            b.threads[i] += 1;
            b.blocked_ns[i] += off * n as f64 / total as f64;
            b.oncpu_ns[i] = b.oncpu_ns[i].saturating_add(r.oncpu_ns.unwrap_or(0));
        }
    }
    let mut out = Vec::new();
    for (pid, b) in per {
        let all = b.switches.iter().fold(0u64, |a, &n| a.saturating_add(n));
        let Some(i) = (0..BLOCK_REASONS).max_by_key(|&i| (b.switches[i], std::cmp::Reverse(i)))
        else {
            continue;
        };
        let n = b.switches[i];
        let share = n as f64 / all.max(1) as f64;
        let per_s = n as f64 / dt;
        let cpus = b.oncpu_ns[i] as f64 / 1e9 / dt;
        if share < t.block_min_share
            || per_s < t.block_min_per_s
            || b.threads[i] < t.block_min_threads
            || cpus < t.block_min_cpus
        {
            continue;
        }
        let reason = BlockReason::ALL[i];
        let (words, severity) = reason_words(reason);
        let impact = (b.blocked_ns[i] / (f64::from(b.threads[i]) * dt * 1e9)).min(1.0);
        let name = f.process_name(pid).unwrap_or("").to_string();
        let mut ev = Evidence::default();
        ev.push("reason", Value::Text(reason.key().into()));
        ev.push("reason_share_pct", Value::round(share * 100.0, 1));
        ev.push("blocks_per_s", Value::round(per_s, 0));
        ev.push("threads", Value::Int(u64::from(b.threads[i])));
        ev.push("blocked_s", Value::round(b.blocked_ns[i] / 1e9, 3));
        ev.push("cpu_used", Value::round(cpus, 3));
        let woken = super::finding_wakers::blocked_wakers(f, pid, i, &mut ev).unwrap_or_default();
        out.push(Finding {
            kind: FindingKind::Blocking,
            severity,
            subject: Subject {
                kind: SubjectType::Process,
                id: Value::Int(u64::from(pid)),
                name: name.clone(),
            },
            impact,
            evidence: ev,
            text: format!(
                "{} threads of {name} (pid {pid}) blocked {per_s:.0} times a second, {} of their voluntary switches on {words}{woken}: about {} of their time went to it.",
                b.threads[i],
                pct(share),
                pct(impact),
            ),
        });
    }
    out
}

pub fn cross_node_churn(f: &IntervalFacts) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    if f.topology.nodes().len() < 2 {
        return Vec::new();
    }
    let moves = cause_moves(Some(f.prev), f.cur, MigCause::LoadBalance);
    let mut cross: Vec<_> = node_flows(f.topology, &moves)
        .into_iter()
        .filter(|x| x.from_node != x.to_node && x.count > 0)
        .collect();
    cross.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then((a.from_node, a.to_node).cmp(&(b.from_node, b.to_node)))
    });
    let total = cross.iter().fold(0u64, |a, x| a.saturating_add(x.count));
    if total < t.churn_min_moves || (total as f64 / dt) < t.churn_min_per_s {
        return Vec::new();
    }
    // busy threads the balancer moved across nodes (a short-lived helper
    // moved while it waits costs nothing)
    let mut moved: BTreeMap<u32, u32> = BTreeMap::new();
    for r in f.busy_threads() {
        let balanced = r
            .why
            .as_ref()
            .is_some_and(|w| w.migrations_by_cause[MigCause::LoadBalance as usize] > 0);
        if balanced
            && r.counter(&crate::model::counters::CROSS_NODE).unwrap_or(0) > 0
            && r.cpu_pct.get().unwrap_or(0.0) >= t.churn_busy_pct
        {
            *moved.entry(r.pid).or_default() += 1;
        }
    }
    if moved.is_empty() {
        return Vec::new();
    }
    let all = migration_deltas(Some(f.prev), f.cur)
        .iter()
        .fold(0u64, |a, m| a.saturating_add(m.2));
    let impact = (total as f64 / all.max(total) as f64).min(1.0);
    let flows: Vec<String> = cross
        .iter()
        .map(|x| format!("{}→{} {}", x.from_node, x.to_node, x.count))
        .collect();
    let busy: u32 = moved.values().sum();
    let mut procs: Vec<(u32, u32)> = moved.into_iter().collect();
    procs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let names: Vec<String> = procs
        .iter()
        .take(3)
        .map(|&(pid, n)| format!("{} (pid {pid}, {n})", f.process_name(pid).unwrap_or("?")))
        .collect();
    let source = cross[0].from_node;
    let mut ev = Evidence::default();
    ev.push("cross_node_balance_moves", Value::Int(total));
    ev.push("per_s", Value::round(total as f64 / dt, 2));
    ev.push("flows", Value::Text(flows.join(", ")));
    ev.push("all_migrations", Value::Int(all));
    ev.push("busy_threads_moved", Value::Int(u64::from(busy)));
    ev.push("processes", Value::Text(names.join(", ")));
    vec![Finding {
        kind: FindingKind::CrossNodeChurn,
        severity: Severity::Warning,
        subject: Subject {
            kind: SubjectType::Node,
            id: Value::Int(u64::from(source)),
            name: format!("node {source}"),
        },
        impact,
        evidence: ev,
        text: format!(
            "The load balancer moved threads across NUMA nodes {total} times ({:.1}/s; {}), busy threads among them: {busy} of {}; a thread moved to another node runs away from the memory and cache it was using.",
            total as f64 / dt,
            flows.join(", "),
            names.join(", "),
        ),
    }]
}
