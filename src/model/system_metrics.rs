//! System figure descriptors: every system-wide figure of an interval,
//! once. Each entry says where the header shows it (label and how the
//! value reads), its batch JSON name (`system` of the record), its
//! OpenMetrics family and how it is read from the Interval's system rates
//! or the Sample's system counters. The header's figures, `SystemRecord`
//! in batch JSON and the exporter's loss counters iterate `SYSTEM_FIGURES`.
//! The exporter's PSI families come from its own pressure reading and the
//! per-level totals from model/figures.rs.
//!
//! The order is the order of JSON fields (an interface: README "Batch
//! output") and of the header's figures.
use super::interval::SystemRates;
use super::metrics::{Unit, Value};
use super::Sample;

/// The system over one interval: its rates (None before the first
/// Sample) and the newest Sample's system counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemRow<'a> {
    pub rates: Option<&'a SystemRates>,
    pub sample: Option<&'a Sample>,
}

/// How the header writes a figure's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    Count,
    /// a rate (k/M suffixes)
    Rate,
    /// numbers with two decimals, a space apart
    TwoDecimals,
    /// a percentage with one decimal and `%`
    Percent,
    /// a count shown as an error when it is not 0
    Alarm,
    /// `Percent`, left out of the header when unknown
    PercentIfKnown,
}

/// Where the header shows a figure.
#[derive(Clone, Copy, Debug)]
pub struct Header {
    pub label: &'static str,
    pub cell: Cell,
    /// shown (as `-`) before the first Sample too
    pub always: bool,
    /// position from the left
    pub position: u8,
}

/// The JSON field of a figure.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    /// written as 0 when unknown (an interface kept from before: the
    /// first interval's switch rate) rather than null
    pub unknown_as_zero: bool,
}

/// A figure's OpenMetrics family: a cumulative counter of the newest Sample.
#[derive(Clone, Copy)]
pub struct OmSpec {
    pub family: &'static str,
    pub help: &'static str,
    pub get: fn(&Sample) -> u64,
}

/// One system figure.
#[derive(Clone, Copy)]
pub struct SystemFigure {
    pub key: &'static str,
    pub unit: Unit,
    pub header: Option<Header>,
    pub field: Option<Field>,
    pub om: Option<OmSpec>,
    pub get: for<'a> fn(&SystemRow<'a>) -> Value<'a>,
}

impl SystemFigure {
    pub fn value<'a>(&self, r: &SystemRow<'a>) -> Value<'a> {
        (self.get)(r)
    }
}

impl std::fmt::Debug for SystemFigure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key)
    }
}

const fn header(label: &'static str, cell: Cell, position: u8) -> Option<Header> {
    Some(Header {
        label,
        cell,
        always: false,
        position,
    })
}

const fn field(name: &'static str) -> Option<Field> {
    Some(Field {
        name,
        unknown_as_zero: false,
    })
}

const fn counter(
    family: &'static str,
    help: &'static str,
    get: fn(&Sample) -> u64,
) -> Option<OmSpec> {
    Some(OmSpec { family, help, get })
}

fn sample_u(r: &SystemRow, get: fn(&Sample) -> u64) -> Value<'static> {
    r.sample.map_or(Value::None, |s| Value::U(get(s)))
}

const BASE: SystemFigure = SystemFigure {
    key: "",
    unit: Unit::Count,
    header: None,
    field: None,
    om: None,
    get: |_| Value::None,
};

