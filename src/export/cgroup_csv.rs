//! `dump --format cgroups-csv`: one row per cgroup and interval, with the
//! batch JSON's cgroup fields (the cgroup table's, json.rs `CgroupRecord`)
//! in the table's order.
//! Empty field: unknown (null in JSON), never 0.
use std::io::Write;

use super::csv_field::csv_field;
use super::json::IntervalRecord;
use crate::model::cgroup_metrics;

/// The columns after time, time_ns, interval_s, host: the cgroup table's
/// JSON fields (model/cgroup_metrics.rs), then the short name. An
/// interface: add at the end only.
pub fn fields() -> impl Iterator<Item = &'static str> {
    cgroup_metrics::fields()
        .filter_map(|f| f.field.map(|x| x.name))
        .chain(std::iter::once("short_name"))
}

pub fn header() -> String {
    let mut h = String::from("time,time_ns,interval_s,host");
    for f in fields() {
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
            let short = crate::model::cgroup_name::short_name(&c.0.path);
            m.insert("short_name".into(), serde_json::Value::String(short));
        }
        let mut line = format!("{},{},{},{}", rec.time, rec.time_ns, rec.interval_s, host);
        for f in fields() {
            line.push(',');
            line.push_str(&cell(&v[f]));
        }
        writeln!(out, "{line}")?;
    }
    Ok(rec.cgroups.len() as u64)
}
