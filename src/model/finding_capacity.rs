//! Findings about too little CPU: a cgroup at its CFS quota (`cpu_quota`),
//! a process with more runnable threads than the CPUs it may use
//! (`too_many_threads`), and a box whose run queues are longer than its
//! CPUs without a quota to blame (`cpu_saturation`).
use std::collections::{BTreeMap, HashMap};

use super::cgroup::parent_path;
use super::cgroup_name::short_name;
use super::finding_thresholds::THRESHOLDS;
use super::finding_types::{
    under, Evidence, Finding, FindingKind, IntervalFacts, Severity, Subject, SubjectType, Value,
};
use super::interval::Row;
use super::rates::counter_delta;
use super::CgroupSample;

/// On-CPU and waiting time of a set of threads, and their involuntary
/// switches per second.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Time {
    pub threads: u32,
    pub oncpu_ns: u64,
    pub wait_ns: u64,
    pub nvcsw_s: f64,
}

impl Time {
    pub fn add(&mut self, r: &Row) {
        self.threads += 1;
        self.oncpu_ns = self.oncpu_ns.saturating_add(r.oncpu_ns.unwrap_or(0));
        self.wait_ns = self.wait_ns.saturating_add(r.wait_ns.unwrap_or(0));
        self.nvcsw_s += r.nvcsw_s.get().unwrap_or(0.0);
    }

    pub fn wait_s(&self) -> f64 {
        self.wait_ns as f64 / 1e9
    }

    /// Share of the runnable time (on CPU + waiting) spent waiting.
    pub fn wait_share(&self) -> f64 {
        let all = self.oncpu_ns as f64 + self.wait_ns as f64;
        if all > 0.0 {
            self.wait_ns as f64 / all
        } else {
            0.0
        }
    }

    /// Runnable threads on average over `dt` seconds.
    pub fn runnable(&self, dt: f64) -> f64 {
        (self.oncpu_ns as f64 + self.wait_ns as f64) / 1e9 / dt
    }

    /// Enough time lost waiting to be worth a finding (the absolute floor
    /// and the share).
    pub fn lost_enough(&self, dt: f64) -> bool {
        self.wait_s() / dt >= THRESHOLDS.min_wait_cpus
            && self.wait_share() >= THRESHOLDS.min_wait_share
    }
}

pub(crate) fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// CPUs sitting idle on the box over the interval (None: busy unknown).
fn idle_cpus(f: &IntervalFacts) -> Option<f64> {
    let view = f.cpus?;
    let busy: Vec<f64> = view.cpus.iter().filter_map(|c| c.busy_pct).collect();
    (!busy.is_empty()).then(|| busy.iter().map(|b| (100.0 - b.min(100.0)) / 100.0).sum())
}

/// The cgroup is in scope: the scope's cgroup, below it, or above it (the
/// quota that applies may be an ancestor's).
fn cgroup_in_scope(f: &IntervalFacts, path: &str) -> bool {
    f.scope
        .cgroup
        .as_deref()
        .is_none_or(|c| under(path, c) || under(c, path))
}

pub fn cpu_quota(f: &IntervalFacts) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    let before: HashMap<&str, &CgroupSample> = f
        .prev
        .cgroups
        .iter()
        .map(|c| (c.path.as_str(), c))
        .collect();
    let mut out = Vec::new();
    for c in &f.cur.cgroups {
        let Some(quota) = c.quota_cpus else { continue };
        let Some(p) = before.get(c.path.as_str()) else {
            continue;
        };
        if !cgroup_in_scope(f, &c.path) {
            continue;
        }
        let d = |now: Option<u64>, then: Option<u64>| Some(counter_delta(now?, then?));
        let (Some(periods), Some(throttled)) = (
            d(c.nr_periods, p.nr_periods),
            d(c.nr_throttled, p.nr_throttled),
        ) else {
            continue;
        };
        if periods == 0 {
            continue;
        }
        let share = throttled as f64 / periods as f64;
        if share < t.quota_min_throttled_share
            || (throttled as f64 / dt) < t.quota_min_throttled_per_s
        {
            continue;
        }
        let mut time = Time::default();
        for r in f.threads() {
            if r.cgroup.as_deref().is_some_and(|g| under(g, &c.path)) {
                time.add(r);
            }
        }
        if !time.lost_enough(dt) {
            continue;
        }
        let name = short_name(&c.path).to_string();
        let throttled_s = d(c.throttled_ns, p.throttled_ns).map(|ns| ns as f64 / 1e9);
        let idle = idle_cpus(f);
        let mut ev = Evidence::default();
        ev.push("quota_cpus", Value::round(quota, 3));
        ev.push("throttled_periods_pct", Value::round(share * 100.0, 1));
        ev.push("throttled_periods", Value::Int(throttled));
        ev.push("periods", Value::Int(periods));
        ev.push(
            "throttled_s",
            throttled_s.map_or(Value::None, |s| Value::round(s, 3)),
        );
        ev.push("threads", Value::Int(u64::from(time.threads)));
        ev.push("cpu_used", Value::round(time.oncpu_ns as f64 / 1e9 / dt, 3));
        ev.push("wait_s", Value::round(time.wait_s(), 3));
        ev.push("wait_share_pct", Value::round(time.wait_share() * 100.0, 1));
        ev.push(
            "box_idle_cpus",
            idle.map_or(Value::None, |x| Value::round(x, 2)),
        );
        let throttled_text = throttled_s
            .map(|s| format!(" ({s:.2} s throttled, summed over its CPUs)"))
            .unwrap_or_default();
        let room = match idle {
            Some(i) if i >= t.quota_idle_cpus => {
                format!(
                    ", while the box had {i:.1} CPUs idle: the quota, not the box, held them back"
                )
            }
            Some(_) => ", and the rest of the box was busy too".to_string(),
            None => String::new(),
        };
        out.push(Finding {
            kind: FindingKind::CpuQuota,
            severity: Severity::Warning,
            subject: Subject {
                kind: SubjectType::Cgroup,
                id: Value::Text(c.path.clone()),
                name: name.clone(),
            },
            impact: time.wait_share(),
            evidence: ev,
            text: format!(
                "cgroup {name} is held at its CPU quota of {quota:.2} CPUs: throttled in {} of its periods{throttled_text}; its {} threads waited {:.2} s for a CPU, {} of their runnable time{room}.",
                pct(share),
                time.threads,
                time.wait_s(),
                pct(time.wait_share()),
            ),
        });
    }
    out
}

