//! Per-interval figures derived from two neighbouring cumulative Samples.
//!
//! A thread is matched across Samples by (tid, start time), so a reused tid
//! counts as a new thread. A thread missing from the earlier Sample uses its
//! baseline if the source knows one, else it has no rate this interval.
use super::fasthash::IdMap;

use super::counters::Counters;
use super::hist::Log2Hist;
use super::sample::{Sample, ThreadSample};
use super::why::{self, WhyCounts};

/// What happened to one thread during one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadInterval {
    pub voluntary: u64,
    pub involuntary: u64,
    pub oncpu_ns: u64,
    pub wait_ns: u64,
    pub migrations: Option<u64>,
    /// the generic counters' deltas (model/counters.rs)
    pub counters: Counters,
    pub slice_hist: Option<Log2Hist>,
    pub wait_hist: Option<Log2Hist>,
    /// migration causes and block reasons (None where the source has none)
    pub why: Option<WhyCounts>,
    pub wakeup_wait_hist: Option<Log2Hist>,
    pub preempt_wait_hist: Option<Log2Hist>,
    /// counters and histogram slots of this thread that went down since
    /// its previous Sample (counted as no change; see `counter_delta`)
    pub anomalies: u32,
}

impl ThreadInterval {
    pub fn per_s(count: u64, interval_s: f64) -> f64 {
        if interval_s > 0.0 {
            count as f64 / interval_s
        } else {
            0.0
        }
    }
}

/// Share of `interval_s` a CPU spent busy, in percent (at most 100: the
/// kernel's tick accounting can overshoot an interval by a tick); 0 for an
/// empty interval.
pub fn busy_pct(busy_ns: u64, interval_s: f64) -> f64 {
    if interval_s > 0.0 {
        (busy_ns as f64 / 1e9 / interval_s * 100.0).min(100.0)
    } else {
        0.0
    }
}

/// Difference of a cumulative counter of one thread (or CPU, or the
/// system) between two Samples of the same stream. A new thread under a
/// reused tid is told apart by its start time before this is called, so a
/// counter that went down did not restart: it is an anomaly (a wrapped or
/// glitched counter) and adds nothing, rather than its whole history.
pub fn counter_delta(now: u64, before: u64) -> u64 {
    now.saturating_sub(before)
}

/// `counter_delta`, counting a decrease in `anomalies`.
fn delta_counted(now: u64, before: u64, anomalies: &mut u32) -> u64 {
    if now < before {
        *anomalies += 1;
    }
    counter_delta(now, before)
}

fn hist_delta(
    now: &Option<Log2Hist>,
    before: Option<&Option<Log2Hist>>,
    anomalies: &mut u32,
) -> Option<Log2Hist> {
    let now = now.as_ref()?;
    match before {
        Some(Some(b)) => {
            let (d, down) = now.since_counted(b);
            *anomalies += down;
            Some(d)
        }
        _ => Some(now.clone()),
    }
}

/// The interval of `cur` given the thread's previous appearance (if any).
/// None when the thread is new and its starting values are unknown.
pub fn thread_interval(cur: &ThreadSample, prev: Option<&ThreadSample>) -> Option<ThreadInterval> {
    let prev = prev.filter(|p| p.start_time_ns == cur.start_time_ns);
    let mut a = 0;
    match prev {
        Some(p) => Some(ThreadInterval {
            voluntary: delta_counted(cur.voluntary, p.voluntary, &mut a),
            involuntary: delta_counted(cur.involuntary, p.involuntary, &mut a),
            oncpu_ns: delta_counted(cur.oncpu_ns, p.oncpu_ns, &mut a),
            wait_ns: delta_counted(cur.wait_ns, p.wait_ns, &mut a),
            migrations: cur
                .migrations
                .map(|m| delta_counted(m, p.migrations.unwrap_or(0), &mut a)),
            counters: cur.counters.since(Some(&p.counters), &mut a),
            slice_hist: hist_delta(&cur.slice_hist, Some(&p.slice_hist), &mut a),
            wait_hist: hist_delta(&cur.wait_hist, Some(&p.wait_hist), &mut a),
            why: cur.why.as_ref().map(|w| {
                let m = cur
                    .migrations
                    .map(|m| counter_delta(m, p.migrations.unwrap_or(0)));
                why::interval(
                    w,
                    p.why.as_deref(),
                    m,
                    counter_delta(cur.voluntary, p.voluntary),
                )
            }),
            wakeup_wait_hist: hist_delta(&cur.wakeup_wait_hist, Some(&p.wakeup_wait_hist), &mut a),
            preempt_wait_hist: hist_delta(
                &cur.preempt_wait_hist,
                Some(&p.preempt_wait_hist),
                &mut a,
            ),
            anomalies: a,
        }),
        None => {
            let b = cur.baseline.as_deref()?;
            Some(ThreadInterval {
                voluntary: delta_counted(cur.voluntary, b.voluntary, &mut a),
                involuntary: delta_counted(cur.involuntary, b.involuntary, &mut a),
                oncpu_ns: delta_counted(cur.oncpu_ns, b.oncpu_ns, &mut a),
                wait_ns: delta_counted(cur.wait_ns, b.wait_ns, &mut a),
                migrations: cur.migrations,
                counters: cur.counters.since(None, &mut a),
                slice_hist: hist_delta(&cur.slice_hist, None, &mut a),
                wait_hist: hist_delta(&cur.wait_hist, None, &mut a),
                why: cur.why.as_ref().map(|w| {
                    let v = counter_delta(cur.voluntary, b.voluntary);
                    why::interval(w, None, cur.migrations, v)
                }),
                wakeup_wait_hist: hist_delta(&cur.wakeup_wait_hist, None, &mut a),
                preempt_wait_hist: hist_delta(&cur.preempt_wait_hist, None, &mut a),
                anomalies: a,
            })
        }
    }
}

