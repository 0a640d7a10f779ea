//! The metrics `schedtop serve` exports, built from `Totals`: the system,
//! each CPU, the top processes by switch rate and (when asked) the top
//! threads. Names, units and help live here, once (docs/serve.md),
//! except the per-CPU families' (model/cpu_metrics.rs).
//! The per-level families (switches, waits, histograms, whys) come from
//! the level figures (openmetrics_levels.rs, model/figures.rs).
use prometheus_client::metrics::MetricType;

use super::openmetrics_cgroups::cgroup_families;
use super::openmetrics_cpus::cpu_families;
use super::openmetrics_encode::{encode, label_text, Family, Labels, Value};
use super::openmetrics_levels::LevelFamilies;
use super::openmetrics_system::system_families;
use super::openmetrics_totals::Totals;
use crate::model::figures::Level;
use crate::model::rates::thread_interval_or_all;
use crate::model::tally::Tally;

/// Which levels to export and how much.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// processes exported (the busiest by switch rate); also the cap on
    /// threads with `per_thread`
    pub top: usize,
    pub per_thread: bool,
    /// sample lines at most; what does not fit is counted, not written
    pub max_series: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            top: 20,
            per_thread: false,
            max_series: 10_000,
        }
    }
}

fn gauge(name: &'static str, help: &'static str, rows: Vec<(Labels, f64)>) -> Family {
    let mut f = Family::new(name, help, MetricType::Gauge);
    f.rows = rows
        .into_iter()
        .map(|(l, v)| (l, Value::Gauge(v)))
        .collect();
    f
}

fn counter(name: &'static str, help: &'static str, rows: Vec<(Labels, f64)>) -> Family {
    let mut f = Family::new(name, help, MetricType::Counter);
    f.rows = rows
        .into_iter()
        .map(|(l, v)| (l, Value::Counter(v)))
        .collect();
    f
}

/// Finding series exported at most (the rest are counted as omitted).
pub const MAX_FINDING_SERIES: usize = 20;

/// `schedtop_finding`: the last interval's findings, one series per kind
/// and subject, the value its impact; the MAX_FINDING_SERIES ranked first
/// are written, and how many were not.
fn finding_family(found: &[crate::model::findings::Finding]) -> (Family, usize) {
    let rows = found
        .iter()
        .take(MAX_FINDING_SERIES)
        .map(|f| {
            let labels = vec![
                ("kind", f.kind.key().to_string()),
                ("severity", f.severity.key().to_string()),
                ("subject_type", f.subject.kind.key().to_string()),
                ("subject", label_text(&f.subject.id.to_string())),
                ("name", label_text(&f.subject.name)),
            ];
            (labels, f.impact)
        })
        .collect();
    let f = gauge(
        "schedtop_finding",
        "A finding of the last interval (schedtop why): the share (0-1) of its subject's time or run-queue wait it explains.",
        rows,
    );
    (f, found.len().saturating_sub(MAX_FINDING_SERIES))
}

