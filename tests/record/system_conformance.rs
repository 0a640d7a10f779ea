//! Every system figure descriptor (model/system_metrics.rs) reaches every
//! sink it names, generated from the table: two hand-built Samples 2 s
//! apart go through the Interval's system rates, the header, batch JSON
//! and `/metrics` (read back by a strict OpenMetrics parser). Expected
//! values are worked out by hand below; a figure without one, or one a
//! sink leaves out, fails here by name.
use crate::common;
use crate::trigger_sink;

use std::collections::BTreeSet;

use common::om_parser::for_crate_parser;
use openmetrics_parser::openmetrics::parse_openmetrics;
use openmetrics_parser::OpenMetricsValue;
use schedtop::export::json::interval_record;
use schedtop::export::openmetrics::{render, ExportOptions};
use schedtop::export::openmetrics_totals::Totals;
use schedtop::model::interval::derive;
use schedtop::model::metrics::Value;
use schedtop::model::system_metrics::{SystemRow, SYSTEM_FIGURES};
use schedtop::model::{CpuIrqSample, CpuSample, Losses, Pressure, Sample, ThreadSample};
use schedtop::record::testdata::{synthetic_host, SynthOptions};
use schedtop::ui::views::header::system_texts;

fn sample(second: bool) -> Sample {
    let k = u64::from(second);
    let at = 1_000_000_000 + 2_000_000_000 * k;
    let mut s = Sample {
        time_ns: 1_795_000_000_000_000_000 + at,
        mono_ns: at,
        // thread 7 switched 30 + 10 times; thread 8's voluntary count went
        // down (a glitch: one anomaly, counted as no change)
        threads: vec![
            ThreadSample {
                tid: 7,
                pid: 7,
                start_time_ns: 1,
                voluntary: 100 + 30 * k,
                involuntary: 5 + 10 * k,
                migrations: Some(20 + 8 * k),
                ..Default::default()
            },
            ThreadSample {
                tid: 8,
                pid: 7,
                start_time_ns: 1,
                voluntary: 50 - 10 * k,
                involuntary: 3,
                migrations: Some(2),
                ..Default::default()
            },
        ]
        .into(),
        ..Default::default()
    };
    // two CPUs, in 2 s: /proc/stat irq 20 and 40 ms, softirq 60 and 100
    // ms, steal 10 and 30 ms (the probes off)
    s.cpus = [(0, [20, 60, 10]), (1, [40, 100, 30])]
        .into_iter()
        .map(|(cpu, [i, si, st])| CpuSample {
            cpu,
            irq: Some(CpuIrqSample {
                stat_irq_ns: 1_000_000 * i * k,
                stat_softirq_ns: 1_000_000 * si * k,
                stat_steal_ns: 1_000_000 * st * k,
                probe_irq_ns: None,
                probe_softirq_ns: None,
            }),
            ..Default::default()
        })
        .collect();
    let sys = &mut s.system;
    // /proc/stat ctxt: 900 switches in 2 s
    sys.context_switches = 10_000 + 900 * k;
    sys.procs_running = 3;
    sys.procs_blocked = 2;
    sys.load = [1.25, 0.5, 0.125];
    sys.losses = Losses {
        thread_map_full: 4 * k,
        torn_reads: 1,
        wake_pairs_full: 6 * k,
        ..Default::default()
    };
    sys.cpu_pressure = Some(Box::new(Pressure {
        some_avg10: 12.5,
        some_total_us: 1_000 + 100_000 * k,
        full_avg10: Some(2.5),
        full_total_us: Some(400 + 20_000 * k),
    }));
    s
}

enum Want {
    N(f64),
    Triple([f64; 3]),
}

fn wanted(key: &str) -> Want {
    use Want::*;
    match key {
        "context_switches_per_s" => N(450.0),
        // 30 and 10 switches in 2 s (thread 8's drop counts as none)
        "voluntary_per_s" => N(15.0),
        "involuntary_per_s" => N(5.0),
        "procs_running" => N(3.0),
        "procs_blocked" => N(2.0),
        "load" => Triple([1.25, 0.5, 0.125]),
        // cumulative: 4 + 1 + 6
        "lost_updates" => N(11.0),
        "wake_pairs_lost" => N(6.0),
        "counter_anomalies" => N(1.0),
        "psi_cpu_some_avg10" => N(12.5),
        // 100,000 µs stalled in 2 s
        "psi_cpu_some_pct" => N(5.0),
        // the kernel's cumulative stall totals, µs
        "psi_cpu_some_us" => N(101_000.0),
        "psi_cpu_full_us" => N(20_400.0),
        // thread 7 moved 8 times in 2 s, thread 8 not at all
        "migrations_per_s" => N(4.0),
        // 260 ms of 2 CPUs' 4 s: hi 1.5 + si 4.0 + st 1.0
        "hi_si_st_pct" => N(6.5),
        other => panic!("system figure {other} has no expected value here: add one"),
    }
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: {got} vs {want}"
    );
}

#[test]
fn every_figure_reads_its_value_and_reaches_a_sink() {
    let (a, b) = (sample(false), sample(true));
    let d = derive(Some(&a), &b, 1.0);
    let row = SystemRow {
        rates: Some(&d.system),
        sample: Some(&b),
    };
    for fig in &SYSTEM_FIGURES {
        let sinks = [
            fig.header.is_some(),
            fig.field.is_some(),
            fig.om.is_some(),
            fig.trigger,
        ];
        assert!(sinks.contains(&true), "{} reaches no sink", fig.key);
        match (wanted(fig.key), fig.value(&row)) {
            (Want::Triple(w), Value::Floats(v)) => assert_eq!(v, &w[..], "{}", fig.key),
            (Want::N(w), v) => close(
                v.number().unwrap_or_else(|| panic!("{}: {v:?}", fig.key)),
                w,
                fig.key,
            ),
            (_, v) => panic!("{}: {v:?}", fig.key),
        }
    }
}

