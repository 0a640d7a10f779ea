//! `dump --format cgroups-csv`: one row per cgroup and interval, with the
//! batch JSON's cgroup fields (json.rs `CgroupRecord`) in a fixed order.
//! Empty field: unknown (null in JSON), never 0.
use std::io::Write;

use super::csv_field::csv_field;
use super::json::IntervalRecord;

/// The columns after time, time_ns, interval_s, host: an interface, add
/// at the end only.
pub const FIELDS: [&str; 24] = [
    "path",
    "threads",
    "cpu_pct",
    "cpu_quota_cpus",
    "cpuset_cpus",
    "nr_periods",
    "nr_throttled",
    "throttled_usec",
    "throttled_per_s",
    "throttled_ms_per_s",
    "psi_some_pct",
    "psi_full_pct",
    "psi_some_avg10",
    "psi_full_avg10",
    "psi_some_us",
    "voluntary_per_s",
    "involuntary_per_s",
    "migrations_per_s",
    "wait_p50_us",
    "wait_p99_us",
    "slice_p99_us",
    "slice_hist_us",
    "wait_hist_us",
    "short_name",
];

pub fn header() -> String {
    let mut h = String::from("time,time_ns,interval_s,host");
    for f in FIELDS {
        h.push(',');
        h.push_str(f);
    }
    h
}

fn cell(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match v {
        J::Null => String::new(),
        J::String(s) => csv_field(s),
        // histograms: `low:count` pairs separated by spaces, as for threads
        J::Array(pairs) => pairs
            .iter()
            .filter_map(|p| Some(format!("{}:{}", p.get(0)?, p.get(1)?)))
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

pub fn write<W: Write>(out: &mut W, rec: &IntervalRecord) -> std::io::Result<u64> {
    let host = csv_field(&rec.host);
    for c in &rec.cgroups {
        let mut v = serde_json::to_value(c).unwrap_or_default();
        if let Some(m) = v.as_object_mut() {
            let short = crate::model::cgroup_name::short_name(&c.path);
            m.insert("short_name".into(), serde_json::Value::String(short));
        }
        let mut line = format!("{},{},{},{}", rec.time, rec.time_ns, rec.interval_s, host);
        for f in FIELDS {
            line.push(',');
            line.push_str(&cell(&v[f]));
        }
        writeln!(out, "{line}")?;
    }
    Ok(rec.cgroups.len() as u64)
}
