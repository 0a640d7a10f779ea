//! The exposition `schedtop serve` writes, read back by an independent
//! strict parser (the openmetrics-parser crate, which follows the
//! OpenMetrics ABNF and its test suite): synthetic Samples with churn,
//! hostile thread names, every level, both formats.
use openmetrics_parser::{openmetrics::parse_openmetrics, prometheus::parse_prometheus};
use schedtop::export::openmetrics::{families, render, ExportOptions};
use schedtop::export::openmetrics_encode::{encode, to_prometheus_text, Family};
use schedtop::export::openmetrics_totals::Totals;
use schedtop::model::pressure::parse;
use schedtop::record::testdata::{synthetic_host, SynthGen, SynthOptions};

/// openmetrics-parser 0.5 refuses `# UNIT` on histograms, which the
/// OpenMetrics spec allows (only info and stateset families must not have
/// one; Prometheus and the Python reference parser accept them, see
/// tests/serve_prometheus.rs): those lines are left out for it.
fn for_crate_parser(om: &str) -> String {
    let histograms: Vec<&str> = om
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" histogram"))
        .collect();
    om.lines()
        .filter(|l| {
            !l.strip_prefix("# UNIT ")
                .and_then(|r| r.split(' ').next())
                .is_some_and(|n| histograms.contains(&n))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn totals(threads: usize, samples: usize) -> Totals {
    let o = SynthOptions {
        threads,
        samples,
        churn: 0.2,
        ..Default::default()
    };
    let mut t = Totals::new(synthetic_host(&o));
    let mut g = SynthGen::new(o);
    for i in 0..samples {
        let mut s = g.next_sample();
        // names threads choose for themselves
        for (j, th) in s.threads.iter_mut().enumerate().take(8) {
            th.comm = [
                "a\"b",
                "x\\y",
                "nl\nx",
                "\x1b[2J",
                "<b>&amp;",
                "é€😀",
                "",
                "{le=\"1\"}",
            ][j]
                .to_string();
            th.process_comm = th.comm.clone();
        }
        t.pressure = parse(&format!(
            "some avg10=1.{i} avg60=2.00 avg300=3.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            1000 * i
        ));
        t.update(s);
    }
    t
}

#[test]
fn a_strict_openmetrics_parser_reads_every_level() {
    let t = totals(300, 6);
    let o = ExportOptions {
        top: 1000,
        per_thread: true,
        max_series: 200_000,
    };
    let om = render(&t, &o, 0);
    let parsed =
        parse_openmetrics(&for_crate_parser(&om)).unwrap_or_else(|e| panic!("{e:?}\n{om}"));
    for name in [
        "schedtop_switches",
        "schedtop_runqueue_latency_seconds",
        "schedtop_process_slice_seconds",
        "schedtop_thread_switches",
        "schedtop_cpu_runqueue_length",
        "schedtop_cpu_pressure_ratio",
        "schedtop_omitted",
        "schedtop_build",
    ] {
        assert!(parsed.families.contains_key(name), "{name} missing");
    }
    // the series the parser found are the series we counted
    let ours: usize = families(&t, &o, 0).iter().map(Family::series).sum();
    let lines = om.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(ours, lines);
    // hostile names arrive as text, never as a terminal escape
    assert!(!om.contains('\x1b'));
    let procs = &parsed.families["schedtop_thread_switches"];
    let names: Vec<String> = procs
        .iter_samples()
        .map(|s| {
            s.get_labelset()
                .unwrap()
                .get_label_value("comm")
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert!(names.iter().any(|n| n == "a\"b"), "{names:?}");
    assert!(names.iter().any(|n| n == "x\\y"), "{names:?}");
    assert!(names.iter().any(|n| n == "é€😀"), "{names:?}");
}

#[test]
fn the_prometheus_text_form_parses_too() {
    let t = totals(100, 4);
    let om = render(
        &t,
        &ExportOptions {
            top: 10,
            per_thread: true,
            max_series: 5000,
        },
        0,
    );
    let text = to_prometheus_text(&om);
    let parsed = parse_prometheus(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    assert!(parsed.families.contains_key("schedtop_switches_total"));
    assert!(parsed
        .families
        .contains_key("schedtop_process_runqueue_latency_seconds"));
}

#[test]
fn every_max_series_bound_still_parses() {
    let t = totals(200, 3);
    for max in [0, 10, 100, 1000] {
        let f = families(
            &t,
            &ExportOptions {
                top: 200,
                per_thread: true,
                max_series: max,
            },
            0,
        );
        let om = encode(f);
        parse_openmetrics(&for_crate_parser(&om)).unwrap_or_else(|e| panic!("max {max}: {e:?}"));
    }
}
