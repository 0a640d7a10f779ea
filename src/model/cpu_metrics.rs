//! Per-CPU figure descriptors: every figure of a CPU, once. Each entry says
//! what the figure is (key, unit), where the CPU view (`c`) shows it (a
//! column of its list: title, width, position, how the cell reads), its
//! batch JSON name, its OpenMetrics family (name, type, help, scale,
//! labels) and how it is read. The CPU view's list, `CpuRecord` in batch
//! JSON and the exporter's per-CPU families all iterate `CPU_FIGURES`; a
//! new CPU figure is one entry here (and its value in `CpuRow`).
//!
//! A figure has two getters because the sinks read two kinds of number:
//! the view and JSON show the Interval's rates and shares (`get`, from a
//! `CpuRow`), while /metrics publishes the Sample's cumulative counters
//! (`om.get`) and lets Prometheus take the rates.
//!
//! The order is the order of JSON fields (an interface:
//! docs/json-and-csv.md) and of the exporter's families (first appearance) and of the
//! series within a family.
use super::cgroup_metrics::OmType;
use super::cpus::{CpuFigures, CpuHistory};
use super::metrics::{Unit, Value};
use super::rates::{busy_pct, CpuInterval, CpuIrqShares, ThreadInterval};
use super::{CpuSample, Topology};

/// One CPU over one interval, as every sink reads it. Built from the CPU
/// view's figures (`of_figures`, with the view's run-queue history) or
/// from the Interval's per-CPU counters (`of_interval`, batch JSON).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuRow<'a> {
    pub cpu: u32,
    pub node: u32,
    pub llc: u32,
    /// run-queue length over the interval: average, longest, histogram
    /// of (queue length low bound, samples)
    pub rq_avg: Option<f64>,
    pub rq_max: Option<u64>,
    pub rq_hist: Option<Vec<(u64, u64)>>,
    pub busy_pct: Option<f64>,
    pub switches_s: Option<f64>,
    /// migrations into / out of the CPU per second
    pub migr_in_s: Option<f64>,
    pub migr_out_s: Option<f64>,
    /// interrupt and steal shares (None: unknown, e.g. a recording)
    pub irq: Option<CpuIrqShares>,
    /// the view's kept run-queue history (None outside the view)
    pub history: Option<&'a CpuHistory>,
}

impl<'a> CpuRow<'a> {
    /// The CPU view's row: its interval figures and the kept history.
    pub fn of_figures(c: &CpuFigures, history: &'a CpuHistory) -> CpuRow<'a> {
        CpuRow {
            cpu: c.cpu,
            node: c.node,
            llc: c.llc,
            rq_avg: c.rq_now,
            rq_max: c.rq_max,
            busy_pct: c.busy_pct,
            switches_s: c.switches_s,
            migr_in_s: c.migr_in_s,
            migr_out_s: c.migr_out_s,
            irq: c.irq.clone(),
            history: Some(history),
            ..Default::default()
        }
    }
}

impl CpuRow<'static> {
    /// A CPU of the Interval (`interval_s` long); a CPU the topology does
    /// not know (hotplugged since) is placed on node 0, its own LLC.
    pub fn of_interval(c: &CpuInterval, interval_s: f64, topology: &Topology) -> Self {
        let place = topology.cpus.iter().find(|t| t.cpu == c.cpu);
        CpuRow {
            cpu: c.cpu,
            node: place.map_or(0, |p| p.node),
            llc: place.map_or(c.cpu, |p| p.llc),
            rq_avg: c.rq.as_ref().map(|r| r.avg),
            rq_max: c.rq.as_ref().map(|r| r.max),
            rq_hist: c.rq.as_ref().map(|r| r.hist.clone()),
            busy_pct: Some(busy_pct(c.busy_ns, interval_s)),
            switches_s: Some(ThreadInterval::per_s(c.switches, interval_s)),
            migr_in_s: None,
            migr_out_s: None,
            irq: c.irq.clone(),
            history: None,
        }
    }
}