/// The families of one scrape. `rq_since_mono`: the start of the window
/// the run-queue length gauge averages over (the previous scrape's Sample).
pub fn families(t: &Totals, o: &ExportOptions, rq_since_mono: u64) -> Vec<Family> {
    let mut out = Vec::new();
    let host = &t.host;
    let mut build = Family::new(
        "schedtop_build",
        "schedtop's version, its source of Samples (bpf or procfs) and the kernel.",
        MetricType::Info,
    );
    build.rows.push((
        vec![
            ("version", env!("CARGO_PKG_VERSION").to_string()),
            ("source", host.source.as_str().to_string()),
            ("kernel", label_text(&host.kernel)),
        ],
        Value::Info,
    ));
    out.push(build);
    out.push(counter(
        "schedtop_samples",
        "Samples taken by the exporter's sampler.",
        vec![(vec![], t.samples as f64)],
    ));
    out.push(counter(
        "schedtop_interval_derivations",
        "Intervals derived from Samples by this process (one per Sample: every output shares it).",
        vec![(vec![], t.derivations as f64)],
    ));
    out.push(counter(
        "schedtop_sample_errors",
        "Attempts to take a Sample that failed.",
        vec![(vec![], t.sample_errors as f64)],
    ));
    out.push(
        gauge(
            "schedtop_sample_interval",
            "The sampler's interval: scrapes read the newest Sample.",
            vec![(vec![], host.interval_ns as f64 / 1e9)],
        )
        .in_seconds(),
    );
    if let Some(s) = &t.latest {
        out.push(
            gauge(
                "schedtop_last_sample_timestamp",
                "When the newest Sample was taken (Unix time).",
                vec![(vec![], s.time_ns as f64 / 1e9)],
            )
            .in_seconds(),
        );
        // the system table's counters (model/system_metrics.rs)
        out.extend(system_families(s, false));
    }

    let mut system = LevelFamilies::new(Level::System);
    system.push(&vec![], &t.system);
    out.extend(system.into_vec());

    if let Some(s) = &t.latest {
        let rq = t.rq_average_since(rq_since_mono);
        out.extend(cpu_families(&host.topology, s, &rq));
        out.extend(system_families(s, true));
    }
    out.extend(t.pressure.families());

    let (finding, findings_left) = finding_family(&t.findings);
    out.push(finding);
    let mut used: usize = out.iter().map(Family::series).sum();
    // two omitted gauges per level follow
    let mut budget = o.max_series.saturating_sub(used + 6);
    let mut omitted = Vec::new();
    let mut omitted_series = Vec::new();
    // cgroups take at most half of what is left; processes the rest
    let (cgroups, left, left_series) = cgroup_families(&t.cgroups, budget / 2);
    budget -= cgroups.iter().map(Family::series).sum::<usize>();
    out.extend(cgroups);
    omitted.push((vec![("level", "finding".to_string())], findings_left as f64));
    omitted.push((vec![("level", "cgroup".to_string())], left as f64));
    omitted_series.push((vec![("level", "cgroup".to_string())], left_series as f64));
    used = 0;

    let mut procs: Vec<_> = t.processes.values().collect();
    procs.sort_by(|a, b| b.rank_rate.total_cmp(&a.rank_rate).then(a.pid.cmp(&b.pid)));
    let mut level = LevelFamilies::new(Level::Process);
    let (mut left, mut left_series) = (0usize, 0usize);
    for (rank, p) in procs.iter().enumerate() {
        let cost = LevelFamilies::cost(&p.counts);
        if rank >= o.top || used + cost > budget {
            left += 1;
            left_series += cost;
            continue;
        }
        used += cost;
        let labels = vec![("pid", p.pid.to_string()), ("comm", label_text(&p.comm))];
        level.push(&labels, &p.counts);
    }
    out.extend(level.into_vec());
    omitted.push((vec![("level", "process".to_string())], left as f64));
    omitted_series.push((vec![("level", "process".to_string())], left_series as f64));

    if o.per_thread {
        let mut level = LevelFamilies::new(Level::Thread);
        let (mut left, mut left_series) = (0usize, 0usize);
        if let Some(s) = &t.latest {
            // exited threads are left out: their series end, and a tid the
            // kernel reused within the interval would repeat a label set
            let mut order: Vec<usize> = (0..s.threads.len())
                .filter(|&i| !s.threads[i].exited)
                .collect();
            let rate = |i: usize| t.thread_rates.get(i).copied().unwrap_or(0.0);
            order.sort_by(|&a, &b| rate(b).total_cmp(&rate(a)).then(a.cmp(&b)));
            for (rank, &i) in order.iter().enumerate() {
                let th = &s.threads[i];
                let c = Tally::of(thread_interval_or_all(th, None));
                let cost = LevelFamilies::cost(&c);
                if rank >= o.top || used + cost > budget {
                    left += 1;
                    left_series += cost;
                    continue;
                }
                used += cost;
                let labels = vec![
                    ("pid", th.pid.to_string()),
                    ("tid", th.tid.to_string()),
                    ("comm", label_text(&th.comm)),
                ];
                level.push(&labels, &c);
            }
        }
        out.extend(level.into_vec());
        omitted.push((vec![("level", "thread".to_string())], left as f64));
        omitted_series.push((vec![("level", "thread".to_string())], left_series as f64));
    }
    out.push(gauge(
        "schedtop_omitted",
        "Processes (threads) not exported at the last scrape: beyond --top or over --max-series.",
        omitted,
    ));
    out.push(gauge(
        "schedtop_omitted_series",
        "Sample lines those processes (threads) would have added.",
        omitted_series,
    ));
    out
}

