//! Every per-CPU figure descriptor (model/cpu_metrics.rs) reaches every
//! sink it names, generated from the table: two hand-built Samples 2 s
//! apart whose CPU counters grow by known amounts go through the Interval,
//! the CPU view's list, batch JSON and `/metrics` (read back by a strict
//! OpenMetrics parser). The expected values are worked out by hand below;
//! a figure without one, or one a sink leaves out, fails here by name.
use crate::common;
use crate::trigger_sink;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::om_parser::for_crate_parser;
use openmetrics_parser::openmetrics::parse_openmetrics;
use openmetrics_parser::OpenMetricsValue;
use schedtop::export::json::interval_record;
use schedtop::export::openmetrics::{render, ExportOptions};
use schedtop::export::openmetrics_totals::Totals;
use schedtop::model::cpu_metrics::{columns, Cell, CpuFigure, CpuRow, OmGet, CPU_FIGURES};
use schedtop::model::cpus::CpuHistory;
use schedtop::model::metrics::Value;
use schedtop::model::shared_interval;
use schedtop::model::{CpuIrqSample, CpuSample, HostInfo, MigrationCount, RqSample, Sample};
use schedtop::record::testdata::{synthetic_host, SynthOptions};
use schedtop::ui::views::cpus::cells;

/// the CPU every figure is checked on: node 1, LLC 4 of 8 CPUs
const CPU: u32 = 5;

fn host() -> HostInfo {
    synthetic_host(&SynthOptions {
        cpus: 8,
        ..Default::default()
    })
}

fn cpu5(second: bool) -> CpuSample {
    // run-queue lengths counted by the 99 Hz timer: in 2 s, 150 samples
    // (lengths 0: 30, 1: 40, 2: 50, 4: 30; 260 in all) where 198 were due
    let rq = |samples, sum, hist: Vec<u64>| RqSample {
        samples,
        sum,
        hist,
        freq_hz: 99,
    };
    if second {
        CpuSample {
            cpu: CPU,
            switches: 1_600,
            busy_ns: 4_500_000_000,
            rq: Some(rq(160, 260, vec![40, 40, 50, 0, 30])),
            irq: Some(CpuIrqSample {
                stat_irq_ns: 140_000_000,
                stat_softirq_ns: 260_000_000,
                stat_steal_ns: 100_000_000,
                probe_irq_ns: Some(170_000_000),
                probe_softirq_ns: Some(310_000_000),
            }),
        }
    } else {
        CpuSample {
            cpu: CPU,
            switches: 1_000,
            busy_ns: 3_000_000_000,
            rq: Some(rq(10, 0, vec![10])),
            irq: Some(CpuIrqSample {
                stat_irq_ns: 100_000_000,
                stat_softirq_ns: 200_000_000,
                stat_steal_ns: 0,
                probe_irq_ns: Some(150_000_000),
                probe_softirq_ns: Some(250_000_000),
            }),
        }
    }
}

fn sample(second: bool) -> Sample {
    let at = if second { 3_000_000_000 } else { 1_000_000_000 };
    let k = u64::from(second);
    Sample {
        time_ns: 1_795_000_000_000_000_000 + at,
        mono_ns: at,
        // CPU 0 knows nothing of run queues or interrupts (procfs-like)
        cpus: vec![
            CpuSample {
                cpu: 0,
                switches: 10 + 90 * k,
                busy_ns: 1_000_000_000 * k,
                ..Default::default()
            },
            cpu5(second),
        ],
        // 5→1: 20 moves, 2→5: 8 moves in the interval
        migrations: vec![
            MigrationCount {
                from_cpu: CPU,
                to_cpu: 1,
                count: 10 + 20 * k,
            },
            MigrationCount {
                from_cpu: 2,
                to_cpu: CPU,
                count: 8 * k,
            },
        ],
        ..Default::default()
    }
}

/// What each figure of CPU 5 reads over the interval (view, JSON).
enum Want {
    N(f64),
    Pairs(Vec<(u64, u64)>),
}

/// 48 missing timer samples count as an empty queue: 198 samples, 260 long
const RQ_AVG: f64 = 260.0 / 198.0;

fn wanted(key: &str) -> Want {
    use Want::*;
    match key {
        "cpu" => N(5.0),
        "node" => N(1.0),
        "llc" => N(4.0),
        // 600 switches and 1.5 s busy in 2 s
        "switches_per_s" => N(300.0),
        "busy_pct" => N(75.0),
        "rq_len_avg" => N(RQ_AVG),
        "rq_len_max" => N(4.0),
        "rq_len_hist" => Pairs(vec![(0, 30 + 48), (1, 40), (2, 50), (4, 30)]),
        // 40, 60, 100, 20 and 60 ms of 2 s
        "irq_pct" => N(2.0),
        "softirq_pct" => N(3.0),
        "steal_pct" => N(5.0),
        "probe_irq_pct" => N(1.0),
        "probe_softirq_pct" => N(3.0),
        // the view's IRQ% and SIRQ%: the probes' where they are on
        "irq_shown_pct" => N(1.0),
        "softirq_shown_pct" => N(3.0),
        "migrations_in_per_s" => N(4.0),
        "migrations_out_per_s" => N(10.0),
        // one interval kept: its own average (the history keeps f32) and
        // longest queue
        "rq_history_avg" => N(f64::from(RQ_AVG as f32)),
        "rq_history_max" => N(4.0),
        other => panic!("CPU figure {other} has no expected interval value here: add one"),
    }
}

