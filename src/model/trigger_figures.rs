//! What a trigger may name, found in the descriptor tables rather than in
//! a list of its own: a thread or process figure is a metric of
//! metrics.rs by its key (`proc:p99_wait>20ms`, `thread:cpu_pct>90`), a
//! per-thread counter whose descriptor sets `trigger` (counters.rs) is
//! `<key>_per_s` at thread, process and system level, and a cgroup, CPU or
//! system figure is the key of its table (cgroup_metrics.rs, cpu_metrics.rs,
//! system_metrics.rs) where its `trigger` flag is set
//! (`cgroup:throttled_ms_per_s>100`, `cpu:rq_len_avg>8`). A new descriptor
//! is usable in `--trigger` with no code here; the names triggers had
//! before are kept as aliases.
use super::cgroup_metrics::{self, CgroupFigure, CGROUP_FIGURES};
use super::counters::{CounterDesc, COUNTERS};
use super::cpu_metrics::{self, CpuFigure, CPU_FIGURES};
use super::finding_types::FindingKind;
use super::metrics::{self, Get, Metric, Unit as MetricUnit, METRICS};
use super::system_metrics::{self, SystemFigure, SYSTEM_FIGURES};

/// Whose figure: any thread, process, cgroup or CPU crossing the
/// threshold fires, or the whole system's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Thread,
    Proc,
    Cgroup,
    Cpu,
    System,
    /// `finding:KIND`: a warning of that kind is among the findings
    Finding,
}

