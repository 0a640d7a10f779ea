//! What any honest pair of Samples obeys, whatever produced them. Fixtures
//! are checked with it (tests/fixture_physics.rs) so that the screens built
//! from them cannot hide unit or scale errors: a thread cannot complete
//! more slices than its CPU time allows, CPUs' switches add up to the
//! system's, an average lies below the 99th percentile's bucket bound.
use super::hist::{slot_high_us, slot_low_us, Log2Hist};
use super::rates::{counter_delta, elapsed_s, index_threads, thread_interval};
use super::Sample;

/// Relative slack for sums taken at slightly different moments.
const SUM_SLACK: f64 = 0.02;

/// The slices' total duration bounds (µs) from their buckets, and the
/// longest slice's upper bound.
fn slice_bounds(h: &Log2Hist) -> (u64, u64, u64) {
    let (mut low, mut high, mut longest) = (0u64, 0u64, 0u64);
    for (slot, &n) in h.counts.iter().enumerate() {
        if n == 0 {
            continue;
        }
        let hi = slot_high_us(slot).unwrap_or(u64::MAX / 4);
        low = low.saturating_add(n.saturating_mul(slot_low_us(slot)));
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
        if oncpu_us > dt_us + dt_us / 50 {
            v.push(format!(
                "thread {}: {oncpu_us} us on CPU in a {dt_us} us interval",
                t.tid
            ));
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
    if thread_switches > ctxt + slack(ctxt) {
        v.push(format!(
            "the threads switched {thread_switches} times, the system only {ctxt}"
        ));
    }
    v
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
