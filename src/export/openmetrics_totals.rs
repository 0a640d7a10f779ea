//! What `schedtop serve` exports, kept up to date from each Sample: the
//! cumulative counters of the whole system, of every process and of each
//! CPU. A scrape reads these; it never takes a Sample itself.
//!
//! Counters must never go down while a series exists (Prometheus reads a
//! drop as a restart). A process's totals are the sum of its threads'
//! increments, so a thread that exits keeps its part: its final counts
//! arrive once (`exited`), are added, and the process's totals stay.
use std::collections::VecDeque;

use super::openmetrics_pressure::PressureWindows;
use crate::model::fasthash::IdMap;
use std::sync::Arc;

use crate::model::findings::Finding;
use crate::model::rates::counter_delta;
use crate::model::shared_interval::{self, Deriver, Interval};
use crate::model::tally::Tally;
use crate::model::{CgroupRow, HostInfo, Sample};

/// How long a process's switch rate is averaged over when ranking
/// processes for `--top` (an exponential moving average): long enough that
/// the exported set does not flap from one scrape to the next.
pub const RANK_TIME_CONSTANT_S: f64 = 60.0;
/// A process that has not been seen for this long is forgotten (its series
/// end); until then its last totals stay exported so the final increase
/// before it exited is scraped.
pub const FORGET_AFTER_NS: u64 = 120_000_000_000;
/// How much per-CPU run-queue history is kept for the scrape-window gauge.
pub const RQ_HISTORY: usize = 720;

#[derive(Clone, Debug)]
pub struct ProcessTotals {
    pub pid: u32,
    /// the process's name as its main thread set it (hostile)
    pub comm: String,
    pub counts: Tally,
    /// switches per second, averaged (RANK_TIME_CONSTANT_S)
    pub rank_rate: f64,
    pub last_seen_mono: u64,
}

/// One CPU's cumulative run-queue samples at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RqPoint {
    pub cpu: u32,
    pub samples: u64,
    pub sum: u64,
    pub freq_hz: u32,
}

/// Everything the exporter knows, updated once per Sample.
#[derive(Debug)]
pub struct Totals {
    pub host: HostInfo,
    pub system: Tally,
    pub processes: IdMap<u32, ProcessTotals>,
    /// the newest Sample (per-CPU counters and, with --per-thread, threads)
    pub latest: Option<Arc<Sample>>,
    /// switches per second of each thread in `latest` over its last interval
    pub thread_rates: Vec<f64>,
    /// (monotonic ns, per-CPU run-queue counters), oldest first
    pub rq_history: VecDeque<(u64, Vec<RqPoint>)>,
    /// Samples taken, and attempts that failed
    pub samples: u64,
    pub sample_errors: u64,
    /// intervals this process derived, as of the newest Sample: equal to
    /// `samples` when every sink shares the one Interval per Sample
    pub derivations: u64,
    /// bumped by every update: a scrape renders again only when it moved
    pub generation: u64,
    /// the system's CPU pressure, from the Intervals (no PSI: none)
    pub pressure: PressureWindows,
    /// the last interval's findings, ranked: the exporter's one derivation
    /// of the interval (the rest of its figures are cumulative)
    pub findings: Vec<Finding>,
    /// the newest Interval's cgroup rows, without their histograms: the
    /// kernel's own cumulative counters and the quota, read at scrape
    /// time through the cgroup table (openmetrics_cgroups.rs)
    pub cgroups: Vec<CgroupRow>,
    /// `update`'s own deriver (None where the sampler shares Intervals)
    deriver: Option<Deriver>,
}

impl Totals {
    pub fn new(host: HostInfo) -> Totals {
        Totals {
            host,
            system: Tally::default(),
            processes: IdMap::default(),
            latest: None,
            thread_rates: Vec::new(),
            rq_history: VecDeque::new(),
            samples: 0,
            sample_errors: 0,
            derivations: 0,
            generation: 0,
            pressure: PressureWindows::default(),
            findings: Vec::new(),
            cgroups: Vec::new(),
            deriver: None,
        }
    }

