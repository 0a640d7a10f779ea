//! One Interval per Sample: everything derived from a Sample and its
//! predecessor (rows, cgroups, CPUs, migrations, findings, the system's CPU
//! pressure over the interval), derived once next to the sampler by a
//! `Deriver` and shared as `Arc<Interval>` by every sink (the live view,
//! batch JSON and CSV, the exporter, triggers, bundles). A sink that needs
//! a figure of the interval reads it here; none derives its own.
//! `derivations()` (derivation_count.rs) counts every one of the process.
use std::sync::{Arc, Mutex};

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
    /// where its rows go when the last sink lets go of it (its Deriver's)
    recycle: Option<Recycle>,
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

/// The rows of an Interval no sink holds any more, kept for the next
/// derivation of the same Deriver. One set at most: with the set on
/// screen, two are alive.
type Recycle = Arc<Mutex<Option<Derived>>>;

impl Drop for Interval {
    fn drop(&mut self) {
        let Some(slot) = self.recycle.take() else {
            return;
        };
        let rows = std::mem::take(&mut self.derived);
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(rows);
        }
        // else: dropped here (a sink that held two Intervals at once)
    }
}

/// Derives each Sample's Interval from the one before. The rows of an
/// Interval no sink holds any more are the next one's storage (at 50,000
/// threads a fresh row list is megabytes to fault in, and idle threads'
/// rows stay in place): its last holder leaves them in `spare` (the live
/// view's, on its thread), and nothing else of it is kept. Alive at once:
/// the rows on screen and one spare set, one full thread list.
#[derive(Debug)]
pub struct Deriver {
    host: HostInfo,
    /// the newest Sample, the next derivation's start
    last: Option<Arc<Sample>>,
    spare: Recycle,
}

impl Deriver {
    pub fn new(host: HostInfo) -> Deriver {
        Deriver {
            host,
            last: None,
            spare: Default::default(),
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
        drop(self.take_spare());
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
            recycle: None,
        })
    }

    /// The Interval ending with `s` (the one derivation of it).
    pub fn next(&mut self, s: impl Into<Arc<Sample>>) -> Arc<Interval> {
        let s = s.into();
        let prev = self.last.replace(s.clone());
        let spare = self.take_spare().unwrap_or_default();
        let mut iv = of(&self.host, prev, s, spare);
        iv.recycle = Some(self.spare.clone());
        Arc::new(iv)
    }

    fn take_spare(&self) -> Option<Derived> {
        self.spare.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// `s` without its threads: what an Interval keeps of the Sample before.
fn without_threads(s: &Sample) -> Arc<Sample> {
    Arc::new(Sample {
        threads: Default::default(),
        ..s.clone()
    })
}

/// The Interval from `prev` to `s`, deriving once (in `spare`'s storage).
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
        recycle: None,
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
    fn the_rows_of_an_interval_no_sink_holds_are_the_next_ones_storage() {
        let mut d = Deriver::new(host());
        let a = d.next(sample(0, 5));
        let rows_a = a.threads.as_ptr();
        // `a` on screen: the next is built elsewhere
        let b = d.next(sample(1, 5));
        assert_ne!(b.threads.as_ptr(), rows_a);
        drop(a);
        let c = d.next(sample(2, 5));
        assert_eq!(
            c.threads.as_ptr(),
            rows_a,
            "a's rows, left by its last holder"
        );
        assert_eq!(c.threads[0].voluntary, 5);
        assert_eq!(c.threads[0].vcsw_s.get(), Some(0.0));
        // two let go at once: one set is kept, the other freed
        drop((b, c));
        assert!(d.take_spare().is_some());
        assert!(d.take_spare().is_none());
        // a sink keeping only Samples frees the spare rows
        let e = d.next(sample(3, 9));
        drop(e);
        let f = d.bare(sample(4, 9));
        assert!(d.take_spare().is_none());
        assert_eq!(f.prev.as_ref().map(|p| p.mono_ns), Some(3_000_000_000));
    }

    /// What an idle thread costs in each Interval alive (two: the one on
    /// screen and the spare): its row and nothing of its own on the heap.
    #[test]
    fn an_idle_threads_row_is_its_fields_and_shares_the_rest() {
        use crate::model::counters::Counters;
        use crate::model::why::WhySample;
        // paid twice per thread (the rows on screen and the spare). 384
        // bytes before the four histograms went behind one shared pointer
        // (row_hists.rs: 64 -> 8) and the five rates lost their Option tags
        // (opt_rate.rs: 80 -> 40), 288; the parent pid for the tree view
        // made it 296: the interval's figures (~160), who and where the
        // thread is (125), padding
        let size = std::mem::size_of::<crate::model::interval::Row>();
        assert!(size <= 296, "a row is {size} bytes");
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
