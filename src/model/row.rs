//! One line of the threads or processes table, as `interval::derive` makes
//! it: what the views, JSON, CSV and the why resolver read.
use std::sync::Arc;

use crate::model::opt_rate::OptRate;
use crate::model::row_hists::RowHists;
use crate::model::why::WhyCounts;
use crate::model::{Log2Hist, ThreadAttrs};

/// What a row stands for, stable across Samples (a reused tid is a new thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowKey {
    Thread {
        tid: u32,
        start_time_ns: u64,
    },
    Process {
        pid: u32,
    },
    /// threads of one process whose names differ only in digits (groups.rs)
    Group {
        pid: u32,
        shape: u64,
    },
    /// the threads of one cgroup (groups.rs), by its path's hash
    Cgroup {
        path: u64,
    },
}

/// One line of the threads or processes table: who and where it is, and
/// its figures for the interval behind one pointer (read through it:
/// `row.cpu_pct` is `row.figures.cpu_pct`). Idle threads' figures are all
/// alike (zeros, or unknown on a first interval), so their rows share one
/// set: a row is 152 bytes, not 296, and the two row sets alive while the
/// next Interval is derived (the one on screen and the new one) cost what
/// one did.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub key: RowKey,
    /// tid for a thread, pid for a process
    pub id: u32,
    pub pid: u32,
    /// raw (hostile) name: escape before display
    pub comm: crate::model::sample::Name,
    pub process_comm: crate::model::sample::Name,
    /// last CPU (threads only)
    pub cpu: Option<u32>,
    /// threads in the row (1 for a thread)
    pub threads: u32,
    pub exited: bool,
    /// cumulative switch counts (summed over a process's threads)
    pub voluntary: u64,
    pub involuntary: u64,
    /// the thread's settings (a process: its main thread's)
    pub attrs: ThreadAttrs,
    /// the cgroup path (a process: its main thread's); None where unknown
    pub cgroup: Option<Arc<str>>,
    /// its short name (model/cgroup_name.rs); hostile like the path
    pub cgroup_name: Option<Arc<str>>,
    /// the interval's figures (shared; writing one copies them first)
    pub figures: Arc<RowFigures>,
}

/// A row's figures for the interval. Rates are None while unknown (a
/// thread's first interval when the source has no baseline for it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowFigures {
    /// the interval's on-CPU and run-queue wait time, migrations (None while
    /// unknown, or where the source cannot see them)
    pub oncpu_ns: Option<u64>,
    pub wait_ns: Option<u64>,
    pub migrations: Option<u64>,
    /// the interval's generic counters (model/counters.rs; unknown where
    /// the source has none)
    pub counters: crate::model::counters::Counters,
    /// the interval's length in seconds (the counters' rates and shares)
    pub interval_s: f64,
    pub vcsw_s: OptRate,
    pub nvcsw_s: OptRate,
    pub cpu_pct: OptRate,
    pub avg_slice_ns: OptRate,
    /// p99s in µs: u32 (71 minutes), as every row of 100,000 keeps four
    pub p99_slice_us: Option<u32>,
    pub p99_wait_us: Option<u32>,
    /// p99 of the waits after a wakeup / after a preemption
    pub p99_wakeup_wait_us: Option<u32>,
    pub p99_preempt_wait_us: Option<u32>,
    pub migr_s: OptRate,
    /// the interval's histograms (None where the source has none): read
    /// them with `slice_hist()`, `wait_hist()`, `wakeup_wait_hist()`,
    /// `preempt_wait_hist()`
    pub hists: RowHists,
    /// the interval's migration causes, block reasons and preemptors (None
    /// where the source has none)
    pub why: Option<std::sync::Arc<WhyCounts>>,
}

impl std::ops::Deref for Row {
    type Target = RowFigures;
    fn deref(&self) -> &RowFigures {
        &self.figures
    }
}

impl std::ops::DerefMut for Row {
    /// The figures to change: copied first if another row shares them.
    fn deref_mut(&mut self) -> &mut RowFigures {
        Arc::make_mut(&mut self.figures)
    }
}

/// The figures of a row whose interval is unknown (every one None),
/// shared: no allocation per row.
pub fn unknown_figures() -> Arc<RowFigures> {
    static NONE: std::sync::LazyLock<Arc<RowFigures>> = std::sync::LazyLock::new(Arc::default);
    NONE.clone()
}

impl Row {
    /// A counter's interval total (None: unknown).
    pub fn counter(&self, d: &crate::model::counters::CounterDesc) -> Option<u64> {
        d.total(&self.counters)
    }

    /// A counter per second of the interval (None: unknown, or no interval).
    pub fn counter_per_s(&self, d: &crate::model::counters::CounterDesc) -> Option<f64> {
        let v = self.counter(d)?;
        (self.interval_s > 0.0).then(|| v as f64 / self.interval_s)
    }

    /// The interval's slice histogram (None where the source has none).
    pub fn slice_hist(&self) -> Option<&Log2Hist> {
        self.hists.get(0)
    }

    /// The interval's run-queue wait histogram.
    pub fn wait_hist(&self) -> Option<&Log2Hist> {
        self.hists.get(1)
    }

    /// The waits after a wakeup.
    pub fn wakeup_wait_hist(&self) -> Option<&Log2Hist> {
        self.hists.get(2)
    }

    /// The waits after a preemption.
    pub fn preempt_wait_hist(&self) -> Option<&Log2Hist> {
        self.hists.get(3)
    }

    /// Voluntary + involuntary switches per second, if known.
    pub fn switches_s(&self) -> Option<f64> {
        Some(self.vcsw_s.get()? + self.nvcsw_s.get()?)
    }
}

/// A histogram's p99 in µs as a row keeps it (saturating).
pub fn p99_us(h: Option<&Log2Hist>) -> Option<u32> {
    h?.quantile_us(0.99)
        .map(|us| u32::try_from(us).unwrap_or(u32::MAX))
}

/// The empty name (a row before its name is known), shared: no allocation
/// per row.
pub fn no_name() -> crate::model::sample::Name {
    static EMPTY: std::sync::LazyLock<crate::model::sample::Name> =
        std::sync::LazyLock::new(|| "".into());
    EMPTY.clone()
}
