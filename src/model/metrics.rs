//! Metric descriptors: every figure of a thread or process row, once. Each
//! entry says what the figure is (key, unit), where it shows (a table
//! column: title, width, drop rank, which views), what CSV and JSON call it
//! and what the help says about it, and how to read it from a `Row`. The
//! table's columns, its help notes, `--batch`/`dump` JSON and CSV are all
//! generated from `METRICS`; a new per-thread metric is one entry here,
//! and a new per-thread counter one entry in counters.rs (its metrics are
//! generated into `METRICS` where its descriptor says).
//!
//! The order is the order of JSON fields and CSV columns (an interface:
//! docs/json-and-csv.md); table columns appear in the same order.
use std::sync::LazyLock;

use super::counters::{CounterDesc, CounterUnit, Display, COUNTERS};
use super::hist::Log2Hist;
use super::interval::Row;

/// What a value measures, and so how it is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// a thread, process or CPU number
    Id,
    /// a name chosen by the thread (hostile: escape before showing)
    Name,
    /// a count or a plain number
    Count,
    PerSecond,
    Percent,
    Nanoseconds,
    Microseconds,
    /// [bucket low bound µs, count] pairs
    Histogram,
    Flag,
}

/// One value read from a row. `None`: unknown (shown `-`, JSON null,
/// an empty CSV field).
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    None,
    U(u64),
    I(i64),
    F(f64),
    Text(&'a str),
    Hist(&'a Log2Hist),
    Flag(bool),
    /// a counter family's values by label (the non-zero ones)
    Labels(Vec<(&'static str, u64)>),
    /// (low bound, count) pairs of a histogram that is not a Log2Hist
    /// (a CPU's run-queue lengths)
    Pairs(&'a [(u64, u64)]),
    /// a few numbers that belong together (the load averages)
    Floats(&'a [f64]),
}

impl Value<'_> {
    /// The value as a number for sorting (None for text and unknowns).
    pub fn number(&self) -> Option<f64> {
        match *self {
            Value::U(v) => Some(v as f64),
            Value::I(v) => Some(v as f64),
            Value::F(v) => Some(v),
            Value::Flag(b) => Some(f64::from(u8::from(b))),
            _ => None,
        }
    }
}

/// Where a metric shows in the table.
#[derive(Clone, Copy, Debug)]
pub struct ColumnSpec {
    pub title: &'static str,
    /// cells (for a name: the minimum)
    pub width: u16,
    /// higher goes first when the table does not fit
    pub drop_rank: u8,
    pub threads: bool,
    pub processes: bool,
}

/// One metric.
#[derive(Clone, Copy)]
pub struct Metric {
    /// stable identifier (sort keys, tests)
    pub key: &'static str,
    pub unit: Unit,
    pub column: Option<ColumnSpec>,
    /// the CSV column and JSON field name (None: screen only)
    pub field: Option<&'static str>,
    pub get: Get,
    /// a line of the help overlay (None: the title says enough)
    pub help: Option<&'static str>,
}

/// How a metric is read from a row.
#[derive(Clone, Copy)]
pub enum Get {
    Row(for<'a> fn(&'a Row) -> Value<'a>),
    /// a per-thread counter (counters.rs): its interval total, its
    /// family's values by label, or its column's rate or share
    Total(&'static CounterDesc),
    ByLabel(&'static CounterDesc),
    Column(&'static CounterDesc, Display),
}

impl Metric {
    /// Its value in `r`.
    pub fn value<'a>(&self, r: &'a Row) -> Value<'a> {
        match self.get {
            Get::Row(f) => f(r),
            Get::Total(d) => opt_u(r.counter(d)),
            Get::ByLabel(d) => d.by_label(&r.counters).map_or(Value::None, |v| {
                Value::Labels(v.into_iter().filter(|&(_, n)| n != 0).collect())
            }),
            Get::Column(d, Display::PerSecond) => opt_f(r.counter_per_s(d)),
            Get::Column(d, Display::ShareOfInterval) => {
                opt_f(r.counter_per_s(d).map(|ns_s| ns_s / 1e9 * 100.0))
            }
        }
    }
}

impl std::fmt::Debug for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key)
    }
}

fn opt_u(v: Option<u64>) -> Value<'static> {
    v.map_or(Value::None, Value::U)
}

fn opt_f(v: Option<f64>) -> Value<'static> {
    v.map_or(Value::None, Value::F)
}