/// `thread_interval`, or for a thread first seen with no known starting
/// values, everything it counted since it started (its cumulative figures):
/// what a running total (the exporter's, "since start") adds for it.
pub fn thread_interval_or_all(cur: &ThreadSample, prev: Option<&ThreadSample>) -> ThreadInterval {
    thread_interval(cur, prev).unwrap_or_else(|| ThreadInterval {
        voluntary: cur.voluntary,
        involuntary: cur.involuntary,
        oncpu_ns: cur.oncpu_ns,
        wait_ns: cur.wait_ns,
        migrations: cur.migrations,
        counters: cur.counters.clone(),
        slice_hist: cur.slice_hist.clone(),
        wait_hist: cur.wait_hist.clone(),
        why: cur
            .why
            .as_ref()
            .map(|w| why::interval(w, None, cur.migrations, cur.voluntary)),
        wakeup_wait_hist: cur.wakeup_wait_hist.clone(),
        preempt_wait_hist: cur.preempt_wait_hist.clone(),
        anomalies: 0,
    })
}

/// Seconds between two Samples by the monotonic clock (real elapsed time,
/// whatever the nominal interval was).
pub fn elapsed_s(prev: &Sample, cur: &Sample) -> f64 {
    cur.mono_ns.saturating_sub(prev.mono_ns) as f64 / 1e9
}

/// Index of a Sample's threads by (tid, start time).
pub fn index_threads(s: &Sample) -> IdMap<(u32, u64), &ThreadSample> {
    s.threads
        .iter()
        .map(|t| ((t.tid, t.start_time_ns), t))
        .collect()
}

pub use super::thread_matcher::ThreadMatcher;

/// Every thread of `cur` with its interval (None = no rate known yet).
pub fn intervals<'a>(
    prev: Option<&'a Sample>,
    cur: &'a Sample,
) -> Vec<(&'a ThreadSample, Option<ThreadInterval>)> {
    each_interval(prev, cur).collect()
}

