//! The system's CPU pressure (PSI) ratio in `/metrics`, from the shared
//! Interval only (the exporter reads no kernel file): the kernel's 10 s
//! average as the Sample carries it, and the 60 s and 300 s windows as the
//! mean of the Intervals' share of stalled time (each from the kernel's
//! cumulative total) over the last 60 s and 300 s. The stall totals are
//! figures of the system table (model/system_metrics.rs), written just
//! before this family.
use std::collections::VecDeque;

use prometheus_client::metrics::MetricType;

use super::openmetrics_encode::{Family, Value};
use crate::model::shared_interval::Interval;
use crate::model::Pressure;

/// The windows exported besides the kernel's own 10 s average.
const WINDOWS: [(&str, u64); 2] = [("60s", 60), ("300s", 300)];
/// The longest window, and so what is kept.
const KEPT_NS: u64 = 300 * 1_000_000_000;
/// Intervals kept at most (a 0.1 s interval for 300 s), whatever their
/// times say.
const MAX_KEPT: usize = 3_000;

/// One Interval's share of stalled time.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Share {
    start_ns: u64,
    end_ns: u64,
    some_pct: f64,
    full_pct: Option<f64>,
}

/// The pressure figures of the Intervals the exporter was fed.
#[derive(Clone, Debug, Default)]
pub struct PressureWindows {
    /// the newest Sample's reading (None: no PSI on this kernel)
    latest: Option<Pressure>,
    kept: VecDeque<Share>,
}

impl PressureWindows {
    /// Fold in one Interval (the first Sample's has no share yet).
    pub fn take(&mut self, iv: &Interval) {
        self.latest = iv.sample.system.cpu_pressure.as_deref().copied();
        let end_ns = iv.sample.mono_ns;
        let (Some(prev), Some(some_pct)) = (&iv.prev, iv.pressure_pct) else {
            return;
        };
        // a share read from the 10 s average (no total before) is not a
        // share of this interval
        if prev.system.cpu_pressure.is_none() || end_ns <= prev.mono_ns {
            return;
        }
        self.kept.push_back(Share {
            start_ns: prev.mono_ns,
            end_ns,
            some_pct,
            full_pct: iv.pressure_full_pct,
        });
        while self.kept.len() > MAX_KEPT
            || self
                .kept
                .front()
                .is_some_and(|s| end_ns.saturating_sub(s.start_ns) > KEPT_NS)
        {
            self.kept.pop_front();
        }
    }

    /// The mean `some` and `full` share (0..=1) of the Intervals that lie
    /// within the last `window_s` seconds, weighted by their length (None
    /// before the first).
    fn mean(&self, window_s: u64) -> Option<(f64, Option<f64>)> {
        let now = self.kept.back()?.end_ns;
        let from = now.saturating_sub(window_s * 1_000_000_000);
        let (mut t, mut some, mut full, mut full_t) = (0.0, 0.0, 0.0, 0.0);
        for s in self.kept.iter().filter(|s| s.start_ns >= from) {
            let dt = (s.end_ns - s.start_ns) as f64;
            t += dt;
            some += s.some_pct * dt;
            if let Some(f) = s.full_pct {
                full += f * dt;
                full_t += dt;
            }
        }
        (t > 0.0).then(|| {
            (
                some / t / 100.0,
                (full_t > 0.0).then(|| full / full_t / 100.0),
            )
        })
    }