/// The CPUs a cgroup's threads may use: the smallest quota and cpuset on
/// the way to the root, and which one it is.
fn allowed_cpus(f: &IntervalFacts, cgroup: Option<&str>) -> (f64, &'static str) {
    let ncpus = f.topology.cpus.len().max(1) as f64;
    let mut best = (ncpus, "cpus");
    let by_path: HashMap<&str, &CgroupSample> =
        f.cur.cgroups.iter().map(|c| (c.path.as_str(), c)).collect();
    let mut at = cgroup;
    let mut hops = 0;
    while let Some(p) = at {
        if let Some(c) = by_path.get(p) {
            if let Some(q) = c.quota_cpus.filter(|&q| q > 0.0 && q < best.0) {
                best = (q, "quota");
            }
            if let Some(n) = c
                .cpuset_cpus
                .map(f64::from)
                .filter(|&n| n > 0.0 && n < best.0)
            {
                best = (n, "cpuset");
            }
        }
        hops += 1;
        if hops > super::cgroup::MAX_CGROUPS {
            break;
        }
        at = parent_path(p);
    }
    best
}

pub fn too_many_threads(f: &IntervalFacts) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    // Quiet threads add nothing but their count (and maybe the process's
    // cgroup): unless a process lost enough time over its busy ones, none
    // is reported, and the pass over every row is not needed.
    let mut busy: BTreeMap<u32, Time> = BTreeMap::new();
    for r in f.busy_threads() {
        busy.entry(r.pid).or_default().add(r);
    }
    if !busy.values().any(|t| t.lost_enough(dt)) {
        return Vec::new();
    }
    let mut procs: BTreeMap<u32, (Time, Option<&str>)> = BTreeMap::new();
    for r in f.threads() {
        let e = procs.entry(r.pid).or_default();
        e.0.add(r);
        if e.1.is_none() || r.id == r.pid {
            e.1 = r.cgroup.as_deref();
        }
    }
    let mut out = Vec::new();
    for (pid, (time, cgroup)) in procs {
        let (limit, from) = allowed_cpus(f, cgroup);
        let runnable = time.runnable(dt);
        if runnable < t.threads_min_ratio * limit
            || runnable - limit < t.threads_min_excess
            || !time.lost_enough(dt)
        {
            continue;
        }
        let name = f.process_name(pid).unwrap_or("").to_string();
        let mut ev = Evidence::default();
        ev.push("runnable_threads", Value::round(runnable, 2));
        ev.push("allowed_cpus", Value::round(limit, 3));
        ev.push("limited_by", Value::Text(from.into()));
        ev.push("threads", Value::Int(u64::from(time.threads)));
        ev.push("involuntary_per_s", Value::round(time.nvcsw_s, 1));
        ev.push("wait_s", Value::round(time.wait_s(), 3));
        ev.push("wait_share_pct", Value::round(time.wait_share() * 100.0, 1));
        let what = match from {
            "quota" => "its cgroup's CPU quota",
            "cpuset" => "its cpuset",
            _ => "the box's CPUs",
        };
        out.push(Finding {
            kind: FindingKind::TooManyThreads,
            severity: Severity::Warning,
            subject: Subject {
                kind: SubjectType::Process,
                id: Value::Int(u64::from(pid)),
                name: name.clone(),
            },
            impact: time.wait_share(),
            evidence: ev,
            text: format!(
                "Process {name} (pid {pid}) kept {runnable:.1} threads runnable on average for {limit:.2} CPUs ({what}): its threads waited {:.2} s for a CPU, {} of their runnable time, and were preempted {:.0} times a second.",
                time.wait_s(),
                pct(time.wait_share()),
                time.nvcsw_s,
            ),
        });
    }
    out
}