#[test]
fn the_header_shows_every_header_figure() {
    let (a, b) = (sample(false), sample(true));
    let d = derive(Some(&a), &b, 1.0);
    let texts = system_texts(&SystemRow {
        rates: Some(&d.system),
        sample: Some(&b),
    });
    for fig in &SYSTEM_FIGURES {
        let Some(h) = fig.header else { continue };
        let (_, text, alarm) = texts
            .iter()
            .find(|(l, ..)| *l == h.label)
            .unwrap_or_else(|| panic!("the header has no {} ({})", h.label, fig.key));
        let numbers: Vec<f64> = text
            .trim_end_matches('%')
            .split(' ')
            .map(|n| {
                n.parse()
                    .unwrap_or_else(|_| panic!("{}: {text:?}", fig.key))
            })
            .collect();
        let want = match wanted(fig.key) {
            Want::N(w) => vec![w],
            Want::Triple(w) => w.to_vec(),
        };
        assert_eq!(numbers.len(), want.len(), "{}: {text:?}", fig.key);
        for (g, w) in numbers.iter().zip(&want) {
            assert!((g - w).abs() <= 0.05, "{}: {text:?} vs {w}", fig.key);
        }
        // losses are shown as an error
        assert_eq!(*alarm, fig.key == "lost_updates", "{}", fig.key);
    }
    // before the first Sample: only what is always shown, as '-'
    let none = system_texts(&SystemRow::default());
    let always: Vec<_> = SYSTEM_FIGURES
        .iter()
        .filter_map(|f| {
            f.header
                .filter(|h| h.always)
                .map(|h| (h.label, "-".to_string(), false))
        })
        .collect();
    assert_eq!(none, always);
}

#[test]
fn json_carries_every_field() {
    let host = synthetic_host(&SynthOptions::default());
    let rec = interval_record(&host, Some(&sample(false)), &sample(true));
    let json = serde_json::to_value(&rec).unwrap();
    let sys = json["system"].as_object().unwrap();
    let mut names = BTreeSet::new();
    for fig in &SYSTEM_FIGURES {
        let Some(field) = fig.field else { continue };
        names.insert(field.name);
        let got = &sys[field.name];
        match wanted(fig.key) {
            Want::N(w) => close(
                got.as_f64()
                    .unwrap_or_else(|| panic!("JSON {}: {got}", field.name)),
                w,
                field.name,
            ),
            Want::Triple(w) => {
                let back: [f64; 3] = serde_json::from_value(got.clone()).unwrap();
                assert_eq!(back, w, "JSON {}", field.name);
            }
        }
    }
    for k in sys.keys() {
        assert!(
            names.contains(k.as_str()),
            "JSON system.{k} is in no descriptor"
        );
    }
    // the first interval has no switch rate: written 0, as the schema says
    let first = interval_record(&host, None, &sample(false));
    let first = serde_json::to_value(&first).unwrap();
    assert_eq!(first["system"]["context_switches_per_s"], 0.0);
}

#[test]
fn metrics_have_every_family_with_its_help() {
    let mut t = Totals::new(synthetic_host(&SynthOptions::default()));
    t.update(sample(false));
    t.update(sample(true));
    let om = render(&t, &ExportOptions::default(), 0);
    let parsed =
        parse_openmetrics(&for_crate_parser(&om)).unwrap_or_else(|e| panic!("{e:?}\n{om}"));
    for fig in &SYSTEM_FIGURES {
        let Some(spec) = fig.om else { continue };
        let name = if spec.seconds {
            format!("{}_seconds", spec.family)
        } else {
            spec.family.to_string()
        };
        let fam = parsed
            .families
            .get(&name)
            .unwrap_or_else(|| panic!("{name} ({}) missing\n{om}", fig.key));
        let help = format!("# HELP {name} {}", spec.help);
        assert!(om.lines().any(|l| l == help), "{name}: help\n{om}");
        // the figure's series: the one with its labels
        let s = fam
            .iter_samples()
            .find(|s| {
                let Ok(l) = s.get_labelset() else {
                    return false;
                };
                spec.labels
                    .iter()
                    .all(|&(k, v)| l.get_label_value(k) == Some(v))
            })
            .unwrap_or_else(|| panic!("{} has no series {:?}\n{om}", spec.family, spec.labels));
        let OpenMetricsValue::Counter(c) = &s.value else {
            panic!("{}: {:?}", spec.family, s.value)
        };
        let Want::N(w) = wanted(fig.key) else {
            panic!("{}: a family of a non-number", fig.key)
        };
        // in seconds where the family is
        close(c.value.as_f64(), w / spec.per, fig.key);
    }
}

#[test]
fn every_trigger_figure_fires_with_its_value() {
    use schedtop::model::trigger::parse;
    use schedtop::model::trigger_eval::{evaluate, Figures, Verdict};
    let d = derive(Some(&sample(false)), &sample(true), 1.0);
    let flagged: Vec<_> = SYSTEM_FIGURES.iter().filter(|f| f.trigger).collect();
    assert!(!flagged.is_empty());
    for fig in flagged {
        let Want::N(w) = wanted(fig.key) else {
            panic!("{}: a trigger on a non-number", fig.key)
        };
        let (cond, fired_with) = trigger_sink::threshold(fig.key, fig.unit, w);
        let t = parse(&format!("system:{cond}")).unwrap_or_else(|e| panic!("{e}"));
        let Verdict::Holds(hits) = evaluate(&t, &Figures::rows(&d)) else {
            panic!("system:{cond} does not fire")
        };
        close(hits[0].value, fired_with, fig.key);
    }
}
