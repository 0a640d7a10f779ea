//! Level figures: what a thread, a process and the whole system each report
//! from one `Tally` — declared once, with the name, type and help the
//! exporter gives them. `/metrics` writes every entry at every level
//! (`schedtop_<stem>`, `schedtop_process_<stem>`, `schedtop_thread_<stem>`)
//! and a test checks each reaches every level, so a figure added to `Tally`
//! and here cannot miss an output (the wait split once did).
use std::sync::LazyLock;

use super::counters::{CounterDesc, CounterUnit, COUNTERS};
use super::hist::Log2Hist;
use super::tally::Tally;
use super::why::{BlockReason, MigCause, PseudoWaker};

/// The levels the exporter writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    System,
    Process,
    Thread,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::System, Level::Process, Level::Thread];

    /// The metric name prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            Level::System => "schedtop_",
            Level::Process => "schedtop_process_",
            Level::Thread => "schedtop_thread_",
        }
    }

    /// Whose figure it is, for help texts ("Migrations of {whose} ...").
    pub fn whose(self) -> &'static str {
        match self {
            Level::System => "all threads",
            Level::Process => "a process's threads (exited ones included)",
            Level::Thread => "one thread",
        }
    }
}

/// How a figure is exported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// a cumulative count (a time in ns when `seconds`)
    Counter,
    /// a log2 histogram of durations
    Histogram,
}

/// A figure's value at one level for one interval (or running total).
#[derive(Clone, Debug, PartialEq)]
pub enum Reading<'a> {
    Count(u64),
    Hist(&'a Log2Hist),
    /// one count per label value (`label` names the label)
    Counts(Vec<(&'static str, u64)>),
    /// one histogram per label value
    Hists(Vec<(&'static str, &'a Log2Hist)>),
}

impl Reading<'_> {
    /// How many label values (series before histogram buckets) it writes.
    pub fn values(&self) -> usize {
        match self {
            Reading::Count(_) | Reading::Hist(_) => 1,
            Reading::Counts(v) => v.len(),
            Reading::Hists(v) => v.len(),
        }
    }
}

#[derive(Clone, Copy)]
pub struct LevelFigure {
    pub key: &'static str,
    /// the name after the level's prefix, without unit or `_total`
    pub stem: &'static str,
    pub kind: Kind,
    /// a time: counted in ns, exported in seconds
    pub seconds: bool,
    /// the label that tells the values of a `Counts`/`Hists` reading apart
    pub label: Option<&'static str>,
    /// `{whose}` stands for the level (`Level::whose`)
    pub help: &'static str,
    /// None where the source cannot see it (procfs: no histograms)
    pub read: Read,
}

/// How a level figure is read from a `Tally`.
#[derive(Clone, Copy)]
pub enum Read {
    Tally(for<'a> fn(&'a Tally) -> Option<Reading<'a>>),
    /// a per-thread counter (counters.rs): its total, or a family's
    /// values by label
    Counter(&'static CounterDesc),
}

impl LevelFigure {
    /// Its reading of `t` (None: unknown at this level).
    pub fn reading<'a>(&self, t: &'a Tally) -> Option<Reading<'a>> {
        match self.read {
            Read::Tally(f) => f(t),
            Read::Counter(d) => match d.family {
                None => d.total(&t.counters).map(Reading::Count),
                // the labels that counted something: eleven kinds of
                // interrupt per thread, mostly zero, would be most of a
                // scrape (a series appears with its first count)
                Some(_) => d
                    .by_label(&t.counters)
                    .map(|v| Reading::Counts(v.into_iter().filter(|&(_, n)| n != 0).collect())),
            },
        }
    }

    /// A counter's figure (counters.rs).
    fn of_counter(d: &'static CounterDesc) -> LevelFigure {
        LevelFigure {
            key: d.key,
            stem: d.om_stem,
            kind: Kind::Counter,
            seconds: d.unit == CounterUnit::Ns,
            label: d.family.map(|f| f.label),
            help: d.om_help,
            read: Read::Counter(d),
        }
    }

    pub fn name(&self, level: Level) -> String {
        format!("{}{}", level.prefix(), self.stem)
    }

    pub fn help_at(&self, level: Level) -> String {
        self.help.replace("{whose}", level.whose())
    }
}

impl std::fmt::Debug for LevelFigure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key)
    }
}

fn hists<'a>(pairs: [(&'static str, &'a Option<Log2Hist>); 2]) -> Option<Reading<'a>> {
    let v: Vec<_> = pairs
        .into_iter()
        .filter_map(|(k, h)| h.as_ref().map(|h| (k, h)))
        .collect();
    (!v.is_empty()).then_some(Reading::Hists(v))
}

/// Every level figure: `FIXED`'s, then one per counter (counters.rs).
pub static LEVEL_FIGURES: LazyLock<Vec<LevelFigure>> = LazyLock::new(|| {
    FIXED
        .iter()
        .copied()
        .chain(COUNTERS.iter().map(LevelFigure::of_counter))
        .collect()
});

