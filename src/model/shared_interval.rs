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
    /// the Sample before, if any (its counters are where the deltas start)
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

/// Derives each Sample's Interval from the one before. The rows of an
/// Interval no sink holds any more are the next one's storage (at 50,000
/// threads a fresh row list is megabytes to fault in, and idle threads'
/// rows stay in place): the last two are kept for that, since a live view
/// still shows the newest while the next is derived.
#[derive(Debug)]
pub struct Deriver {
    host: HostInfo,
    last: Option<Arc<Interval>>,
    older: Option<Arc<Interval>>,
}

impl Deriver {
    pub fn new(host: HostInfo) -> Deriver {
        Deriver {
            host,
            last: None,
            older: None,
        }
    }

    pub fn host(&self) -> &HostInfo {
        &self.host
    }

    /// The Interval ending with `s` (the one derivation of it).
    /// The Interval of `s` without its figures (empty rows, no CPUs, no
    /// findings): for sinks that only keep the Sample. Not a derivation.
    pub fn bare(&mut self, s: impl Into<Arc<Sample>>) -> Arc<Interval> {
        let sample = s.into();
        let prev = self.last.take().map(|l| l.sample.clone());
        self.older = None;
        let iv = Arc::new(Interval {
            sample,
            prev,
            derived: Derived::default(),
            cpus: None,
            cpu_intervals: Vec::new(),
            migrations: Vec::new(),
            findings: Vec::new(),
            pressure_pct: None,
            pressure_full_pct: None,
        });
        self.last = Some(iv.clone());
        iv
    }

    pub fn next(&mut self, s: impl Into<Arc<Sample>>) -> Arc<Interval> {
        let s = s.into();
        let last = self.last.take();
        let prev = last.as_ref().map(|l| l.sample.clone());
        let mut spare = None;
        let mut still_shown = None;
        // rows of an older interval are as good as the last one's: a row
        // is kept only where it matches its thread (interval::reusable)
        for iv in [last, self.older.take()].into_iter().flatten() {
            match Arc::try_unwrap(iv) {
                Ok(iv) if spare.is_none() => spare = Some(iv.derived),
                Ok(_) => {}
                Err(shared) if still_shown.is_none() => still_shown = Some(shared),
                Err(_) => {}
            }
        }
        let iv = Arc::new(of(&self.host, prev, s, spare.unwrap_or_default()));
        self.older = still_shown;
        self.last = Some(iv.clone());
        iv
    }
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
        prev,
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

    #[test]
    fn one_derivation_per_sample_and_increments_from_the_rows() {
        let host = HostInfo {
            hostname: "test".into(),
            kernel: "test".into(),
            topology: Default::default(),
            source: crate::model::SourceKind::Procfs,
            degraded_reason: None,
            sched_ext: None,
            interval_ns: 1_000_000_000,
        };
        let mut d = Deriver::new(host);
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
        assert!(Arc::ptr_eq(second.prev.as_ref().unwrap(), &held.sample));
        assert_eq!(second.seconds(), 1.0);
    }
}
