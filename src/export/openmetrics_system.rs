//! The exporter's system families, through the system table
//! (model/system_metrics.rs): every figure with an OpenMetrics family is
//! one series of the newest Sample (with the figure's labels where several
//! share a family). A figure the Sample does not have (no PSI, no `full`
//! line before 5.13) has no series, and a family with none is left out.
use prometheus_client::metrics::MetricType;

use super::openmetrics_encode::{Family, Value};
use crate::model::system_metrics::exported;
use crate::model::Sample;

/// The system families of `latest` written at one place of the scrape:
/// before the per-CPU families, or after them (`after_cpus`).
pub fn system_families(latest: &Sample, after_cpus: bool) -> Vec<Family> {
    let mut families: Vec<Family> = Vec::new();
    for (_, om) in exported().filter(|(_, o)| o.after_cpus == after_cpus) {
        if families.iter().any(|f| f.name == om.family) {
            continue;
        }
        let mut f = Family::new(om.family, om.help, MetricType::Counter);
        f.seconds = om.seconds;
        for (_, o) in exported().filter(|(_, o)| o.family == om.family) {
            let Some(v) = o.value(latest) else { continue };
            let labels = o.labels.iter().map(|&(k, v)| (k, v.to_string())).collect();
            f.rows.push((labels, Value::Counter(v)));
        }
        families.push(f);
    }
    families.retain(|f| !f.rows.is_empty());
    families
}