    /// `schedtop_cpu_pressure_ratio` (none without PSI).
    pub fn families(&self) -> Vec<Family> {
        let Some(p) = self.latest else {
            return Vec::new();
        };
        let at = |k: &str, w: &str| vec![("kind", k.to_string()), ("window", w.to_string())];
        let mut ratio = Family::new(
            "schedtop_cpu_pressure_ratio",
            "CPU pressure (PSI): share of time stalled; 10s: the kernel's average, 60s and 300s: the mean over the Samples of the window.",
            MetricType::Gauge,
        );
        ratio
            .rows
            .push((at("some", "10s"), Value::Gauge(p.some_avg10 / 100.0)));
        if let Some(f) = p.full_avg10 {
            ratio
                .rows
                .push((at("full", "10s"), Value::Gauge(f / 100.0)));
        }
        for (name, secs) in WINDOWS {
            if let Some((some, full)) = self.mean(secs) {
                ratio.rows.push((at("some", name), Value::Gauge(some)));
                if let Some(f) = full {
                    ratio.rows.push((at("full", name), Value::Gauge(f)));
                }
            }
        }
        vec![ratio]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::openmetrics_system::system_families;
    use crate::model::shared_interval::Deriver;
    use crate::model::{HostInfo, Sample, SourceKind};

    fn host() -> HostInfo {
        HostInfo {
            hostname: "test".into(),
            kernel: "test".into(),
            topology: Default::default(),
            source: SourceKind::Procfs,
            degraded_reason: None,
            sched_ext: None,
            interval_ns: 10_000_000_000,
        }
    }

    fn rows(f: &Family) -> Vec<(String, f64)> {
        f.rows
            .iter()
            .map(|(l, v)| {
                let l: Vec<String> = l.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let v = match v {
                    Value::Counter(x) | Value::Gauge(x) => *x,
                    _ => f64::NAN,
                };
                (l.join(","), v)
            })
            .collect()
    }

    /// 400 s of Samples 10 s apart: 10 % stalled (`some`) up to 300 s,
    /// then 50 %; `full` half of that. By hand: the last 60 s are six 50 %
    /// intervals; the last 300 s ten at 50 % and twenty at 10 %.
    #[test]
    fn windows_are_the_intervals_shares_and_totals_the_kernels() {
        let mut d = Deriver::new(host());
        let mut w = PressureWindows::default();
        let (mut some, mut full) = (0u64, 0u64);
        let mut last = Sample::default();
        for i in 0..=40u64 {
            if i > 0 {
                let stalled_us = if i * 10 <= 300 { 1_000_000 } else { 5_000_000 };
                some += stalled_us;
                full += stalled_us / 2;
            }
            let s = Sample {
                mono_ns: i * 10_000_000_000,
                system: crate::model::SystemSample {
                    cpu_pressure: Some(Box::new(Pressure {
                        some_avg10: 47.5,
                        some_total_us: some,
                        full_avg10: Some(20.0),
                        full_total_us: Some(full),
                    })),
                    ..Default::default()
                },
                ..Default::default()
            };
            last = s.clone();
            w.take(&d.next(s));
        }
        let fams = w.families();
        assert_eq!(fams.len(), 1);
        // the totals, through the system table: 30 x 1 s + 10 x 5 s
        // stalled; full half of it
        let totals = system_families(&last, true);
        assert_eq!(
            rows(&totals[0]),
            [("kind=some".to_string(), 80.0), ("kind=full".into(), 40.0)]
        );
        let r = rows(&fams[0]);
        let get = |k: &str| r.iter().find(|x| x.0 == k).map(|x| x.1).unwrap();
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        close(get("kind=some,window=10s"), 0.475);
        close(get("kind=full,window=10s"), 0.2);
        close(get("kind=some,window=60s"), 0.5);
        close(get("kind=full,window=60s"), 0.25);
        close(
            get("kind=some,window=300s"),
            (10.0 * 0.5 + 20.0 * 0.1) / 30.0,
        );
        close(
            get("kind=full,window=300s"),
            (10.0 * 0.25 + 20.0 * 0.05) / 30.0,
        );
        // what is kept covers the longest window, no more
        assert_eq!(w.kept.len(), 30);
    }

    #[test]
    fn no_psi_no_families_and_one_sample_no_window() {
        let mut d = Deriver::new(host());
        let mut w = PressureWindows::default();
        w.take(&d.next(Sample::default()));
        assert!(w.families().is_empty());
        assert!(system_families(&Sample::default(), true).is_empty());
        let mut d = Deriver::new(host());
        let mut w = PressureWindows::default();
        let mut s = Sample::default();
        s.system.cpu_pressure = Some(Box::new(Pressure {
            some_avg10: 1.0,
            some_total_us: 5,
            ..Default::default()
        }));
        let totals = system_families(&s, true);
        w.take(&d.next(s));
        let f = w.families();
        // the kernel's figures, no window yet, no full line (before 5.13)
        assert_eq!(rows(&totals[0]), [("kind=some".to_string(), 5e-6)]);
        assert_eq!(rows(&f[0]), [("kind=some,window=10s".to_string(), 0.01)]);
    }

    /// The exporter's sources read no PSI file of their own (the one
    /// reader is the collector's, into the Sample).
    #[test]
    fn serve_reads_no_pressure_file() {
        for (name, src) in [
            ("serve.rs", include_str!("../serve.rs")),
            ("serve_http.rs", include_str!("../serve_http.rs")),
            ("openmetrics.rs", include_str!("openmetrics.rs")),
            (
                "openmetrics_totals.rs",
                include_str!("openmetrics_totals.rs"),
            ),
        ] {
            assert!(!src.contains("pressure/cpu\")"), "{name} reads PSI itself");
        }
    }
}
