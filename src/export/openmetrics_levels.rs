//! The families one level (system, process, thread) writes: one per entry
//! of the level figures (model/figures.rs), named, typed and explained as
//! declared there. Nothing here names a figure.
//!
//! Histograms are the probes' log2 slots folded to octaves: bucket `le`
//! bounds are the octave upper bounds in seconds (1e-6, 2e-6, 4e-6, … and
//! +Inf for the open last one). The probes count observations per slot
//! but do not sum them, so a histogram's `_sum` is estimated (each
//! observation at 1.5x its octave's lower bound); the exact totals are the
//! `_seconds_total` counters.
use prometheus_client::metrics::MetricType;

use super::openmetrics_encode::{series_of, Family, Labels, Value};
use crate::model::figures::{Kind, Level, Reading, LEVEL_FIGURES};
use crate::model::hist::{octave_high_us, octave_low_us, HIST_OCTAVES};
use crate::model::tally::Tally;
use crate::model::Log2Hist;

pub fn hist_value(h: &Log2Hist) -> Value {
    let buckets = (0..HIST_OCTAVES)
        .map(|o| {
            let le = octave_high_us(o).map_or(f64::INFINITY, |us| us as f64 / 1e6);
            (le, h.octave(o))
        })
        .collect();
    let sum = (0..HIST_OCTAVES)
        .map(|o| {
            let mid_us = if o == 0 {
                0.5
            } else {
                octave_low_us(o) as f64 * 1.5
            };
            h.octave(o) as f64 * mid_us / 1e6
        })
        .sum();
    Value::Histogram { buckets, sum }
}

fn count_value(n: u64, seconds: bool) -> Value {
    Value::Counter(if seconds { n as f64 / 1e9 } else { n as f64 })
}

/// The families of one level, in the order of the figure table.
pub struct LevelFamilies(Vec<Family>);

impl LevelFamilies {
    pub fn new(level: Level) -> LevelFamilies {
        LevelFamilies(
            LEVEL_FIGURES
                .iter()
                .map(|f| {
                    let kind = match f.kind {
                        Kind::Counter => MetricType::Counter,
                        Kind::Histogram => MetricType::Histogram,
                    };
                    let fam = Family::new(f.name(level), f.help_at(level), kind);
                    if f.seconds {
                        fam.in_seconds()
                    } else {
                        fam
                    }
                })
                .collect(),
        )
    }

    /// Sample lines `t` adds at this level.
    pub fn cost(t: &Tally) -> usize {
        let hist = series_of(&hist_value(&Log2Hist::new()));
        LEVEL_FIGURES
            .iter()
            .filter_map(|f| f.reading(t))
            .map(|r| match r {
                Reading::Count(_) | Reading::Counts(_) => r.values(),
                Reading::Hist(_) | Reading::Hists(_) => r.values() * hist,
            })
            .sum()
    }

    pub fn push(&mut self, labels: &Labels, t: &Tally) {
        for (f, fam) in LEVEL_FIGURES.iter().zip(&mut self.0) {
            let Some(r) = f.reading(t) else { continue };
            let with = |v: &str| {
                let mut l = labels.clone();
                l.push((f.label.unwrap_or("kind"), v.to_string()));
                l
            };
            match r {
                Reading::Count(n) => fam.rows.push((labels.clone(), count_value(n, f.seconds))),
                Reading::Hist(h) => fam.rows.push((labels.clone(), hist_value(h))),
                Reading::Counts(v) => {
                    for (k, n) in v {
                        fam.rows.push((with(k), count_value(n, f.seconds)));
                    }
                }
                Reading::Hists(v) => {
                    for (k, h) in v {
                        fam.rows.push((with(k), hist_value(h)));
                    }
                }
            }
        }
    }

    pub fn into_vec(self) -> Vec<Family> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use crate::export::openmetrics::{render, ExportOptions};
    use crate::export::openmetrics_totals::Totals;
    use crate::model::why::WhySample;
    use crate::model::{Sample, ThreadSample};