/// Empty text is unknown (nothing happened to tell)
fn text(t: &str) -> Value<'_> {
    if t.is_empty() {
        Value::None
    } else {
        Value::Text(t)
    }
}

fn hist(h: Option<&Log2Hist>) -> Value<'_> {
    h.map_or(Value::None, Value::Hist)
}

const fn col(title: &'static str, width: u16, drop_rank: u8) -> Option<ColumnSpec> {
    Some(ColumnSpec {
        title,
        width,
        drop_rank,
        threads: true,
        processes: true,
    })
}

const fn thread_col(title: &'static str, width: u16, drop_rank: u8) -> Option<ColumnSpec> {
    Some(ColumnSpec {
        title,
        width,
        drop_rank,
        threads: true,
        processes: false,
    })
}

const fn process_col(title: &'static str, width: u16, drop_rank: u8) -> Option<ColumnSpec> {
    Some(ColumnSpec {
        title,
        width,
        drop_rank,
        threads: false,
        processes: true,
    })
}

const fn field(key: &'static str, unit: Unit, get: for<'a> fn(&'a Row) -> Value<'a>) -> Metric {
    Metric {
        key,
        unit,
        column: None,
        field: Some(key),
        get: Get::Row(get),
        help: None,
    }
}

/// Every metric: `FIXED` with each counter's (counters.rs) placed after
/// the metric its descriptor names.
pub static METRICS: LazyLock<Vec<Metric>> = LazyLock::new(|| {
    let mut all: Vec<Metric> = FIXED.to_vec();
    let at = |all: &[Metric], after: Option<&str>| {
        after
            .and_then(|k| all.iter().position(|m| m.key == k))
            .map_or(all.len(), |i| i + 1)
    };
    for d in COUNTERS {
        let mut v = counter_metrics(d);
        // its fields where JSON/CSV want them, its column where the table
        // does (by default right after its fields)
        let col = v
            .iter()
            .position(|m| m.column.is_some())
            .map(|i| v.remove(i));
        let i = at(&all, d.after);
        let n = v.len();
        all.splice(i..i, v);
        if let Some(c) = col {
            let after = d.column.and_then(|c| c.after);
            let j = if after.is_some() {
                at(&all, after)
            } else {
                i + n
            };
            all.insert(j, c);
        }
    }
    all
});

/// A counter's metrics: its total (JSON/CSV `<key>`), a family's values by
/// label (`<key>_by_<label>`), its table column.
fn counter_metrics(d: &'static CounterDesc) -> Vec<Metric> {
    let unit = match d.unit {
        CounterUnit::Ns => Unit::Nanoseconds,
        CounterUnit::Count => Unit::Count,
    };
    let mut v = vec![Metric {
        key: d.key,
        unit,
        column: None,
        field: Some(d.key),
        get: Get::Total(d),
        help: None,
    }];
    if let Some(f) = d.family {
        v.push(Metric {
            key: f.by_label_key,
            unit,
            column: None,
            field: Some(f.by_label_key),
            get: Get::ByLabel(d),
            help: None,
        });
    }
    if let Some(c) = d.column {
        v.push(Metric {
            key: c.key,
            unit: match c.display {
                Display::PerSecond => Unit::PerSecond,
                Display::ShareOfInterval => Unit::Percent,
            },
            column: col(c.title, c.width, c.drop_rank),
            field: None,
            get: Get::Column(d, c.display),
            help: c.help,
        });
    }
    v
}

static FIXED: &[Metric] = &[
    Metric {
        key: "tid",
        unit: Unit::Id,
        column: thread_col("TID", 7, 1),
        field: Some("tid"),
        get: Get::Row(|r| Value::U(r.id.into())),
        help: None,
    },
    Metric {
        key: "pid",
        unit: Unit::Id,
        column: col("PID", 7, 10),
        field: Some("pid"),
        get: Get::Row(|r| Value::U(r.pid.into())),
        help: None,
    },
    Metric {
        key: "comm",
        unit: Unit::Name,
        column: col("COMM", 10, 0),
        field: Some("comm"),
        get: Get::Row(|r| Value::Text(&r.comm)),
        help: None,
    },
    Metric {
        key: "threads",
        unit: Unit::Count,
        column: process_col("THR", 4, 7),
        field: None,
        get: Get::Row(|r| Value::U(r.threads.into())),
        help: None,
    },
    Metric {
        key: "process",
        unit: Unit::Name,
        column: None,
        field: Some("process"),
        get: Get::Row(|r| Value::Text(&r.process_comm)),
        help: None,
    },
    Metric {
        key: "cpu",
        unit: Unit::Id,
        column: thread_col("CPU", 3, 8),
        field: Some("cpu"),
        get: Get::Row(|r| r.cpu.map_or(Value::None, |c| Value::U(c.into()))),
        help: None,
    },
    field("voluntary", Unit::Count, |r| Value::U(r.voluntary)),
    field("involuntary", Unit::Count, |r| Value::U(r.involuntary)),
    Metric {
        key: "vcsw",
        unit: Unit::PerSecond,
        column: col("VCSW/s", 6, 2),
        field: Some("voluntary_per_s"),
        get: Get::Row(|r| opt_f(r.vcsw_s.get())),
        help: Some("VCSW/s voluntary (blocked, slept, yielded); NVCSW/s involuntary (preempted)"),
    },
    Metric {
        key: "nvcsw",
        unit: Unit::PerSecond,
        // rates are at most 6 wide ("123.4k"); the title sets NVCSW/s
        column: col("NVCSW/s", 7, 1),
        field: Some("involuntary_per_s"),
        get: Get::Row(|r| opt_f(r.nvcsw_s.get())),
        help: None,
    },
    Metric {
        key: "cpu_pct",
        unit: Unit::Percent,
        column: col("CPU%", 5, 3),
        field: None,
        get: Get::Row(|r| opt_f(r.cpu_pct.get())),
        help: None,
    },
    Metric {
        key: "avg_slice",
        unit: Unit::Nanoseconds,
        column: col("AVGSLICE", 8, 5),
        field: None,
        get: Get::Row(|r| opt_f(r.avg_slice_ns.get())),
        help: Some("SLICE columns: CPU time per slice (a wall-clock one adds steal, IRQs)"),
    },
    Metric {
        key: "p99_slice",
        unit: Unit::Microseconds,
        column: col("P99SLICE", 8, 6),
        field: None,
        get: Get::Row(|r| opt_u(r.p99_slice_us.map(u64::from))),
        help: Some("P99 columns: interpolated within a bucket a quarter octave wide"),
    },
    Metric {
        key: "p99_wait",
        unit: Unit::Microseconds,
        column: col("P99WAIT", 7, 4),
        field: None,
        get: Get::Row(|r| opt_u(r.p99_wait_us.map(u64::from))),
        help: Some("P99WAIT: runnable (woken or preempted) until on CPU, as runqlat measures"),
    },
    Metric {
        key: "p99_wakeup_wait",
        unit: Unit::Microseconds,
        column: col("WAKEP99", 7, 14),
        field: None,
        get: Get::Row(|r| opt_u(r.p99_wakeup_wait_us.map(u64::from))),
        help: Some("WAKEP99 / PREEMPTP99: the waits that began at a wakeup / a preemption"),
    },
    Metric {
        key: "p99_preempt_wait",
        unit: Unit::Microseconds,
        column: col("PREEMPTP99", 10, 15),
        field: None,
        get: Get::Row(|r| opt_u(r.p99_preempt_wait_us.map(u64::from))),
        help: None,
    },
    field("oncpu_ns", Unit::Nanoseconds, |r| opt_u(r.oncpu_ns)),
    field("wait_ns", Unit::Nanoseconds, |r| opt_u(r.wait_ns)),
    field("migrations", Unit::Count, |r| opt_u(r.migrations)),
    Metric {
        key: "migr",
        unit: Unit::PerSecond,
        column: col("MIGR/s", 6, 9),
        field: None,
        get: Get::Row(|r| opt_f(r.migr_s.get())),
        help: None,
    },
    field("slice_hist_us", Unit::Histogram, |r| hist(r.slice_hist())),
    field("wait_hist_us", Unit::Histogram, |r| hist(r.wait_hist())),
    field("wakeup_wait_hist_us", Unit::Histogram, |r| {
        hist(r.wakeup_wait_hist())
    }),
    field("preempt_wait_hist_us", Unit::Histogram, |r| {
        hist(r.preempt_wait_hist())
    }),
    field("exited", Unit::Flag, |r| Value::Flag(r.exited)),
    Metric {
        key: "nice",
        unit: Unit::Count,
        column: thread_col("NI", 3, 12),
        field: Some("nice"),
        get: Get::Row(|r| r.attrs.nice.map_or(Value::None, |n| Value::I(n.into()))),
        help: Some("NI: the thread's nice value, -20 (favoured) to 19"),
    },
    Metric {
        key: "policy",
        unit: Unit::Name,
        column: thread_col("POLICY", 6, 16),
        field: Some("policy"),
        get: Get::Row(|r| r.attrs.policy_name().map_or(Value::None, Value::Text)),
        help: Some(
            "POLICY: scheduling policy (OTHER BATCH IDLE; FIFO RR DL run before all of them; EXT)",
        ),
    },
    Metric {
        key: "rt_priority",
        unit: Unit::Count,
        column: thread_col("RTPRI", 5, 17),
        field: Some("rt_priority"),
        get: Get::Row(|r| {
            r.attrs
                .rt_priority
                .map_or(Value::None, |p| Value::I(p.into()))
        }),
        help: Some("RTPRI: real-time priority, 1 to 99 (highest); 0 outside FIFO and RR"),
    },
    Metric {
        key: "blocks_on",
        unit: Unit::Name,
        column: col("BLOCKS ON", 10, 14),
        field: None,
        get: Get::Row(|r| r.why.as_ref().map_or(Value::None, |w| text(&w.blocks_on))),
        help: Some("BLOCKS ON: top block reason, its share; MIG BY: top migration cause"),
    },
    Metric {
        key: "migrated_by",
        unit: Unit::Name,
        column: col("MIG BY", 6, 15),
        field: None,
        get: Get::Row(|r| r.why.as_ref().map_or(Value::None, |w| text(w.migrated_by))),
        help: None,
    },
    Metric {
        key: "woken_by",
        unit: Unit::Name,
        column: col("WOKEN BY", 12, 16),
        field: None,
        // unknown where the wakers were not counted (the label is empty then too)
        get: Get::Row(|r| {
            let w = r.why.as_ref().filter(|w| w.wakers_known());
            w.map_or(Value::None, |w| text(&w.woken_label))
        }),
        help: Some("WOKEN BY: who woke it most (a thread, hardirq, softirq_*, idle), its share"),
    },
    Metric {
        key: "cgroup",
        unit: Unit::Name,
        column: None,
        field: Some("cgroup"),
        get: Get::Row(|r| r.cgroup.as_deref().map_or(Value::None, Value::Text)),
        help: None,
    },
    Metric {
        key: "cgroup_name",
        unit: Unit::Name,
        column: col("CGROUP", 18, 13),
        field: None,
        get: Get::Row(|r| r.cgroup_name.as_deref().map_or(Value::None, Value::Text)),
        help: Some("CGROUP: the cgroup whose CPU quota applies (short name; g: the cgroups view)"),
    },
];

/// The metric with this key.
pub fn by_key(key: &str) -> Option<&'static Metric> {
    METRICS.iter().find(|m| m.key == key)
}