/// What /metrics says of CPU 5: the Sample's cumulative counters (in
/// seconds where the family is) and the run queue since the first Sample.
fn om_wanted(key: &str) -> f64 {
    match key {
        "switches_per_s" => 1_600.0,
        "busy_pct" => 4.5,
        "irq_pct" => 0.14,
        "softirq_pct" => 0.26,
        "steal_pct" => 0.1,
        "probe_irq_pct" => 0.17,
        "probe_softirq_pct" => 0.31,
        "rq_since_scrape" => RQ_AVG,
        other => panic!("CPU figure {other} has no expected /metrics value here: add one"),
    }
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: {got} vs {want}"
    );
}

fn interval() -> Arc<shared_interval::Interval> {
    let prev = Some(Arc::new(sample(false)));
    Arc::new(shared_interval::of(
        &host(),
        prev,
        Arc::new(sample(true)),
        Default::default(),
    ))
}

/// CPU 5 as the view reads it, with the history one interval leaves.
fn view_check(check: impl FnOnce(&CpuRow)) {
    let iv = interval();
    let view = iv.cpus.as_ref().expect("a CPU view from two Samples");
    let mut hist = CpuHistory::default();
    hist.push(view);
    let c = view.cpus.iter().find(|c| c.cpu == CPU).unwrap();
    check(&CpuRow::of_figures(c, &hist));
}

fn check_value(fig: &CpuFigure, v: &Value, what: &str) {
    match (wanted(fig.key), v) {
        (Want::Pairs(w), Value::Pairs(p)) => assert_eq!(p.to_vec(), w, "{what} {}", fig.key),
        (Want::N(w), v) => close(
            v.number()
                .unwrap_or_else(|| panic!("{what} {}: {v:?}", fig.key)),
            w,
            &format!("{what} {}", fig.key),
        ),
        (_, v) => panic!("{what} {}: {v:?}", fig.key),
    }
}

#[test]
fn every_figure_reads_its_value_from_the_interval_and_reaches_a_sink() {
    let iv = interval();
    let c = iv.cpu_intervals.iter().find(|c| c.cpu == CPU).unwrap();
    let row = CpuRow::of_interval(c, iv.seconds(), &host().topology);
    for fig in &CPU_FIGURES {
        let sinks = [fig.column.is_some(), fig.field.is_some(), fig.om.is_some()];
        assert!(sinks.contains(&true), "{} reaches no sink", fig.key);
        // figures of the JSON row; the view's own are checked below
        if fig.field.is_some() {
            check_value(fig, &fig.value(&row), "interval");
        }
    }
    view_check(|r| {
        for fig in CPU_FIGURES.iter().filter(|f| f.column.is_some()) {
            check_value(fig, &fig.value(r), "view");
        }
    });
}

#[test]
fn every_column_shows_its_figure() {
    view_check(|r| {
        let cols = columns();
        let texts = cells(r);
        assert_eq!(texts.len(), cols.len());
        for fig in &CPU_FIGURES {
            let Some(col) = fig.column else { continue };
            let i = cols.iter().position(|(f, _)| f.key == fig.key).unwrap();
            let Want::N(w) = wanted(fig.key) else {
                panic!("{}: a column of a non-number", fig.key)
            };
            let text = texts[i].as_str();
            let got: f64 = text
                .parse()
                .unwrap_or_else(|_| panic!("{}: cell {text:?}", fig.key));
            let within = match col.cell {
                Cell::RunQueue { .. } => 0.005,
                Cell::Id | Cell::QueueMax => 0.0,
                Cell::Percent | Cell::Rate => 0.05,
            };
            assert!(
                (got - w).abs() <= within,
                "{}: cell {text:?} vs {w}",
                fig.key
            );
            assert!(
                text.len() <= col.width,
                "{}: {text:?} wider than {}",
                fig.key,
                col.width
            );
        }
    });
}

