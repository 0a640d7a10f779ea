//! Every cgroup figure descriptor (model/cgroup_metrics.rs) reaches every
//! sink it names, generated from the table: two hand-built Samples whose
//! cgroup counters and threads grow by known amounts go through the
//! Interval's rows, the cgroups view's cells and sorting, batch JSON,
//! `cgroups-csv` and `/metrics` (read back by a strict OpenMetrics
//! parser). The expected values are worked out by hand below; a figure
//! without one, or one a sink leaves out, fails here by name.
use crate::common;
use crate::trigger_sink;

use common::om_parser::for_crate_parser;
use std::collections::BTreeMap;

use openmetrics_parser::openmetrics::parse_openmetrics;
use openmetrics_parser::OpenMetricsValue;
use schedtop::export::cgroup_csv;
use schedtop::export::json::interval_record;
use schedtop::export::openmetrics::{render, ExportOptions};
use schedtop::export::openmetrics_totals::Totals;
use schedtop::model::cgroup_metrics::{columns, Cell, CgroupFigure, Shown, CGROUP_FIGURES};
use schedtop::model::interval::derive;
use schedtop::model::metrics::Value;
use schedtop::model::{CgroupRow, CgroupSample, Log2Hist, Pressure, Sample, ThreadSample};
use schedtop::record::testdata::{synthetic_host, SynthOptions};
use schedtop::ui::action::Action;
use schedtop::ui::cgroup_tree::CgroupsUi;
use schedtop::ui::format;
use schedtop::ui::views::cgroups::cells;

/// the cgroup every figure is checked on
const SVC: &str = "/svc";

fn thread(tid: u32, cgroup: u32, second: bool) -> ThreadSample {
    // in 2 s: thread 11 ran 600 ms, switched 20 + 8 times, moved 4 times;
    // thread 12 ran 200 ms, switched 10 + 2 times, moved twice
    let (oncpu, vol, invol, migr) = match (tid, second) {
        (_, false) => (0, 0, 0, 0),
        (11, true) => (600_000_000, 20, 8, 4),
        (_, true) => (200_000_000, 10, 2, 2),
    };
    ThreadSample {
        tid,
        pid: tid,
        comm: format!("t{tid}").into(),
        process_comm: format!("t{tid}").into(),
        start_time_ns: 1,
        oncpu_ns: oncpu,
        voluntary: vol,
        involuntary: invol,
        migrations: Some(migr),
        cgroup: Some(cgroup),
        wait_hist: Some(if second && tid == 11 {
            wait_hist()
        } else {
            Log2Hist::new()
        }),
        slice_hist: Some(if second && tid == 11 {
            slice_hist()
        } else {
            Log2Hist::new()
        }),
        ..Default::default()
    }
}

/// thread 11's waits and slices in the interval (thread 12 had none)
fn wait_hist() -> Log2Hist {
    Log2Hist::from_octaves([0, 0, 0, 0, 0, 0, 90, 0, 0, 10])
}
fn slice_hist() -> Log2Hist {
    Log2Hist::from_octaves([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40])
}

