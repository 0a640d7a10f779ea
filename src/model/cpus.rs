//! Figures of the CPU (`c`) and NUMA (`n`) views, derived once per Sample
//! from two neighbouring Samples with `model::rates` and `model::flows`,
//! and the bounded run-queue history behind the CPU sparklines.
use crate::model::counters::CTR_CROSS_NODE_MIGRATIONS;
use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::model::flows::{node_flows, NodeFlow};
use crate::model::rates::{
    busy_pct, cpu_intervals, elapsed_s, migration_deltas, CpuIrqShares, ThreadInterval,
};
use crate::model::why::{cause_moves, MigCause};
use crate::model::{Sample, Topology};

/// Points of run-queue history kept per CPU (one per interval).
pub const CPU_HISTORY_CAP: usize = 300;

/// One CPU's run queue over one interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RqPoint {
    pub avg: f32,
    pub max: u32,
}

/// What one CPU did during the last interval. Fields are None where the
/// source cannot see them (no run-queue sampler, no migration matrix, the
/// CPU missing from the Sample).
#[derive(Clone, Debug, PartialEq)]
pub struct CpuFigures {
    pub cpu: u32,
    pub node: u32,
    pub llc: u32,
    /// run-queue length, the interval's average and maximum
    pub rq_now: Option<f64>,
    pub rq_max: Option<u64>,
    pub busy_pct: Option<f64>,
    pub switches_s: Option<f64>,
    /// migrations into / out of this CPU per second (any source CPU)
    pub migr_in_s: Option<f64>,
    pub migr_out_s: Option<f64>,
    /// interrupt and steal shares (None: an end without them)
    pub irq: Option<CpuIrqShares>,
}

/// The last interval, for both views.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuView {
    pub interval_s: f64,
    /// in topology order: node, LLC, CPU
    pub cpus: Vec<CpuFigures>,
    /// node→node migration counts of the interval (including same-node)
    pub flows: Vec<NodeFlow>,
    /// the source counts CPU→CPU migrations (BPF); procfs does not
    pub has_migrations: bool,
    /// only the migrations of this cause are counted (None: all)
    pub cause: Option<MigCause>,
}

impl CpuView {
    /// Migrations per second from `from` to `to` (same node: within it).
    pub fn flow_s(&self, from: u32, to: u32) -> f64 {
        let n = self
            .flows
            .iter()
            .find(|f| f.from_node == from && f.to_node == to)
            .map_or(0, |f| f.count);
        ThreadInterval::per_s(n, self.interval_s)
    }

    /// All migrations per second, and those that crossed nodes.
    pub fn totals_s(&self) -> (f64, f64) {
        let all: u64 = self.flows.iter().map(|f| f.count).sum();
        let cross = crate::model::flows::cross_node_total(&self.flows);
        (
            ThreadInterval::per_s(all, self.interval_s),
            ThreadInterval::per_s(cross, self.interval_s),
        )
    }

    /// Cross-node flows, biggest first (ties by node ids).
    pub fn cross_flows(&self) -> Vec<NodeFlow> {
        let mut v: Vec<NodeFlow> = self
            .flows
            .iter()
            .filter(|f| f.from_node != f.to_node && f.count > 0)
            .copied()
            .collect();
        v.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then((a.from_node, a.to_node).cmp(&(b.from_node, b.to_node)))
        });
        v
    }
}

/// The CPUs of the topology in display order: node, LLC, CPU.
pub fn display_order(t: &Topology) -> Vec<(u32, u32, u32)> {
    let mut v: Vec<(u32, u32, u32)> = t.cpus.iter().map(|c| (c.node, c.llc, c.cpu)).collect();
    v.sort_unstable();
    v
}

/// The figures of the interval ending with `cur`; None without an earlier
/// Sample (cumulative counters give no rate yet) or when `cur` is not later. CPUs the topology does
/// not know (hotplugged since the stream began) are left out, as in
/// `node_flows`.
pub fn derive(topology: &Topology, prev: Option<&Sample>, cur: &Sample) -> Option<CpuView> {
    derive_by(topology, prev, cur, None)
}

