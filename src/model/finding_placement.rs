//! Findings about which CPU a thread got: a real-time thread taking most
//! of a CPU that normal threads wait for (`rt_hog`), and threads that wait
//! long after their wakeups while CPUs they may use sit idle
//! (`wakeup_placement`).
use std::collections::{BTreeMap, BTreeSet};

use super::finding_capacity::{pct, under_throttled, Time};
use super::finding_causes::{approx_total_ns, cpu_list};
use super::finding_thresholds::THRESHOLDS;
use super::finding_types::{
    Evidence, Finding, FindingKind, IntervalFacts, Severity, Subject, SubjectType, Value,
};
use super::interval::Row;

/// A real-time process that took most of one or more CPUs.
struct Hog<'a> {
    rows: Vec<&'a Row>,
    cpus: BTreeSet<u32>,
    cpu_pct: f64,
}

/// Normal threads a hog kept off its CPUs.
#[derive(Default)]
struct Starved {
    time: Time,
    preempted_ns: f64,
    by_hog: u64,
    preemptions: u64,
    processes: BTreeMap<u32, u32>,
}

/// (preemptions of `r` by each pid, all its preemptions), None where the
/// source has no preemptor list.
fn preemptions_by_pid(r: &Row) -> Option<(BTreeMap<u32, u64>, u64)> {
    let why = r.why.as_ref()?;
    let mut by: BTreeMap<u32, u64> = BTreeMap::new();
    for p in &why.preempted_by {
        let e = by.entry(p.pid).or_default();
        *e = e.saturating_add(p.count);
    }
    let total = by
        .values()
        .fold(why.preempted_by_rest, |a, &n| a.saturating_add(n));
    Some((by, total))
}

/// Share of a row's run-queue wait that began at a wakeup (`wakeup`) or
/// at a preemption, from the wait split (None where there is none).
fn wait_share(r: &Row, wakeup: bool) -> Option<f64> {
    let p = approx_total_ns(r.preempt_wait_hist()?);
    let w = approx_total_ns(r.wakeup_wait_hist()?);
    (p + w > 0.0).then(|| if wakeup { w } else { p } / (p + w))
}

/// The CPUs the interval's real-time hogs ran on (every thread, in scope
/// or not: the hog may be outside a `-p` list, its victims inside).
pub fn rt_hog_cpus(f: &IntervalFacts) -> BTreeSet<u32> {
    hogs(f).into_values().flat_map(|h| h.cpus).collect()
}

fn hogs<'a>(f: &'a IntervalFacts) -> BTreeMap<u32, Hog<'a>> {
    let mut out: BTreeMap<u32, Hog> = BTreeMap::new();
    for r in f.busy_rows().filter(|r| r.attrs.realtime()) {
        let busy = r.cpu_pct.get().unwrap_or(0.0);
        if busy < THRESHOLDS.rt_hog_min_cpu_pct {
            continue;
        }
        let h = out.entry(r.pid).or_insert_with(|| Hog {
            rows: Vec::new(),
            cpus: BTreeSet::new(),
            cpu_pct: 0.0,
        });
        h.rows.push(r);
        h.cpu_pct += busy;
        if let Some(c) = r.cpu {
            h.cpus.insert(c);
        }
    }
    out
}

