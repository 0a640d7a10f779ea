//! Evaluating a parsed trigger (trigger.rs) on one interval's rows: which
//! thread, process or the system crosses the threshold, and whether it has
//! held for the trigger's `for` time. Scopes whose figures are not in the
//! rows yet (cpu, cgroup, pressure) report that they are not evaluated,
//! rather than never firing in silence.
use super::interval::{Derived, Row};
use super::trigger::{Figure, Scope, Trigger};

/// Who crossed the threshold, with the figure (ns for times).
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// thread id, process id, or 0 for the system
    pub id: u32,
    pub comm: String,
    pub value: f64,
}

/// What one interval says about a trigger.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// the condition holds for these, highest figure first
    Holds(Vec<Hit>),
    Quiet,
    /// the rows do not carry this scope's figure
    NotEvaluated(&'static str),
}

fn row_figure(f: Figure, r: &Row) -> Option<f64> {
    match f {
        // log2 buckets: the p99 is known to a factor of two (upper bound)
        // log2 buckets: the p99 is known to a factor of two (upper bound)
        Figure::WaitP99 => r.p99_wait_us.map(|us| us as f64 * 1e3),
        Figure::InvolPerS => r.nvcsw_s,
        Figure::MigrPerS => r.migr_s,
        _ => None,
    }
}

/// The trigger's condition on the interval `d`.
pub fn evaluate(t: &Trigger, d: &Derived) -> Verdict {
    let rows = match t.scope {
        Scope::Thread => &d.threads,
        Scope::Proc => &d.processes,
        Scope::System => {
            let v = match t.figure {
                Figure::InvolPerS => Some(d.system.involuntary_s),
                _ => None,
            };
            return match v {
                None => Verdict::NotEvaluated("this system figure is not in the rows yet"),
                Some(v) if t.op.holds(v, t.threshold) => Verdict::Holds(vec![Hit {
                    id: 0,
                    comm: "system".into(),
                    value: v,
                }]),
                Some(_) => Verdict::Quiet,
            };
        }
        Scope::Cpu | Scope::Cgroup => {
            return Verdict::NotEvaluated("cpu and cgroup triggers are not evaluated yet")
        }
    };
    let mut hits: Vec<Hit> = rows
        .iter()
        .filter_map(|r| {
            let v = row_figure(t.figure, r)?;
            t.op.holds(v, t.threshold).then(|| Hit {
                id: r.id,
                comm: r.comm.clone(),
                value: v,
            })
        })
        .collect();
    if hits.is_empty() {
        return Verdict::Quiet;
    }
    hits.sort_by(|a, b| b.value.total_cmp(&a.value));
    Verdict::Holds(hits)
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

    fn row(id: u32, comm: &str, nvcsw_s: f64, wait_slot: usize) -> Row {
        let mut octaves = vec![0u64; 28];
        octaves[wait_slot] = 100;
        let wait_hist = Log2Hist::from_octaves(octaves);
        Row {
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
            oncpu_ns: None,
            wait_ns: None,
            migrations: None,
            cross_node_migrations: None,
            vcsw_s: None,
            nvcsw_s: Some(nvcsw_s),
            cpu_pct: None,
            avg_slice_ns: None,
            p99_slice_us: None,
            p99_wait_us: wait_hist.quantile_us(0.99),
            p99_wakeup_wait_us: None,
            p99_preempt_wait_us: None,
            migr_s: None,
            xnode_s: None,
            slice_hist: None,
            wait_hist: Some(wait_hist),
            wakeup_wait_hist: None,
            preempt_wait_hist: None,
            attrs: ThreadAttrs::default(),
            cgroup: None,
            cgroup_name: None,
        }
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
        let Verdict::Holds(h) = evaluate(&t, &d) else {
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
        let Verdict::Holds(h) = evaluate(&t, &d) else {
            panic!("no hit");
        };
        assert_eq!((h.len(), h[0].id, h[0].value), (1, 2, want));
        assert_eq!(
            evaluate(&parse("thread:invol_per_s>1000").unwrap(), &d),
            Verdict::Quiet
        );
        assert!(matches!(
            evaluate(&parse("cpu:rq_len>8").unwrap(), &d),
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
}
