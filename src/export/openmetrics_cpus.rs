//! The exporter's per-CPU families, through the CPU table
//! (model/cpu_metrics.rs): every figure with an OpenMetrics family is one
//! series per CPU of the newest Sample, labelled with the CPU and its node
//! (and the figure's own labels where several share a family). They are
//! the Sample's cumulative counters; the run-queue length is a gauge over
//! the scrape window. A figure the CPU does not give (no interrupt figures
//! in a recording, probes off) has no series rather than a made-up 0.
use prometheus_client::metrics::MetricType;

use super::openmetrics_encode::{Family, Labels, Value};
use crate::model::cgroup_metrics::OmType;
use crate::model::cpu_metrics::{exported, OmGet, OmSpec};
use crate::model::{Sample, Topology};

fn value(om: &OmSpec, v: f64) -> Value {
    match om.kind {
        OmType::Counter => Value::Counter(v),
        OmType::Gauge => Value::Gauge(v),
    }
}

/// The per-CPU families of `latest`; `rq_window`: each CPU's average
/// run-queue length since the previous scrape.
pub fn cpu_families(topology: &Topology, latest: &Sample, rq_window: &[(u32, f64)]) -> Vec<Family> {
    let cpu_labels = |cpu: u32| -> Labels {
        let node = topology.node_of(cpu).unwrap_or(0);
        vec![("cpu", cpu.to_string()), ("node", node.to_string())]
    };
    let mut families: Vec<Family> = Vec::new();
    for (_, om) in exported() {
        if families.iter().any(|f| f.name == om.family) {
            continue;
        }
        let kind = match om.kind {
            OmType::Counter => MetricType::Counter,
            OmType::Gauge => MetricType::Gauge,
        };
        let mut f = Family::new(om.family, om.help, kind);
        f.seconds = om.seconds;
        // the figures of this family, CPU by CPU
        let members: Vec<_> = exported().filter(|(_, o)| o.family == om.family).collect();
        for c in &latest.cpus {
            for (fig, o) in &members {
                let Some(v) = fig.om_value(c) else { continue };
                let mut l = cpu_labels(c.cpu);
                l.extend(o.labels.iter().map(|&(k, v)| (k, v.to_string())));
                f.rows.push((l, value(o, v)));
            }
        }
        for (_, o) in members
            .iter()
            .filter(|(_, o)| matches!(o.get, OmGet::RqSinceScrape))
        {
            for &(cpu, avg) in rq_window {
                let mut l = cpu_labels(cpu);
                l.extend(o.labels.iter().map(|&(k, v)| (k, v.to_string())));
                f.rows.push((l, value(o, avg / o.per)));
            }
        }
        families.push(f);
    }
    families
}
