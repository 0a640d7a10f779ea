//! The exporter's cgroup families, from the newest Interval's cgroup rows
//! through the cgroup table (model/cgroup_metrics.rs): every figure with
//! an OpenMetrics family is one series per cgroup. They are the kernel's
//! own cumulative counters (cpu.stat periods, throttled periods and time;
//! cpu.pressure stall time) passed through as counters, the quota and
//! thread count as gauges. A cgroup removed and created again under the
//! same path restarts its counters, which Prometheus reads as a counter
//! reset. A figure the kernel does not give (a v1 cgroup has no pressure,
//! the root no quota, a vanished cgroup nothing) has no series.
use prometheus_client::metrics::MetricType;

use super::openmetrics_encode::{label_text, Family, Labels, Value};
use crate::model::cgroup_metrics::{CgroupFigure, OmType, CGROUP_FIGURES};
use crate::model::CgroupRow;

/// The table's figures with a family, and the family each one fills.
fn exported() -> (Vec<Family>, Vec<(&'static CgroupFigure, usize)>) {
    let mut families: Vec<Family> = Vec::new();
    let mut figures = Vec::new();
    for fig in &CGROUP_FIGURES {
        let Some(om) = &fig.om else { continue };
        let at = match families.iter().position(|f| f.name == om.family) {
            Some(i) => i,
            None => {
                let kind = match om.kind {
                    OmType::Counter => MetricType::Counter,
                    OmType::Gauge => MetricType::Gauge,
                };
                let mut f = Family::new(om.family, om.help, kind);
                f.seconds = om.seconds;
                families.push(f);
                families.len() - 1
            }
        };
        figures.push((fig, at));
    }
    (families, figures)
}

/// The cgroup families; `budget` sample lines at most (cgroups past it are
/// left out whole, those with the most threads of their own first).
/// Returns the families and how many cgroups and sample lines were left
/// out.
pub fn cgroup_families(rows: &[CgroupRow], budget: usize) -> (Vec<Family>, usize, usize) {
    let (mut families, figures) = exported();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        rows[b]
            .own_threads
            .cmp(&rows[a].own_threads)
            .then(a.cmp(&b))
    });
    let mut lines = 0usize;
    let (mut left_out, mut left_lines) = (0usize, 0usize);
    for i in order {
        let r = &rows[i];
        // directory names are chosen by whoever made them: as inert as comm
        let name = label_text(&r.path);
        let mut samples: Vec<(usize, Labels, Value)> = Vec::new();
        for (fig, at) in &figures {
            let (Some(om), Some(v)) = (&fig.om, fig.om_value(r)) else {
                continue;
            };
            let mut labels: Labels = vec![("cgroup", name.clone())];
            if let Some((k, v)) = om.label {
                labels.push((k, v.to_string()));
            }
            let value = match om.kind {
                OmType::Counter => Value::Counter(v),
                OmType::Gauge => Value::Gauge(v),
            };
            samples.push((*at, labels, value));
        }
        if lines + samples.len() > budget {
            left_out += 1;
            left_lines += samples.len();
            continue;
        }
        lines += samples.len();
        for (at, l, v) in samples {
            families[at].rows.push((l, v));
        }
    }
    families.retain(|f| !f.rows.is_empty());
    (families, left_out, left_lines)
}
