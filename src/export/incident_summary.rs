//! What an incident bundle says about itself: `summary.txt` for a person
//! and `summary.json` for a program, both from one `Firing`: what fired
//! (a trigger, SIGUSR1 or the key), the value that fired it and who had
//! it, the top threads and processes by the triggering figure, and the
//! schedtop version, host and kernel. Names are the threads' own (hostile):
//! the text escapes them, JSON quotes them.
use serde_json::json;
use std::sync::Arc;

use super::screenshot::visible;
use crate::model::findings::Finding;
use crate::model::interval::{Derived, Row};
use crate::model::metrics::{self, Unit};
use crate::model::trigger::Figure;
use crate::model::trigger_eval::{row_figure, Hit};
use crate::model::HostInfo;
use crate::util::clock::rfc3339;

/// Offenders listed per table.
pub const TOP: usize = 10;

/// Why a bundle is made, and what the interval looked like.
#[derive(Clone, Debug, PartialEq)]
pub struct Firing {
    /// the trigger as written, `SIGUSR1`, or the key
    pub reason: String,
    /// the figure compared (None when fired by hand)
    pub figure: Option<Figure>,
    /// who crossed the threshold, highest first (at most TOP)
    pub hits: Vec<Hit>,
    /// threads and processes by the triggering figure (by hand: the p99
    /// run-queue wait), highest first
    pub top_threads: Vec<Hit>,
    pub top_processes: Vec<Hit>,
    /// the firing Sample's wall-clock time
    pub time_ns: u64,
    /// what the firing interval says is wrong, ranked (model/findings.rs)
    pub findings: Vec<Finding>,
}

/// The figure the top tables rank by: the trigger's where rows carry it.
fn ranking(figure: Option<Figure>) -> Figure {
    match figure {
        Some(f @ (Figure::Metric(_) | Figure::Counter(_))) => f,
        _ => wait_p99(),
    }
}

/// The TOP rows with the highest `figure`.
pub fn top_rows(rows: &[Arc<Row>], figure: Figure) -> Vec<Hit> {
    let mut v: Vec<Hit> = rows
        .iter()
        .filter_map(|r| {
            Some(Hit {
                id: r.id,
                comm: r.comm.to_string(),
                value: row_figure(figure, r)?,
            })
        })
        .collect();
    v.sort_by(|a, b| b.value.total_cmp(&a.value).then(a.id.cmp(&b.id)));
    v.truncate(TOP);
    v
}

impl Firing {
    /// A firing at `time_ns` for `reason`, with the interval's offenders.
    pub fn new(
        reason: String,
        figure: Option<Figure>,
        mut hits: Vec<Hit>,
        d: &Derived,
        time_ns: u64,
    ) -> Firing {
        hits.truncate(TOP);
        let by = ranking(figure);
        Firing {
            reason,
            figure,
            hits,
            top_threads: top_rows(&d.threads, by),
            top_processes: top_rows(&d.processes, by),
            time_ns,
            findings: Vec::new(),
        }
    }

    /// The firing interval's findings (computed once by the watch).
    pub fn with_findings(mut self, found: Vec<Finding>) -> Firing {
        self.findings = found;
        self
    }

    /// The value that fired it (the highest hit's).
    pub fn value(&self) -> Option<f64> {
        self.hits.first().map(|h| h.value)
    }

    pub fn ranked_by(&self) -> Figure {
        ranking(self.figure)
    }
}

/// The p99 run-queue wait, what a bundle made by hand ranks by.
fn wait_p99() -> Figure {
    Figure::Metric(metrics::by_key("p99_wait").expect("a metric of metrics.rs"))
}

pub fn figure_name(f: Figure) -> String {
    f.name()
}

fn show_time(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2}s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1}ms", v / 1e6)
    } else {
        format!("{:.0}us", v / 1e3)
    }
}

/// A figure's value as a person reads it (times arrive in ns).
pub fn show_value(f: Figure, v: f64) -> String {
    match f {
        Figure::Metric(m) => match m.unit {
            Unit::Nanoseconds | Unit::Microseconds => show_time(v),
            Unit::Percent => format!("{v:.1}%"),
            Unit::PerSecond => format!("{v:.0}/s"),
            _ => format!("{v:.0}"),
        },
        // a finding's impact: the share of its subject's time it explains
        Figure::Finding(_) => format!("{:.0}% impact", v * 100.0),
        Figure::Counter(_) => format!("{v:.0}/s"),
        // the tables' figures: a count (a queue length) with one decimal
        Figure::Cgroup(_) | Figure::Cpu(_) | Figure::System(_) => match f.unit() {
            Some(Unit::Nanoseconds | Unit::Microseconds) => show_time(v),
            Some(Unit::Percent) => format!("{v:.1}%"),
            Some(Unit::PerSecond) => format!("{v:.0}/s"),
            _ => format!("{v:.1}"),
        },
    }
}

