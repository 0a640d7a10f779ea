//! The exposition `schedtop serve` writes, read back by an independent
//! strict parser (the openmetrics-parser crate, which follows the
//! OpenMetrics ABNF and its test suite): synthetic Samples with churn,
//! hostile thread names, every level, both formats.
use crate::common;

use common::om_parser::for_crate_parser;
use openmetrics_parser::{openmetrics::parse_openmetrics, prometheus::parse_prometheus};
use schedtop::export::openmetrics::{families, render, ExportOptions};
use schedtop::export::openmetrics_encode::{encode, label_text, to_prometheus_text, Family};
use schedtop::export::openmetrics_totals::Totals;
use schedtop::model::figures::{Level, LEVEL_FIGURES};
use schedtop::model::pressure::parse;
use schedtop::model::{CgroupSample, Pressure};
use schedtop::record::testdata::{synthetic_host, SynthGen, SynthOptions};

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
                .into();
            th.process_comm = th.comm.clone();
        }
        s.cgroups = cgroups(i as u64);
        for th in s.threads.iter_mut() {
            // every level figure present: the waits all began at wakeups,
            // and the why figures are known (all unattributed)
            th.wakeup_wait_hist = th.wait_hist.clone();
            th.preempt_wait_hist = th.wait_hist.as_ref().map(|_| Default::default());
            th.why = Some(Default::default());
        }
        for (j, th) in s.threads.iter_mut().enumerate() {
            th.cgroup = Some((j % 3) as u32);
            // whys that grow with the counters they explain
            let mut w = schedtop::model::why::WhySample::default();
            w.blocked_on[3] = th.voluntary / 2;
            w.migrations_by_cause[1] = th.migrations.unwrap_or(0) / 2;
            // wakers counted (none named): their figure has series too
            w.wakeups = Some(th.voluntary);
            th.why = Some(w.into());
        }
        s.system.cpu_pressure = parse(&format!(
            "some avg10=1.{i} avg60=2.00 avg300=3.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            1000 * i
        ))
        .map(|p| Box::new(p.into()));
        t.update(s);
    }
    t
}

/// The root, a throttled cgroup with a hostile name and pressure, and an
/// unlimited one without (a v1 cgroup has no cpu.pressure), as cgroupfs
/// would show them at Sample `i` (cumulative).
fn cgroups(i: u64) -> Vec<CgroupSample> {
    let limited = CgroupSample {
        path: "/lim\x1b[2J\"x\"".into(),
        quota_cpus: Some(0.5),
        nr_periods: Some(100 + 10 * i),
        nr_throttled: Some(7 * i),
        throttled_ns: Some(41_000_000 * i),
        pressure: Some(Pressure {
            some_avg10: 3.0,
            some_total_us: 90_000 * i,
            full_avg10: Some(1.0),
            full_total_us: Some(20_000 * i),
        }),
        ..Default::default()
    };
    let free = CgroupSample {
        path: "/free".into(),
        nr_periods: Some(0),
        nr_throttled: Some(0),
        throttled_ns: Some(0),
        ..Default::default()
    };
    vec![
        CgroupSample {
            path: "/".into(),
            ..Default::default()
        },
        limited,
        free,
    ]
}