    /// Fold one Sample in, deriving its interval here: for callers with
    /// no sampler of their own (tests, one-off renders). `serve` hands
    /// the exporter the one shared Interval (`take`).
    pub fn update(&mut self, cur: Sample) {
        let mut d = self
            .deriver
            .take()
            .unwrap_or_else(|| Deriver::new(self.host.clone()));
        let iv = d.next(cur);
        self.deriver = Some(d);
        self.take(&iv);
    }

    /// Fold one Interval in: the processes' increments it carries are
    /// summed (the exporter computes no delta of its own).
    pub fn take(&mut self, iv: &Arc<Interval>) {
        let cur = &iv.sample;
        let d = &iv.derived;
        let dt = if iv.prev.is_some() { iv.seconds() } else { 0.0 };
        let alpha = if dt > 0.0 {
            1.0 - (-dt / RANK_TIME_CONSTANT_S).exp()
        } else {
            1.0
        };
        for (row, (pid, inc)) in d.processes.iter().zip(&d.increments) {
            self.system.add(inc);
            let proc = self.processes.entry(*pid).or_insert_with(|| ProcessTotals {
                pid: *pid,
                comm: row.process_comm.to_string(),
                counts: Tally::default(),
                rank_rate: 0.0,
                last_seen_mono: cur.mono_ns,
            });
            proc.counts.add(inc);
            proc.last_seen_mono = cur.mono_ns;
            if *proc.comm != *row.process_comm {
                proc.comm = row.process_comm.to_string();
            }
        }
        let did: IdMap<u32, u64> = d
            .increments
            .iter()
            .map(|(pid, inc)| (*pid, inc.switches()))
            .collect();
        for (pid, proc) in self.processes.iter_mut() {
            let did = did.get(pid).copied().unwrap_or(0);
            let rate = if dt > 0.0 { did as f64 / dt } else { 0.0 };
            proc.rank_rate += alpha * (rate - proc.rank_rate);
        }
        let now = cur.mono_ns;
        self.processes
            .retain(|_, p| now.saturating_sub(p.last_seen_mono) <= FORGET_AFTER_NS);
        let rq: Vec<RqPoint> = cur
            .cpus
            .iter()
            .filter_map(|c| {
                c.rq.as_ref().map(|r| RqPoint {
                    cpu: c.cpu,
                    samples: r.samples,
                    sum: r.sum,
                    freq_hz: r.freq_hz,
                })
            })
            .collect();
        if !rq.is_empty() {
            if self.rq_history.len() >= RQ_HISTORY {
                self.rq_history.pop_front();
            }
            self.rq_history.push_back((cur.mono_ns, rq));
        }
        // a thread seen for the first time has no rate yet
        self.thread_rates = d
            .threads
            .iter()
            .map(|r| {
                if dt > 0.0 {
                    r.switches_s().unwrap_or(0.0)
                } else {
                    0.0
                }
            })
            .collect();
        self.findings = iv.findings.clone();
        self.cgroups.clear();
        self.cgroups.extend(d.cgroups.iter().map(|c| CgroupRow {
            path: c.path.clone(),
            slice_hist: None,
            wait_hist: None,
            ..*c
        }));
        self.pressure.take(iv);
        self.latest = Some(cur.clone());
        self.samples += 1;
        self.derivations = shared_interval::derivations();
        self.generation += 1;
    }

    pub fn note_error(&mut self) {
        self.sample_errors += 1;
        self.generation += 1;
    }