fn table(out: &mut String, title: &str, id: &str, f: Figure, rows: &[Hit]) {
    out.push_str(&format!(
        "\n{title}\n  {id:>8}  {:>10}  name\n",
        figure_name(f)
    ));
    if rows.is_empty() {
        out.push_str("  (none measured)\n");
    }
    for h in rows {
        out.push_str(&format!(
            "  {:>8}  {:>10}  {}\n",
            h.id,
            show_value(f, h.value),
            visible(&h.comm)
        ));
    }
}

/// `summary.txt`. `recording` says what the recording holds.
pub fn text(f: &Firing, host: &HostInfo, recording: &str) -> String {
    let mut out = String::from("schedtop incident\n\n");
    out.push_str(&format!("fired by:   {}\n", visible(&f.reason)));
    if let (Some(fig), Some(v), Some(h)) = (f.figure, f.value(), f.hits.first()) {
        out.push_str(&format!(
            "value:      {} ({} {})\n",
            show_value(fig, v),
            h.id,
            visible(&h.comm)
        ));
    }
    out.push_str(&format!("at:         {}\n", rfc3339(f.time_ns)));
    out.push_str(&format!(
        "host:       {} (kernel {}, {} source)\n",
        visible(&host.hostname),
        visible(&host.kernel),
        host.source.as_str()
    ));
    out.push_str(&format!(
        "schedtop:   {}\nrecording:  {recording}\n",
        env!("CARGO_PKG_VERSION")
    ));
    if let Some(fig) = f.figure {
        if f.hits.len() > 1 {
            table(&mut out, "over the threshold", "id", fig, &f.hits);
        }
    }
    findings_text(&mut out, &f.findings);
    let by = f.ranked_by();
    table(
        &mut out,
        &format!("top processes by {}", figure_name(by)),
        "pid",
        by,
        &f.top_processes,
    );
    table(
        &mut out,
        &format!("top threads by {}", figure_name(by)),
        "tid",
        by,
        &f.top_threads,
    );
    out
}

/// The findings, ranked, as `schedtop why` prints them.
fn findings_text(out: &mut String, found: &[Finding]) {
    out.push_str("\nfindings\n");
    if found.is_empty() {
        out.push_str("  (none: nothing the rules name)\n");
    }
    for (i, x) in found.iter().enumerate() {
        out.push_str(&format!(
            "  {}. {} {} ({:.0}% impact): {}\n",
            i + 1,
            x.severity.key(),
            x.kind.key(),
            x.impact * 100.0,
            visible(&x.text)
        ));
    }
}

fn hits_json(v: &[Hit]) -> serde_json::Value {
    v.iter()
        .map(|h| json!({"id": h.id, "name": h.comm, "value": h.value}))
        .collect()
}

/// `summary.json` (values in the figure's unit: ns for wait_p99).
pub fn json(f: &Firing, host: &HostInfo, recording: &str) -> String {
    let v = json!({
        "fired_by": f.reason,
        "figure": f.figure.map(figure_name),
        "value": f.value(),
        "time": rfc3339(f.time_ns),
        "time_ns": f.time_ns,
        "hits": hits_json(&f.hits),
        "ranked_by": figure_name(f.ranked_by()),
        "top_processes": hits_json(&f.top_processes),
        "top_threads": hits_json(&f.top_threads),
        "findings": f.findings,
        "host": host.hostname,
        "kernel": host.kernel,
        "source": host.source.as_str(),
        "schedtop_version": env!("CARGO_PKG_VERSION"),
        "recording": recording,
    });
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_inert_in_the_text_and_quoted_in_json() {
        let f = Firing {
            reason: "proc:wait_p99>5ms".into(),
            figure: Some(wait_p99()),
            hits: vec![Hit {
                id: 42,
                comm: "\u{1b}[2Jevil".into(),
                value: 16.4e6,
            }],
            top_threads: vec![],
            top_processes: vec![],
            time_ns: 0,
            findings: vec![],
        };
        let host = HostInfo {
            hostname: "h".into(),
            kernel: "k".into(),
            topology: Default::default(),
            source: crate::model::SourceKind::Procfs,
            degraded_reason: None,
            sched_ext: None,
            interval_ns: 1,
        };
        let t = text(&f, &host, "r");
        assert!(!t.contains('\u{1b}'), "{t}");
        assert!(t.contains("16.4ms (42 ␛[2Jevil)"), "{t}");
        let j: serde_json::Value = serde_json::from_str(&json(&f, &host, "r")).unwrap();
        assert_eq!(j["hits"][0]["name"], "\u{1b}[2Jevil");
        assert_eq!(j["value"], 16.4e6);
        assert_eq!(j["figure"], "wait_p99");
    }
}