#[test]
fn cgroups_export_the_kernels_counters_as_they_are() {
    let t = totals(30, 4);
    let o = ExportOptions::default();
    let om = render(&t, &o, 0);
    let parsed =
        parse_openmetrics(&for_crate_parser(&om)).unwrap_or_else(|e| panic!("{e:?}\n{om}"));
    let want = &cgroups(3);
    let value = |family: &str, path: &str, kind: Option<&str>| -> Option<f64> {
        parsed.families.get(family)?.iter_samples().find_map(|s| {
            let l = s.get_labelset().ok()?;
            (l.get_label_value("cgroup") == Some(path)
                && kind.is_none_or(|k| l.get_label_value("kind") == Some(k)))
            .then(|| match s.value {
                openmetrics_parser::OpenMetricsValue::Counter(ref c) => c.value.as_f64(),
                openmetrics_parser::OpenMetricsValue::Gauge(ref g) => g.as_f64(),
                _ => f64::NAN,
            })
        })
    };
    // control characters arrive as '?', quotes escaped by the encoder
    let lim = &label_text(&want[1].path);
    assert_eq!(lim, "/lim?[2J\"x\"");
    assert_eq!(
        value("schedtop_cgroup_throttled_periods", lim, None),
        Some(21.0)
    );
    assert_eq!(value("schedtop_cgroup_periods", lim, None), Some(130.0));
    assert_eq!(
        value("schedtop_cgroup_throttled_seconds", lim, None),
        Some(0.123)
    );
    assert_eq!(
        value("schedtop_cgroup_cpu_quota_cpus", lim, None),
        Some(0.5)
    );
    let stalled = "schedtop_cgroup_cpu_pressure_stalled_seconds";
    assert_eq!(value(stalled, lim, Some("some")), Some(0.27));
    assert_eq!(value(stalled, lim, Some("full")), Some(0.06));
    // the unlimited cgroup: zero throttling, no quota and no pressure series
    assert_eq!(
        value("schedtop_cgroup_throttled_periods", "/free", None),
        Some(0.0)
    );
    assert_eq!(value("schedtop_cgroup_cpu_quota_cpus", "/free", None), None);
    assert_eq!(value(stalled, "/free", Some("some")), None);
    // a third of the threads in each
    let thr = value("schedtop_cgroup_threads", "/free", None).unwrap();
    let all: f64 = ["/", lim.as_str(), "/free"]
        .iter()
        .map(|p| value("schedtop_cgroup_threads", p, None).unwrap())
        .sum();
    assert_eq!(all, t.latest.as_ref().unwrap().threads.len() as f64);
    assert!(thr > 0.0);
    assert!(
        !om.contains('\x1b'),
        "the hostile cgroup name reached the text raw"
    );

    // a tight budget leaves cgroups out whole and says how many
    let tight = ExportOptions {
        max_series: 40,
        ..Default::default()
    };
    let om = render(&t, &tight, 0);
    let parsed = parse_openmetrics(&for_crate_parser(&om)).unwrap();
    let exported: std::collections::BTreeSet<String> = parsed
        .families
        .get("schedtop_cgroup_threads")
        .map(|f| {
            f.iter_samples()
                .filter_map(|s| {
                    Some(
                        s.get_labelset()
                            .ok()?
                            .get_label_value("cgroup")?
                            .to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let omitted = parsed.families["schedtop_omitted"]
        .iter_samples()
        .find(|s| s.get_labelset().unwrap().get_label_value("level") == Some("cgroup"))
        .map(|s| match s.value {
            openmetrics_parser::OpenMetricsValue::Gauge(ref g) => g.as_f64(),
            _ => f64::NAN,
        })
        .unwrap();
    assert_eq!(exported.len() as f64 + omitted, 3.0, "{om}");
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
    // every level figure, at every level, from the figure table: a figure
    // that one level leaves out fails here
    for f in LEVEL_FIGURES.iter() {
        for level in Level::ALL {
            let mut name = f.name(level);
            if f.seconds {
                name.push_str("_seconds");
            }
            let fam = parsed.families.get(&name);
            let fam = fam.unwrap_or_else(|| panic!("{name} ({}) missing\n{om}", f.key));
            assert!(fam.iter_samples().count() > 0, "{name} has no series");
            let help = om
                .lines()
                .find(|l| l.starts_with(&format!("# HELP {name} ")));
            assert_eq!(
                help.map(|l| l[format!("# HELP {name} ").len()..].to_string()),
                Some(f.help_at(level)),
                "{name}"
            );
        }
    }
    for name in [
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