/// `intervals` one thread at a time (no list of every thread's interval).
pub fn each_interval<'a>(
    prev: Option<&'a Sample>,
    cur: &'a Sample,
) -> impl Iterator<Item = (&'a ThreadSample, Option<ThreadInterval>)> + 'a {
    let mut matcher = ThreadMatcher::of(prev.map(|p| &p.threads));
    cur.threads
        .iter()
        .map(move |t| (t, thread_interval(t, matcher.get(t))))
}

/// CPU→CPU migrations during the interval, (from, to, count), non-zero only.
pub fn migration_deltas(prev: Option<&Sample>, cur: &Sample) -> Vec<(u32, u32, u64)> {
    let before: IdMap<(u32, u32), u64> = prev
        .map(|p| {
            p.migrations
                .iter()
                .map(|m| ((m.from_cpu, m.to_cpu), m.count))
                .collect()
        })
        .unwrap_or_default();
    cur.migrations
        .iter()
        .filter_map(|m| {
            let b = before.get(&(m.from_cpu, m.to_cpu)).copied().unwrap_or(0);
            let d = counter_delta(m.count, b);
            (d > 0).then_some((m.from_cpu, m.to_cpu, d))
        })
        .collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_matcher_finds_what_a_full_index_finds() {
        let t = |tid: u32, start: u64| ThreadSample {
            tid,
            start_time_ns: start,
            ..Default::default()
        };
        let prev: Vec<ThreadSample> = (1..=50).map(|i| t(i, i as u64)).collect();
        // the same order with exits, a reused tid, new threads, a move
        let mut cur: Vec<ThreadSample> = prev.iter().filter(|p| p.tid % 7 != 0).cloned().collect();
        cur.insert(10, t(99, 1));
        cur.insert(20, t(14, 500));
        cur.swap(30, 40);
        cur.push(t(3, 3));
        let s = Sample {
            threads: prev.clone().into(),
            ..Default::default()
        };
        let index = index_threads(&s);
        let mut m = ThreadMatcher::new(&prev);
        for c in &cur {
            let want = index
                .get(&(c.tid, c.start_time_ns))
                .map(|p| (p.tid, p.start_time_ns));
            let got = m.get(c).map(|p| (p.tid, p.start_time_ns));
            assert_eq!(got, want, "tid {}", c.tid);
        }
        assert!(ThreadMatcher::new(&[]).find(1, 1).is_none());
    }

    use super::*;
    use crate::model::sample::Baseline;

    fn thread(tid: u32, start: u64, vol: u64, invol: u64) -> ThreadSample {
        ThreadSample {
            tid,
            pid: tid,
            start_time_ns: start,
            voluntary: vol,
            involuntary: invol,
            oncpu_ns: vol * 1000,
            migrations: Some(vol),
            slice_hist: Some(Log2Hist::from_counts([0, vol])),
            ..Default::default()
        }
    }

    fn sample(mono_s: u64, threads: Vec<ThreadSample>) -> Sample {
        Sample {
            mono_ns: mono_s * 1_000_000_000,
            threads: threads.into(),
            ..Default::default()
        }
    }

    #[test]
    fn rate_from_two_cumulative_samples() {
        let a = sample(10, vec![thread(7, 100, 10, 4)]);
        let b = sample(12, vec![thread(7, 100, 30, 10)]);
        let iv = intervals(Some(&a), &b);
        let d = iv[0].1.as_ref().unwrap();
        assert_eq!((d.voluntary, d.involuntary), (20, 6));
        assert_eq!(d.migrations, Some(20));
        assert_eq!(d.slice_hist.as_ref().unwrap().counts[1], 20);
        let dt = elapsed_s(&a, &b);
        assert_eq!(dt, 2.0);
        assert_eq!(ThreadInterval::per_s(d.voluntary, dt), 10.0);
    }

    /// The same thread (same tid and start time) with a counter and a
    /// histogram slot lower than before: counted, adding nothing; the
    /// rest of the interval is as measured.
    #[test]
    fn a_counter_that_goes_down_is_an_anomaly_not_a_spike() {
        let mut t0 = thread(7, 100, 500, 40);
        t0.slice_hist = Some(Log2Hist::from_counts([0, 1000, 5]));
        let mut t1 = thread(7, 100, 3, 45);
        t1.slice_hist = Some(Log2Hist::from_counts([0, 1010, 3]));
        let a = sample(10, vec![t0]);
        let b = sample(11, vec![t1]);
        let d = intervals(Some(&a), &b)[0].1.clone().unwrap();
        assert_eq!((d.voluntary, d.involuntary), (0, 5));
        let h = d.slice_hist.as_ref().unwrap();
        assert_eq!([h.get(0), h.get(1), h.get(2)], [0, 10, 0]);
        // voluntary, oncpu_ns (vol * 1000), migrations (vol) and slot 2
        assert_eq!(d.anomalies, 4);
        // a clean interval has none
        let mut t2 = thread(7, 100, 9, 50);
        t2.slice_hist = Some(Log2Hist::from_counts([0, 1020, 3]));
        let c = sample(12, vec![t2]);
        assert_eq!(intervals(Some(&b), &c)[0].1.as_ref().unwrap().anomalies, 0);
    }

    #[test]
    fn missing_sample_costs_only_one_rate() {
        // sample at t=11 was lost: the rate spans 10..12 with the real elapsed time
        let a = sample(10, vec![thread(7, 100, 10, 0)]);
        let c = sample(12, vec![thread(7, 100, 50, 0)]);
        let d = intervals(Some(&a), &c)[0].1.clone().unwrap();
        assert_eq!(ThreadInterval::per_s(d.voluntary, elapsed_s(&a, &c)), 20.0);
    }

    #[test]
    fn reused_tid_restarts_counters() {
        let a = sample(10, vec![thread(7, 100, 500, 40)]);
        // same tid, new thread (different start time), baseline known
        let mut t = thread(7, 999, 3, 1);
        t.baseline = Some(Box::new(Baseline {
            voluntary: 1,
            involuntary: 0,
            ..Default::default()
        }));
        let b = sample(11, vec![t]);
        let d = intervals(Some(&a), &b)[0].1.clone().unwrap();
        assert_eq!((d.voluntary, d.involuntary), (2, 1));
        assert_eq!(d.migrations, Some(3));
        // same start time but the counter went down: no negative rate, and
        // no spike either (see a_counter_that_goes_down_is_an_anomaly)
        assert_eq!(counter_delta(3, 500), 0);
    }

    #[test]
    fn new_thread_without_baseline_has_no_rate() {
        let b = sample(11, vec![thread(8, 1, 3, 1)]);
        assert!(intervals(None, &b)[0].1.is_none());
    }

    #[test]
    fn migration_matrix_delta() {
        use crate::model::sample::MigrationCount;
        let mut a = sample(1, vec![]);
        a.migrations = vec![MigrationCount {
            from_cpu: 0,
            to_cpu: 1,
            count: 5,
        }];
        let mut b = a.clone();
        b.migrations[0].count = 9;
        b.migrations.push(MigrationCount {
            from_cpu: 1,
            to_cpu: 0,
            count: 2,
        });
        assert_eq!(migration_deltas(Some(&a), &b), vec![(0, 1, 4), (1, 0, 2)]);
    }
}

/// Lowest queue length counted in run-queue histogram slot `slot`: exact
/// below 32, then log2 buckets [32,64), [64,128), … (bpf/schedtop.h).
pub fn rq_slot_low(slot: usize) -> u64 {
    const LINEAR: usize = 32;
    if slot < LINEAR {
        slot as u64
    } else {
        1u64 << (slot - LINEAR + 5)
    }
}

/// Run-queue length over one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct RqInterval {
    pub avg: f64,
    /// exact below 32, else the low bound of its log2 bucket
    pub max: u64,
    /// (queue length low bound, samples), including the samples an idle
    /// CPU's timer did not take, counted as empty queue
    pub hist: Vec<(u64, u64)>,
    pub samples: u64,
}