/// The metrics written to CSV and JSON, in order, with their names.
pub fn fields() -> impl Iterator<Item = (&'static str, &'static Metric)> {
    METRICS.iter().filter_map(|m| m.field.map(|f| (f, m)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_fields_and_titles_are_unique() {
        let mut keys: Vec<&str> = METRICS.iter().map(|m| m.key).collect();
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n, "duplicate key");
        let mut f: Vec<&str> = fields().map(|(f, _)| f).collect();
        let n = f.len();
        f.sort_unstable();
        f.dedup();
        assert_eq!(f.len(), n, "duplicate field");
        // the titles: one per column, none cut short by its own width (a
        // cell is never wider than the column's width: ui/columns.rs)
        let mut titles: Vec<&str> = METRICS
            .iter()
            .filter_map(|m| m.column.map(|c| c.title))
            .collect();
        assert!(titles.len() >= 10, "{titles:?}");
        let n = titles.len();
        titles.sort_unstable();
        titles.dedup();
        assert_eq!(titles.len(), n, "duplicate title");
        for m in METRICS.iter() {
            if let Some(c) = m.column {
                assert!(c.threads || c.processes, "{} shows nowhere", m.key);
                assert!(c.width as usize >= 3, "{}", m.key);
                assert!(!c.title.trim().is_empty(), "{}: no title", m.key);
                assert!(
                    c.title.chars().count() <= c.width as usize,
                    "{}: title {:?} wider than {}",
                    m.key,
                    c.title,
                    c.width
                );
            }
        }
        assert!(by_key("nvcsw").is_some() && by_key("nope").is_none());
    }
}
