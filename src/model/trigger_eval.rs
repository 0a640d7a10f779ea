//! Evaluating a parsed trigger (trigger.rs) on one interval: which
//! thread, process, cgroup, CPU or the system crosses the threshold, and
//! whether it has held for the trigger's `for` time. A figure the source
//! cannot see (no histograms under procfs, no PSI) reports that it is not
//! evaluated, rather than never firing in silence.
use super::cgroup::CgroupRow;
use super::cgroup_metrics::{self, CgroupFigure};
use super::cpu_metrics::CpuRow;
use super::cpus::{CpuHistory, CpuView};
use super::findings::{Finding, Severity, Value};
use super::interval::{Derived, Row};
use super::metrics::{Get, Value as FigureValue};
use super::system_metrics::SystemRow;
use super::trigger::{Figure, Scope, Trigger};
use super::trigger_figures::{to_compared, unit_to_compared};

/// Who crossed the threshold, with the figure (ns for times).
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// thread id, process id, CPU number, or 0 for the system and cgroups
    pub id: u32,
    /// the name (a cgroup: its path); hostile, escape before display
    pub comm: String,
    pub value: f64,
}

/// What one interval says about a trigger.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// the condition holds for these, highest figure first
    Holds(Vec<Hit>),
    Quiet,
    /// the interval does not carry this figure (says why)
    NotEvaluated(&'static str),
}

/// Everything one interval offers the evaluator.
#[derive(Clone, Copy, Debug)]
pub struct Figures<'a> {
    pub derived: &'a Derived,
    /// the CPU view's figures (None on the first Sample)
    pub cpus: Option<&'a CpuView>,
    /// the interval's findings, computed once by the caller (`finding:KIND`)
    pub findings: &'a [Finding],
}

