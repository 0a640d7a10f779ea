//! What a trigger may name, found in the descriptor tables rather than in
//! a list of its own: a thread or process figure is a metric of
//! metrics.rs by its key (`proc:p99_wait>20ms`, `thread:cpu_pct>90`), a
//! per-thread counter whose descriptor sets `trigger` (counters.rs) is
//! `<key>_per_s` at thread, process and system level. A new descriptor is
//! usable in `--trigger` with no code here. Cgroups, CPUs and the system
//! have no descriptor table yet: their figures are the short list below.
use super::counters::{CounterDesc, COUNTERS};
use super::metrics::{self, Get, Metric, Unit as MetricUnit, METRICS};
use super::trigger::{Figure, Scope};

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

/// Figures of cgroups, CPUs and the system (rows of no descriptor table
/// yet): (name, figure, unit, scopes). A metric key here is read from the
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

    /// Two Samples 2 s apart: the counter's cumulative values are known,
    /// so each level's rate is computed by hand. The trigger reads it
    /// through the descriptor alone (no code of its own for the counter).
    #[test]
    fn a_counter_descriptor_fires_at_every_level() {
        use crate::model::counters::{Counters, CTR_CROSS_NODE_MIGRATIONS};
        use crate::model::shared_interval::Deriver;
        use crate::model::trigger::parse;
        use crate::model::trigger_eval::{evaluate, Figures, Verdict};
        use crate::model::{Sample, ThreadSample};
        let thread = |tid: u32, pid: u32, comm: &str, xnode: Option<u64>| ThreadSample {
            tid,
            pid,
            comm: comm.into(),
            process_comm: comm.into(),
            migrations: Some(0),
            counters: xnode.map_or(Counters::UNKNOWN, |n| {
                Counters::of(&[(CTR_CROSS_NODE_MIGRATIONS, n)])
            }),
            ..Default::default()
        };
        let sample = |s: u64, moved: u64, steady: u64, procfs: bool| Sample {
            mono_ns: s * 1_000_000_000,
            threads: vec![
                thread(10, 10, "mover", Some(moved)),
                thread(11, 10, "steady", Some(steady)),
                thread(20, 20, "other", (!procfs).then_some(0)),
            ]
            .into(),
            ..Default::default()
        };
        let host = crate::model::HostInfo {
            hostname: "test".into(),
            kernel: "test".into(),
            topology: Default::default(),
            source: crate::model::SourceKind::Bpf,
            degraded_reason: None,
            sched_ext: None,
            interval_ns: 2_000_000_000,
        };
        let mut d = Deriver::new(host.clone());
        d.next(sample(0, 4, 1, false));
        // mover: 30 in 2 s; steady: 2 in 2 s; the process: both
        let iv = d.next(sample(2, 34, 3, false));
        let x = Figures {
            derived: &iv.derived,
            cpus: iv.cpus.as_ref(),
            pressure_pct: iv.pressure_pct,
            findings: &iv.findings,
        };
        let fired = |e: &str| match evaluate(&parse(e).unwrap(), &x) {
            Verdict::Holds(h) => h.into_iter().map(|h| (h.id, h.value)).collect::<Vec<_>>(),
            v => panic!("{e}: {v:?}"),
        };
        assert_eq!(fired("thread:cross_node_migrations_per_s>10"), [(10, 15.0)]);
        assert_eq!(fired("thread:cross_node_migrations_per_s>0.5").len(), 2);
        assert_eq!(fired("proc:cross_node_migrations_per_s>10"), [(10, 16.0)]);
        assert_eq!(fired("system:cross_node_migrations_per_s>=16"), [(0, 16.0)]);
        // the counter's generated metrics: its table column and its total
        assert_eq!(fired("proc:xnode>15.5"), [(10, 16.0)]);
        assert_eq!(fired("thread:cross_node_migrations>=30"), [(10, 30.0)]);
        let quiet = |e: &str| evaluate(&parse(e).unwrap(), &x);
        assert_eq!(
            quiet("system:cross_node_migrations_per_s>16"),
            Verdict::Quiet
        );
        assert_eq!(
            quiet("thread:cross_node_migrations_per_s>15"),
            Verdict::Quiet
        );
        // a source without the counters (procfs) says so, it is not quiet
        let mut d = Deriver::new(host);
        let procfs = |s| Sample {
            threads: vec![thread(20, 20, "other", None)].into(),
            ..sample(s, 0, 0, true)
        };
        d.next(procfs(0));
        let iv = d.next(procfs(2));
        assert!(matches!(
            evaluate(
                &parse("thread:cross_node_migrations_per_s>1").unwrap(),
                &Figures::rows(&iv.derived)
            ),
            Verdict::NotEvaluated(_)
        ));
        // a name no table has is refused with the keys there are
        let e = parse("proc:cross_node_per_s>1").unwrap_err();
        assert_eq!(e.part, "cross_node_per_s");
        assert!(e.expected.contains("cross_node_migrations_per_s"), "{e}");
        assert!(!e.to_string().contains('\n'));
    }
}
