//! What any honest pair of Samples obeys, whatever produced them. Fixtures
//! are checked with it (tests/record/fixture_physics.rs) so that the screens built
//! from them cannot hide unit or scale errors: a thread cannot complete
//! more slices than its CPU time allows, CPUs' switches add up to the
//! system's, an average lies below the 99th percentile's bucket bound.
use super::hist::{
    octave_high_us, octave_low_us, slot_high_ns, slot_low_ns, Log2Hist, SUB_BUCKETS,
};
use super::rates::{counter_delta, elapsed_s, index_threads, thread_interval};
use super::Sample;

/// Relative slack for sums taken at slightly different moments.
const SUM_SLACK: f64 = 0.02;

/// The slices' total duration bounds (µs) from their buckets, and the
/// longest slice's upper bound.
fn slice_bounds(h: &Log2Hist) -> (u64, u64, u64) {
    // (low ns, high ns) of each count's bucket: whole octaves when that is
    // all a histogram knows (an old recording)
    let bucket = |slot: usize| -> (u64, Option<u64>) {
        if h.octaves_only {
            let o = slot / SUB_BUCKETS;
            (
                octave_low_us(o) * 1000,
                octave_high_us(o).map(|us| us * 1000),
            )
        } else {
            (slot_low_ns(slot), slot_high_ns(slot))
        }
    };
    let (mut low, mut high, mut longest) = (0u64, 0u64, 0u64);
    for (slot, &n) in h.counts.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let (lo, hi) = bucket(slot);
        let hi = hi.map_or(u64::MAX / 4, |ns| ns.div_ceil(1000));
        low = low.saturating_add(n.saturating_mul(lo / 1000));
        high = high.saturating_add(n.saturating_mul(hi));
        longest = longest.max(hi);
    }
    (low, high, longest)
}

/// Every way the interval from `prev` to `cur` contradicts itself, one
/// line each (empty: consistent).
pub fn violations(prev: &Sample, cur: &Sample) -> Vec<String> {
    let mut v = Vec::new();
    let dt_us = (elapsed_s(prev, cur) * 1e6) as u64;
    let before = index_threads(prev);
    let mut thread_switches = 0u64;
    for t in &cur.threads {
        let Some(iv) = thread_interval(t, before.get(&(t.tid, t.start_time_ns)).copied()) else {
            continue;
        };
        thread_switches += iv.voluntary + iv.involuntary;
        let oncpu_us = iv.oncpu_ns / 1000;
        // interrupts steal from a thread only while it is on a CPU
        if let Some(irq_ns) = super::counters::STOLEN.total(&iv.counters) {
            if irq_ns / 1000 > oncpu_us + oncpu_us / 50 + 1 {
                v.push(format!(
                    "thread {}: interrupts took {} us of its {oncpu_us} us on CPU",
                    t.tid,
                    irq_ns / 1000
                ));
            }
        }
        if oncpu_us > dt_us + dt_us / 50 {
            v.push(format!(
                "thread {}: {oncpu_us} us on CPU in a {dt_us} us interval",
                t.tid
            ));
        }
        // a thread is on a CPU or waiting for one at most the whole
        // interval; a wait is counted whole when it ends, so one that began
        // before the interval may add up to its longest bucket's bound
        if let Some(w) = iv.wait_hist.as_ref().filter(|h| h.total() > 0) {
            let wait_us = iv.wait_ns / 1000;
            let longest_wait = slice_bounds(w).2;
            let room = dt_us + dt_us / 50 + longest_wait;
            if oncpu_us.saturating_add(wait_us) > room {
                v.push(format!(
                    "thread {}: {oncpu_us} us on CPU and {wait_us} us waiting for one in a {dt_us} us interval",
                    t.tid
                ));
            }
        }
        let Some(h) = iv.slice_hist.as_ref().filter(|h| h.total() > 0) else {
            continue;
        };
        let (low, high, longest) = slice_bounds(h);
        // one slice may have begun before the interval (counted whole
        // here), one may still be running at its end (not counted yet)
        if low > oncpu_us.saturating_add(longest) {
            v.push(format!(
                "thread {}: {} slices of at least {low} us in all, but {oncpu_us} us on CPU",
                t.tid,
                h.total()
            ));
        }
        if oncpu_us > high.saturating_add(dt_us) {
            v.push(format!(
                "thread {}: {oncpu_us} us on CPU, but {} slices of at most {high} us",
                t.tid,
                h.total()
            ));
        }
        let avg = oncpu_us as f64 / h.total() as f64;
        if let Some(p99) = h.quantile_us(0.99) {
            // the slice still running at the end counts in the CPU time
            // but not yet in the histogram: up to the interval, shared out
            let running = (longest + dt_us) as f64 / h.total() as f64;
            if avg > p99 as f64 * (1.0 + SUM_SLACK) + running {
                v.push(format!(
                    "thread {}: average slice {avg:.0} us above the p99 bound {p99} us",
                    t.tid
                ));
            }
        }
    }
    let busy_us: u64 = cur
        .cpus
        .iter()
        .map(|c| {
            let p = prev.cpus.iter().find(|p| p.cpu == c.cpu);
            counter_delta(c.busy_ns, p.map_or(0, |p| p.busy_ns)) / 1000
        })
        .sum();
    let oncpu_us: u64 = cur
        .threads
        .iter()
        .filter_map(|t| thread_interval(t, before.get(&(t.tid, t.start_time_ns)).copied()))
        .map(|iv| iv.oncpu_ns / 1000)
        .sum();
    if busy_us > 0 && oncpu_us > busy_us + (busy_us as f64 * SUM_SLACK) as u64 {
        v.push(format!(
            "the threads ran {oncpu_us} us, the CPUs were busy only {busy_us} us"
        ));
    }
    let ctxt = counter_delta(cur.system.context_switches, prev.system.context_switches);
    let slack = |n: u64| (n as f64 * SUM_SLACK) as u64 + 8;
    if !cur.cpus.is_empty() {
        let per_cpu: u64 = cur
            .cpus
            .iter()
            .map(|c| {
                let p = prev.cpus.iter().find(|p| p.cpu == c.cpu);
                counter_delta(c.switches, p.map_or(0, |p| p.switches))
            })
            .sum();
        if per_cpu.abs_diff(ctxt) > slack(ctxt) {
            v.push(format!(
                "the CPUs' switches add up to {per_cpu}, the system's to {ctxt}"
            ));
        }
    }
    irq_violations(prev, cur, dt_us, &mut v);
    if thread_switches > ctxt + slack(ctxt) {
        v.push(format!(
            "the threads switched {thread_switches} times, the system only {ctxt}"
        ));
    }
    v.extend(cgroup_violations(prev, cur));
    v
}

