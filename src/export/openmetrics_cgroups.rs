//! The exporter's cgroup families, from the cgroups of the newest Sample:
//! the kernel's own cumulative counters (cpu.stat periods, throttled
//! periods and time; cpu.pressure stall time) passed through as counters,
//! the quota and thread count as gauges. A cgroup removed and created again
//! under the same path restarts its counters, which Prometheus reads as a
//! counter reset. A figure the kernel does not give (a v1 cgroup has no
//! pressure, the root no quota, a vanished cgroup nothing) has no series.
use prometheus_client::metrics::MetricType;

use super::openmetrics_encode::{label_text, Family, Labels, Value};
use crate::model::Sample;

fn family(name: &'static str, help: &'static str, kind: MetricType) -> Family {
    Family::new(name, help, kind)
}

/// The cgroup families; `budget` sample lines at most (cgroups past it are
/// left out whole, busiest thread count first). Returns the families and how
/// many cgroups and sample lines were left out.
pub fn cgroup_families(latest: Option<&Sample>, budget: usize) -> (Vec<Family>, usize, usize) {
    let Some(s) = latest else {
        return (Vec::new(), 0, 0);
    };
    let mut threads = vec![0u64; s.cgroups.len()];
    for t in &s.threads {
        if let Some(n) = t.cgroup.and_then(|c| threads.get_mut(c as usize)) {
            *n += 1;
        }
    }
    let mut order: Vec<usize> = (0..s.cgroups.len()).collect();
    order.sort_by(|&a, &b| threads[b].cmp(&threads[a]).then(a.cmp(&b)));

    let mut thr = family(
        "schedtop_cgroup_threads",
        "Threads in the cgroup itself (not its children) at the newest Sample.",
        MetricType::Gauge,
    );
    let mut quota = family(
        "schedtop_cgroup_cpu_quota_cpus",
        "The cgroup's CFS quota in CPUs (cpu.max or cfs_quota_us / cfs_period_us); no series when unlimited.",
        MetricType::Gauge,
    );
    let mut periods = family(
        "schedtop_cgroup_periods",
        "CFS bandwidth periods that elapsed with the cgroup runnable (cpu.stat nr_periods).",
        MetricType::Counter,
    );
    let mut throttled = family(
        "schedtop_cgroup_throttled_periods",
        "Periods in which the cgroup was throttled (cpu.stat nr_throttled).",
        MetricType::Counter,
    );
    let mut throttled_s = family(
        "schedtop_cgroup_throttled",
        "Time the cgroup's threads were throttled (cpu.stat throttled_usec, v1 throttled_time).",
        MetricType::Counter,
    )
    .in_seconds();
    let mut stalled = family(
        "schedtop_cgroup_cpu_pressure_stalled",
        "CPU pressure of the cgroup (cpu.pressure total): time some (or all) of its runnable tasks waited for a CPU.",
        MetricType::Counter,
    )
    .in_seconds();

    let mut lines = 0usize;
    let (mut left_out, mut left_lines) = (0usize, 0usize);
    for i in order {
        let c = &s.cgroups[i];
        // directory names are chosen by whoever made them: as inert as comm
        let name = label_text(&c.path);
        let path = || -> Labels { vec![("cgroup", name.clone())] };
        let kind = |k: &str| -> Labels { vec![("cgroup", name.clone()), ("kind", k.to_string())] };
        let mut rows: Vec<(&mut Family, Labels, Value)> = Vec::new();
        rows.push((&mut thr, path(), Value::Gauge(threads[i] as f64)));
        if let Some(q) = c.quota_cpus {
            rows.push((&mut quota, path(), Value::Gauge(q)));
        }
        if let Some(n) = c.nr_periods {
            rows.push((&mut periods, path(), Value::Counter(n as f64)));
        }
        if let Some(n) = c.nr_throttled {
            rows.push((&mut throttled, path(), Value::Counter(n as f64)));
        }
        if let Some(ns) = c.throttled_ns {
            rows.push((&mut throttled_s, path(), Value::Counter(ns as f64 / 1e9)));
        }
        let mut psi = Vec::new();
        if let Some(p) = c.pressure {
            psi.push((kind("some"), Value::Counter(p.some_total_us as f64 / 1e6)));
            if let Some(f) = p.full_total_us {
                psi.push((kind("full"), Value::Counter(f as f64 / 1e6)));
            }
        }
        if lines + rows.len() + psi.len() > budget {
            left_out += 1;
            left_lines += rows.len() + psi.len();
            continue;
        }
        lines += rows.len() + psi.len();
        for (f, l, v) in rows {
            f.rows.push((l, v));
        }
        stalled.rows.extend(psi);
    }
    let out = [thr, quota, periods, throttled, throttled_s, stalled]
        .into_iter()
        .filter(|f| !f.rows.is_empty())
        .collect();
    (out, left_out, left_lines)
}
