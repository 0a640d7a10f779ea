//! One Interval per Sample: everything derived from a Sample and its
//! predecessor (rows, cgroups, CPUs, migrations, findings, the system's CPU
//! pressure over the interval), derived once next to the sampler by a
//! `Deriver` and shared as `Arc<Interval>` by every sink (the live view,
//! batch JSON and CSV, the exporter, triggers, bundles). A sink that needs
//! a figure of the interval reads it here; none derives its own.
//! `derivations()` (derivation_count.rs) counts every one of the process.
use std::sync::Arc;

use super::cpus::{self, CpuView};
pub use super::derivation_count::derivations;
use super::findings::{findings, Finding, IntervalFacts, Scope};
use super::interval::{derive_reusing, Derived};
use super::rates::{cpu_intervals, migration_deltas, CpuInterval};
use super::trigger_eval::{system_full_pressure_pct, system_pressure_pct};
use super::{HostInfo, Sample};

/// The interval that ends with `sample` (its rows read through it:
/// `iv.threads` is `iv.derived.threads`).
#[derive(Debug, Default)]
pub struct Interval {
    pub sample: Arc<Sample>,
    /// the Sample before, if any, without its threads (their counters are
    /// where the deltas started; the derivation read them, no sink needs
    /// them after: held here they kept a third thread list alive, 12 MB
    /// at 50,000 threads)
    pub prev: Option<Arc<Sample>>,
    /// thread, process and cgroup rows, system rates, per-process increments
    pub derived: Derived,
    /// the CPU and NUMA views' figures (None without an earlier Sample)
    pub cpus: Option<CpuView>,
    /// each CPU's counters over the interval (run queue with the missing
    /// timer samples counted as empty, busy time, switches)
    pub cpu_intervals: Vec<CpuInterval>,
    /// CPU→CPU migrations of the interval
    pub migrations: Vec<(u32, u32, u64)>,
    /// the interval's findings, ranked, whole-system scope
    pub findings: Vec<Finding>,
    /// the system's `some` CPU pressure over the interval, % of it
    pub pressure_pct: Option<f64>,
    /// the same for `full` (None before Linux 5.13, or without PSI)
    pub pressure_full_pct: Option<f64>,
}

impl Interval {
    /// Seconds the interval spans (the nominal interval for a first Sample).
    pub fn seconds(&self) -> f64 {
        self.derived.system.interval_s
    }
}

impl std::ops::Deref for Interval {
    type Target = Derived;
    fn deref(&self) -> &Derived {
        &self.derived
    }
}

/// Derives each Sample's Interval from the one before. The thread rows of
/// the last Interval are kept (pointers, 9 bytes a thread): the next one
/// shares the rows of the threads that stayed quiet (interval.rs), so the
/// rows on screen and the ones being derived are one row per idle thread,
/// not two full sets (296 bytes a thread each: 28 MB at 100,000 threads).
#[derive(Debug)]
pub struct Deriver {
    host: HostInfo,
    /// the newest Sample, the next derivation's start
    last: Option<Arc<Sample>>,
    /// the thread rows (and which were quiet) of the Interval of `last`
    rows: Derived,
}

impl Deriver {
    pub fn new(host: HostInfo) -> Deriver {
        Deriver {
            host,
            last: None,
            rows: Derived::default(),
        }
    }

    pub fn host(&self) -> &HostInfo {
        &self.host
    }

    /// The Interval of `s` without its figures (empty rows, no CPUs, no
    /// findings): for sinks that only keep the Sample. Not a derivation.
    pub fn bare(&mut self, s: impl Into<Arc<Sample>>) -> Arc<Interval> {
        let sample = s.into();
        let prev = self
            .last
            .replace(sample.clone())
            .map(|p| without_threads(&p));
        // rows kept for a derivation no one asks for any more
        self.rows = Derived::default();
        Arc::new(Interval {
            sample,
            prev,
            derived: Derived::default(),
            cpus: None,
            cpu_intervals: Vec::new(),
            migrations: Vec::new(),
            findings: Vec::new(),
            pressure_pct: None,
            pressure_full_pct: None,
        })
    }