/// `derive`, counting only the migrations of `cause` (None: all) in the
/// moves in and out and the node flows.
pub fn derive_by(
    topology: &Topology,
    prev: Option<&Sample>,
    cur: &Sample,
    cause: Option<MigCause>,
) -> Option<CpuView> {
    let prev = prev?;
    let dt = elapsed_s(prev, cur);
    if dt <= 0.0 {
        // not a later Sample (a replay that went back): no rates, and no
        // history point made of counters since the start
        return None;
    }
    let per = cpu_intervals(Some(prev), cur, dt);
    let by_cpu: HashMap<u32, _> = per.iter().map(|c| (c.cpu, c)).collect();
    let (moves, has_migrations) = match cause {
        None => (
            migration_deltas(Some(prev), cur),
            !cur.migrations.is_empty() || cur.threads.iter().any(|t| t.migrations.is_some()),
        ),
        Some(c) => (
            cause_moves(Some(prev), cur, c),
            !cur.system.migrations_by_cause.is_empty(),
        ),
    };
    let mut into: HashMap<u32, u64> = HashMap::new();
    let mut out: HashMap<u32, u64> = HashMap::new();
    for &(from, to, n) in &moves {
        *out.entry(from).or_default() += n;
        *into.entry(to).or_default() += n;
    }
    let rate = |n: u64| ThreadInterval::per_s(n, dt);
    let cpus = display_order(topology)
        .into_iter()
        .map(|(node, llc, cpu)| {
            let iv = by_cpu.get(&cpu);
            CpuFigures {
                cpu,
                node,
                llc,
                rq_now: iv.and_then(|c| c.rq.as_ref()).map(|r| r.avg),
                rq_max: iv.and_then(|c| c.rq.as_ref()).map(|r| r.max),
                busy_pct: iv.filter(|_| dt > 0.0).map(|c| busy_pct(c.busy_ns, dt)),
                switches_s: iv.map(|c| rate(c.switches)),
                migr_in_s: has_migrations.then(|| rate(into.get(&cpu).copied().unwrap_or(0))),
                migr_out_s: has_migrations.then(|| rate(out.get(&cpu).copied().unwrap_or(0))),
                irq: iv.and_then(|c| c.irq.clone()),
            }
        })
        .collect();
    Some(CpuView {
        interval_s: dt,
        cpus,
        flows: node_flows(topology, &moves),
        has_migrations,
        cause,
    })
}

/// Run-queue length per CPU over the kept intervals, oldest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CpuHistory {
    pub series: BTreeMap<u32, VecDeque<RqPoint>>,
}

impl CpuHistory {
    /// Append the interval's points; forget CPUs that are gone.
    pub fn push(&mut self, view: &CpuView) {
        self.series
            .retain(|cpu, _| view.cpus.iter().any(|c| c.cpu == *cpu));
        for c in &view.cpus {
            let (Some(avg), Some(max)) = (c.rq_now, c.rq_max) else {
                continue;
            };
            let s = self.series.entry(c.cpu).or_default();
            if s.len() >= CPU_HISTORY_CAP {
                s.pop_front();
            }
            s.push_back(RqPoint {
                avg: avg as f32,
                max: u32::try_from(max).unwrap_or(u32::MAX),
            });
        }
    }

    pub fn get(&self, cpu: u32) -> Option<&VecDeque<RqPoint>> {
        self.series.get(&cpu).filter(|s| !s.is_empty())
    }

    /// Mean of the kept interval averages.
    pub fn avg(&self, cpu: u32) -> Option<f64> {
        let s = self.get(cpu)?;
        Some(s.iter().map(|p| f64::from(p.avg)).sum::<f64>() / s.len() as f64)
    }

    /// Longest queue seen in the kept intervals.
    pub fn max(&self, cpu: u32) -> Option<u64> {
        self.get(cpu)?.iter().map(|p| u64::from(p.max)).max()
    }
}