    fn sample(s: u64, vol: u64, migr: u64, why: WhySample) -> Sample {
        Sample {
            mono_ns: s * 1_000_000_000,
            time_ns: s * 1_000_000_000,
            threads: vec![ThreadSample {
                tid: 5,
                pid: 5,
                comm: "w".into(),
                process_comm: "w".into(),
                start_time_ns: 1,
                voluntary: vol,
                migrations: Some(migr),
                why: Some(why.into()),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
    }

    #[test]
    fn causes_sum_to_migrations_and_reasons_to_voluntary_switches() {
        let mut t = Totals::new(crate::record::testdata::synthetic_host(&Default::default()));
        // first seen: 10 voluntary (8 on a pipe), 3 migrations (2 affinity)
        let mut a = WhySample {
            wakeups: Some(0),
            ..WhySample::default()
        };
        a.blocked_on[3] = 8;
        a.migrations_by_cause[3] = 2;
        t.update(sample(1, 10, 3, a.clone()));
        // then 20 more voluntary (15 more on a pipe, 4 sleeps), 5 more
        // migrations (4 by load balance)
        let mut b = a;
        // of its wakeups this interval: 9 by hardirqs, 2 by net softirqs
        // (its wakers by thread are not exported: unbounded)
        b.woken_by = vec![(77, 9), (0xffff_ff00, 9), (0xffff_ff02, 2)];
        b.wakeups = Some(20);
        b.blocked_on[3] += 15;
        b.blocked_on[1] += 4;
        b.migrations_by_cause[1] += 4;
        t.update(sample(2, 30, 8, b));
        let o = ExportOptions {
            per_thread: true,
            ..Default::default()
        };
        let om = render(&t, &o, 0);
        let has = |line: &str| assert!(om.contains(&format!("{line}\n")), "{line}\n{om}");
        has("schedtop_blocked_on_total{reason=\"pipe\"} 23.0");
        has("schedtop_blocked_on_total{reason=\"sleep\"} 4.0");
        // 30 voluntary, 27 attributed
        has("schedtop_blocked_on_total{reason=\"other\"} 3.0");
        has("schedtop_migrations_by_cause_total{cause=\"affinity\"} 2.0");
        has("schedtop_migrations_by_cause_total{cause=\"load_balance\"} 4.0");
        has("schedtop_migrations_by_cause_total{cause=\"other\"} 2.0");
        has("schedtop_process_blocked_on_total{pid=\"5\",comm=\"w\",reason=\"pipe\"} 23.0");
        has("schedtop_thread_migrations_by_cause_total{pid=\"5\",tid=\"5\",comm=\"w\",cause=\"other\"} 2.0");
        has("schedtop_migrations_total 8.0");
        has("schedtop_woken_by_irq_total{waker=\"hardirq\"} 9.0");
        has("schedtop_process_woken_by_irq_total{pid=\"5\",comm=\"w\",waker=\"softirq_net\"} 2.0");
        has("schedtop_process_woken_by_irq_total{pid=\"5\",comm=\"w\",waker=\"idle\"} 0.0");
        assert!(!om.contains("\"77\""), "no waker tids as labels");
    }

    #[test]
    fn wakers_not_counted_write_no_series_at_any_level() {
        let mut t = Totals::new(crate::record::testdata::synthetic_host(&Default::default()));
        // the probes' waker counting off: wakeups unknown, no pairs
        let mut a = WhySample::default();
        a.blocked_on[3] = 8;
        t.update(sample(1, 10, 0, a.clone()));
        a.blocked_on[3] = 20;
        t.update(sample(2, 30, 0, a));
        let o = ExportOptions {
            per_thread: true,
            ..Default::default()
        };
        let om = render(&t, &o, 0);
        assert!(
            om.contains("schedtop_thread_blocked_on_total{pid=\"5\",tid=\"5\",comm=\"w\",reason=\"pipe\"} 20.0\n"),
            "{om}"
        );
        // the family may be declared; no sample line of it, at any level
        let series: Vec<&str> = om
            .lines()
            .filter(|l| !l.starts_with('#') && l.contains("woken_by"))
            .collect();
        assert!(series.is_empty(), "{series:?}");
    }

    #[test]
    fn the_wait_split_reaches_every_level_and_sums_to_the_waits() {
        use crate::model::Log2Hist;
        let mut t = Totals::new(crate::record::testdata::synthetic_host(&Default::default()));
        let mut s = sample(1, 10, 0, WhySample::default());
        let th = &mut s.threads[0];
        // 3 waits after wakeups (2 near 1 us, 1 near 100 us), 2 after preemptions
        th.wakeup_wait_hist = Some(Log2Hist::from_octaves([0, 2, 0, 0, 0, 0, 0, 1]));
        th.preempt_wait_hist = Some(Log2Hist::from_octaves([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]));
        th.wait_hist = Some(Log2Hist::from_octaves([0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 2]));
        t.update(s);
        let o = ExportOptions {
            per_thread: true,
            ..Default::default()
        };
        let om = render(&t, &o, 0);
        let count = |name: &str, labels: &str| -> f64 {
            let head = format!("{name}_count{labels} ");
            let line = om.lines().find(|l| l.starts_with(&head));
            let line = line.unwrap_or_else(|| panic!("no {head}\n{om}"));
            line[head.len()..].parse().unwrap()
        };
        for (prefix, labels) in [
            ("schedtop_", ""),
            ("schedtop_process_", "pid=\"5\",comm=\"w\","),
            ("schedtop_thread_", "pid=\"5\",tid=\"5\",comm=\"w\","),
        ] {
            let split = format!("{prefix}runqueue_latency_by_start_seconds");
            let woke = count(&split, &format!("{{{labels}began=\"wakeup\"}}"));
            let pre = count(&split, &format!("{{{labels}began=\"preemption\"}}"));
            assert_eq!((woke, pre), (3.0, 2.0), "{prefix}");
            let all = format!("{prefix}runqueue_latency_seconds");
            let bare = labels.trim_end_matches(',');
            let all_labels = if bare.is_empty() {
                String::new()
            } else {
                format!("{{{bare}}}")
            };
            assert_eq!(count(&all, &all_labels), woke + pre, "{prefix}");
        }
    }
}
