//! What a trigger may name, found in the descriptor tables rather than in
//! a list of its own: a thread or process figure is a metric of
//! metrics.rs by its key (`proc:p99_wait>20ms`, `thread:cpu_pct>90`), a
//! per-thread counter whose descriptor sets `trigger` (counters.rs) is
//! `<key>_per_s` at thread, process and system level. A new descriptor is
//! usable in `--trigger` with no code here. Cgroups, CPUs and the system
//! have descriptor tables now (cgroup_metrics.rs, cpu_metrics.rs,
//! system_metrics.rs) but triggers do not read them yet: their figures are
//! the short list below.
use super::counters::{CounterDesc, COUNTERS};
use super::finding_types::FindingKind;
use super::metrics::{self, Get, Metric, Unit as MetricUnit, METRICS};

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
    /// a thread or process metric by its descriptor (metrics.rs); a
    /// cgroup, a CPU and the system read the ones they have from their
    /// own rows (p99_wait, nvcsw, migr). Times are compared in ns.
    Metric(&'static Metric),
    /// a per-thread counter per second, its descriptor allowing triggers
    /// (counters.rs; the system's: the threads' summed)
    Counter(&'static CounterDesc),
    /// run-queue length (CPU)
    RqLen,
    /// CPU pressure (PSI) `some`: % of the interval, from the kernel's
    /// cumulative total (else its avg10)
    CpuPressure,
    /// ms throttled per second (cgroup CPU bandwidth)
    ThrottledMsPerS,
    /// a warning of this kind (the value: its impact, 0..=1)
    Finding(FindingKind),
}

impl PartialEq for Figure {
    fn eq(&self, o: &Figure) -> bool {
        match (self, o) {
            (Figure::Metric(a), Figure::Metric(b)) => a.key == b.key,
            (Figure::Counter(a), Figure::Counter(b)) => a.key == b.key,
            (Figure::RqLen, Figure::RqLen)
            | (Figure::CpuPressure, Figure::CpuPressure)
            | (Figure::ThrottledMsPerS, Figure::ThrottledMsPerS) => true,
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

/// Figures of cgroups, CPUs and the system (their tables are not read
/// here yet): (name, figure, unit, scopes). A metric key here is read from the
/// scope's own row (`trigger_eval.rs`).
const OTHER: &[(&str, OtherFigure, Unit, &[Scope])] = &[
    (
        "p99_wait",
        OtherFigure::Metric("p99_wait"),
        Unit::Duration,
        &[Scope::Cgroup],
    ),
    (
        "nvcsw",
        OtherFigure::Metric("nvcsw"),
        Unit::Number,
        &[Scope::Cgroup, Scope::System],
    ),
    (
        "migr",
        OtherFigure::Metric("migr"),
        Unit::Number,
        &[Scope::Cgroup, Scope::Cpu, Scope::System],
    ),
    ("rq_len", OtherFigure::RqLen, Unit::Number, &[Scope::Cpu]),
    (
        "cpu_pressure",
        OtherFigure::CpuPressure,
        Unit::Number,
        &[Scope::Cgroup, Scope::System],
    ),
    (
        "throttled_ms_per_s",
        OtherFigure::ThrottledMsPerS,
        Unit::Number,
        &[Scope::Cgroup],
    ),
];

#[derive(Clone, Copy)]
enum OtherFigure {
    Metric(&'static str),
    RqLen,
    CpuPressure,
    ThrottledMsPerS,
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

fn metric_unit(m: &Metric) -> Unit {
    match m.unit {
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
            return Some((Figure::Metric(m), metric_unit(m)));
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
    let &(_, f, unit, _) = OTHER.iter().find(|o| o.0 == key && o.3.contains(&scope))?;
    let figure = match f {
        OtherFigure::Metric(k) => Figure::Metric(metrics::by_key(k)?),
        OtherFigure::RqLen => Figure::RqLen,
        OtherFigure::CpuPressure => Figure::CpuPressure,
        OtherFigure::ThrottledMsPerS => Figure::ThrottledMsPerS,
    };
    Some((figure, unit))
}

/// Every name `scope` accepts, the old names first (an error lists them).
pub fn names(scope: Scope) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let mut push = |n: String| {
        if !v.contains(&n) {
            v.push(n);
        }
    };
    for (alias, _) in ALIASES {
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
    OTHER
        .iter()
        .filter(|o| o.3.contains(&scope))
        .for_each(|o| push(o.0.to_string()));
    v
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
        Figure::RqLen => "rq_len".into(),
        Figure::CpuPressure => "cpu_pressure".into(),
        Figure::ThrottledMsPerS => "throttled_ms_per_s".into(),
        Figure::Finding(k) => k.key().into(),
    }
}

/// The figure a threshold in ns compares with a time metric: the metric's
/// value scaled to ns.
pub fn to_compared(m: &Metric, v: f64) -> f64 {
    match m.unit {
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
        // ids, names, histograms are not compared
        for key in [
            "tid",
            "pid",
            "comm",
            "wait_hist_us",
            "exited",
            "stolen_by_kind_ns",
        ] {
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