/// "0-7", "0,2,4-5": a CPU list the way the kernel writes one.
pub fn cpu_list(cpus: &[u32]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Where each thread of a Sample last ran and its cross-node count: all a
/// thread's flows need of the previous Sample (32 B a thread, where the
/// Sample itself holds ~0.5 KB), so the live view need not keep it whole.
#[derive(Clone, Debug, Default)]
pub struct ThreadPlaces(Vec<(u32, u64, u32, Option<u64>)>);

impl ThreadPlaces {
    /// Taken every interval, asked about one thread (the selected one):
    /// kept unsorted, searched in full when asked.
    pub fn of(s: &Sample) -> Self {
        let mut places = ThreadPlaces::default();
        places.refill(s);
        places
    }

    /// `of`, in the list it already has (a new 1.6 MB list at 50,000
    /// threads, page-faulted in every interval, was 2 % of the live view).
    pub fn refill(&mut self, s: &Sample) {
        self.0.clear();
        self.0.extend(s.threads.iter().map(|t| {
            (
                t.tid,
                t.start_time_ns,
                t.cpu,
                t.counters.get(CTR_CROSS_NODE_MIGRATIONS),
            )
        }));
    }

    /// (last CPU, cross-node migrations) of a thread
    fn get(&self, tid: u32, start_time_ns: u64) -> Option<(u32, Option<u64>)> {
        let &(_, _, cpu, cross) = self
            .0
            .iter()
            .find(|&&(t, s, ..)| (t, s) == (tid, start_time_ns))?;
        Some((cpu, cross))
    }
}

/// The nodes whose cross-node flows belong to the thread: it has no
/// node→node matrix of its own, only a cross-node count, so these are the
/// nodes it was last seen on (previous and current Sample). Empty when the
/// thread did not cross nodes in the interval.
pub fn thread_flow_nodes(
    topology: &Topology,
    prev: Option<&ThreadPlaces>,
    cur: &Sample,
    tid: u32,
    start_time_ns: u64,
) -> Vec<u32> {
    let Some(t) = cur
        .threads
        .iter()
        .find(|t| t.tid == tid && t.start_time_ns == start_time_ns)
    else {
        return Vec::new();
    };
    let before = prev.and_then(|p| p.get(tid, start_time_ns));
    let crossed = match (t.counters.get(CTR_CROSS_NODE_MIGRATIONS), before) {
        (Some(now), Some((_, b))) => crate::model::rates::counter_delta(now, b.unwrap_or(0)) > 0,
        _ => false,
    };
    if !crossed {
        return Vec::new();
    }
    let mut nodes: Vec<u32> = [Some(t.cpu), before.map(|(cpu, _)| cpu)]
        .into_iter()
        .flatten()
        .filter_map(|c| topology.node_of(c))
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threads_flows_are_those_of_the_nodes_it_was_seen_on() {
        use crate::model::{CpuTopology, ThreadSample};
        let t = Topology {
            cpus: (0..4)
                .map(|cpu| CpuTopology {
                    cpu,
                    node: cpu / 2,
                    llc: cpu / 2 * 2,
                })
                .collect(),
        };
        let th = |cpu, cross| ThreadSample {
            tid: 7,
            start_time_ns: 1,
            cpu,
            counters: crate::model::counters::Counters::of(&[(CTR_CROSS_NODE_MIGRATIONS, cross)]),
            ..Default::default()
        };
        let s = |x: ThreadSample| Sample {
            threads: vec![x].into(),
            ..Default::default()
        };
        // moved from node 0 to node 1
        let (a, b) = (s(th(1, 4)), s(th(3, 5)));
        assert_eq!(
            thread_flow_nodes(&t, Some(&ThreadPlaces::of(&a)), &b, 7, 1),
            vec![0, 1]
        );
        // went away and came back: its own node
        let c = s(th(3, 7));
        assert_eq!(
            thread_flow_nodes(&t, Some(&ThreadPlaces::of(&b)), &c, 7, 1),
            vec![1]
        );
        // no cross-node move in the interval, or another thread of that tid
        assert!(thread_flow_nodes(&t, Some(&ThreadPlaces::of(&c)), &c, 7, 1).is_empty());
        assert!(thread_flow_nodes(&t, Some(&ThreadPlaces::of(&a)), &b, 7, 2).is_empty());
        assert!(thread_flow_nodes(&t, None, &b, 7, 1).is_empty());
    }

    #[test]
    fn no_rates_without_a_later_sample() {
        let t = Topology::default();
        let a = Sample {
            mono_ns: 5,
            ..Default::default()
        };
        assert!(derive(&t, None, &a).is_none());
        assert!(derive(&t, Some(&a), &a).is_none());
        let b = Sample {
            mono_ns: 1_000_000_005,
            ..Default::default()
        };
        assert_eq!(derive(&t, Some(&a), &b).unwrap().interval_s, 1.0);
    }

    #[test]
    fn cpu_lists_compress_ranges() {
        assert_eq!(cpu_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(cpu_list(&[5, 0, 2, 3]), "0,2-3,5");
        assert_eq!(cpu_list(&[]), "");
    }

    #[test]
    fn history_is_bounded_and_averages() {
        let mut h = CpuHistory::default();
        for i in 0..(CPU_HISTORY_CAP + 10) {
            let view = CpuView {
                interval_s: 1.0,
                cpus: vec![CpuFigures {
                    cpu: 3,
                    node: 0,
                    llc: 0,
                    rq_now: Some(if i % 2 == 0 { 1.0 } else { 3.0 }),
                    rq_max: Some(if i == CPU_HISTORY_CAP + 9 { 7 } else { 4 }),
                    busy_pct: None,
                    switches_s: None,
                    migr_in_s: None,
                    migr_out_s: None,
                    irq: None,
                }],
                ..Default::default()
            };
            h.push(&view);
        }
        assert_eq!(h.get(3).unwrap().len(), CPU_HISTORY_CAP);
        assert!((h.avg(3).unwrap() - 2.0).abs() < 1e-6);
        assert_eq!(h.max(3), Some(7));
        // the CPU went away: its series goes too
        h.push(&CpuView::default());
        assert!(h.get(3).is_none());
    }
}