/// How the CPU view writes a figure's cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// the number as is
    Id,
    /// a queue length with two decimals; `heat`: coloured by its level
    RunQueue {
        heat: bool,
    },
    /// a longest queue (its log2 bucket from 32 up)
    QueueMax,
    Percent,
    /// a rate (k/M suffixes)
    Rate,
}

/// A column of the CPU view's list, right-aligned in `width` cells.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub title: &'static str,
    pub width: usize,
    /// position from the left
    pub position: u8,
    pub cell: Cell,
}

/// The JSON field of a figure.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    /// left out when unknown (never a made-up 0 or a null) rather than null
    pub omit_unknown: bool,
}

/// How /metrics reads a figure.
#[derive(Clone, Copy)]
pub enum OmGet {
    /// a cumulative counter of the newest Sample's CPU
    Sample(fn(&CpuSample) -> Option<u64>),
    /// the run-queue length averaged over the samples since the previous
    /// scrape (the exporter's window, not one Interval)
    RqSinceScrape,
}

/// A figure's OpenMetrics family.
#[derive(Clone, Copy)]
pub struct OmSpec {
    /// without the unit suffix and `_total`
    pub family: &'static str,
    pub kind: OmType,
    pub help: &'static str,
    /// the family is in seconds (`_seconds`)
    pub seconds: bool,
    /// the value is divided by this (ns: 1e9)
    pub per: f64,
    /// the labels (after `cpu` and `node`) telling figures of one family apart
    pub labels: &'static [(&'static str, &'static str)],
    pub get: OmGet,
}

/// How a figure of a node is made from its CPUs' (the CPU view's node
/// summaries, cpu_nodes.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeAggregate {
    Sum,
    Mean,
    Max,
}

/// One CPU figure.
#[derive(Clone, Copy)]
pub struct CpuFigure {
    /// stable identifier (tests)
    pub key: &'static str,
    pub unit: Unit,
    pub column: Option<Column>,
    pub field: Option<Field>,
    pub om: Option<OmSpec>,
    /// whether a trigger may name it (`cpu:KEY>VALUE`, trigger_figures.rs)
    pub trigger: bool,
    /// how a node's summary aggregates it (None: not in the summary)
    pub node: Option<NodeAggregate>,
    /// its value over the interval (views, JSON)
    pub get: for<'a> fn(&'a CpuRow) -> Value<'a>,
}

impl CpuFigure {
    pub fn value<'a>(&self, r: &'a CpuRow) -> Value<'a> {
        (self.get)(r)
    }

    /// Its value over a node's CPUs (None: no CPU knows it, or the
    /// summary does not carry it).
    pub fn node_value(&self, rows: &[CpuRow]) -> Option<f64> {
        let v: Vec<f64> = rows.iter().filter_map(|r| self.value(r).number()).collect();
        if v.is_empty() {
            return None;
        }
        Some(match self.node? {
            NodeAggregate::Sum => v.iter().sum(),
            NodeAggregate::Mean => v.iter().sum::<f64>() / v.len() as f64,
            NodeAggregate::Max => v.iter().copied().fold(f64::MIN, f64::max),
        })
    }

    /// Its OpenMetrics sample from a CPU of the newest Sample (None: no
    /// family, unknown there, or read from the scrape window instead).
    pub fn om_value(&self, c: &CpuSample) -> Option<f64> {
        match self.om.as_ref()?.get {
            OmGet::Sample(get) => Some(get(c)? as f64 / self.om?.per),
            OmGet::RqSinceScrape => None,
        }
    }
}

impl std::fmt::Debug for CpuFigure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key)
    }
}

fn u(v: Option<u64>) -> Value<'static> {
    v.map_or(Value::None, Value::U)
}

fn f(v: Option<f64>) -> Value<'static> {
    v.map_or(Value::None, Value::F)
}

const fn col(title: &'static str, width: usize, position: u8, cell: Cell) -> Option<Column> {
    Some(Column {
        title,
        width,
        position,
        cell,
    })
}