/// `quota`: the interval's cpu_quota findings (a throttled thread is the
/// quota's, whoever ran while it was held back).
pub fn rt_hog(f: &IntervalFacts, quota: &[Finding]) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    let hogs = hogs(f);
    if hogs.is_empty() {
        return Vec::new();
    }
    let mut starved: BTreeMap<u32, Starved> = BTreeMap::new();
    for r in f.busy_threads() {
        if r.attrs.realtime() || hogs.contains_key(&r.pid) || under_throttled(r, quota) {
            continue;
        }
        let mut one = Time::default();
        one.add(r);
        if !one.lost_enough(dt) {
            continue;
        }
        let Some(share) = wait_share(r, false) else {
            continue;
        };
        let Some((by, total)) = preemptions_by_pid(r) else {
            continue;
        };
        if share < t.antagonist_min_preempt_share || total == 0 {
            continue;
        }
        // While a real-time thread is runnable on a CPU no normal thread
        // runs there (but for the fair class's 5 % reserve): a normal
        // thread preempted on a hog's CPU waits for the hog, whoever
        // preempted it first. On 6.18, kblockd's high-priority kworker
        // took 95 % of a victim's preemptions inside its 50 ms windows,
        // and each wait then lasted until the FIFO spinner let go.
        let Some(cpu) = r.cpu else { continue };
        let Some((&hog, _)) = hogs.iter().find(|(_, h)| h.cpus.contains(&cpu)) else {
            continue;
        };
        let n = by.get(&hog).copied().unwrap_or(0);
        let s = starved.entry(hog).or_default();
        s.time.add(r);
        s.preempted_ns += share * r.wait_ns.unwrap_or(0) as f64;
        s.by_hog = s.by_hog.saturating_add(n);
        s.preemptions = s.preemptions.saturating_add(total);
        *s.processes.entry(r.pid).or_default() += 1;
    }
    let mut out = Vec::new();
    for (pid, s) in starved {
        let h = &hogs[&pid];
        let name = f
            .process_name(pid)
            .unwrap_or(h.rows.first().map_or("", |r| &*r.process_comm))
            .to_string();
        let top = h
            .rows
            .iter()
            .max_by_key(|r| (r.attrs.rt_priority, std::cmp::Reverse(r.id)))
            .expect("a hog has a thread");
        let policy = top.attrs.policy_name().unwrap_or("?");
        let prio = top.attrs.rt_priority.unwrap_or(0);
        let mut victims: Vec<(u32, u32)> = s.processes.into_iter().collect();
        victims.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let named: Vec<String> = victims
            .iter()
            .take(3)
            .map(|&(p, n)| format!("{} (pid {p}, {n})", f.process_name(p).unwrap_or("?")))
            .collect();
        let all = s.time.oncpu_ns as f64 + s.time.wait_ns as f64;
        let impact = if all > 0.0 { s.preempted_ns / all } else { 0.0 };
        let by_hog = s.by_hog as f64 / s.preemptions.max(1) as f64;
        let cpus = cpu_list(&h.cpus);
        let on = if h.cpus.len() == 1 { "CPU" } else { "CPUs" };
        let mut ev = Evidence::default();
        ev.push("policy", Value::Text(policy.into()));
        ev.push("rt_priority", Value::Int(u64::from(prio)));
        ev.push("cpus", Value::Text(cpus.clone()));
        ev.push("hog_cpu_pct", Value::round(h.cpu_pct, 1));
        ev.push("starved_threads", Value::Int(u64::from(s.time.threads)));
        ev.push("starved_wait_s", Value::round(s.time.wait_s(), 3));
        ev.push(
            "starved_wait_share_pct",
            Value::round(s.time.wait_share() * 100.0, 1),
        );
        ev.push("preempted_by_hog_pct", Value::round(by_hog * 100.0, 1));
        ev.push("starved", Value::Text(named.join(", ")));
        out.push(Finding {
            kind: FindingKind::RtHog,
            severity: Severity::Warning,
            subject: Subject {
                kind: SubjectType::Process,
                id: Value::Int(u64::from(pid)),
                name: name.clone(),
            },
            impact,
            evidence: ev,
            text: format!(
                "{name} (pid {pid}), {policy} priority {prio}, ran {:.0}% of a CPU on {on} {cpus}, while {} normal threads that run there waited {:.2} s, {} of their runnable time, {} of their preemptions by it ({}): a real-time thread runs before every normal thread on its CPU.",
                h.cpu_pct,
                s.time.threads,
                s.time.wait_s(),
                pct(s.time.wait_share()),
                pct(by_hog),
                named.join(", "),
            ),
        });
    }
    out
}

/// Idle CPUs a thread allowed on `allowed` CPUs could have used besides
/// the one it last ran on. Which CPUs its affinity names is not known,
/// only how many: the least idle `allowed - 1` others are counted, so the
/// figure is never more than it had (None: the CPU figures are unknown).
fn idle_allowed(f: &IntervalFacts, own: Option<u32>, allowed: u32) -> Option<f64> {
    let view = f.cpus?;
    let mut idle: Vec<f64> = view
        .cpus
        .iter()
        .filter(|c| Some(c.cpu) != own)
        .map(|c| c.busy_pct.map(|b| (100.0 - b.clamp(0.0, 100.0)) / 100.0))
        .collect::<Option<Vec<f64>>>()?;
    idle.sort_by(|a, b| a.total_cmp(b));
    Some(idle.iter().take(allowed.saturating_sub(1) as usize).sum())
}