    /// The Interval ending with `s` (the one derivation of it).
    pub fn next(&mut self, s: impl Into<Arc<Sample>>) -> Arc<Interval> {
        let s = s.into();
        let prev = self.last.replace(s.clone());
        let before = std::mem::take(&mut self.rows);
        let iv = of(&self.host, prev, s, before);
        self.rows = Derived {
            threads: iv.derived.threads.clone(),
            quiet: iv.derived.quiet.clone(),
            ..Default::default()
        };
        Arc::new(iv)
    }
}

/// `s` without its threads: what an Interval keeps of the Sample before.
fn without_threads(s: &Sample) -> Arc<Sample> {
    Arc::new(Sample {
        threads: Default::default(),
        ..s.clone()
    })
}

/// The Interval from `prev` to `s`, deriving once (sharing the rows of
/// `spare`, the Interval of `prev`'s, where they hold).
pub fn of(host: &HostInfo, prev: Option<Arc<Sample>>, s: Arc<Sample>, spare: Derived) -> Interval {
    let nominal = host.interval_ns as f64 / 1e9;
    let p = prev.as_deref();
    let derived = derive_reusing(p, &s, nominal, spare);
    let dt = derived.system.interval_s;
    let cpus = cpus::derive(&host.topology, p, &s);
    let found = p.map_or_else(Vec::new, |p| {
        findings(&IntervalFacts {
            topology: &host.topology,
            prev: p,
            cur: &s,
            derived: &derived,
            cpus: cpus.as_ref(),
            scope: &Scope::default(),
        })
    });
    Interval {
        cpu_intervals: cpu_intervals(p, &s, dt),
        migrations: migration_deltas(p, &s),
        pressure_pct: system_pressure_pct(p, &s),
        pressure_full_pct: system_full_pressure_pct(p, &s),
        findings: found,
        cpus,
        derived,
        prev: prev.as_deref().map(without_threads),
        sample: s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ThreadSample;

    fn sample(i: u64, switches: u64) -> Sample {
        Sample {
            mono_ns: i * 1_000_000_000,
            threads: vec![ThreadSample {
                tid: 7,
                pid: 7,
                voluntary: switches,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
    }

    fn host() -> HostInfo {
        HostInfo {
            hostname: "test".into(),
            kernel: "test".into(),
            topology: Default::default(),
            source: crate::model::SourceKind::Procfs,
            degraded_reason: None,
            sched_ext: None,
            interval_ns: 1_000_000_000,
        }
    }

    #[test]
    fn one_derivation_per_sample_and_increments_from_the_rows() {
        let mut d = Deriver::new(host());
        let first = d.next(sample(0, 5));
        // first seen: the thread's whole history is its increment
        assert_eq!(first.derived.increments[0].1.voluntary, 5);
        let held = first.clone();
        let second = d.next(sample(1, 12));
        assert_eq!(second.derived.increments, {
            let mut t = crate::model::tally::Tally::default();
            t.add(&crate::model::tally::Tally {
                voluntary: 7,
                ..Default::default()
            });
            vec![(7, t)]
        });
        // the Sample before, without the threads no sink reads after
        let prev = second.prev.as_ref().unwrap();
        assert_eq!(prev.mono_ns, held.sample.mono_ns);
        assert!(prev.threads.is_empty() && !held.sample.threads.is_empty());
        assert_eq!(second.seconds(), 1.0);
    }

    #[test]
    fn an_idle_threads_row_is_shared_with_the_interval_before() {
        let mut d = Deriver::new(host());
        let with = |i: u64, threads: Vec<ThreadSample>| Sample {
            mono_ns: i * 1_000_000_000,
            threads: threads.into(),
            ..Default::default()
        };
        let t = |tid: u32, voluntary: u64| ThreadSample {
            tid,
            pid: 7,
            start_time_ns: u64::from(tid) * 10,
            voluntary,
            ..Default::default()
        };
        let _a = d.next(with(0, vec![t(7, 5), t(8, 2), t(9, 1)]));
        // 7 and 8 quiet, 9 switched twice
        let b = d.next(with(1, vec![t(7, 5), t(8, 2), t(9, 3)]));
        assert_eq!(b.quiet, [true, true, false]);
        // `b` on screen: the next Interval shares its quiet rows; a thread
        // started (9 ended), so every position moved
        let c = d.next(with(2, vec![t(6, 0), t(7, 5), t(8, 4), t(9, 3)]));
        assert!(
            Arc::ptr_eq(&c.threads[1], &b.threads[0]),
            "7: idle, same row"
        );
        assert!(!Arc::ptr_eq(&c.threads[2], &b.threads[1]), "8 switched");
        assert!(
            !Arc::ptr_eq(&c.threads[3], &b.threads[2]),
            "9 was busy in b"
        );
        assert_eq!(c.threads[2].voluntary, 4);
        assert_eq!(c.threads[2].vcsw_s.get(), Some(2.0));
        assert_eq!(c.threads[3].vcsw_s.get(), Some(0.0));
        assert_eq!(c.threads[0].vcsw_s.get(), None, "6: first seen");
        // a shared row reads as a fresh derivation of the same interval
        let fresh = crate::model::interval::derive(
            Some(&with(1, vec![t(7, 5), t(8, 2), t(9, 3)])),
            &with(2, vec![t(6, 0), t(7, 5), t(8, 4), t(9, 3)]),
            1.0,
        );
        for (shared, own) in c.threads.iter().zip(&fresh.threads) {
            assert_eq!(**shared, **own);
        }
        assert_eq!(c.quiet, fresh.quiet);
        // a sink keeping only Samples lets go of the rows kept
        drop((b, c));
        let e = d.bare(with(3, vec![t(7, 5)]));
        assert!(d.rows.threads.is_empty());
        assert_eq!(e.prev.as_ref().map(|p| p.mono_ns), Some(2_000_000_000));
    }

    /// What an idle thread costs: its row (shared by the Interval on
    /// screen and the one being derived) and nothing of its own on the
    /// heap.
    #[test]
    fn an_idle_threads_row_is_its_fields_and_shares_the_rest() {
        use crate::model::counters::Counters;
        use crate::model::why::WhySample;
        // 384 bytes before the four histograms went behind one shared
        // pointer (row_hists.rs: 64 -> 8) and the five rates lost their
        // Option tags (opt_rate.rs: 80 -> 40), 288; the parent pid made it
        // 296, paid twice per thread (the rows on screen and a spare set).
        // Now the interval's figures (~150 bytes) sit behind one pointer
        // that idle rows share: who and where the thread is, 152 bytes.
        // Rows are shared between Intervals too; still, on a thread's
        // second interval (first seen, now quiet) both rows are alive
        let size = std::mem::size_of::<crate::model::interval::Row>();
        assert!(size <= 152, "a row is {size} bytes");
        let why = Arc::new(WhySample::default());
        let idle = |i: u64| Sample {
            mono_ns: i * 1_000_000_000,
            threads: (1..=64)
                .map(|tid| ThreadSample {
                    tid,
                    pid: 1,
                    voluntary: 3,
                    counters: Counters::zero(),
                    slice_hist: Some(Default::default()),
                    wait_hist: Some(Default::default()),
                    wakeup_wait_hist: Some(Default::default()),
                    preempt_wait_hist: Some(Default::default()),
                    migrations: Some(0),
                    why: Some(why.clone()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let mut d = Deriver::new(host());
        let _first = d.next(idle(0));
        let iv = d.next(idle(1));
        // the next Interval, with `iv` still held: the same rows, by pointer
        let again = d.next(idle(2));
        let shared = again.threads.iter().zip(&iv.threads);
        assert_eq!(shared.filter(|(a, b)| Arc::ptr_eq(a, b)).count(), 64);
        // and within one Interval, every idle row's figures are one set
        let figures = &iv.threads[0].figures;
        assert!(iv.threads.iter().all(|r| Arc::ptr_eq(&r.figures, figures)));
        let zero = Counters::zero();
        let shared_why = iv.threads[0].why.clone().unwrap();
        for r in &iv.threads {
            assert_eq!(r.cpu_pct.get(), Some(0.0));
            assert!(std::ptr::eq(
                r.counters.known().unwrap(),
                zero.known().unwrap()
            ));
            assert!(Arc::ptr_eq(r.why.as_ref().unwrap(), &shared_why));
            for h in [
                r.slice_hist(),
                r.wait_hist(),
                r.wakeup_wait_hist(),
                r.preempt_wait_hist(),
            ] {
                assert!(h.unwrap().counts.same(&Default::default()), "no allocation");
            }
        }
    }
}