/// What one CPU did during one interval.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuInterval {
    pub cpu: u32,
    pub switches: u64,
    pub busy_ns: u64,
    pub rq: Option<RqInterval>,
    pub irq: Option<CpuIrqShares>, // None: an end without interrupt figures
}

/// A CPU's interrupt and steal shares of one interval (%); probes' None: off.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuIrqShares {
    pub irq_pct: f64,
    pub softirq_pct: f64,
    pub steal_pct: f64,
    pub probe_irq_pct: Option<f64>,
    pub probe_softirq_pct: Option<f64>,
}

/// The interval's shares from two cumulative readings.
pub fn cpu_irq_shares(
    prev: &super::sample::CpuIrqSample,
    cur: &super::sample::CpuIrqSample,
    elapsed_s: f64,
) -> CpuIrqShares {
    let pct = |a: u64, b: u64| busy_pct(counter_delta(a, b), elapsed_s);
    let both = |a: Option<u64>, b: Option<u64>| Some(pct(a?, b?));
    CpuIrqShares {
        irq_pct: pct(cur.stat_irq_ns, prev.stat_irq_ns),
        softirq_pct: pct(cur.stat_softirq_ns, prev.stat_softirq_ns),
        steal_pct: pct(cur.stat_steal_ns, prev.stat_steal_ns),
        probe_irq_pct: both(cur.probe_irq_ns, prev.probe_irq_ns),
        probe_softirq_pct: both(cur.probe_softirq_ns, prev.probe_softirq_ns),
    }
}

