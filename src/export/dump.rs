//! `schedtop dump`: a recording as per-thread CSV rows or as JSON Lines with
//! the batch-mode schema (export::json::interval_record). One record per
//! interval: the first Sample of each segment only starts the first one,
//! as in batch mode.
use std::io::Write;

use anyhow::Result;

use super::csv_field::csv_field;
use super::json::{interval_record, IntervalRecord};
use crate::collect::Seekable;
use crate::model::metrics::{self, Value};
use crate::model::Sample;
use crate::record::timeexpr::TimeExpr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Json,
    /// one row per cgroup and interval (cgroup_csv.rs)
    CgroupsCsv,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format, String> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(Format::Csv),
            "json" | "jsonl" => Ok(Format::Json),
            "cgroups-csv" => Ok(Format::CgroupsCsv),
            _ => Err(format!(
                "bad --format {s:?}: expected csv, json or cgroups-csv"
            )),
        }
    }
}

#[derive(Clone, Debug)]
pub struct DumpOptions {
    pub format: Format,
    pub from: Option<TimeExpr>,
    pub to: Option<TimeExpr>,
    /// keep threads whose pid or tid is one of these (empty: all)
    pub pids: Vec<u32>,
}

/// What a dump did, for the closing message.
#[derive(Debug, Default)]
pub struct DumpReport {
    pub intervals: u64,
    pub rows: u64,
    /// Samples in the selected range, and how many of them read
    pub in_range: u64,
    pub read: u64,
    /// one line per cause of lost Samples (a damaged key frame loses the
    /// deltas after it too: one line, with the count)
    pub skipped: Vec<String>,
}

/// Lost Samples that share one cause.
struct LostRun {
    first: u32,
    last: u32,
    count: u64,
    root: String,
    root_key: (u64, String),
}

impl LostRun {
    fn line(&self) -> String {
        if self.count == 1 && self.first == self.last {
            return self.root.clone();
        }
        format!(
            "Samples {} to {} ({} lost) because of {}",
            self.first, self.last, self.count, self.root
        )
    }
}

fn note_lost(runs: &mut Vec<LostRun>, e: &anyhow::Error) {
    let Some(l) = e.downcast_ref::<crate::record::reader::Lost>() else {
        runs.push(LostRun {
            first: 0,
            last: 0,
            count: 1,
            root: format!("{e:#}"),
            root_key: (u64::MAX, format!("{e:#}")),
        });
        return;
    };
    let key = (l.root_offset, l.cause.clone());
    if let Some(r) = runs.last_mut().filter(|r| r.root_key == key) {
        r.last = l.number;
        r.count += 1;
        return;
    }
    runs.push(LostRun {
        first: l.number,
        last: l.number,
        count: 1,
        root: format!(
            "Sample {} at offset {}: {}",
            l.root_number, l.root_offset, l.cause
        ),
        root_key: key,
    });
}

/// A metric's value as a CSV field: empty when unknown, histograms as
/// `low:count` pairs separated by spaces.
fn csv_value(v: &Value) -> String {
    match v {
        Value::None => String::new(),
        Value::U(n) => n.to_string(),
        Value::I(n) => n.to_string(),
        Value::F(f) => f.to_string(),
        Value::Text(t) => csv_field(t),
        Value::Hist(h) => h
            .nonzero_pairs()
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        Value::Flag(b) => b.to_string(),
        Value::Floats(v) => v
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join(" "),
        Value::Pairs(v) => v
            .iter()
            .map(|(l, n)| format!("{l}:{n}"))
            .collect::<Vec<_>>()
            .join(" "),
        Value::Labels(v) => v
            .iter()
            .map(|(k, n)| format!("{k}:{n}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The CSV header: the interval's columns, then every metric with a field
/// name (model/metrics.rs), in the table's order, then the why columns
/// (why_csv.rs).
pub fn csv_header() -> String {
    let mut h = String::from("time,time_ns,interval_s,host");
    for (name, _) in metrics::fields() {
        h.push(',');
        h.push_str(name);
    }
    h.push_str(&super::why_csv::header());
    h
}

fn write_csv<W: Write>(out: &mut W, rec: &IntervalRecord) -> std::io::Result<u64> {
    let host = csv_field(&rec.host);
    for t in &rec.threads {
        let mut line = format!("{},{},{},{}", rec.time, rec.time_ns, rec.interval_s, host);
        for (_, m) in metrics::fields() {
            line.push(',');
            line.push_str(&csv_value(&m.value(&t.0)));
        }
        line.push_str(&super::why_csv::fields(&t.0));
        writeln!(out, "{line}")?;
    }
    Ok(rec.threads.len() as u64)
}

/// Write the selected part of the recording (a file, or a directory of
/// them read as one timeline) to `out`.
pub fn dump<W: Write>(r: &mut dyn Seekable, opts: &DumpOptions, out: &mut W) -> Result<DumpReport> {
    let mut rep = DumpReport::default();
    let times = (0..r.len()).filter_map(|i| r.time_of(i));
    let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
        return Ok(rep);
    };
    let from = opts.from.map_or(first, |t| t.resolve(first, last));
    let to = opts.to.map_or(last, |t| t.resolve(first, last));
    if opts.from.is_some() && opts.to.is_some() && from > to {
        anyhow::bail!("--from is after --to: the time range is inverted");
    }
    match opts.format {
        Format::Csv => writeln!(out, "{}", csv_header())?,
        Format::CgroupsCsv => writeln!(out, "{}", super::cgroup_csv::header())?,
        Format::Json => {}
    }
    let mut prev: Option<(usize, Sample)> = None;
    let mut runs = Vec::new();
    for i in 0..r.len() {
        let t = r.time_of(i).unwrap_or(0);
        if t < from || t > to {
            continue;
        }
        rep.in_range += 1;
        let mut cur = match r.sample(i) {
            Ok(s) => s,
            Err(e) => {
                note_lost(&mut runs, &e);
                continue;
            }
        };
        rep.read += 1;
        let p = r.prev_of(i);
        let fetched;
        let base = match (&prev, p) {
            (Some((pi, ps)), Some(want)) if *pi == want => Some(ps),
            (_, Some(want)) => {
                fetched = r.sample(want).ok();
                fetched.as_ref()
            }
            _ => None,
        };
        if let Some(base) = base {
            let full = (!opts.pids.is_empty()).then(|| cur.clone());
            if !opts.pids.is_empty() {
                cur.threads
                    .retain(|t| opts.pids.contains(&t.pid) || opts.pids.contains(&t.tid));
            }
            let rec = interval_record(&r.host_of(i), Some(base), &cur);
            match opts.format {
                Format::Json => {
                    serde_json::to_writer(&mut *out, &rec)?;
                    writeln!(out)?;
                    rep.rows += rec.threads.len() as u64;
                }
                Format::Csv => rep.rows += write_csv(out, &rec)?,
                Format::CgroupsCsv => rep.rows += super::cgroup_csv::write(out, &rec)?,
            }
            rep.intervals += 1;
            if let Some(full) = full {
                cur = full;
            }
        }
        prev = Some((i, cur));
    }
    rep.skipped = runs.iter().map(LostRun::line).collect();
    out.flush()?;
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_parse() {
        assert_eq!(Format::parse("CSV"), Ok(Format::Csv));
        assert!(Format::parse("xml")
            .unwrap_err()
            .contains("csv, json or cgroups-csv"));
    }
}