/// A cgroup's counters against each other and its threads: no more
/// throttled periods than periods; throttled time at most the throttled
/// share of the interval on each CPU it may use (v1 sums it per CPU);
/// pressure at most the interval; its threads' CPU time within its quota.
fn cgroup_violations(prev: &Sample, cur: &Sample) -> Vec<String> {
    let mut v = Vec::new();
    let dt = elapsed_s(prev, cur);
    let ncpus = cur.cpus.len().max(1) as f64;
    let rows = super::interval::derive(Some(prev), cur, dt).cgroups;
    for (c, row) in cur.cgroups.iter().zip(&rows) {
        let Some(p) = prev.cgroups.iter().find(|p| p.path == c.path) else {
            continue;
        };
        let d = |a: Option<u64>, b: Option<u64>| Some(counter_delta(a?, b?));
        let periods = d(c.nr_periods, p.nr_periods);
        let throttled = d(c.nr_throttled, p.nr_throttled);
        if let (Some(n), Some(t)) = (periods, throttled) {
            if t > n {
                v.push(format!("cgroup {}: {t} throttled of {n} periods", c.path));
            }
            let width = c.cpuset_cpus.map_or(ncpus, f64::from);
            let share = if n > 0 { t as f64 / n as f64 } else { 0.0 };
            if let Some(ns) = d(c.throttled_ns, p.throttled_ns) {
                if ns as f64 / 1e9 > dt * width * share * (1.0 + SUM_SLACK) {
                    v.push(format!(
                        "cgroup {}: throttled {ns} ns in {dt:.3} s with {t} of {n} periods throttled",
                        c.path
                    ));
                }
            }
        }
        let psi = |i: &super::CgroupSample| i.pressure.map(|p| p.some_total_us);
        if let Some(us) = d(psi(c), psi(p)) {
            if us as f64 / 1e6 > dt * (1.0 + SUM_SLACK) {
                v.push(format!(
                    "cgroup {}: {us} us of pressure in {dt:.3} s",
                    c.path
                ));
            }
        }
        if let (Some(q), Some(pct)) = (c.quota_cpus, row.cpu_pct) {
            if pct / 100.0 > q * (1.0 + SUM_SLACK) + 0.01 {
                v.push(format!(
                    "cgroup {}: its threads ran {pct:.1} % of a CPU under a {q} CPU quota",
                    c.path
                ));
            }
        }
    }
    v
}

/// A CPU spends at most the interval in interrupts and steal together,
/// by /proc/stat's count and by the probes'.
fn irq_violations(prev: &Sample, cur: &Sample, dt_us: u64, v: &mut Vec<String>) {
    for c in &cur.cpus {
        let Some(now) = c.irq.as_ref() else { continue };
        let Some(was) = prev
            .cpus
            .iter()
            .find(|p| p.cpu == c.cpu)
            .and_then(|p| p.irq.as_ref())
        else {
            continue;
        };
        let d = |a: u64, b: u64| counter_delta(a, b) / 1000;
        let stat = d(now.stat_irq_ns, was.stat_irq_ns)
            + d(now.stat_softirq_ns, was.stat_softirq_ns)
            + d(now.stat_steal_ns, was.stat_steal_ns);
        let probes = match (now.probe_irq_ns, now.probe_softirq_ns) {
            (Some(h), Some(s)) => {
                d(h, was.probe_irq_ns.unwrap_or(0)) + d(s, was.probe_softirq_ns.unwrap_or(0))
            }
            _ => 0,
        };
        if stat.max(probes) > dt_us + dt_us / 50 {
            v.push(format!(
                "CPU {}: {} us in interrupts and steal in a {dt_us} us interval",
                c.cpu,
                stat.max(probes)
            ));
        }
    }
}

/// `violations` over each neighbouring pair of `samples`.
pub fn check_all(samples: &[Sample]) -> Vec<String> {
    samples
        .windows(2)
        .enumerate()
        .flat_map(|(i, w)| {
            violations(&w[0], &w[1])
                .into_iter()
                .map(move |m| format!("interval {}: {m}", i + 1))
        })
        .collect()
}