static FIXED: &[LevelFigure] = &[
    LevelFigure {
        key: "switches",
        stem: "switches",
        kind: Kind::Counter,
        seconds: false,
        label: Some("kind"),
        help: "Context switches of {whose}: voluntary (blocked) or involuntary (preempted), the kernel's nvcsw/nivcsw.",
        read: Read::Tally(|t| {
            Some(Reading::Counts(vec![
                ("voluntary", t.voluntary),
                ("involuntary", t.involuntary),
            ]))
        }),
    },
    LevelFigure {
        key: "migrations",
        stem: "migrations",
        kind: Kind::Counter,
        seconds: false,
        label: None,
        help: "Migrations of {whose} between CPUs.",
        read: Read::Tally(|t| t.migrations.map(Reading::Count)),
    },
    LevelFigure {
        key: "oncpu",
        stem: "oncpu",
        kind: Kind::Counter,
        seconds: true,
        label: None,
        help: "Time {whose} spent on a CPU.",
        read: Read::Tally(|t| Some(Reading::Count(t.oncpu_ns))),
    },
    LevelFigure {
        key: "runqueue_wait",
        stem: "runqueue_wait",
        kind: Kind::Counter,
        seconds: true,
        label: None,
        help: "Time {whose} spent runnable, waiting in a run queue.",
        read: Read::Tally(|t| Some(Reading::Count(t.wait_ns))),
    },
    LevelFigure {
        key: "runqueue_latency",
        stem: "runqueue_latency",
        kind: Kind::Histogram,
        seconds: true,
        label: None,
        help: "Run-queue latency of {whose}: wakeup or preemption to running (sum estimated from the buckets).",
        read: Read::Tally(|t| t.wait_hist.as_ref().map(Reading::Hist)),
    },
    LevelFigure {
        key: "runqueue_latency_by_start",
        stem: "runqueue_latency_by_start",
        kind: Kind::Histogram,
        seconds: true,
        label: Some("began"),
        help: "Run-queue latency of {whose}, split by how the wait began: at a wakeup (it had blocked) or a preemption (switched out while runnable); the two sum to runqueue_latency.",
        read: Read::Tally(|t| {
            hists([
                ("wakeup", &t.wakeup_wait_hist),
                ("preemption", &t.preempt_wait_hist),
            ])
        }),
    },
    LevelFigure {
        key: "slice",
        stem: "slice",
        kind: Kind::Histogram,
        seconds: true,
        label: None,
        help: "On-CPU slice lengths of {whose} (sum estimated from the buckets).",
        read: Read::Tally(|t| t.slice_hist.as_ref().map(Reading::Hist)),
    },
    LevelFigure {
        key: "migrations_by_cause",
        stem: "migrations_by_cause",
        kind: Kind::Counter,
        seconds: false,
        label: Some("cause"),
        help: "Migrations of {whose} by cause: wakeup, load_balance, numa_balance, affinity, other (unattributed); they sum to migrations.",
        read: Read::Tally(|t| {
            let w = t.why.as_ref()?;
            Some(Reading::Counts(
                MigCause::ALL
                    .iter()
                    .map(|c| (c.key(), w.migrations_by_cause[*c as usize]))
                    .collect(),
            ))
        }),
    },
    LevelFigure {
        key: "blocked_on",
        stem: "blocked_on",
        kind: Kind::Counter,
        seconds: false,
        label: Some("reason"),
        help: "Voluntary switch-outs of {whose} by what was waited for (the syscall; other: unattributed); they sum to the voluntary switches.",
        read: Read::Tally(|t| {
            let w = t.why.as_ref()?;
            Some(Reading::Counts(
                BlockReason::ALL
                    .iter()
                    .map(|r| (r.key(), w.blocked_on[*r as usize]))
                    .collect(),
            ))
        }),
    },
    LevelFigure {
        key: "woken_by_irq",
        stem: "woken_by_irq",
        kind: Kind::Counter,
        seconds: false,
        label: Some("waker"),
        help: "Wakeups of {whose} from interrupt context or the idle task (hardirq, softirq by kind, idle), not charged to the interrupted thread.",
        // no series where the wakers were not counted: unknown, not 0
        read: Read::Tally(|t| {
            let w = t.why.as_ref().filter(|w| w.wakers_known())?;
            Some(Reading::Counts(
                PseudoWaker::ALL
                    .iter()
                    .map(|p| (p.key(), w.woken_by_irq[*p as usize]))
                    .collect(),
            ))
        }),
    },
];

/// The figure with this key.
pub fn by_key(key: &str) -> Option<&'static LevelFigure> {
    LEVEL_FIGURES.iter().find(|f| f.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_names_are_unique_and_labelled_readings_name_their_label() {
        let mut keys: Vec<&str> = LEVEL_FIGURES.iter().map(|f| f.key).collect();
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n, "a key twice");
        let mut stems: Vec<&str> = LEVEL_FIGURES.iter().map(|f| f.stem).collect();
        stems.sort_unstable();
        stems.dedup();
        assert_eq!(stems.len(), n, "a name twice");
        // a full tally: every reading present; a labelled one has a label
        let h = Log2Hist::from_counts([1]);
        let t = Tally {
            migrations: Some(1),
            counters: crate::model::counters::Counters::of(&[(0, 1), (11, 1)]),
            slice_hist: Some(h.clone()),
            wait_hist: Some(h.clone()),
            wakeup_wait_hist: Some(h.clone()),
            preempt_wait_hist: Some(h),
            // wakers counted: their figure reads too
            why: Some(crate::model::why::WhyCounts {
                wakeups: Some(0),
                ..Default::default()
            }),
            ..Default::default()
        };
        for f in LEVEL_FIGURES.iter() {
            let r = f
                .reading(&t)
                .unwrap_or_else(|| panic!("{} reads nothing", f.key));
            let labelled = matches!(r, Reading::Counts(_) | Reading::Hists(_));
            assert_eq!(labelled, f.label.is_some(), "{}", f.key);
            let hist = matches!(r, Reading::Hist(_) | Reading::Hists(_));
            assert_eq!(hist, f.kind == Kind::Histogram, "{}", f.key);
            for l in Level::ALL {
                assert!(!f.help_at(l).contains('{'), "{}", f.key);
            }
        }
        assert!(by_key("slice").is_some() && by_key("nope").is_none());
    }
}