/// The thread is in (or below) a cgroup a cpu_quota finding names: its
/// waits are that quota's, whoever ran meanwhile.
pub(crate) fn under_throttled(r: &Row, quota: &[Finding]) -> bool {
    let g = r.cgroup.as_deref().unwrap_or("");
    quota.iter().any(|q| match &q.subject.id {
        Value::Text(p) => q.kind == FindingKind::CpuQuota && under(g, p),
        _ => false,
    })
}

/// The box's CPU pressure over the interval (% of the time some task
/// waited), where the kernel has PSI.
fn psi_pct(f: &IntervalFacts) -> Option<f64> {
    let now = f.cur.system.cpu_pressure.as_ref()?.some_total_us;
    let then = f.prev.system.cpu_pressure.as_ref()?.some_total_us;
    Some(counter_delta(now, then) as f64 / 1e6 / f.dt() * 100.0)
}

pub fn cpu_saturation(f: &IntervalFacts, quota: &[Finding]) -> Vec<Finding> {
    let t = &THRESHOLDS;
    let dt = f.dt();
    let Some(view) = f.cpus else {
        return Vec::new();
    };
    let busy: Vec<f64> = view.cpus.iter().filter_map(|c| c.busy_pct).collect();
    if busy.is_empty() {
        return Vec::new();
    }
    let busy_pct = busy.iter().map(|b| b.min(100.0)).sum::<f64>() / busy.len() as f64;
    let rq: Vec<f64> = view.cpus.iter().filter_map(|c| c.rq_now).collect();
    let rq_per_cpu = (!rq.is_empty()).then(|| rq.iter().sum::<f64>() / rq.len() as f64);
    let psi = psi_pct(f);
    if busy_pct < t.saturation_min_busy_pct
        || (rq_per_cpu.is_none() && psi.is_none())
        || rq_per_cpu.is_some_and(|r| r < t.saturation_min_rq_per_cpu)
        || psi.is_some_and(|p| p < t.saturation_min_psi_pct)
    {
        return Vec::new();
    }
    let mut time = Time::default();
    let mut by_process: BTreeMap<u32, u64> = BTreeMap::new();
    for r in f.threads() {
        if under_throttled(r, quota) {
            continue;
        }
        time.add(r);
        let w = by_process.entry(r.pid).or_default();
        *w = w.saturating_add(r.wait_ns.unwrap_or(0));
    }
    if !time.lost_enough(dt) {
        return Vec::new();
    }
    let mut top: Vec<(u32, u64)> = by_process.into_iter().filter(|&(_, w)| w > 0).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let waiters: Vec<String> = top
        .iter()
        .take(3)
        .map(|&(pid, w)| {
            let name = f.process_name(pid).unwrap_or("?");
            format!("{name} (pid {pid}) {:.2} s", w as f64 / 1e9)
        })
        .collect();
    let ncpus = busy.len();
    let mut ev = Evidence::default();
    ev.push("cpus", Value::Int(ncpus as u64));
    ev.push("busy_pct", Value::round(busy_pct, 1));
    ev.push(
        "rq_waiting_per_cpu",
        rq_per_cpu.map_or(Value::None, |r| Value::round(r, 2)),
    );
    ev.push(
        "psi_some_pct",
        psi.map_or(Value::None, |p| Value::round(p, 1)),
    );
    ev.push("wait_s", Value::round(time.wait_s(), 3));
    ev.push("wait_share_pct", Value::round(time.wait_share() * 100.0, 1));
    ev.push("top_waiters", Value::Text(waiters.join(", ")));
    let queue = rq_per_cpu
        .map(|r| format!(" with {r:.1} tasks waiting per CPU on average"))
        .unwrap_or_default();
    let pressure = psi
        .map(|p| format!(" (CPU pressure {p:.0}%: some task waited that share of the time)"))
        .unwrap_or_default();
    let most = waiters
        .first()
        .map(|w| format!(", most in {w}"))
        .unwrap_or_default();
    vec![Finding {
        kind: FindingKind::CpuSaturation,
        severity: Severity::Warning,
        subject: Subject {
            kind: SubjectType::System,
            id: Value::None,
            name: "system".into(),
        },
        impact: time.wait_share(),
        evidence: ev,
        text: format!(
            "The box's {ncpus} CPUs were {busy_pct:.0}% busy{queue}{pressure}, no CPU quota involved: threads waited {:.2} s for a CPU, {} of their runnable time{most}.",
            time.wait_s(),
            pct(time.wait_share()),
        ),
    }]
}
