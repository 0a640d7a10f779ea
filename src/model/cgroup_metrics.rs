//! Cgroup figure descriptors: every figure of a cgroup row (cgroup.rs),
//! once. Each entry says what the figure is (key, unit), where the cgroups
//! view shows it (a column: title, width, position, how the cell reads),
//! whether the view sorts by it, its JSON/CSV name, its OpenMetrics family
//! (name, type, help, scale, label) and how it is read from the Interval's
//! `CgroupRow`. The view, its sorting, batch JSON, `cgroups-csv` and the
//! exporter's cgroup families all iterate `CGROUP_FIGURES`; a new cgroup
//! figure is one entry here (and its value in the row).
//!
//! The order is the order of JSON fields and CSV columns (an interface:
//! docs/json-and-csv.md), and of the exporter's families.
use super::cgroup::CgroupRow;
use super::metrics::{Unit, Value};

/// How the cgroups view writes a figure's cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// the number as is
    Count,
    Percent,
    /// a rate (k/M suffixes)
    Rate,
    /// a number with one decimal
    OneDecimal,
    /// µs as a duration
    Duration,
    /// "quota/cpuset": the CPU quota and the figure `cpuset` names
    Limit {
        cpuset: &'static str,
    },
    /// "a/b" with one decimal each: this figure and the one `other` names
    SlashPair {
        other: &'static str,
    },
}

/// A column of the cgroups table (after the name column).
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub title: &'static str,
    pub width: usize,
    /// position from the left: columns are dropped from the right when
    /// the screen is narrow, so the most important come first
    pub position: u8,
    pub cell: Cell,
}

/// Where the cgroups view shows a figure.
#[derive(Clone, Copy, Debug)]
pub enum Shown {
    Column(Column),
    /// in the column of the figure with this key (a pair of figures)
    In(&'static str),
    /// in the detail pane (Enter)
    Detail,
    /// the name column (the tree)
    Name,
    /// not on screen
    Nowhere,
}

/// The JSON field and CSV column of a figure.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub name: &'static str,
    /// whole units of the value per unit written (1: as is; 1000: ns as µs)
    pub div: u64,
}

/// OpenMetrics types the cgroup families use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OmType {
    Counter,
    Gauge,
}

/// A figure's OpenMetrics family.
#[derive(Clone, Copy, Debug)]
pub struct OmSpec {
    /// without the unit suffix and `_total`
    pub family: &'static str,
    pub kind: OmType,
    pub help: &'static str,
    /// the family is in seconds (`_seconds`)
    pub seconds: bool,
    /// the value is divided by this (ns: 1e9, µs: 1e6)
    pub per: f64,
    /// the label telling figures of one family apart
    pub label: Option<(&'static str, &'static str)>,
}

/// One cgroup figure.
#[derive(Clone, Copy)]
pub struct CgroupFigure {
    /// stable identifier (triggers, tests)
    pub key: &'static str,
    pub unit: Unit,
    pub shown: Shown,
    /// the title the view's sort names it by (None: not a sort key)
    pub sort: Option<&'static str>,
    pub field: Option<Field>,
    pub om: Option<OmSpec>,
    /// whether a trigger may name it (`cgroup:KEY>VALUE`, trigger_figures.rs)
    pub trigger: bool,
    /// for a trigger: the figure read while this one is unknown (the
    /// first interval's PSI share: the kernel's 10 s average)
    pub trigger_else: Option<&'static str>,
    /// for a trigger: the figure this one is computed from; known there,
    /// the cgroup was measured though this one is empty (an empty
    /// histogram has no p99: a quiet interval, not a missing figure)
    pub measured_by: Option<&'static str>,
    pub get: for<'a> fn(&'a CgroupRow) -> Value<'a>,
}

