//! System figure descriptors: every system-wide figure of an interval,
//! once. Each entry says where the header shows it (label and how the
//! value reads), its batch JSON name (`system` of the record), its
//! OpenMetrics family and how it is read from the Interval's system rates
//! or the Sample's system counters. The header's figures, `SystemRecord`
//! in batch JSON, the exporter's system counters (losses, PSI stall
//! totals) and system triggers iterate `SYSTEM_FIGURES`. The exporter's
//! PSI ratio over 60 s and 300 s is a mean over its own scrape window
//! (export/openmetrics_pressure.rs), not a figure of one interval; the
//! per-level totals come from model/figures.rs.
//!
//! The order is the order of JSON fields (an interface:
//! docs/json-and-csv.md) and of the header's figures.
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

/// A figure's OpenMetrics family: a cumulative counter of the newest
/// Sample (no series where the Sample does not have it).
#[derive(Clone, Copy)]
pub struct OmSpec {
    /// without the unit suffix and `_total`
    pub family: &'static str,
    pub help: &'static str,
    /// the family is in seconds (`_seconds`)
    pub seconds: bool,
    /// the value is divided by this (µs: 1e6)
    pub per: f64,
    /// the labels telling figures of one family apart
    pub labels: &'static [(&'static str, &'static str)],
    /// written after the per-CPU families, beside the PSI ratio family
    /// (where scrapes have always had the pressure families)
    pub after_cpus: bool,
    pub get: fn(&Sample) -> Option<u64>,
}

impl OmSpec {
    /// Its sample value from the newest Sample (None: not there).
    pub fn value(&self, s: &Sample) -> Option<f64> {
        Some((self.get)(s)? as f64 / self.per)
    }
}

/// One system figure.
#[derive(Clone, Copy)]
pub struct SystemFigure {
    pub key: &'static str,
    pub unit: Unit,
    pub header: Option<Header>,
    pub field: Option<Field>,
    pub om: Option<OmSpec>,
    /// whether a trigger may name it (`system:KEY>VALUE`, trigger_figures.rs)
    pub trigger: bool,
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
    get: fn(&Sample) -> Option<u64>,
) -> Option<OmSpec> {
    Some(OmSpec {
        family,
        help,
        seconds: false,
        per: 1.0,
        labels: &[],
        after_cpus: false,
        get,
    })
}

/// A PSI stall total (µs) as `schedtop_cpu_pressure_stalled_seconds_total`.
const fn stalled(
    kind: &'static [(&'static str, &'static str)],
    get: fn(&Sample) -> Option<u64>,
) -> Option<OmSpec> {
    Some(OmSpec {
        family: "schedtop_cpu_pressure_stalled",
        help: "CPU pressure (PSI, /proc/pressure/cpu): time some (or all) runnable tasks waited for a CPU.",
        seconds: true,
        per: 1e6,
        labels: kind,
        after_cpus: true,
        get,
    })
}

fn pressure(s: &Sample) -> Option<&super::Pressure> {
    s.system.cpu_pressure.as_deref()
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
    trigger: false,
    get: |_| Value::None,
};

pub static SYSTEM_FIGURES: [SystemFigure; 15] = [
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
        trigger: true,
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
            |s| Some(s.system.losses.total()),
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
            |s| Some(s.system.losses.wake_pairs_full),
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
        key: "psi_cpu_some_pct",
        unit: Unit::Percent,
        // the share of this interval, from the kernel's cumulative total
        trigger: true,
        get: |r| {
            r.rates
                .and_then(|x| x.pressure_some_pct)
                .map_or(Value::None, Value::F)
        },
        ..BASE
    },
    SystemFigure {
        key: "psi_cpu_some_us",
        unit: Unit::Microseconds,
        om: stalled(&[("kind", "some")], |s| {
            pressure(s).map(|p| p.some_total_us)
        }),
        get: |r| {
            r.sample
                .and_then(pressure)
                .map_or(Value::None, |p| Value::U(p.some_total_us))
        },
        ..BASE
    },
    SystemFigure {
        key: "psi_cpu_full_us",
        unit: Unit::Microseconds,
        // the `full` line exists from Linux 5.13
        om: stalled(&[("kind", "full")], |s| pressure(s)?.full_total_us),
        get: |r| {
            r.sample
                .and_then(pressure)
                .and_then(|p| p.full_total_us)
                .map_or(Value::None, Value::U)
        },
        ..BASE
    },
    SystemFigure {
        key: "migrations_per_s",
        unit: Unit::PerSecond,
        trigger: true,
        get: |r| {
            r.rates
                .and_then(|x| x.migrations_s)
                .map_or(Value::None, Value::F)
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

/// The figure with this key.
pub fn by_key(key: &str) -> Option<&'static SystemFigure> {
    SYSTEM_FIGURES.iter().find(|f| f.key == key)
}

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

/// The figures with an OpenMetrics family, in order (a family where its
/// first figure is).
pub fn exported() -> impl Iterator<Item = (&'static SystemFigure, &'static OmSpec)> {
    SYSTEM_FIGURES
        .iter()
        .filter_map(|f| f.om.as_ref().map(|o| (f, o)))
}