#[test]
fn json_carries_every_field() {
    let rec = interval_record(&host(), Some(&sample(false)), &sample(true));
    let json = serde_json::to_value(&rec).unwrap();
    let cpus = json["cpus"].as_array().unwrap();
    let cpu = |n: u32| {
        cpus.iter()
            .find(|c| c["cpu"] == n)
            .unwrap_or_else(|| panic!("no CPU {n}: {json}"))
    };
    let (five, zero) = (cpu(CPU), cpu(0));
    let mut names = BTreeSet::new();
    for fig in &CPU_FIGURES {
        let Some(field) = fig.field else { continue };
        let name = field.name;
        names.insert(name);
        let got = &five[name];
        match wanted(fig.key) {
            Want::N(w) => close(
                got.as_f64().unwrap_or_else(|| panic!("JSON {name}: {got}")),
                w,
                &format!("JSON {name}"),
            ),
            Want::Pairs(w) => {
                let back: Vec<(u64, u64)> = serde_json::from_value(got.clone())
                    .unwrap_or_else(|e| panic!("JSON {name}: {e}: {got}"));
                assert_eq!(back, w, "JSON {name}");
            }
        }
        // CPU 0 knows no run queue and no interrupts: null, or no field
        // where the descriptor says unknown is left out
        if fig.key.starts_with("rq_") || fig.key.ends_with("irq_pct") || fig.key == "steal_pct" {
            let present = zero.as_object().unwrap().contains_key(name);
            assert_eq!(present, !field.omit_unknown, "CPU 0's {name}: {zero}");
            assert!(zero[name].is_null(), "CPU 0's {name}: {zero}");
        }
    }
    // and nothing the table does not declare
    for k in five.as_object().unwrap().keys() {
        assert!(names.contains(k.as_str()), "JSON {k} is in no descriptor");
    }
}

#[test]
fn metrics_have_every_family_with_its_help() {
    let mut t = Totals::new(host());
    t.update(sample(false));
    t.update(sample(true));
    let o = ExportOptions {
        top: 100,
        per_thread: false,
        max_series: 100_000,
    };
    let om = render(&t, &o, 0);
    let parsed =
        parse_openmetrics(&for_crate_parser(&om)).unwrap_or_else(|e| panic!("{e:?}\n{om}"));
    let mut families = BTreeSet::new();
    for fig in &CPU_FIGURES {
        let Some(spec) = fig.om else { continue };
        let mut name = spec.family.to_string();
        if spec.seconds {
            name.push_str("_seconds");
        }
        families.insert(name.clone());
        let fam = parsed
            .families
            .get(&name)
            .unwrap_or_else(|| panic!("{name} ({}) missing\n{om}", fig.key));
        let help = format!("# HELP {name} {}", spec.help);
        assert!(om.lines().any(|l| l == help), "{name}: help\n{om}");
        let series = |cpu: u32| {
            fam.iter_samples().find(|s| {
                let l = s.get_labelset().unwrap();
                l.get_label_value("cpu") == Some(&cpu.to_string())
                    && l.get_label_value("node") == Some(if cpu == CPU { "1" } else { "0" })
                    && spec
                        .labels
                        .iter()
                        .all(|&(k, v)| l.get_label_value(k) == Some(v))
            })
        };
        let s = series(CPU)
            .unwrap_or_else(|| panic!("{name} ({}) has no CPU {CPU} series\n{om}", fig.key));
        let v = match &s.value {
            OpenMetricsValue::Counter(c) => c.value.as_f64(),
            OpenMetricsValue::Gauge(g) => g.as_f64(),
            other => panic!("{name}: {other:?}"),
        };
        close(v, om_wanted(fig.key), &format!("{name} ({})", fig.key));
        // CPU 0 has no interrupt figures: no series, not a made-up 0
        if let OmGet::Sample(get) = spec.get {
            let known = get(&sample(true).cpus[0]).is_some();
            assert_eq!(series(0).is_some(), known, "{name} ({}) of CPU 0", fig.key);
        }
    }
    // and no other CPU family
    for name in parsed.families.keys() {
        let pressure = name.starts_with("schedtop_cpu_pressure");
        if name.starts_with("schedtop_cpu_") && !pressure {
            assert!(families.contains(name), "{name} is in no descriptor");
        }
    }
}

#[test]
fn every_trigger_figure_fires_with_its_value() {
    use schedtop::model::trigger::parse;
    use schedtop::model::trigger_eval::{evaluate, Figures, Verdict};
    let iv = interval();
    let x = Figures {
        derived: &iv.derived,
        cpus: iv.cpus.as_ref(),
        findings: &[],
    };
    let flagged: Vec<_> = CPU_FIGURES.iter().filter(|f| f.trigger).collect();
    assert!(!flagged.is_empty());
    for fig in flagged {
        let Want::N(w) = wanted(fig.key) else {
            panic!("{}: a trigger on a non-number", fig.key)
        };
        let (cond, fired_with) = trigger_sink::threshold(fig.key, fig.unit, w);
        let t = parse(&format!("cpu:{cond}")).unwrap_or_else(|e| panic!("{e}"));
        let Verdict::Holds(hits) = evaluate(&t, &x) else {
            panic!("cpu:{cond} does not fire")
        };
        let hit = hits.iter().find(|h| h.id == CPU).expect("CPU 5 fires");
        close(hit.value, fired_with, fig.key);
    }
}