/// The threads of one process woken onto busy CPUs.
#[derive(Default)]
struct Misplaced {
    threads: u32,
    time: Time,
    wakeup_wait_ns: f64,
    p99_wakeup_wait_us: u32,
    idle_cpus: f64,
    cpus: BTreeSet<u32>,
}

pub fn wakeup_placement(f: &IntervalFacts, quota: &[Finding]) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    let rt = rt_hog_cpus(f);
    let mut per: BTreeMap<u32, Misplaced> = BTreeMap::new();
    for r in f.busy_threads() {
        if under_throttled(r, quota) || r.attrs.realtime() {
            continue;
        }
        let Some(allowed) = r.attrs.cpus_allowed.filter(|&n| n >= 2) else {
            continue;
        };
        let Some(share) = wait_share(r, true) else {
            continue;
        };
        let p99 = r.p99_wakeup_wait_us.unwrap_or(0);
        if share < t.placement_min_wakeup_share || f64::from(p99) < t.placement_min_p99_us {
            continue;
        }
        // on a real-time hog's CPU a thread waits for the hog
        if r.cpu.is_some_and(|c| rt.contains(&c)) {
            continue;
        }
        let Some(idle) = idle_allowed(f, r.cpu, allowed) else {
            continue;
        };
        if idle < t.placement_min_idle_cpus {
            continue;
        }
        let m = per.entry(r.pid).or_default();
        m.threads += 1;
        m.time.add(r);
        m.wakeup_wait_ns += share * r.wait_ns.unwrap_or(0) as f64;
        m.p99_wakeup_wait_us = m.p99_wakeup_wait_us.max(p99);
        m.idle_cpus = if m.threads == 1 {
            idle
        } else {
            m.idle_cpus.min(idle)
        };
        if let Some(c) = r.cpu {
            m.cpus.insert(c);
        }
    }
    let mut out = Vec::new();
    for (pid, m) in per {
        let woken_cpus = m.wakeup_wait_ns / 1e9 / dt;
        let all = m.time.oncpu_ns as f64 + m.time.wait_ns as f64;
        let impact = if all > 0.0 {
            m.wakeup_wait_ns / all
        } else {
            0.0
        };
        if woken_cpus < t.min_wait_cpus || impact < t.min_wait_share {
            continue;
        }
        let name = f.process_name(pid).unwrap_or("").to_string();
        let cpus = cpu_list(&m.cpus);
        let mut ev = Evidence::default();
        ev.push("threads", Value::Int(u64::from(m.threads)));
        ev.push("wakeup_wait_s", Value::round(m.wakeup_wait_ns / 1e9, 3));
        ev.push("wakeup_wait_share_pct", Value::round(impact * 100.0, 1));
        ev.push(
            "p99_wakeup_wait_ms",
            Value::round(f64::from(m.p99_wakeup_wait_us) / 1000.0, 2),
        );
        // where each thread last ran (ThreadSample::cpu), not where its
        // wakeups queued: the probes do not record the wakeup's CPU
        ev.push("last_ran_on_cpus", Value::Text(cpus.clone()));
        ev.push("idle_allowed_cpus", Value::round(m.idle_cpus, 2));
        out.push(Finding {
            kind: FindingKind::WakeupPlacement,
            severity: Severity::Warning,
            subject: Subject {
                kind: SubjectType::Process,
                id: Value::Int(u64::from(pid)),
                name: name.clone(),
            },
            impact,
            evidence: ev,
            text: format!(
                "{} threads of {name} (pid {pid}) waited {:.2} s for a CPU after their wakeups (p99 {:.1} ms), {} of their runnable time (last on CPUs {cpus}), while at least {:.1} other CPUs they may run on sat idle: the kernel placed their wakeups on busy CPUs.",
                m.threads,
                m.wakeup_wait_ns / 1e9,
                f64::from(m.p99_wakeup_wait_us) / 1000.0,
                pct(impact),
                m.idle_cpus,
            ),
        });
    }
    out
}