impl<'a> Figures<'a> {
    /// Rows only (no CPU view, no pressure).
    pub fn rows(derived: &'a Derived) -> Figures<'a> {
        Figures {
            derived,
            cpus: None,
            findings: &[],
        }
    }
}

pub use super::pressure_share::{system_full_pressure_pct, system_pressure_pct};

/// A row's figure; None where the row does not carry it (times in ns).
pub fn row_figure(f: Figure, r: &Row) -> Option<f64> {
    match f {
        // p99s: interpolated within a log-linear bucket (metrics.rs)
        Figure::Metric(m) => m.value(r).number().map(|v| to_compared(m, v)),
        Figure::Counter(d) => r.counter_per_s(d),
        _ => None,
    }
}

/// Whether a row carries what the figure is computed from, though the
/// figure itself may be unknown (an empty histogram has no p99: a quiet
/// interval, not a missing figure).
fn row_measured(f: Figure, r: &Row) -> bool {
    match f {
        Figure::Metric(m) => match m.key {
            "p99_wait" => r.wait_hist().is_some(),
            "p99_wakeup_wait" => r.wakeup_wait_hist().is_some(),
            "p99_preempt_wait" => r.preempt_wait_hist().is_some(),
            "p99_slice" => r.slice_hist().is_some(),
            "migr" => r.migrations.is_some(),
            _ => match m.get {
                Get::Total(d) | Get::Column(d, _) | Get::ByLabel(d) => d.measured(&r.counters),
                Get::Row(_) => false,
            },
        },
        Figure::Counter(d) => d.measured(&r.counters),
        _ => false,
    }
}

/// A table figure's value as a trigger compares it (times in ns).
fn compared(unit: super::metrics::Unit, v: FigureValue) -> Option<f64> {
    v.number().map(|n| unit_to_compared(unit, n))
}

/// A cgroup's figure (its `trigger_else` while unknown), and whether the
/// cgroup carries what it is computed from.
fn cgroup_figure(f: &CgroupFigure, c: &CgroupRow) -> (Option<f64>, bool) {
    let read = |f: &CgroupFigure| compared(f.unit, f.value(c));
    let v = read(f).or_else(|| {
        f.trigger_else
            .and_then(cgroup_metrics::by_key)
            .and_then(read)
    });
    let measured = f
        .measured_by
        .and_then(cgroup_metrics::by_key)
        .is_some_and(|m| !matches!(m.value(c), FigureValue::None));
    (v, measured)
}

/// The threads' figures summed (None: no thread carries it).
fn sum_rows(d: &Derived, read: impl Fn(&Row) -> Option<f64>) -> Option<f64> {
    let mut any = false;
    let sum = d
        .threads
        .iter()
        .filter_map(|r| read(r))
        .inspect(|_| any = true)
        .sum::<f64>();
    any.then_some(sum)
}

fn system_figure(f: Figure, x: &Figures) -> Option<f64> {
    let d = x.derived;
    match f {
        Figure::System(s) => compared(
            s.unit,
            s.value(&SystemRow {
                rates: Some(&d.system),
                sample: None,
            }),
        ),
        Figure::Counter(c) => sum_rows(d, |r| r.counter_per_s(c)),
        _ => None,
    }
}

/// The trigger's condition on one interval.
pub fn evaluate(t: &Trigger, x: &Figures) -> Verdict {
    if let Figure::Finding(kind) = t.figure {
        return finding_verdict(kind, x.findings);
    }
    let d = x.derived;
    let mut seen = false;
    let mut hits: Vec<Hit> = Vec::new();
    // `measured`: the row carries the figure's source (an empty histogram
    // is a quiet interval, not a missing figure)
    let mut consider = |id: u32, name: &str, v: Option<f64>, measured: bool| {
        seen |= measured || v.is_some();
        if let Some(v) = v {
            if t.op.holds(v, t.threshold) {
                hits.push(Hit {
                    id,
                    comm: name.to_string(),
                    value: v,
                });
            }
        }
    };
    let row_measured = |r: &Row| row_measured(t.figure, r);
    match t.scope {
        Scope::Thread => d
            .threads
            .iter()
            .for_each(|r| consider(r.id, &r.comm, row_figure(t.figure, r), row_measured(r))),
        Scope::Proc => d
            .processes
            .iter()
            .for_each(|r| consider(r.id, &r.comm, row_figure(t.figure, r), row_measured(r))),
        Scope::Cgroup => d.cgroups.iter().for_each(|c| {
            let (v, measured) = match t.figure {
                Figure::Cgroup(f) => cgroup_figure(f, c),
                _ => (None, false),
            };
            consider(0, &c.path, v, measured)
        }),
        Scope::Cpu => {
            // triggers read the interval's figures, not the view's history
            let history = CpuHistory::default();
            for c in x.cpus.map_or(&[][..], |v| &v.cpus[..]) {
                let v = match t.figure {
                    Figure::Cpu(f) => compared(f.unit, f.value(&CpuRow::of_figures(c, &history))),
                    _ => None,
                };
                consider(c.cpu, &format!("cpu{}", c.cpu), v, false);
            }
        }
        Scope::System => consider(0, "system", system_figure(t.figure, x), false),
        Scope::Finding => {}
    }
    if hits.is_empty() {
        // rows that exist but carry no figure: the source cannot see it
        let has_rows = match t.scope {
            Scope::Thread => !d.threads.is_empty(),
            Scope::Proc => !d.processes.is_empty(),
            Scope::Cgroup => !d.cgroups.is_empty(),
            Scope::Cpu => x.cpus.is_some_and(|v| !v.cpus.is_empty()),
            Scope::System => true,
            Scope::Finding => false,
        };
        if !seen && has_rows {
            return Verdict::NotEvaluated("this source does not measure the figure");
        }
        return Verdict::Quiet;
    }
    hits.sort_by(|a, b| b.value.total_cmp(&a.value));
    Verdict::Holds(hits)
}

/// `finding:KIND`: the warnings of that kind, by impact (the findings
/// are ranked already). Info findings do not fire: they are not trouble.
fn finding_verdict(kind: super::findings::FindingKind, found: &[Finding]) -> Verdict {
    let hits: Vec<Hit> = found
        .iter()
        .filter(|f| f.kind == kind && f.severity == Severity::Warning)
        .map(|f| Hit {
            id: match &f.subject.id {
                Value::Int(n) => u32::try_from(*n).unwrap_or(0),
                _ => 0,
            },
            comm: match &f.subject.id {
                // a cgroup is named by its path, as cgroup triggers do
                Value::Text(path) => path.clone(),
                _ => f.subject.name.clone(),
            },
            value: f.impact,
        })
        .collect();
    if hits.is_empty() {
        Verdict::Quiet
    } else {
        Verdict::Holds(hits)
    }
}

/// A trigger's `for` clock: fires once the condition has held for `for_ns`
/// without a break (at once when 0), and again only after it stopped.
#[derive(Clone, Debug, Default)]
pub struct Hold {
    since_ns: Option<u64>,
    fired: bool,
}

impl Hold {
    /// The condition's state at `now_ns` (monotonic); true when it fires.
    pub fn update(&mut self, holds: bool, now_ns: u64, for_ns: u64) -> bool {
        if !holds {
            *self = Hold::default();
            return false;
        }
        let since = *self.since_ns.get_or_insert(now_ns);
        if !self.fired && now_ns.saturating_sub(since) >= for_ns {
            self.fired = true;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hist::Log2Hist;
    use crate::model::interval::{Row, RowKey};
    use crate::model::trigger::parse;
    use crate::model::ThreadAttrs;

    fn row(id: u32, comm: &str, nvcsw_s: f64, wait_slot: usize) -> std::sync::Arc<Row> {
        let mut octaves = vec![0u64; 28];
        octaves[wait_slot] = 100;
        let wait_hist = Log2Hist::from_octaves(octaves);
        std::sync::Arc::new(Row {
            key: RowKey::Thread {
                tid: id,
                start_time_ns: 0,
            },
            id,
            pid: id,
            comm: comm.into(),
            process_comm: comm.into(),
            cpu: None,
            threads: 1,
            exited: false,
            voluntary: 0,
            involuntary: 0,
            attrs: ThreadAttrs::default(),
            cgroup: None,
            cgroup_name: None,
            figures: std::sync::Arc::new(crate::model::interval::RowFigures {
                nvcsw_s: crate::model::opt_rate::OptRate::from(Some(nvcsw_s)),
                p99_wait_us: crate::model::row::p99_us(Some(&wait_hist)),
                hists: crate::model::row_hists::RowHists::new([None, Some(wait_hist), None, None]),
                ..Default::default()
            }),
        })
    }

    #[test]
    fn rows_over_the_threshold_fire_highest_first() {
        let d = Derived {
            threads: vec![
                row(1, "quiet", 5.0, 3),
                row(2, "a", 300.0, 20),
                row(3, "b", 900.0, 14),
            ],
            ..Default::default()
        };
        let t = parse("thread:invol_per_s>100").unwrap();
        let Verdict::Holds(h) = evaluate(&t, &Figures::rows(&d)) else {
            panic!("no hit");
        };
        assert_eq!(h.iter().map(|x| x.id).collect::<Vec<_>>(), vec![3, 2]);
        // the p99 of a histogram whose every count is in one octave lies
        // 99 % of the way through it (interpolated), compared in ns
        let t = parse("thread:wait_p99>20ms").unwrap();
        // octave 20 is [2^19, 2^20) us: p99 = 2^19 * 1.99 us (1.04 s);
        // octave 14 ends at 16.4 ms: under 20 ms
        let want = ((1u64 << 19) as f64 * 1.99).round() * 1e3;
        assert!(want > 20e6);
        let Verdict::Holds(h) = evaluate(&t, &Figures::rows(&d)) else {
            panic!("no hit");
        };
        assert_eq!((h.len(), h[0].id, h[0].value), (1, 2, want));
        assert_eq!(
            evaluate(
                &parse("thread:invol_per_s>1000").unwrap(),
                &Figures::rows(&d)
            ),
            Verdict::Quiet
        );
        // procfs rows carry no histogram: not evaluated, said so
        let mut bare = d.clone();
        bare.threads
            .iter_mut()
            .map(std::sync::Arc::make_mut)
            .for_each(|r| {
                r.p99_wait_us = None;
                r.hists = Default::default();
            });
        assert!(matches!(
            evaluate(&t, &Figures::rows(&bare)),
            Verdict::NotEvaluated(_)
        ));
        // BPF rows of threads that never waited: measured, and quiet
        let mut idle = d.clone();
        idle.threads
            .iter_mut()
            .map(std::sync::Arc::make_mut)
            .for_each(|r| {
                r.p99_wait_us = None;
                r.hists = crate::model::row_hists::RowHists::new([
                    None,
                    Some(Log2Hist::from_counts([0; 30])),
                    None,
                    None,
                ]);
            });
        assert_eq!(evaluate(&t, &Figures::rows(&idle)), Verdict::Quiet);
    }

    #[test]
    fn cpus_cgroups_and_pressure() {
        use crate::model::cgroup::CgroupRow;
        use crate::model::cpus::{CpuFigures, CpuView};
        let cpu = |n: u32, rq: f64| CpuFigures {
            cpu: n,
            node: 0,
            llc: 0,
            rq_now: Some(rq),
            rq_max: None,
            busy_pct: None,
            switches_s: None,
            migr_in_s: None,
            migr_out_s: None,
            irq: None,
        };
        let view = CpuView {
            interval_s: 1.0,
            cpus: vec![cpu(0, 1.0), cpu(1, 9.5)],
            ..Default::default()
        };
        let d = Derived {
            cgroups: vec![
                CgroupRow {
                    path: "/".into(),
                    ..Default::default()
                },
                CgroupRow {
                    path: "/batch".into(),
                    throttled_ms_per_s: Some(250.0),
                    psi_some_pct: Some(40.0),
                    ..Default::default()
                },
                // the first interval: no share yet, the kernel's average
                CgroupRow {
                    path: "/new".into(),
                    psi_some_avg10: Some(45.0),
                    ..Default::default()
                },
            ],
            system: crate::model::interval::SystemRates {
                pressure_some_pct: Some(12.0),
                ..Default::default()
            },
            ..Default::default()
        };
        let x = Figures {
            derived: &d,
            cpus: Some(&view),
            findings: &[],
        };
        let holds = |e: &str| match evaluate(&parse(e).unwrap(), &x) {
            Verdict::Holds(h) => h.into_iter().map(|h| h.comm).collect::<Vec<_>>(),
            v => panic!("{e}: {v:?}"),
        };
        assert_eq!(holds("cpu:rq_len>8"), ["cpu1"]);
        assert_eq!(holds("cgroup:throttled_ms_per_s>100"), ["/batch"]);
        assert_eq!(holds("cgroup:cpu_pressure>=40"), ["/new", "/batch"]);
        assert_eq!(holds("system:cpu_pressure>10"), ["system"]);
        // the old names are the tables' keys
        assert_eq!(holds("cpu:rq_len_avg>8"), ["cpu1"]);
        assert_eq!(holds("cgroup:psi_some_pct>=40"), ["/new", "/batch"]);
        assert_eq!(holds("system:psi_cpu_some_pct>10"), ["system"]);
        assert_eq!(
            evaluate(&parse("system:cpu_pressure>20").unwrap(), &x),
            Verdict::Quiet
        );
        assert_eq!(
            evaluate(&parse("cpu:rq_len>10").unwrap(), &x),
            Verdict::Quiet
        );
        // no PSI on this kernel: said, not silent
        let mut d_none = d.clone();
        d_none.system.pressure_some_pct = None;
        let none = Figures {
            derived: &d_none,
            ..x
        };
        assert!(matches!(
            evaluate(&parse("system:cpu_pressure>1").unwrap(), &none),
            Verdict::NotEvaluated(_)
        ));
    }

    #[test]
    fn for_needs_an_unbroken_hold_and_fires_once() {
        let s = 1_000_000_000;
        let mut h = Hold::default();
        assert!(!h.update(true, 0, 3 * s));
        assert!(!h.update(true, 2 * s, 3 * s));
        assert!(!h.update(false, 3 * s, 3 * s)); // broken
        assert!(!h.update(true, 4 * s, 3 * s));
        assert!(!h.update(true, 6 * s, 3 * s));
        assert!(h.update(true, 7 * s, 3 * s));
        assert!(!h.update(true, 8 * s, 3 * s)); // once per episode
        assert!(!h.update(false, 9 * s, 3 * s));
        assert!(h.update(true, 10 * s, 0)); // `for` 0: at once
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
