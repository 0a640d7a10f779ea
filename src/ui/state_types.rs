//! The small kinds the UI state is made of (which view, live or replay,
//! histogram scope) and its fixed bounds, apart from `AppState` so views and
//! columns can name them without depending on the state's logic.
use std::path::PathBuf;

/// What the body shows: a table (threads, processes) or the CPU (`c`),
/// NUMA (`n`), cgroups (`g`) or findings (`y`) view.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum View {
    Threads,
    Processes,
    Cpus,
    Numa,
    Cgroups,
    Findings,
}

impl View {
    /// Threads or processes (the views with rows, sort and selection).
    pub fn is_table(self) -> bool {
        matches!(self, View::Threads | View::Processes)
    }
}

/// Where the Samples come from, as the header says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// this machine, now (BPF or procfs: see `HostInfo::source`)
    Live,
    /// a recording
    Replay,
}

/// The detail pane's histograms: the last interval or everything since the
/// first Sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistScope {
    Interval,
    SinceStart,
}

/// Which run-queue waits the detail pane's latency histogram counts (`w`):
/// all of them (as runqlat), those that began at a wakeup, or those that
/// began at a preemption.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitView {
    All,
    AfterWakeup,
    AfterPreemption,
}

impl WaitView {
    pub fn next(self) -> WaitView {
        match self {
            WaitView::All => WaitView::AfterWakeup,
            WaitView::AfterWakeup => WaitView::AfterPreemption,
            WaitView::AfterPreemption => WaitView::All,
        }
    }

    /// The histogram's title.
    pub fn title(self) -> &'static str {
        match self {
            WaitView::All => "run-queue latency",
            WaitView::AfterWakeup => "run-queue latency: woken",
            WaitView::AfterPreemption => "run-queue latency: preempted",
        }
    }
}

/// What the header shows of a recording in progress (`R`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordingInfo {
    pub path: PathBuf,
    /// bytes in the file
    pub size: u64,
    pub samples: u64,
}

/// Full Samples kept (rates need the last two; the rest is slack for
/// later views). Sparklines keep their own compact series.
pub const HISTORY_CAP: usize = 2;
/// Points of switch-rate history kept per row.
pub const SERIES_CAP: usize = 300;
/// Samples held back while paused; older ones are dropped (cumulative
/// counters: that costs only sparkline points).
pub const PENDING_CAP: usize = 4;
/// Steps of `+` / `-`, ns.
pub const INTERVAL_STEPS: &[u64] = &[
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
    60_000_000_000,
];
