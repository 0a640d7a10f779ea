//! Per-node summaries of the CPU view (its grid's and list's summary
//! line): each figure aggregated over the node's CPUs the way its
//! descriptor says (cpu_metrics.rs `node`: sum, mean, max), plus the
//! node's migration flows.
use std::collections::BTreeMap;

use super::cpu_metrics::{by_key, CpuRow};
use super::cpus::{CpuHistory, CpuView};
use super::rates::ThreadInterval;

/// Per-node sums of the CPU figures (the grid's and list's summary line).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeSummary {
    pub node: u32,
    pub cpus: Vec<u32>,
    /// mean of the CPUs' interval averages
    pub rq_now: Option<f64>,
    /// mean of the CPUs' history averages, and the longest queue in it
    pub rq_avg: Option<f64>,
    pub rq_max: Option<u64>,
    pub busy_pct: Option<f64>,
    pub switches_s: Option<f64>,
    /// cross-node migrations per second into / out of the node
    pub xin_s: Option<f64>,
    pub xout_s: Option<f64>,
    /// migrations between the node's own CPUs per second
    pub local_s: Option<f64>,
}

/// One summary per node, in node order.
pub fn node_summaries(view: &CpuView, hist: &CpuHistory) -> Vec<NodeSummary> {
    let mut nodes: BTreeMap<u32, Vec<CpuRow>> = BTreeMap::new();
    for c in &view.cpus {
        nodes
            .entry(c.node)
            .or_default()
            .push(CpuRow::of_figures(c, hist));
    }
    nodes
        .into_iter()
        .map(|(node, rows)| {
            // the figure with this key over the node's CPUs
            let agg = |key: &str| by_key(key).and_then(|f| f.node_value(&rows));
            let (mut xin, mut xout) = (0.0, 0.0);
            for f in &view.flows {
                if f.from_node == f.to_node {
                    continue;
                }
                if f.to_node == node {
                    xin += ThreadInterval::per_s(f.count, view.interval_s);
                }
                if f.from_node == node {
                    xout += ThreadInterval::per_s(f.count, view.interval_s);
                }
            }
            let m = view.has_migrations;
            // one node: nothing can cross
            let x = m && view.cpus.iter().any(|c| c.node != node);
            NodeSummary {
                node,
                cpus: rows.iter().map(|r| r.cpu).collect(),
                rq_now: agg("rq_len_avg"),
                rq_avg: agg("rq_history_avg"),
                rq_max: agg("rq_history_max").map(|v| v as u64),
                busy_pct: agg("busy_pct"),
                switches_s: agg("switches_per_s"),
                xin_s: x.then_some(xin),
                xout_s: x.then_some(xout),
                local_s: m.then(|| view.flow_s(node, node)),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cpus::CpuFigures;

    /// Two nodes of two CPUs: each summary figure is its descriptor's
    /// aggregate, worked out by hand.
    #[test]
    fn each_figure_aggregates_as_its_descriptor_says() {
        let cpu = |cpu, node, rq: f64, max, busy: f64, sw: f64| CpuFigures {
            cpu,
            node,
            llc: node,
            rq_now: Some(rq),
            rq_max: Some(max),
            busy_pct: Some(busy),
            switches_s: Some(sw),
            migr_in_s: None,
            migr_out_s: None,
            irq: None,
        };
        let view = CpuView {
            interval_s: 1.0,
            cpus: vec![
                cpu(0, 0, 1.0, 2, 20.0, 100.0),
                cpu(1, 0, 3.0, 5, 60.0, 300.0),
                cpu(2, 1, 0.5, 1, 10.0, 50.0),
                // a CPU that knows nothing counts in no figure
                CpuFigures {
                    cpu: 3,
                    node: 1,
                    llc: 1,
                    rq_now: None,
                    rq_max: None,
                    busy_pct: None,
                    switches_s: None,
                    migr_in_s: None,
                    migr_out_s: None,
                    irq: None,
                },
            ],
            ..Default::default()
        };
        let mut hist = CpuHistory::default();
        hist.push(&view);
        let s = node_summaries(&view, &hist);
        assert_eq!(s.len(), 2);
        // mean, mean, sum; the history of one interval is that interval
        assert_eq!(s[0].rq_now, Some(2.0));
        assert_eq!(s[0].busy_pct, Some(40.0));
        assert_eq!(s[0].switches_s, Some(400.0));
        assert_eq!(s[0].rq_avg, Some(2.0));
        // max: the longest queue of the node's history
        assert_eq!((s[0].rq_max, s[1].rq_max), (Some(5), Some(1)));
        assert_eq!(s[1].cpus, [2, 3]);
        assert_eq!(s[1].busy_pct, Some(10.0));
        assert_eq!(s[1].switches_s, Some(50.0));
        assert_eq!(s[1].rq_now, Some(0.5));
        // no flows counted: nothing crossed, no locals
        assert_eq!((s[0].xin_s, s[0].local_s), (None, None));
    }
}