/// The figure compared.
#[derive(Clone, Copy, Debug)]
pub enum Figure {
    /// a thread or process metric by its descriptor (metrics.rs). Times
    /// are compared in ns.
    Metric(&'static Metric),
    /// a per-thread counter per second, its descriptor allowing triggers
    /// (counters.rs; the system's: the threads' summed)
    Counter(&'static CounterDesc),
    /// a figure of the cgroup table (cgroup_metrics.rs)
    Cgroup(&'static CgroupFigure),
    /// a figure of the CPU table (cpu_metrics.rs)
    Cpu(&'static CpuFigure),
    /// a figure of the system table (system_metrics.rs)
    System(&'static SystemFigure),
    /// a warning of this kind (the value: its impact, 0..=1)
    Finding(FindingKind),
}

impl PartialEq for Figure {
    fn eq(&self, o: &Figure) -> bool {
        match (self, o) {
            (Figure::Metric(a), Figure::Metric(b)) => a.key == b.key,
            (Figure::Counter(a), Figure::Counter(b)) => a.key == b.key,
            (Figure::Cgroup(a), Figure::Cgroup(b)) => a.key == b.key,
            (Figure::Cpu(a), Figure::Cpu(b)) => a.key == b.key,
            (Figure::System(a), Figure::System(b)) => a.key == b.key,
            (Figure::Finding(a), Figure::Finding(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Figure {}

impl Figure {
    /// The figure a metric key names (tests, summaries).
    pub fn metric(key: &str) -> Option<Figure> {
        super::metrics::by_key(key).map(Figure::Metric)
    }

    /// Its name in expressions and summaries.
    pub fn name(self) -> String {
        name(self)
    }

    /// The unit of its descriptor (None: a finding).
    pub fn unit(self) -> Option<MetricUnit> {
        Some(match self {
            Figure::Metric(m) => m.unit,
            Figure::Counter(_) => MetricUnit::PerSecond,
            Figure::Cgroup(f) => f.unit,
            Figure::Cpu(f) => f.unit,
            Figure::System(f) => f.unit,
            Figure::Finding(_) => return None,
        })
    }
}

/// How a threshold is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// a time: `20ms`, `5us`, `1.5s` (compared in ns)
    Duration,
    /// a plain number
    Number,
}

/// The names the first triggers used, kept working: (name, metric key).
/// They are the metrics' keys everywhere else.
pub const ALIASES: &[(&str, &str)] = &[
    ("wait_p99", "p99_wait"),
    ("invol_per_s", "nvcsw"),
    ("migrations_per_s", "migr"),
];

/// The names cgroup, CPU and system triggers had before they read the
/// tables: (scope, name, the table's key). The first name of a key is the
/// one summaries show (as before).
pub const TABLE_ALIASES: &[(Scope, &str, &str)] = &[
    (Scope::Cgroup, "wait_p99", "wait_p99_us"),
    (Scope::Cgroup, "p99_wait", "wait_p99_us"),
    (Scope::Cgroup, "invol_per_s", "involuntary_per_s"),
    (Scope::Cgroup, "nvcsw", "involuntary_per_s"),
    (Scope::Cgroup, "migr", "migrations_per_s"),
    (Scope::Cgroup, "cpu_pressure", "psi_some_pct"),
    (Scope::Cpu, "rq_len", "rq_len_avg"),
    (Scope::Cpu, "migrations_per_s", "migrations_in_per_s"),
    (Scope::Cpu, "migr", "migrations_in_per_s"),
    (Scope::System, "invol_per_s", "involuntary_per_s"),
    (Scope::System, "nvcsw", "involuntary_per_s"),
    (Scope::System, "migr", "migrations_per_s"),
    (Scope::System, "cpu_pressure", "psi_cpu_some_pct"),
];

/// The figure of the scope's table with this key, if triggers may name it.
fn table_figure(scope: Scope, key: &str) -> Option<Figure> {
    match scope {
        Scope::Cgroup => cgroup_metrics::by_key(key)
            .filter(|f| f.trigger)
            .map(Figure::Cgroup),
        Scope::Cpu => cpu_metrics::by_key(key)
            .filter(|f| f.trigger)
            .map(Figure::Cpu),
        Scope::System => system_metrics::by_key(key)
            .filter(|f| f.trigger)
            .map(Figure::System),
        _ => None,
    }
}

/// The keys of the scope's table triggers may name, in table order.
fn table_keys(scope: Scope) -> Vec<&'static str> {
    match scope {
        Scope::Cgroup => CGROUP_FIGURES
            .iter()
            .filter(|f| f.trigger)
            .map(|f| f.key)
            .collect(),
        Scope::Cpu => CPU_FIGURES
            .iter()
            .filter(|f| f.trigger)
            .map(|f| f.key)
            .collect(),
        Scope::System => SYSTEM_FIGURES
            .iter()
            .filter(|f| f.trigger)
            .map(|f| f.key)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether triggers may compare this metric: a number measured over the
/// interval (not an id, a name, a histogram or a flag), and for a
/// counter's metrics only where its descriptor allows it.
pub fn triggerable(m: &Metric) -> bool {
    let numeric = matches!(
        m.unit,
        MetricUnit::Count
            | MetricUnit::PerSecond
            | MetricUnit::Percent
            | MetricUnit::Nanoseconds
            | MetricUnit::Microseconds
    );
    numeric
        && match m.get {
            Get::Row(_) => true,
            Get::Total(d) | Get::Column(d, _) => d.trigger,
            Get::ByLabel(_) => false,
        }
}

fn threshold_unit(u: MetricUnit) -> Unit {
    match u {
        MetricUnit::Nanoseconds | MetricUnit::Microseconds => Unit::Duration,
        _ => Unit::Number,
    }
}

fn counter_name(d: &CounterDesc) -> String {
    format!("{}_per_s", d.key)
}

const COUNTER_SCOPES: &[Scope] = &[Scope::Thread, Scope::Proc, Scope::System];

fn metric_named(key: &str) -> Option<&'static Metric> {
    metrics::by_key(key).filter(|m| triggerable(m))
}

/// The figure `name` of `scope`, and how its threshold is written.
pub fn resolve(scope: Scope, name: &str) -> Option<(Figure, Unit)> {
    let key = ALIASES.iter().find(|a| a.0 == name).map_or(name, |a| a.1);
    if matches!(scope, Scope::Thread | Scope::Proc) {
        if let Some(m) = metric_named(key) {
            return Some((Figure::Metric(m), threshold_unit(m.unit)));
        }
    }
    if COUNTER_SCOPES.contains(&scope) {
        if let Some(d) = COUNTERS
            .iter()
            .find(|d| d.trigger && name.strip_suffix("_per_s") == Some(d.key))
        {
            return Some((Figure::Counter(d), Unit::Number));
        }
    }
    // the table's key, an old name of it, or an old name of a metric
    // the table has under its own key (`cgroup:wait_p99`)
    let f = [name, key].into_iter().find_map(|n| {
        let k = TABLE_ALIASES
            .iter()
            .find(|a| a.0 == scope && a.1 == n)
            .map_or(n, |a| a.2);
        table_figure(scope, k)
    })?;
    Some((f, threshold_unit(f.unit()?)))
}

/// Every name `scope` accepts, the old names first (an error lists them).
pub fn names(scope: Scope) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut push = |n: String| {
        if !v.contains(&n) {
            v.push(n);
        }
    };
    for alias in ALIASES
        .iter()
        .map(|a| a.0)
        .chain(TABLE_ALIASES.iter().filter(|a| a.0 == scope).map(|a| a.1))
    {
        if resolve(scope, alias).is_some() {
            push(alias.to_string());
        }
    }
    if matches!(scope, Scope::Thread | Scope::Proc) {
        METRICS
            .iter()
            .filter(|m| triggerable(m))
            .for_each(|m| push(m.key.to_string()));
    }
    if COUNTER_SCOPES.contains(&scope) {
        COUNTERS
            .iter()
            .filter(|d| d.trigger)
            .for_each(|d| push(counter_name(d)));
    }
    table_keys(scope)
        .into_iter()
        .for_each(|k| push(k.to_string()));
    v
}

/// A table figure's old name, else its key.
fn table_name(scope: Scope, key: &'static str) -> String {
    TABLE_ALIASES
        .iter()
        .find(|a| a.0 == scope && a.2 == key)
        .map_or(key, |a| a.1)
        .to_string()
}

/// The name a figure is shown by: the old name where it had one, else its
/// descriptor's key.
pub fn name(f: Figure) -> String {
    match f {
        Figure::Metric(m) => ALIASES
            .iter()
            .find(|a| a.1 == m.key)
            .map_or(m.key, |a| a.0)
            .to_string(),
        Figure::Counter(d) => counter_name(d),
        Figure::Cgroup(c) => table_name(Scope::Cgroup, c.key),
        Figure::Cpu(c) => table_name(Scope::Cpu, c.key),
        Figure::System(c) => table_name(Scope::System, c.key),
        Figure::Finding(k) => k.key().into(),
    }
}

/// The figure a threshold in ns compares with a time metric: the metric's
/// value scaled to ns.
pub fn to_compared(m: &Metric, v: f64) -> f64 {
    unit_to_compared(m.unit, v)
}

/// A value in `unit` as a trigger compares it (times in ns).
pub fn unit_to_compared(unit: MetricUnit, v: f64) -> f64 {
    match unit {
        MetricUnit::Microseconds => v * 1e3,
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::counters;

    #[test]
    fn every_descriptor_a_trigger_may_name_resolves() {
        for m in METRICS.iter().filter(|m| triggerable(m)) {
            for scope in [Scope::Thread, Scope::Proc] {
                let (f, _) = resolve(scope, m.key).unwrap_or_else(|| panic!("{}", m.key));
                assert_eq!(f, Figure::Metric(m));
            }
        }
        for d in COUNTERS.iter().filter(|d| d.trigger) {
            for scope in COUNTER_SCOPES {
                let (f, u) = resolve(*scope, &counter_name(d)).unwrap();
                assert_eq!((f, u), (Figure::Counter(d), Unit::Number));
            }
            assert!(resolve(Scope::Cpu, &counter_name(d)).is_none());
        }
        // ids, names, histograms and a family's by-label lists are not
        // compared
        let by_label = COUNTERS.iter().filter_map(|d| Some(d.family?.by_label_key));
        for key in ["tid", "pid", "comm", "wait_hist_us", "exited"]
            .into_iter()
            .chain(by_label)
        {
            assert!(resolve(Scope::Thread, key).is_none(), "{key}");
            assert!(!names(Scope::Thread).iter().any(|n| n == key), "{key}");
        }
        // the old names are the metrics' keys
        assert_eq!(
            resolve(Scope::Proc, "wait_p99"),
            resolve(Scope::Proc, "p99_wait")
        );
        assert_eq!(
            name(resolve(Scope::Proc, "p99_wait").unwrap().0),
            "wait_p99"
        );
    }

    /// Every table figure whose `trigger` flag is set resolves by its key
    /// in its scope, one without the flag does not, and every old name
    /// still resolves to the figure it named.
    #[test]
    fn table_figures_resolve_by_key_and_old_name() {
        for scope in [Scope::Cgroup, Scope::Cpu, Scope::System] {
            let keys = table_keys(scope);
            assert!(!keys.is_empty(), "{scope:?}");
            for k in &keys {
                let (f, _) = resolve(scope, k).unwrap_or_else(|| panic!("{scope:?} {k}"));
                assert_eq!(f, table_figure(scope, k).unwrap());
                assert!(names(scope).iter().any(|n| n == k), "{k}");
            }
        }
        for f in CGROUP_FIGURES.iter().filter(|f| !f.trigger) {
            assert!(resolve(Scope::Cgroup, f.key).is_none(), "{}", f.key);
        }
        for f in CPU_FIGURES.iter().filter(|f| !f.trigger) {
            assert!(resolve(Scope::Cpu, f.key).is_none(), "{}", f.key);
        }
        for f in SYSTEM_FIGURES.iter().filter(|f| !f.trigger) {
            assert!(resolve(Scope::System, f.key).is_none(), "{}", f.key);
        }
        // (scope, old name, key, how its threshold was written)
        let old = [
            (Scope::Cgroup, "p99_wait", "wait_p99_us", Unit::Duration),
            (Scope::Cgroup, "wait_p99", "wait_p99_us", Unit::Duration),
            (Scope::Cgroup, "nvcsw", "involuntary_per_s", Unit::Number),
            (
                Scope::Cgroup,
                "invol_per_s",
                "involuntary_per_s",
                Unit::Number,
            ),
            (Scope::Cgroup, "migr", "migrations_per_s", Unit::Number),
            (Scope::Cgroup, "cpu_pressure", "psi_some_pct", Unit::Number),
            (
                Scope::Cgroup,
                "throttled_ms_per_s",
                "throttled_ms_per_s",
                Unit::Number,
            ),
            (Scope::Cpu, "rq_len", "rq_len_avg", Unit::Number),
            (Scope::Cpu, "migr", "migrations_in_per_s", Unit::Number),
            (
                Scope::Cpu,
                "migrations_per_s",
                "migrations_in_per_s",
                Unit::Number,
            ),
            (Scope::System, "nvcsw", "involuntary_per_s", Unit::Number),
            (
                Scope::System,
                "invol_per_s",
                "involuntary_per_s",
                Unit::Number,
            ),
            (Scope::System, "migr", "migrations_per_s", Unit::Number),
            (
                Scope::System,
                "cpu_pressure",
                "psi_cpu_some_pct",
                Unit::Number,
            ),
        ];
        for (scope, name, key, unit) in old {
            let (f, u) = resolve(scope, name).unwrap_or_else(|| panic!("{scope:?} {name}"));
            assert_eq!((f, u), (table_figure(scope, key).unwrap(), unit), "{name}");
        }
        // summaries show the old names where there were
        let shown = |s, k| name(table_figure(s, k).unwrap());
        assert_eq!(shown(Scope::Cgroup, "wait_p99_us"), "wait_p99");
        assert_eq!(shown(Scope::Cpu, "rq_len_avg"), "rq_len");
        assert_eq!(shown(Scope::System, "psi_cpu_some_pct"), "cpu_pressure");
        assert_eq!(shown(Scope::Cpu, "busy_pct"), "busy_pct");
        // a thread figure is not a CPU's
        assert!(resolve(Scope::Cpu, "p99_wait").is_none());
    }

    #[test]
    fn a_counter_without_the_flag_is_refused() {
        static QUIET: CounterDesc = CounterDesc {
            trigger: false,
            ..counters::CROSS_NODE
        };
        let total = Metric {
            key: "quiet",
            unit: MetricUnit::Count,
            column: None,
            field: None,
            get: Get::Total(&QUIET),
            help: None,
        };
        assert!(!triggerable(&total));
        assert!(triggerable(&Metric {
            get: Get::Total(&counters::CROSS_NODE),
            ..total
        }));
    }
}