impl CgroupFigure {
    pub fn value<'a>(&self, r: &'a CgroupRow) -> Value<'a> {
        (self.get)(r)
    }

    /// Its value as a JSON/CSV field writes it (None: no field).
    pub fn field_value<'a>(&self, r: &'a CgroupRow) -> Option<(&'static str, Value<'a>)> {
        let f = self.field?;
        let v = match self.value(r) {
            Value::U(n) if f.div > 1 => Value::U(n / f.div),
            v => v,
        };
        Some((f.name, v))
    }

    /// Its OpenMetrics sample value (None: no family, or unknown here).
    pub fn om_value(&self, r: &CgroupRow) -> Option<f64> {
        let om = self.om.as_ref()?;
        Some(self.value(r).number()? / om.per)
    }

    pub fn column(&self) -> Option<&Column> {
        match &self.shown {
            Shown::Column(c) => Some(c),
            _ => None,
        }
    }
}

impl std::fmt::Debug for CgroupFigure {
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

const fn col(title: &'static str, width: usize, position: u8, cell: Cell) -> Shown {
    Shown::Column(Column {
        title,
        width,
        position,
        cell,
    })
}

const fn field(name: &'static str) -> Option<Field> {
    Some(Field { name, div: 1 })
}

/// A figure shown, sorted by or exported nowhere but where it says.
const BASE: CgroupFigure = CgroupFigure {
    key: "",
    unit: Unit::Count,
    shown: Shown::Nowhere,
    sort: None,
    field: None,
    om: None,
    trigger: false,
    trigger_else: None,
    measured_by: None,
    get: |_| Value::None,
};

const PSI_HELP: &str = "CPU pressure of the cgroup (cpu.pressure total): time some (or all) of its runnable tasks waited for a CPU.";

pub static CGROUP_FIGURES: [CgroupFigure; 25] = [
    CgroupFigure {
        key: "path",
        unit: Unit::Name,
        shown: Shown::Name,
        sort: Some("CGROUP"),
        field: field("path"),
        get: |r| Value::Text(&r.path),
        ..BASE
    },
    CgroupFigure {
        key: "threads",
        shown: col("THR", 5, 0, Cell::Count),
        sort: Some("THR"),
        field: field("threads"),
        get: |r| Value::U(u64::from(r.threads)),
        ..BASE
    },
    CgroupFigure {
        key: "own_threads",
        om: Some(OmSpec {
            family: "schedtop_cgroup_threads",
            kind: OmType::Gauge,
            help: "Threads in the cgroup itself (not its children) at the newest Sample.",
            seconds: false,
            per: 1.0,
            label: None,
        }),
        get: |r| Value::U(u64::from(r.own_threads)),
        ..BASE
    },
    CgroupFigure {
        key: "cpu_pct",
        unit: Unit::Percent,
        shown: col("CPU%", 6, 1, Cell::Percent),
        sort: Some("CPU%"),
        field: field("cpu_pct"),
        get: |r| f(r.cpu_pct),
        ..BASE
    },
    CgroupFigure {
        key: "cpu_quota_cpus",
        shown: col(
            "LIMIT",
            9,
            2,
            Cell::Limit {
                cpuset: "cpuset_cpus",
            },
        ),
        field: field("cpu_quota_cpus"),
        om: Some(OmSpec {
            family: "schedtop_cgroup_cpu_quota_cpus",
            kind: OmType::Gauge,
            help: "The cgroup's CFS quota in CPUs (cpu.max or cfs_quota_us / cfs_period_us); no series when unlimited.",
            seconds: false,
            per: 1.0,
            label: None,
        }),
        get: |r| f(r.quota_cpus),
        ..BASE
    },
    CgroupFigure {
        key: "cpuset_cpus",
        shown: Shown::In("cpu_quota_cpus"),
        field: field("cpuset_cpus"),
        get: |r| u(r.cpuset_cpus.map(u64::from)),
        ..BASE
    },
    CgroupFigure {
        key: "nr_periods",
        field: field("nr_periods"),
        om: Some(OmSpec {
            family: "schedtop_cgroup_periods",
            kind: OmType::Counter,
            help: "CFS bandwidth periods that elapsed with the cgroup runnable (cpu.stat nr_periods).",
            seconds: false,
            per: 1.0,
            label: None,
        }),
        get: |r| u(r.nr_periods),
        ..BASE
    },
    CgroupFigure {
        key: "nr_throttled",
        field: field("nr_throttled"),
        om: Some(OmSpec {
            family: "schedtop_cgroup_throttled_periods",
            kind: OmType::Counter,
            help: "Periods in which the cgroup was throttled (cpu.stat nr_throttled).",
            seconds: false,
            per: 1.0,
            label: None,
        }),
        get: |r| u(r.nr_throttled),
        ..BASE
    },
    CgroupFigure {
        key: "throttled_ns",
        unit: Unit::Nanoseconds,
        // cpu.stat says µs (v2) or ns (v1): JSON keeps v2's name and unit
        field: Some(Field {
            name: "throttled_usec",
            div: 1000,
        }),
        om: Some(OmSpec {
            family: "schedtop_cgroup_throttled",
            kind: OmType::Counter,
            help: "Time the cgroup's threads were throttled (cpu.stat throttled_usec, v1 throttled_time).",
            seconds: true,
            per: 1e9,
            label: None,
        }),
        get: |r| u(r.throttled_ns),
        ..BASE
    },
    CgroupFigure {
        key: "throttled_per_s",
        unit: Unit::PerSecond,
        shown: col("THRT/s", 6, 3, Cell::Rate),
        field: field("throttled_per_s"),
        get: |r| f(r.throttled_per_s),
        ..BASE
    },
    CgroupFigure {
        key: "throttled_ms_per_s",
        unit: Unit::PerSecond,
        shown: col("THRTms/s", 8, 4, Cell::OneDecimal),
        sort: Some("THRTms/s"),
        field: field("throttled_ms_per_s"),
        trigger: true,
        get: |r| f(r.throttled_ms_per_s),
        ..BASE
    },
    CgroupFigure {
        key: "psi_some_pct",
        unit: Unit::Percent,
        shown: col(
            "PSI s/f%",
            11,
            5,
            Cell::SlashPair {
                other: "psi_full_pct",
            },
        ),
        sort: Some("PSI some%"),
        field: field("psi_some_pct"),
        trigger: true,
        trigger_else: Some("psi_some_avg10"),
        get: |r| f(r.psi_some_pct),
        ..BASE
    },
    CgroupFigure {
        key: "psi_full_pct",
        unit: Unit::Percent,
        shown: Shown::In("psi_some_pct"),
        field: field("psi_full_pct"),
        get: |r| f(r.psi_full_pct),
        ..BASE
    },
    CgroupFigure {
        key: "psi_some_avg10",
        unit: Unit::Percent,
        shown: col("AVG10", 6, 6, Cell::OneDecimal),
        field: field("psi_some_avg10"),
        get: |r| f(r.psi_some_avg10),
        ..BASE
    },
    CgroupFigure {
        key: "psi_full_avg10",
        unit: Unit::Percent,
        field: field("psi_full_avg10"),
        get: |r| f(r.psi_full_avg10),
        ..BASE
    },
    CgroupFigure {
        key: "psi_some_us",
        unit: Unit::Microseconds,
        field: field("psi_some_us"),
        om: Some(OmSpec {
            family: "schedtop_cgroup_cpu_pressure_stalled",
            kind: OmType::Counter,
            help: PSI_HELP,
            seconds: true,
            per: 1e6,
            label: Some(("kind", "some")),
        }),
        get: |r| u(r.psi_some_us),
        ..BASE
    },
    CgroupFigure {
        key: "psi_full_us",
        unit: Unit::Microseconds,
        om: Some(OmSpec {
            family: "schedtop_cgroup_cpu_pressure_stalled",
            kind: OmType::Counter,
            help: PSI_HELP,
            seconds: true,
            per: 1e6,
            label: Some(("kind", "full")),
        }),
        get: |r| u(r.psi_full_us),
        ..BASE
    },
    CgroupFigure {
        key: "voluntary_per_s",
        unit: Unit::PerSecond,
        shown: col("VCSW/s", 6, 9, Cell::Rate),
        field: field("voluntary_per_s"),
        get: |r| f(r.vcsw_s),
        ..BASE
    },
    CgroupFigure {
        key: "involuntary_per_s",
        unit: Unit::PerSecond,
        shown: col("NVCSW/s", 7, 10, Cell::Rate),
        field: field("involuntary_per_s"),
        trigger: true,
        get: |r| f(r.nvcsw_s),
        ..BASE
    },
    CgroupFigure {
        key: "migrations_per_s",
        unit: Unit::PerSecond,
        shown: col("MIGR/s", 6, 12, Cell::Rate),
        field: field("migrations_per_s"),
        trigger: true,
        get: |r| f(r.migr_s),
        ..BASE
    },
    CgroupFigure {
        key: "wait_p50_us",
        unit: Unit::Microseconds,
        shown: col("P50WAIT", 7, 8, Cell::Duration),
        field: field("wait_p50_us"),
        get: |r| u(r.p50_wait_us),
        ..BASE
    },
    CgroupFigure {
        key: "wait_p99_us",
        unit: Unit::Microseconds,
        shown: col("P99WAIT", 7, 7, Cell::Duration),
        sort: Some("P99WAIT"),
        field: field("wait_p99_us"),
        trigger: true,
        measured_by: Some("wait_hist_us"),
        get: |r| u(r.p99_wait_us),
        ..BASE
    },
    CgroupFigure {
        key: "slice_p99_us",
        unit: Unit::Microseconds,
        shown: col("P99SLICE", 8, 11, Cell::Duration),
        field: field("slice_p99_us"),
        get: |r| u(r.p99_slice_us),
        ..BASE
    },
    CgroupFigure {
        key: "slice_hist_us",
        unit: Unit::Histogram,
        shown: Shown::Detail,
        field: field("slice_hist_us"),
        get: |r| r.slice_hist.as_ref().map_or(Value::None, Value::Hist),
        ..BASE
    },
    CgroupFigure {
        key: "wait_hist_us",
        unit: Unit::Histogram,
        shown: Shown::Detail,
        field: field("wait_hist_us"),
        get: |r| r.wait_hist.as_ref().map_or(Value::None, Value::Hist),
        ..BASE
    },
];

/// The figure with this key.
pub fn by_key(key: &str) -> Option<&'static CgroupFigure> {
    CGROUP_FIGURES.iter().find(|f| f.key == key)
}