fn sample(second: bool) -> Sample {
    let svc = if second {
        CgroupSample {
            path: SVC.into(),
            quota_cpus: Some(1.5),
            cpuset_cpus: Some(2),
            nr_periods: Some(140),
            nr_throttled: Some(30),
            throttled_ns: Some(1_500_000_000),
            pressure: Some(Pressure {
                some_avg10: 3.5,
                some_total_us: 205_000,
                full_avg10: Some(1.25),
                full_total_us: Some(41_000),
            }),
        }
    } else {
        CgroupSample {
            path: SVC.into(),
            quota_cpus: Some(1.5),
            cpuset_cpus: Some(2),
            nr_periods: Some(100),
            nr_throttled: Some(10),
            throttled_ns: Some(1_000_000_000),
            pressure: Some(Pressure {
                some_avg10: 3.5,
                some_total_us: 5_000,
                full_avg10: Some(1.25),
                full_total_us: Some(1_000),
            }),
        }
    };
    let at = if second { 3_000_000_000 } else { 1_000_000_000 };
    Sample {
        time_ns: 1_795_000_000_000_000_000 + at,
        mono_ns: at,
        threads: vec![thread(11, 1, second), thread(12, 2, second)].into(),
        cgroups: vec![
            CgroupSample {
                path: "/".into(),
                ..Default::default()
            },
            svc,
            CgroupSample {
                path: "/svc/job".into(),
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

/// What each figure of /svc must read, worked out by hand from the
/// Samples above (the interval is 2 s; /svc's subtree holds both threads).
enum Want {
    N(f64),
    Text(&'static str),
    Hist(Log2Hist),
}

fn wanted(key: &str) -> Want {
    use Want::*;
    match key {
        "path" => Text(SVC),
        "threads" => N(2.0),
        "own_threads" => N(1.0),
        // 800 ms of CPU in 2 s
        "cpu_pct" => N(40.0),
        "cpu_quota_cpus" => N(1.5),
        "cpuset_cpus" => N(2.0),
        "nr_periods" => N(140.0),
        "nr_throttled" => N(30.0),
        "throttled_ns" => N(1.5e9),
        // 20 periods and 500 ms throttled in 2 s
        "throttled_per_s" => N(10.0),
        "throttled_ms_per_s" => N(250.0),
        // 200 ms and 40 ms stalled in 2 s
        "psi_some_pct" => N(10.0),
        "psi_full_pct" => N(2.0),
        "psi_some_avg10" => N(3.5),
        "psi_full_avg10" => N(1.25),
        "psi_some_us" => N(205_000.0),
        "psi_full_us" => N(41_000.0),
        // 30 voluntary, 10 involuntary switches, 6 migrations in 2 s
        "voluntary_per_s" => N(15.0),
        "involuntary_per_s" => N(5.0),
        "migrations_per_s" => N(3.0),
        // quantiles of the merged histograms: thread 11's alone
        "wait_p50_us" => N(wait_hist().quantile_us(0.5).unwrap() as f64),
        "wait_p99_us" => N(wait_hist().quantile_us(0.99).unwrap() as f64),
        "slice_p99_us" => N(slice_hist().quantile_us(0.99).unwrap() as f64),
        "slice_hist_us" => Hist(slice_hist()),
        "wait_hist_us" => Hist(wait_hist()),
        other => panic!("cgroup figure {other} has no expected value in this test: add one"),
    }
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: {got} vs {want}"
    );
}

fn svc_row() -> CgroupRow {
    let d = derive(Some(&sample(false)), &sample(true), 1.0);
    d.cgroups.into_iter().find(|c| c.path == SVC).unwrap()
}

#[test]
fn every_figure_reads_its_value_from_the_interval_row() {
    let r = svc_row();
    for fig in &CGROUP_FIGURES {
        match (wanted(fig.key), fig.value(&r)) {
            (Want::N(w), v) => close(
                v.number().unwrap_or_else(|| panic!("{}: {v:?}", fig.key)),
                w,
                fig.key,
            ),
            (Want::Text(w), v) => assert_eq!(v, Value::Text(w), "{}", fig.key),
            (Want::Hist(w), Value::Hist(h)) => {
                assert_eq!(h.nonzero_pairs(), w.nonzero_pairs(), "{}", fig.key)
            }
            (_, v) => panic!("{}: {v:?}", fig.key),
        }
        let sinks = [
            !matches!(fig.shown, Shown::Nowhere),
            fig.field.is_some(),
            fig.om.is_some(),
        ];
        assert!(sinks.contains(&true), "{} reaches no sink", fig.key);
    }
}

/// The number a cell shows for a figure (the first or second half of a
/// pair), compared within the cell's rounding.
fn check_cell(fig: &CgroupFigure, text: &str, half: Option<usize>, cell: Cell) {
    let Want::N(w) = wanted(fig.key) else {
        panic!("{}: a column of a non-number", fig.key)
    };
    let part = match half {
        Some(i) => text.split('/').nth(i).unwrap_or(""),
        None => text,
    };
    if cell == Cell::Duration {
        assert_eq!(part, format::duration_us(w as u64), "{}", fig.key);
        return;
    }
    let got: f64 = part
        .parse()
        .unwrap_or_else(|_| panic!("{}: cell {text:?}", fig.key));
    assert!((got - w).abs() <= 0.05, "{}: cell {text:?} vs {w}", fig.key);
}

#[test]
fn every_column_shows_its_figure_and_every_sort_orders_by_it() {
    let r = svc_row();
    let cols = columns();
    let texts = cells(&r);
    assert_eq!(texts.len(), cols.len());
    for fig in &CGROUP_FIGURES {
        match fig.shown {
            Shown::Column(c) => {
                let i = cols.iter().position(|(f, _)| f.key == fig.key).unwrap();
                let pair = matches!(c.cell, Cell::Limit { .. } | Cell::SlashPair { .. });
                check_cell(fig, &texts[i], pair.then_some(0), c.cell);
            }
            Shown::In(k) => {
                let i = cols.iter().position(|(f, _)| f.key == k).unwrap();
                check_cell(fig, &texts[i], Some(1), Cell::OneDecimal);
            }
            Shown::Detail | Shown::Name | Shown::Nowhere => {}
        }
    }
    // two sibling roots: /svc, and one with nothing known (sorts last)
    let all = vec![
        CgroupRow {
            parent: None,
            ..r.clone()
        },
        CgroupRow {
            path: "/zzz".into(),
            ..Default::default()
        },
    ];
    let mut ui = CgroupsUi::default();
    let mut seen = Vec::new();
    for _ in 0..CGROUP_FIGURES.len() {
        let title = ui.sort.title();
        if seen.contains(&title) {
            break;
        }
        seen.push(title);
        assert_eq!(ui.rows(&all, ""), [0, 1], "sorted by {title}");
        ui.inverted = true;
        assert_eq!(ui.rows(&all, ""), [1, 0], "sorted by {title}, inverted");
        ui.apply(&Action::SortNext, &all, "", 10);
    }
    for fig in CGROUP_FIGURES.iter().filter(|f| f.sort.is_some()) {
        assert!(seen.contains(&fig.sort.unwrap()), "no sort by {}", fig.key);
    }
}

fn json_number(v: &serde_json::Value, what: &str) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{what}: {v}"))
}

#[test]
fn json_and_csv_carry_every_field() {
    let host = synthetic_host(&SynthOptions::default());
    let (a, b) = (sample(false), sample(true));
    let rec = interval_record(&host, Some(&a), &b);
    let json = serde_json::to_value(&rec).unwrap();
    let cg = json["cgroups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == SVC)
        .unwrap_or_else(|| panic!("no {SVC}: {json}"));
    let mut csv = Vec::new();
    cgroup_csv::write(&mut csv, &rec).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let header = cgroup_csv::header();
    let names: Vec<&str> = header.split(',').collect();
    let line = csv
        .lines()
        .find(|l| {
            l.split(',')
                .nth(names.iter().position(|n| *n == "path").unwrap())
                == Some(SVC)
        })
        .unwrap_or_else(|| panic!("no {SVC} line:\n{csv}"));
    let row: Vec<&str> = line.split(',').collect();
    assert_eq!(row.len(), names.len(), "{line}");
    let csv_cell = |name: &str| {
        let i = names.iter().position(|h| *h == name);
        row[i.unwrap_or_else(|| panic!("CSV has no {name} column: {header}"))]
    };
    for fig in &CGROUP_FIGURES {
        let Some(field) = fig.field else { continue };
        let name = field.name;
        let got = &cg[name];
        let cell = csv_cell(name);
        match wanted(fig.key) {
            Want::N(w) => {
                // written in whole units of `div` (ns as µs)
                let w = if field.div > 1 {
                    (w / field.div as f64).floor()
                } else {
                    w
                };
                close(json_number(got, name), w, &format!("JSON {name}"));
                close(cell.parse().unwrap(), w, &format!("CSV {name}"));
            }
            Want::Text(w) => {
                assert_eq!(got, w, "JSON {name}");
                assert_eq!(cell, w, "CSV {name}");
            }
            Want::Hist(h) => {
                let pairs: Vec<(f64, u64)> = h
                    .nonzero_pairs()
                    .iter()
                    .map(|p| (p.low_us(), p.count))
                    .collect();
                let back: Vec<(f64, u64)> = serde_json::from_value(got.clone())
                    .unwrap_or_else(|e| panic!("JSON {name}: {e}: {got}"));
                assert_eq!(back, pairs, "JSON {name}");
                let text: Vec<String> = pairs.iter().map(|(l, n)| format!("{l}:{n}")).collect();
                assert_eq!(cell, text.join(" "), "CSV {name}");
            }
        }
    }
}

#[test]
fn metrics_have_every_family_with_its_help() {
    let mut t = Totals::new(synthetic_host(&SynthOptions::default()));
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
    let mut families: BTreeMap<String, usize> = BTreeMap::new();
    for fig in &CGROUP_FIGURES {
        let Some(spec) = fig.om else { continue };
        let mut name = spec.family.to_string();
        if spec.seconds {
            name.push_str("_seconds");
        }
        *families.entry(name.clone()).or_default() += 1;
        let fam = parsed
            .families
            .get(&name)
            .unwrap_or_else(|| panic!("{name} ({}) missing\n{om}", fig.key));
        let help = format!("# HELP {name} {}", spec.help);
        assert!(om.lines().any(|l| l == help), "{name}: help\n{om}");
        let s = fam
            .iter_samples()
            .find(|s| {
                let l = s.get_labelset().unwrap();
                l.get_label_value("cgroup") == Some(SVC)
                    && spec
                        .label
                        .is_none_or(|(k, v)| l.get_label_value(k) == Some(v))
            })
            .unwrap_or_else(|| panic!("{name} ({}) has no {SVC} series\n{om}", fig.key));
        let v = match &s.value {
            OpenMetricsValue::Counter(c) => c.value.as_f64(),
            OpenMetricsValue::Gauge(g) => g.as_f64(),
            other => panic!("{name}: {other:?}"),
        };
        let Want::N(w) = wanted(fig.key) else {
            panic!("{}: a family of a non-number", fig.key)
        };
        close(v, w / spec.per, &format!("{name} ({})", fig.key));
    }
    // and no other cgroup family
    for name in parsed.families.keys() {
        if name.starts_with("schedtop_cgroup_") {
            assert!(families.contains_key(name), "{name} is in no descriptor");
        }
    }
}

#[test]
fn every_trigger_figure_fires_with_its_value() {
    use schedtop::model::trigger::parse;
    use schedtop::model::trigger_eval::{evaluate, Figures, Verdict};
    let d = derive(Some(&sample(false)), &sample(true), 1.0);
    let flagged: Vec<_> = CGROUP_FIGURES.iter().filter(|f| f.trigger).collect();
    assert!(!flagged.is_empty());
    for fig in flagged {
        let Want::N(w) = wanted(fig.key) else {
            panic!("{}: a trigger on a non-number", fig.key)
        };
        let (cond, fired_with) = trigger_sink::threshold(fig.key, fig.unit, w);
        let t = parse(&format!("cgroup:{cond}")).unwrap_or_else(|e| panic!("{e}"));
        let Verdict::Holds(hits) = evaluate(&t, &Figures::rows(&d)) else {
            panic!("cgroup:{cond} does not fire")
        };
        let hit = hits.iter().find(|h| h.comm == SVC).expect(SVC);
        close(hit.value, fired_with, fig.key);
    }
}
