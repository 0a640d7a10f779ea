//! Metric families as plain data, encoded by the `prometheus-client`
//! crate's OpenMetrics text encoder (a `Collector` over precomputed
//! values: our histograms arrive already bucketed and cumulative, so they
//! are written as constant histograms). Also the Prometheus text (0.0.4)
//! form for scrapers that ask for `text/plain`, and the Accept header
//! choice between the two.
use std::borrow::Cow;

use crate::util::invisible_chars::is_invisible;

use prometheus_client::encoding::{DescriptorEncoder, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

pub type Labels = Vec<(&'static str, String)>;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Counter(f64),
    Gauge(f64),
    /// per-bucket (not cumulative) counts with their upper bounds, the last
    /// +Inf; the sum of the observed values
    Histogram {
        buckets: Vec<(f64, u64)>,
        sum: f64,
    },
    /// an info metric: the labels are the value
    Info,
}

#[derive(Clone, Debug)]
pub struct Family {
    /// without the unit suffix and without `_total`
    pub name: Cow<'static, str>,
    pub help: Cow<'static, str>,
    pub seconds: bool,
    pub kind: MetricType,
    pub rows: Vec<(Labels, Value)>,
}

impl Family {
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        help: impl Into<Cow<'static, str>>,
        kind: MetricType,
    ) -> Family {
        Family {
            name: name.into(),
            help: help.into(),
            seconds: false,
            kind,
            rows: Vec::new(),
        }
    }

    pub fn in_seconds(mut self) -> Family {
        self.seconds = true;
        self
    }

    /// Sample lines this family writes (what Prometheus counts as series).
    pub fn series(&self) -> usize {
        self.rows.iter().map(|(_, v)| series_of(v)).sum()
    }
}

/// Sample lines one value writes: a histogram writes each bucket, the
/// sum and the count.
pub fn series_of(v: &Value) -> usize {
    match v {
        Value::Histogram { buckets, .. } => buckets.len() + 2,
        _ => 1,
    }
}

/// Label values are chosen by the threads themselves (comm): control
/// characters become `?` so a scrape shown in a terminal stays inert, and
/// so do bidi overrides and zero-width characters, which are no control
/// characters to Unicode but redraw the text around them
/// ("x<U+202E>fdp.exe" shows as "xexe.pdf"); the encoder escapes `\`, `"`
/// and newlines.
pub fn label_text(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || is_invisible(c as u32) {
                '?'
            } else {
                c
            }
        })
        .collect()
}

fn write_value(m: &mut MetricEncoder, value: &Value) -> Result<(), std::fmt::Error> {
    match value {
        Value::Counter(v) => m.encode_counter::<NoLabelSet, _, f64>(v, None),
        Value::Gauge(v) => m.encode_gauge(v),
        Value::Histogram { buckets, sum } => {
            let count = buckets.iter().map(|b| b.1).sum();
            m.encode_histogram::<NoLabelSet>(*sum, count, buckets, None)
        }
        Value::Info => Ok(()),
    }
}

#[derive(Debug)]
struct Families(Vec<Family>);

impl prometheus_client::collector::Collector for Families {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let seconds = Unit::Seconds;
        for f in &self.0 {
            if f.rows.is_empty() {
                continue;
            }
            let unit = f.seconds.then_some(&seconds);
            let mut m = encoder.encode_descriptor(&f.name, &f.help, unit, f.kind)?;
            for (labels, value) in &f.rows {
                match value {
                    Value::Info => m.encode_info(labels)?,
                    // no `{}` for a series without labels
                    _ if labels.is_empty() => write_value(&mut m, value)?,
                    _ => write_value(&mut m.encode_family(labels)?, value)?,
                }
            }
        }
        Ok(())
    }
}

/// The OpenMetrics text exposition of `families`, ending in `# EOF`.
pub fn encode(families: Vec<Family>) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Families(families)));
    let mut out = String::new();
    // writing into a String cannot fail
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

pub const OPENMETRICS_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
pub const PROMETHEUS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Which exposition an Accept header asks for: Prometheus text when it
/// prefers `text/plain` over `application/openmetrics-text` (by q value),
/// OpenMetrics otherwise (also with no Accept header, or `*/*`).
pub fn wants_prometheus_text(accept: Option<&str>) -> bool {
    let Some(accept) = accept else { return false };
    let (mut om, mut text) = (-1.0f64, -1.0f64);
    for part in accept.split(',') {
        let mut it = part.split(';');
        let media = it.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = it
            .filter_map(|p| p.trim().strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f64>().ok())
            .next()
            .unwrap_or(1.0);
        match media.as_str() {
            "application/openmetrics-text" => om = om.max(q),
            "text/plain" => text = text.max(q),
            _ => {}
        }
    }
    text > 0.0 && text > om
}