/// One scrape's OpenMetrics text.
pub fn render(t: &Totals, o: &ExportOptions, rq_since_mono: u64) -> String {
    encode(families(t, o, rq_since_mono))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Log2Hist, Sample, ThreadSample};

    fn thread(tid: u32, pid: u32, vol: u64) -> ThreadSample {
        ThreadSample {
            tid,
            pid,
            comm: format!("w{tid}").into(),
            process_comm: format!("proc{pid}").into(),
            start_time_ns: 1,
            voluntary: vol,
            involuntary: 1,
            oncpu_ns: 2_500_000_000,
            wait_ns: 500_000_000,
            migrations: Some(4),
            counters: crate::model::counters::Counters::of(&[(
                crate::model::counters::CTR_CROSS_NODE_MIGRATIONS,
                1,
            )]),
            // OpenMetrics buckets are octaves: sub-buckets fold into them
            wait_hist: Some(Log2Hist::from_counts([1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2])),
            slice_hist: Some(Log2Hist::from_counts([0, 0, 0, 0, 0, 2])),
            ..Default::default()
        }
    }

    fn totals(procs: u32) -> Totals {
        let mut t = Totals::new(crate::record::testdata::synthetic_host(&Default::default()));
        let s = |mono_s: u64, k: u64| Sample {
            mono_ns: mono_s * 1_000_000_000,
            time_ns: mono_s * 1_000_000_000,
            threads: (1..=procs).map(|p| thread(p, p, k * p as u64)).collect(),
            ..Default::default()
        };
        t.update(s(1, 1));
        t.update(s(2, 2));
        t
    }

    #[test]
    fn histogram_buckets_are_log2_slots_in_seconds() {
        let om = render(&totals(1), &ExportOptions::default(), 0);
        assert!(
            om.contains("schedtop_runqueue_latency_seconds_bucket{le=\"0.000001\"} 1\n"),
            "{om}"
        );
        assert!(om.contains("schedtop_runqueue_latency_seconds_bucket{le=\"0.000002\"} 1\n"));
        assert!(om.contains("schedtop_runqueue_latency_seconds_bucket{le=\"0.000004\"} 4\n"));
        assert!(om.contains("schedtop_runqueue_latency_seconds_bucket{le=\"+Inf\"} 4\n"));
        // 1 at 0.5 us + 3 at 3 us
        assert!(
            om.contains("schedtop_runqueue_latency_seconds_sum 0.0000095\n"),
            "{om}"
        );
        assert!(om.contains(
            "schedtop_process_switches_total{pid=\"1\",comm=\"proc1\",kind=\"voluntary\"} 2.0\n"
        ));
        assert!(om.contains("schedtop_process_oncpu_seconds_total{pid=\"1\",comm=\"proc1\"} 2.5\n"));
        assert!(
            !om.contains("schedtop_thread_"),
            "threads only with --per-thread"
        );
    }

    #[test]
    fn top_and_max_series_bound_the_answer_and_count_the_rest() {
        let t = totals(50);
        let o = ExportOptions {
            top: 10,
            per_thread: true,
            max_series: 100_000,
        };
        let f = families(&t, &o, 0);
        let om = encode(f.clone());
        // the busiest (highest pid: most switches) come first
        assert!(om.contains("schedtop_process_switches_total{pid=\"50\""));
        assert!(!om.contains("schedtop_process_switches_total{pid=\"40\""));
        assert!(
            om.contains("schedtop_omitted{level=\"process\"} 40"),
            "{om}"
        );
        assert!(om.contains("schedtop_omitted{level=\"thread\"} 40"), "{om}");
        let per_proc = LevelFamilies::cost(&t.processes[&1].counts);
        let hist = crate::model::hist::HIST_OCTAVES + 2;
        assert_eq!(per_proc, 2 + 2 + 2 + 2 * hist);
        assert!(om.contains(&format!(
            "schedtop_omitted_series{{level=\"process\"}} {}",
            40 * per_proc
        )));

        for max in [0, 50, 500, 1000] {
            let o = ExportOptions {
                top: 50,
                per_thread: true,
                max_series: max,
            };
            let f = families(&t, &o, 0);
            let n: usize = f.iter().map(Family::series).sum();
            let fixed: usize = families(
                &t,
                &ExportOptions {
                    top: 0,
                    ..o.clone()
                },
                0,
            )
            .iter()
            .map(Family::series)
            .sum();
            assert!(n <= max.max(fixed), "max {max}: {n} series");
        }
    }

    #[test]
    fn a_tid_reused_within_an_interval_is_exported_once() {
        let mut t = Totals::new(crate::record::testdata::synthetic_host(&Default::default()));
        let mut gone = thread(7, 7, 5);
        gone.exited = true;
        let mut reborn = thread(7, 7, 1);
        reborn.start_time_ns = 99;
        t.update(Sample {
            mono_ns: 1,
            threads: vec![gone, reborn].into(),
            ..Default::default()
        });
        let om = render(
            &t,
            &ExportOptions {
                per_thread: true,
                ..Default::default()
            },
            0,
        );
        let n = om
            .lines()
            .filter(|l| l.starts_with("schedtop_thread_switches_total{pid=\"7\",tid=\"7\""))
            .count();
        assert_eq!(
            n, 2,
            "voluntary and involuntary of the live thread only:\n{om}"
        );
        // the process keeps both threads' counts
        assert_eq!(t.processes[&7].counts.voluntary, 6);
    }
}