const fn field(name: &'static str) -> Option<Field> {
    Some(Field {
        name,
        omit_unknown: false,
    })
}

const fn field_if_known(name: &'static str) -> Option<Field> {
    Some(Field {
        name,
        omit_unknown: true,
    })
}

/// A figure shown or exported nowhere but where it says.
const BASE: CpuFigure = CpuFigure {
    key: "",
    unit: Unit::Count,
    column: None,
    field: None,
    om: None,
    trigger: false,
    node: None,
    get: |_| Value::None,
};

/// A per-CPU counter family of the newest Sample.
const fn counter(
    family: &'static str,
    help: &'static str,
    seconds: bool,
    labels: &'static [(&'static str, &'static str)],
    get: fn(&CpuSample) -> Option<u64>,
) -> Option<OmSpec> {
    Some(OmSpec {
        family,
        kind: OmType::Counter,
        help,
        seconds,
        per: if seconds { 1e9 } else { 1.0 },
        labels,
        get: OmGet::Sample(get),
    })
}

// interrupt time per CPU: /proc/stat's columns (tick-sampled without
// CONFIG_IRQ_TIME_ACCOUNTING) and the probes' own, each only where known
// (no series rather than a made-up 0)
const IRQ_FAMILY: &str = "schedtop_cpu_interrupt";
const IRQ_HELP: &str = "Time one CPU spent in hardirq or softirq context, by source (proc_stat: tick-sampled unless the kernel has CONFIG_IRQ_TIME_ACCOUNTING; probes: measured).";