/// OpenMetrics text to Prometheus text format 0.0.4. The two differ, for
/// what we write, in three ways: 0.0.4 has no `# UNIT` lines and no `# EOF`,
/// and a counter's HELP/TYPE name its samples' name (with `_total`) where
/// OpenMetrics names the family (without it). Info metrics become gauges
/// of value 1 (0.0.4 has no info type).
pub fn to_prometheus_text(openmetrics: &str) -> String {
    // family name -> type, from the TYPE lines (which follow their HELP)
    let kinds: std::collections::HashMap<&str, &str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.split_once(' '))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|tag| Some((tag, line.strip_prefix(tag)?)));
        let Some((tag, rest)) = meta else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
        let (suffix, tail) = match kinds.get(name).copied() {
            Some("counter") => ("_total", tail),
            Some("info") if tag == "# TYPE " => ("_info", "gauge"),
            Some("info") => ("_info", tail),
            _ => ("", tail),
        };
        out.push_str(&format!("{tag}{name}{suffix} {tail}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_families() -> Vec<Family> {
        let mut c = Family::new("demo_switches", "Switches.", MetricType::Counter);
        c.rows.push((
            vec![("comm", label_text("a\"b\\c\nd\x1b[31m"))],
            Value::Counter(3.0),
        ));
        let mut h = Family::new("demo_latency", "Latency.", MetricType::Histogram).in_seconds();
        h.rows.push((
            vec![],
            Value::Histogram {
                buckets: vec![(1e-6, 2), (2e-6, 0), (f64::INFINITY, 1)],
                sum: 5.0,
            },
        ));
        let mut i = Family::new("demo_build", "Build.", MetricType::Info);
        i.rows.push((vec![("version", "1".into())], Value::Info));
        vec![c, h, i]
    }

    #[test]
    fn labels_draw_nothing_in_a_terminal() {
        assert_eq!(label_text("a\x1b[2Jb\n\u{9b}"), "a?[2Jb??");
        // bidi override and isolate, zero-width space: no controls to
        // Unicode, but they redraw what follows
        assert_eq!(label_text("r\u{202e}x\u{2066}y\u{200b}z"), "r?x?y?z");
        assert_eq!(label_text("é€😀 \"q\" \\"), "é€😀 \"q\" \\");
    }

    #[test]
    fn openmetrics_text_as_the_crate_writes_it() {
        let om = encode(sample_families());
        assert!(om.contains("# TYPE demo_switches counter\n"), "{om}");
        assert!(
            om.contains("demo_switches_total{comm=\"a\\\"b\\\\c?d?[31m\"} 3.0\n"),
            "{om}"
        );
        assert!(om.contains("# UNIT demo_latency_seconds seconds\n"), "{om}");
        // cumulative buckets, le in seconds
        assert!(
            om.contains("demo_latency_seconds_bucket{le=\"0.000001\"} 2\n"),
            "{om}"
        );
        assert!(
            om.contains("demo_latency_seconds_bucket{le=\"+Inf\"} 3\n"),
            "{om}"
        );
        assert!(om.contains("demo_latency_seconds_count 3\n"), "{om}");
        assert!(om.ends_with("# EOF\n"));
        assert!(!om.contains('\x1b'));
    }

    #[test]
    fn prometheus_text_names_counter_samples_and_drops_openmetrics_lines() {
        let t = to_prometheus_text(&encode(sample_families()));
        assert!(t.contains("# HELP demo_switches_total Switches.\n"), "{t}");
        assert!(t.contains("# TYPE demo_switches_total counter\n"), "{t}");
        assert!(t.contains("# TYPE demo_latency_seconds histogram\n"), "{t}");
        assert!(t.contains("# TYPE demo_build_info gauge\n"), "{t}");
        assert!(t.contains("# HELP demo_build_info Build.\n"), "{t}");
        assert!(!t.contains("# EOF") && !t.contains("# UNIT"), "{t}");
    }

    #[test]
    fn accept_header_choice() {
        // what Prometheus 2.42 sends: OpenMetrics preferred
        let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(!wants_prometheus_text(Some(prom)));
        assert!(wants_prometheus_text(Some("text/plain;version=0.0.4")));
        assert!(wants_prometheus_text(Some("text/plain")));
        assert!(!wants_prometheus_text(Some("*/*")));
        assert!(!wants_prometheus_text(None));
        assert!(!wants_prometheus_text(Some("text/plain;q=0")));
        assert!(!wants_prometheus_text(Some(";;;,,q=x")));
    }

    #[test]
    fn series_count_includes_bucket_sum_and_count() {
        let f = sample_families();
        assert_eq!(f[1].series(), 5);
        assert_eq!(f[0].series(), 1);
    }
}