pub static SYSTEM_FIGURES: [SystemFigure; 11] = [
    SystemFigure {
        key: "context_switches_per_s",
        unit: Unit::PerSecond,
        header: Some(Header {
            label: "switches/s",
            cell: Cell::Rate,
            always: true,
            position: 0,
        }),
        field: Some(Field {
            name: "context_switches_per_s",
            unknown_as_zero: true,
        }),
        get: |r| {
            r.rates
                .and_then(|x| x.switches_s)
                .map_or(Value::None, Value::F)
        },
        ..BASE
    },
    SystemFigure {
        key: "voluntary_per_s",
        unit: Unit::PerSecond,
        header: header("vol", Cell::Rate, 1),
        get: |r| r.rates.map_or(Value::None, |x| Value::F(x.voluntary_s)),
        ..BASE
    },
    SystemFigure {
        key: "involuntary_per_s",
        unit: Unit::PerSecond,
        header: header("invol", Cell::Rate, 2),
        get: |r| r.rates.map_or(Value::None, |x| Value::F(x.involuntary_s)),
        ..BASE
    },
    SystemFigure {
        key: "procs_running",
        header: header("running", Cell::Count, 3),
        field: field("procs_running"),
        get: |r| sample_u(r, |s| u64::from(s.system.procs_running)),
        ..BASE
    },
    SystemFigure {
        key: "procs_blocked",
        header: header("blocked", Cell::Count, 4),
        field: field("procs_blocked"),
        get: |r| sample_u(r, |s| u64::from(s.system.procs_blocked)),
        ..BASE
    },
    SystemFigure {
        key: "load",
        header: header("load", Cell::TwoDecimals, 5),
        field: field("load"),
        get: |r| {
            r.sample
                .map_or(Value::None, |s| Value::Floats(&s.system.load))
        },
        ..BASE
    },
    SystemFigure {
        key: "lost_updates",
        header: header("lost", Cell::Alarm, 7),
        field: field("lost_updates"),
        om: counter(
            "schedtop_lost_updates",
            "Updates the probes could not store (a full map): counts are low by this many events.",
            |s| s.system.losses.total(),
        ),
        get: |r| sample_u(r, |s| s.system.losses.total()),
        ..BASE
    },
    SystemFigure {
        key: "wake_pairs_lost",
        field: field("wake_pairs_lost"),
        om: counter(
            "schedtop_wake_pairs_lost",
            "Wakeups whose (wakee, waker) pair the probe could not store: in no thread's wakers.",
            |s| s.system.losses.wake_pairs_full,
        ),
        get: |r| sample_u(r, |s| s.system.losses.wake_pairs_full),
        ..BASE
    },
    SystemFigure {
        key: "counter_anomalies",
        field: field("counter_anomalies"),
        get: |r| {
            r.rates
                .map_or(Value::None, |x| Value::U(x.counter_anomalies))
        },
        ..BASE
    },
    SystemFigure {
        key: "psi_cpu_some_avg10",
        unit: Unit::Percent,
        // /proc/pressure/cpu "some" avg10: the share of the last 10 s
        // some runnable thread waited for a CPU
        header: header("cpu psi", Cell::Percent, 6),
        field: field("psi_cpu_some_avg10"),
        get: |r| {
            r.sample
                .and_then(|s| s.system.cpu_pressure.as_ref())
                .map_or(Value::None, |p| Value::F(p.some_avg10))
        },
        ..BASE
    },
    SystemFigure {
        key: "hi_si_st_pct",
        unit: Unit::Percent,
        // top's `hi si st` added up: what interrupts and the hypervisor
        // took of all CPUs, one figure to fit 80 columns (the CPU view
        // splits it per CPU, as /metrics does)
        header: header("hi+si+st", Cell::PercentIfKnown, 8),
        get: |r| {
            r.rates
                .and_then(|x| x.interrupt_steal_pct)
                .map_or(Value::None, |a| Value::F(a.iter().sum()))
        },
        ..BASE
    },
];

/// The header's figures, left to right.
pub fn header_figures() -> Vec<(&'static SystemFigure, &'static Header)> {
    let mut v: Vec<_> = SYSTEM_FIGURES
        .iter()
        .filter_map(|f| f.header.as_ref().map(|h| (f, h)))
        .collect();
    v.sort_by_key(|(_, h)| h.position);
    v
}

/// The JSON fields, in order.
pub fn fields() -> impl Iterator<Item = (&'static SystemFigure, &'static Field)> {
    SYSTEM_FIGURES
        .iter()
        .filter_map(|f| f.field.as_ref().map(|d| (f, d)))
}

/// The figures with an OpenMetrics family, in order.
pub fn exported() -> impl Iterator<Item = (&'static SystemFigure, &'static OmSpec)> {
    SYSTEM_FIGURES
        .iter()
        .filter_map(|f| f.om.as_ref().map(|o| (f, o)))
}