    /// Average run-queue length of each CPU from the newest history point
    /// at or before `since_mono` (the oldest kept if none) to the newest.
    /// A per-CPU timer does not fire while its CPU idles, so expected but
    /// missing timer samples count as an empty queue (see rates.rs).
    pub fn rq_average_since(&self, since_mono: u64) -> Vec<(u32, f64)> {
        let Some((end_mono, end)) = self.rq_history.back() else {
            return Vec::new();
        };
        let start = self
            .rq_history
            .iter()
            .rev()
            .find(|(m, _)| *m <= since_mono && m < end_mono)
            .or_else(|| self.rq_history.front().filter(|(m, _)| m < end_mono));
        let Some((start_mono, start)) = start else {
            return Vec::new();
        };
        let dt = (end_mono - start_mono) as f64 / 1e9;
        end.iter()
            .map(|e| {
                let b = start.iter().find(|s| s.cpu == e.cpu);
                let samples = counter_delta(e.samples, b.map_or(0, |b| b.samples));
                let sum = counter_delta(e.sum, b.map_or(0, |b| b.sum));
                let expected = (dt * e.freq_hz as f64).round() as u64;
                let total = samples.max(expected);
                let avg = if total > 0 {
                    sum as f64 / total as f64
                } else {
                    0.0
                };
                (e.cpu, avg)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CpuSample, Log2Hist, RqSample, ThreadSample};

    fn thread(tid: u32, pid: u32, start: u64, vol: u64, invol: u64) -> ThreadSample {
        ThreadSample {
            tid,
            pid,
            comm: format!("t{tid}").into(),
            process_comm: format!("p{pid}").into(),
            start_time_ns: start,
            voluntary: vol,
            involuntary: invol,
            oncpu_ns: vol * 1000,
            wait_ns: invol * 10,
            migrations: Some(vol / 2),
            counters: crate::model::counters::Counters::zero(),
            wait_hist: Some(Log2Hist::from_octaves([0, invol])),
            slice_hist: Some(Log2Hist::from_octaves([vol])),
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

    fn totals() -> Totals {
        Totals::new(crate::record::testdata::synthetic_host(&Default::default()))
    }

    #[test]
    fn a_process_keeps_the_counts_of_threads_that_exited() {
        let mut t = totals();
        t.update(sample(
            1,
            vec![thread(10, 10, 1, 5, 1), thread(11, 10, 2, 100, 7)],
        ));
        let mut gone = thread(11, 10, 2, 130, 9);
        gone.exited = true;
        t.update(sample(2, vec![thread(10, 10, 1, 6, 1), gone]));
        let after_exit = t.processes[&10].counts.clone();
        assert_eq!((after_exit.voluntary, after_exit.involuntary), (136, 10));
        // the exited thread is gone from the next Sample: totals stay
        t.update(sample(3, vec![thread(10, 10, 1, 8, 1)]));
        let c = &t.processes[&10].counts;
        assert_eq!((c.voluntary, c.involuntary), (138, 10));
        assert_eq!(
            c.wait_hist.as_ref().unwrap().octave(1),
            10,
            "histogram kept too"
        );
        assert_eq!(c.migrations, Some(4 + 65));
        assert_eq!(t.system.voluntary, 138);
    }

    #[test]
    fn a_reused_tid_adds_rather_than_resets() {
        let mut t = totals();
        t.update(sample(1, vec![thread(20, 20, 1, 50, 0)]));
        // tid 20 reused by a new thread (new start time) with small counts
        t.update(sample(2, vec![thread(20, 20, 99, 3, 0)]));
        assert_eq!(t.processes[&20].counts.voluntary, 53);
    }

    #[test]
    fn busy_processes_rank_first_and_dead_ones_are_forgotten() {
        let mut t = totals();
        t.update(sample(
            1,
            vec![thread(1, 1, 1, 0, 0), thread(2, 2, 1, 0, 0)],
        ));
        t.update(sample(
            2,
            vec![thread(1, 1, 1, 1000, 0), thread(2, 2, 1, 10, 0)],
        ));
        assert!(t.processes[&1].rank_rate > t.processes[&2].rank_rate);
        assert_eq!(t.thread_rates, vec![1000.0, 10.0]);
        t.update(sample(200, vec![thread(1, 1, 1, 1000, 0)]));
        assert!(!t.processes.contains_key(&2));
    }

    #[test]
    fn run_queue_average_counts_idle_ticks_as_empty() {
        let mut t = totals();
        let rq = |mono_s: u64, samples: u64, sum: u64| Sample {
            mono_ns: mono_s * 1_000_000_000,
            cpus: vec![CpuSample {
                irq: None,
                cpu: 0,
                rq: Some(RqSample {
                    samples,
                    sum,
                    hist: vec![],
                    freq_hz: 100,
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        t.update(rq(10, 0, 0));
        t.update(rq(11, 100, 200)); // busy: 2 queued on average
        t.update(rq(12, 100, 200)); // idle: the timer did not fire at all
        assert_eq!(t.rq_average_since(11_000_000_000), vec![(0, 0.0)]);
        assert_eq!(t.rq_average_since(10_000_000_000), vec![(0, 1.0)]);
        assert_eq!(t.rq_average_since(0), vec![(0, 1.0)], "oldest kept");
    }
}