pub static CPU_FIGURES: [CpuFigure; 20] = [
    CpuFigure {
        key: "cpu",
        unit: Unit::Id,
        column: col("CPU", 5, 0, Cell::Id),
        field: field("cpu"),
        get: |r| Value::U(u64::from(r.cpu)),
        ..BASE
    },
    CpuFigure {
        key: "node",
        unit: Unit::Id,
        field: field("node"),
        get: |r| Value::U(u64::from(r.node)),
        ..BASE
    },
    CpuFigure {
        key: "llc",
        unit: Unit::Id,
        column: col("LLC", 4, 1, Cell::Id),
        field: field("llc"),
        get: |r| Value::U(u64::from(r.llc)),
        ..BASE
    },
    CpuFigure {
        key: "switches_per_s",
        unit: Unit::PerSecond,
        column: col("SW/s", 7, 6, Cell::Rate),
        field: field("switches_per_s"),
        om: counter(
            "schedtop_cpu_switches",
            "Context switches on one CPU.",
            false,
            &[],
            |c| Some(c.switches),
        ),
        trigger: true,
        node: Some(NodeAggregate::Sum),
        get: |r| f(r.switches_s),
    },
    CpuFigure {
        key: "busy_pct",
        unit: Unit::Percent,
        column: col("BUSY%", 6, 5, Cell::Percent),
        field: field("busy_pct"),
        om: counter(
            "schedtop_cpu_busy",
            "Time one CPU ran threads other than its idle task.",
            true,
            &[],
            |c| Some(c.busy_ns),
        ),
        trigger: true,
        node: Some(NodeAggregate::Mean),
        get: |r| f(r.busy_pct),
    },
    CpuFigure {
        key: "rq_len_avg",
        column: col("RQ NOW", 6, 2, Cell::RunQueue { heat: true }),
        field: field("rq_len_avg"),
        node: Some(NodeAggregate::Mean),
        trigger: true,
        get: |r| f(r.rq_avg),
        ..BASE
    },
    CpuFigure {
        key: "rq_len_max",
        field: field("rq_len_max"),
        trigger: true,
        get: |r| u(r.rq_max),
        ..BASE
    },
    CpuFigure {
        key: "rq_len_hist",
        unit: Unit::Histogram,
        field: field("rq_len_hist"),
        get: |r| r.rq_hist.as_deref().map_or(Value::None, Value::Pairs),
        ..BASE
    },
    CpuFigure {
        key: "irq_pct",
        unit: Unit::Percent,
        field: field_if_known("irq_pct"),
        om: counter(
            IRQ_FAMILY,
            IRQ_HELP,
            true,
            &[("source", "proc_stat"), ("kind", "hardirq")],
            |c| c.irq.as_ref().map(|i| i.stat_irq_ns),
        ),
        get: |r| f(r.irq.as_ref().map(|i| i.irq_pct)),
        ..BASE
    },
    CpuFigure {
        key: "softirq_pct",
        unit: Unit::Percent,
        field: field_if_known("softirq_pct"),
        om: counter(
            IRQ_FAMILY,
            IRQ_HELP,
            true,
            &[("source", "proc_stat"), ("kind", "softirq")],
            |c| c.irq.as_ref().map(|i| i.stat_softirq_ns),
        ),
        get: |r| f(r.irq.as_ref().map(|i| i.softirq_pct)),
        ..BASE
    },
    CpuFigure {
        key: "steal_pct",
        unit: Unit::Percent,
        field: field_if_known("steal_pct"),
        om: counter(
            "schedtop_cpu_steal",
            "Time the hypervisor ran something else while one CPU wanted to run (/proc/stat steal).",
            true,
            &[],
            |c| c.irq.as_ref().map(|i| i.stat_steal_ns),
        ),
        column: col("STEAL%", 6, 11, Cell::Percent),
        get: |r| f(r.irq.as_ref().map(|i| i.steal_pct)),
        ..BASE
    },
    // the view's IRQ% and SIRQ%: the probes' measured time where they are
    // on, else /proc/stat's (tick-sampled without CONFIG_IRQ_TIME_ACCOUNTING)
    CpuFigure {
        key: "irq_shown_pct",
        unit: Unit::Percent,
        column: col("IRQ%", 4, 9, Cell::Percent),
        get: |r| f(r.irq.as_ref().map(|i| i.probe_irq_pct.unwrap_or(i.irq_pct))),
        ..BASE
    },
    CpuFigure {
        key: "softirq_shown_pct",
        unit: Unit::Percent,
        column: col("SIRQ%", 5, 10, Cell::Percent),
        get: |r| {
            f(r.irq
                .as_ref()
                .map(|i| i.probe_softirq_pct.unwrap_or(i.softirq_pct)))
        },
        ..BASE
    },
    CpuFigure {
        key: "probe_irq_pct",
        unit: Unit::Percent,
        field: field_if_known("probe_irq_pct"),
        om: counter(
            IRQ_FAMILY,
            IRQ_HELP,
            true,
            &[("source", "probes"), ("kind", "hardirq")],
            |c| c.irq.as_ref().and_then(|i| i.probe_irq_ns),
        ),
        get: |r| f(r.irq.as_ref().and_then(|i| i.probe_irq_pct)),
        ..BASE
    },
    CpuFigure {
        key: "probe_softirq_pct",
        unit: Unit::Percent,
        field: field_if_known("probe_softirq_pct"),
        om: counter(
            IRQ_FAMILY,
            IRQ_HELP,
            true,
            &[("source", "probes"), ("kind", "softirq")],
            |c| c.irq.as_ref().and_then(|i| i.probe_softirq_ns),
        ),
        get: |r| f(r.irq.as_ref().and_then(|i| i.probe_softirq_pct)),
        ..BASE
    },
    CpuFigure {
        key: "migrations_in_per_s",
        unit: Unit::PerSecond,
        column: col("MIG IN", 7, 7, Cell::Rate),
        trigger: true,
        get: |r| f(r.migr_in_s),
        ..BASE
    },
    CpuFigure {
        key: "migrations_out_per_s",
        unit: Unit::PerSecond,
        column: col("MIG OUT", 7, 8, Cell::Rate),
        trigger: true,
        get: |r| f(r.migr_out_s),
        ..BASE
    },
    CpuFigure {
        key: "rq_history_avg",
        column: col("RQ AVG", 6, 3, Cell::RunQueue { heat: false }),
        node: Some(NodeAggregate::Mean),
        get: |r| f(r.history.and_then(|h| h.avg(r.cpu))),
        ..BASE
    },
    CpuFigure {
        key: "rq_history_max",
        column: col("RQ MAX", 6, 4, Cell::QueueMax),
        node: Some(NodeAggregate::Max),
        get: |r| u(r.history.and_then(|h| h.max(r.cpu))),
        ..BASE
    },
    CpuFigure {
        key: "rq_since_scrape",
        om: Some(OmSpec {
            family: "schedtop_cpu_runqueue_length",
            kind: OmType::Gauge,
            help: "Average run-queue length of one CPU since the previous scrape (sampled at 99 Hz; an idle CPU counts as empty).",
            seconds: false,
            per: 1.0,
            labels: &[],
            get: OmGet::RqSinceScrape,
        }),
        ..BASE
    },
];

