//! The batch-mode record: one JSON object per interval (JSON Lines). This
//! schema is an interface scripts rely on (docs/json-and-csv.md); add
//! fields, never rename or remove them.
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use std::sync::Arc;

use crate::model::cgroup_metrics;
use crate::model::cpu_metrics::{self, CpuRow};
use crate::model::findings::Finding;
use crate::model::interval::Row;
use crate::model::interval::SystemRates;
use crate::model::metrics::{self, Value};
use crate::model::shared_interval::{self, Interval};
use crate::model::system_metrics::{self, SystemRow};
use crate::model::{CgroupRow, HostInfo, Sample};
pub use crate::util::clock::{civil_from_days, rfc3339};

#[derive(Serialize)]
pub struct IntervalRecord {
    /// end of the interval, RFC 3339 UTC
    pub time: String,
    pub time_ns: u64,
    pub interval_s: f64,
    pub source: &'static str,
    pub host: String,
    pub threads: Vec<ThreadRecord>,
    pub cpus: Vec<CpuRecord>,
    pub migrations: Vec<MigrationRecord>,
    pub system: SystemRecord,
    pub cgroups: Vec<CgroupRecord>,
    /// what the interval says is wrong, ranked (the `schedtop why --json`
    /// shape: kind, severity, subject, impact, evidence, text)
    pub findings: Vec<Finding>,
}

/// One cgroup's interval (model/cgroup.rs): the figures of the cgroup
/// table (model/cgroup_metrics.rs) that have a JSON name, in its order.
/// Thread figures are summed over its subtree; throttling and pressure are
/// the kernel's own, for this cgroup. null: unknown (unlimited, for the
/// quota).
pub struct CgroupRecord(pub CgroupRow);

impl Serialize for CgroupRecord {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        for fig in cgroup_metrics::fields() {
            if let Some((name, v)) = fig.field_value(&self.0) {
                m.serialize_entry(name, &JsonValue(v))?;
            }
        }
        m.end()
    }
}

/// One thread's interval: the fields of the metric table (model/metrics.rs)
/// that have a JSON name, in its order.
pub struct ThreadRecord(pub Row);

impl Serialize for ThreadRecord {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        for (name, metric) in metrics::fields() {
            m.serialize_entry(name, &JsonValue(metric.value(&self.0)))?;
        }
        crate::export::why_json::entries(&mut m, &self.0)?;
        m.end()
    }
}

/// A metric's value as JSON: null when unknown, histograms as
/// [[low bound µs, count], ...] of the non-empty buckets.
struct JsonValue<'a>(Value<'a>);

impl Serialize for JsonValue<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Value::None => ser.serialize_none(),
            Value::U(v) => ser.serialize_u64(*v),
            Value::I(v) => ser.serialize_i64(*v),
            Value::F(v) => ser.serialize_f64(*v),
            Value::Text(t) => ser.serialize_str(t),
            Value::Hist(h) => h.nonzero_pairs().serialize(ser),
            Value::Floats(v) => v.serialize(ser),
            Value::Pairs(v) => ser.collect_seq(v.iter().map(|&(l, n)| [l, n])),
            Value::Flag(b) => ser.serialize_bool(*b),
            Value::Labels(v) => {
                let mut m = ser.serialize_map(Some(v.len()))?;
                for (k, n) in v {
                    m.serialize_entry(k, n)?;
                }
                m.end()
            }
        }
    }
}

/// One CPU's interval: the figures of the CPU table
/// (model/cpu_metrics.rs) that have a JSON name, in its order. The
/// interrupt and steal shares are absent where unknown (a recording),
/// never a made-up 0; the run-queue histogram is [[length low bound,
/// samples], ...].
pub struct CpuRecord(pub CpuRow<'static>);

impl Serialize for CpuRecord {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(None)?;
        for (fig, field) in cpu_metrics::fields() {
            let v = fig.value(&self.0);
            if field.omit_unknown && v == Value::None {
                continue;
            }
            m.serialize_entry(field.name, &JsonValue(v))?;
        }
        m.end()
    }
}

#[derive(Serialize)]
pub struct MigrationRecord {
    pub from_cpu: u32,
    pub to_cpu: u32,
    pub count: u64,
}

/// The system over the interval: the figures of the system table
/// (model/system_metrics.rs) that have a JSON name, in its order. The
/// losses are cumulative; `psi_cpu_some_avg10` is null where the kernel
/// has no PSI.
pub struct SystemRecord {
    pub rates: SystemRates,
    pub sample: Arc<Sample>,
}

impl Serialize for SystemRecord {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let row = SystemRow {
            rates: Some(&self.rates),
            sample: Some(&self.sample),
        };
        let mut m = ser.serialize_map(None)?;
        for (fig, field) in system_metrics::fields() {
            match fig.value(&row) {
                Value::None if field.unknown_as_zero => m.serialize_entry(field.name, &0.0)?,
                v => m.serialize_entry(field.name, &JsonValue(v))?,
            }
        }
        m.end()
    }
}

/// The record for the interval that ends with `cur` (derived here once:
/// `dump`, whose base Sample may be any earlier one).
pub fn interval_record(host: &HostInfo, prev: Option<&Sample>, cur: &Sample) -> IntervalRecord {
    let prev = prev.map(|p| Arc::new(p.clone()));
    let iv = shared_interval::of(host, prev, Arc::new(cur.clone()), Default::default());
    record_of(host, &iv)
}

/// The record of an Interval the sampler derived (batch mode).
pub fn record_of(host: &HostInfo, iv: &Interval) -> IntervalRecord {
    let (cur, d) = (&*iv.sample, &iv.derived);
    let dt = d.system.interval_s;
    let threads = d
        .threads
        .iter()
        .map(|r| ThreadRecord(Row::clone(r)))
        .collect();
    let cgroups = d.cgroups.iter().cloned().map(CgroupRecord).collect();
    let cpus = iv
        .cpu_intervals
        .iter()
        .map(|c| CpuRecord(CpuRow::of_interval(c, dt, &host.topology)))
        .collect();
    let migrations = iv
        .migrations
        .iter()
        .map(|&(from_cpu, to_cpu, count)| MigrationRecord {
            from_cpu,
            to_cpu,
            count,
        })
        .collect();
    let found = iv.findings.clone();
    IntervalRecord {
        time: rfc3339(cur.time_ns),
        time_ns: cur.time_ns,
        interval_s: dt,
        source: host.source.as_str(),
        host: host.hostname.clone(),
        threads,
        cpus,
        migrations,
        system: SystemRecord {
            rates: d.system.clone(),
            sample: iv.sample.clone(),
        },
        cgroups,
        findings: found,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        // 2026-11-21T23:15:28.5Z
        assert_eq!(
            rfc3339(1_795_302_928_500_000_000),
            "2026-11-21T23:15:28.500Z"
        );
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
    }
}