/// The view's columns, left to right.
pub fn columns() -> Vec<(&'static CgroupFigure, &'static Column)> {
    let mut v: Vec<_> = CGROUP_FIGURES
        .iter()
        .filter_map(|f| f.column().map(|c| (f, c)))
        .collect();
    v.sort_by_key(|(_, c)| c.position);
    v
}

/// The figures the view sorts by, in the order the sort key cycles.
pub fn sorts() -> impl Iterator<Item = &'static CgroupFigure> {
    CGROUP_FIGURES.iter().filter(|f| f.sort.is_some())
}

/// The JSON fields and CSV columns, in order.
pub fn fields() -> impl Iterator<Item = &'static CgroupFigure> {
    CGROUP_FIGURES.iter().filter(|f| f.field.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_fields_and_positions_are_unique_and_pairs_resolve() {
        let mut keys: Vec<_> = CGROUP_FIGURES.iter().map(|f| f.key).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), CGROUP_FIGURES.len());
        let mut names: Vec<_> = fields().map(|f| f.field.unwrap().name).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        let pos: Vec<u8> = columns().iter().map(|(_, c)| c.position).collect();
        assert_eq!(pos, (0..pos.len() as u8).collect::<Vec<_>>());
        for f in &CGROUP_FIGURES {
            if let Shown::In(k) = f.shown {
                assert!(by_key(k).and_then(|p| p.column()).is_some(), "{}", f.key);
            }
            if let Some(Column {
                cell: Cell::Limit { cpuset: other } | Cell::SlashPair { other },
                ..
            }) = f.column()
            {
                assert!(matches!(by_key(other).map(|o| o.shown), Some(Shown::In(k)) if k == f.key));
            }
        }
    }

    #[test]
    fn ns_fields_are_written_in_us_and_exported_in_seconds() {
        let r = CgroupRow {
            throttled_ns: Some(1_234_567_890),
            ..Default::default()
        };
        let fig = by_key("throttled_ns").unwrap();
        assert_eq!(
            fig.field_value(&r),
            Some(("throttled_usec", Value::U(1_234_567)))
        );
        let v = fig.om_value(&r).unwrap();
        assert!((v - 1.23456789).abs() < 1e-12);
    }
}