/// Per-CPU interval figures. On these kernels a cpu-clock perf event does not
/// fire while its CPU idles (NO_HZ), so samples that should have been taken
/// in `elapsed_s` but were not are counted as empty-queue time.
pub fn cpu_intervals(prev: Option<&Sample>, cur: &Sample, elapsed_s: f64) -> Vec<CpuInterval> {
    cur.cpus
        .iter()
        .map(|c| {
            let p = prev.and_then(|p| p.cpus.iter().find(|x| x.cpu == c.cpu));
            let rq = c.rq.as_ref().map(|r| {
                let pr = p.and_then(|p| p.rq.as_ref());
                let samples = counter_delta(r.samples, pr.map_or(0, |x| x.samples));
                let sum = counter_delta(r.sum, pr.map_or(0, |x| x.sum));
                let mut hist: Vec<(u64, u64)> = r
                    .hist
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| {
                        let before = pr.and_then(|x| x.hist.get(i)).copied().unwrap_or(0);
                        (rq_slot_low(i), counter_delta(n, before))
                    })
                    .collect();
                let expected = (elapsed_s * r.freq_hz as f64).round() as u64;
                let missing = expected.saturating_sub(samples);
                if let Some(first) = hist.first_mut() {
                    first.1 = first.1.saturating_add(missing);
                }
                let total = samples.saturating_add(missing);
                let max = hist
                    .iter()
                    .rev()
                    .find(|(_, n)| *n > 0)
                    .map_or(0, |(low, _)| *low);
                hist.retain(|(_, n)| *n > 0);
                RqInterval {
                    avg: if total > 0 {
                        sum as f64 / total as f64
                    } else {
                        0.0
                    },
                    max,
                    hist,
                    samples: total,
                }
            });
            CpuInterval {
                cpu: c.cpu,
                switches: counter_delta(c.switches, p.map_or(0, |p| p.switches)),
                busy_ns: counter_delta(c.busy_ns, p.map_or(0, |p| p.busy_ns)),
                irq: match (p.and_then(|p| p.irq.as_ref()), c.irq.as_ref()) {
                    (Some(a), Some(b)) if elapsed_s > 0.0 => Some(cpu_irq_shares(a, b, elapsed_s)),
                    _ => None,
                },
                rq,
            }
        })
        .collect()
}

#[cfg(test)]
mod cpu_tests {
    use super::*;
    use crate::model::sample::{CpuSample, RqSample};

    #[test]
    fn interrupt_shares_are_deltas_over_the_interval_and_unknown_probes_stay_unknown() {
        let a = crate::model::CpuIrqSample {
            stat_irq_ns: 10_000_000,
            stat_softirq_ns: 40_000_000,
            stat_steal_ns: 0,
            probe_irq_ns: Some(1_000_000),
            probe_softirq_ns: None,
        };
        let b = crate::model::CpuIrqSample {
            stat_irq_ns: 30_000_000,
            stat_softirq_ns: 140_000_000,
            stat_steal_ns: 500_000_000,
            probe_irq_ns: Some(6_000_000),
            probe_softirq_ns: Some(9_000_000),
        };
        // 2 s: 20 ms = 1 %, 100 ms = 5 %, 500 ms = 25 %, 5 ms = 0.25 %
        let s = cpu_irq_shares(&a, &b, 2.0);
        assert!((s.irq_pct - 1.0).abs() < 1e-9);
        assert!((s.softirq_pct - 5.0).abs() < 1e-9);
        assert!((s.steal_pct - 25.0).abs() < 1e-9);
        assert!((s.probe_irq_pct.unwrap() - 0.25).abs() < 1e-9);
        assert_eq!(s.probe_softirq_pct, None, "one end unknown: unknown, not 0");
    }

    #[test]
    fn idle_cpu_missing_samples_count_as_empty_queue() {
        let mk = |samples, sum, h1| Sample {
            mono_ns: 0,
            cpus: vec![CpuSample {
                irq: None,
                cpu: 0,
                switches: 0,
                busy_ns: 0,
                rq: Some(RqSample {
                    samples,
                    sum,
                    hist: vec![0, h1],
                    freq_hz: 100,
                }),
            }],
            ..Default::default()
        };
        // 1 s at 100 Hz but only 50 samples (all with queue length 1) taken
        let a = mk(0, 0, 0);
        let b = mk(50, 50, 50);
        let r = cpu_intervals(Some(&a), &b, 1.0)[0].rq.clone().unwrap();
        assert_eq!(r.samples, 100);
        assert!((r.avg - 0.5).abs() < 1e-9);
        assert_eq!(r.max, 1);
        assert_eq!(r.hist, vec![(0, 50), (1, 50)]);
        assert_eq!(rq_slot_low(31), 31);
        assert_eq!(rq_slot_low(32), 32);
        assert_eq!(rq_slot_low(33), 64);
    }
}