/// The figure with this key.
pub fn by_key(key: &str) -> Option<&'static CpuFigure> {
    CPU_FIGURES.iter().find(|f| f.key == key)
}

/// The view's columns, left to right.
pub fn columns() -> Vec<(&'static CpuFigure, &'static Column)> {
    let mut v: Vec<_> = CPU_FIGURES
        .iter()
        .filter_map(|f| f.column.as_ref().map(|c| (f, c)))
        .collect();
    v.sort_by_key(|(_, c)| c.position);
    v
}

/// The JSON fields, in order.
pub fn fields() -> impl Iterator<Item = (&'static CpuFigure, &'static Field)> {
    CPU_FIGURES
        .iter()
        .filter_map(|f| f.field.as_ref().map(|d| (f, d)))
}

/// The figures with an OpenMetrics family, in order.
pub fn exported() -> impl Iterator<Item = (&'static CpuFigure, &'static OmSpec)> {
    CPU_FIGURES
        .iter()
        .filter_map(|f| f.om.as_ref().map(|o| (f, o)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rates::RqInterval;

    #[test]
    fn keys_fields_and_positions_are_unique() {
        let mut keys: Vec<_> = CPU_FIGURES.iter().map(|f| f.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), CPU_FIGURES.len());
        let mut names: Vec<_> = fields().map(|(_, d)| d.name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        let pos: Vec<u8> = columns().iter().map(|(_, c)| c.position).collect();
        assert_eq!(pos, (0..pos.len() as u8).collect::<Vec<_>>());
        // one family, one type, help and unit
        for (_, a) in exported() {
            for (_, b) in exported().filter(|(_, b)| b.family == a.family) {
                assert_eq!((a.kind, a.help, a.seconds), (b.kind, b.help, b.seconds));
            }
        }
    }

    #[test]
    fn an_interval_row_has_its_rates_and_a_sample_its_seconds() {
        let c = CpuInterval {
            cpu: 3,
            switches: 500,
            busy_ns: 500_000_000,
            rq: Some(RqInterval {
                avg: 1.5,
                max: 4,
                hist: vec![(0, 10), (4, 2)],
                samples: 12,
            }),
            irq: None,
        };
        let r = CpuRow::of_interval(&c, 2.0, &Topology::default());
        // 500 switches and 0.5 s busy in 2 s; unknown CPU: node 0, own LLC
        assert_eq!(by_key("switches_per_s").unwrap().value(&r), Value::F(250.0));
        assert_eq!(by_key("busy_pct").unwrap().value(&r), Value::F(25.0));
        assert_eq!(by_key("llc").unwrap().value(&r), Value::U(3));
        assert_eq!(
            by_key("rq_len_hist").unwrap().value(&r),
            Value::Pairs(&[(0, 10), (4, 2)])
        );
        assert_eq!(by_key("steal_pct").unwrap().value(&r), Value::None);
        let s = CpuSample {
            cpu: 3,
            busy_ns: 1_250_000_000,
            ..Default::default()
        };
        assert_eq!(by_key("busy_pct").unwrap().om_value(&s), Some(1.25));
        assert_eq!(by_key("steal_pct").unwrap().om_value(&s), None);
    }
}
