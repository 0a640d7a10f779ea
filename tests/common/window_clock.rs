//! A `schedtop why` window on the test's own clock: its JSON `from` and
//! `to` as CLOCK_MONOTONIC, and cumulative series sampled on that clock
//! read at any moment, so an oracle's counts cover exactly the window
//! the findings were made of (measured around the process instead, the
//! window is off by schedtop's start and exit).

/// CLOCK_MONOTONIC, ns: bpftrace's `nsecs` and schedtop's Samples' clock.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME minus CLOCK_MONOTONIC, ns (now).
pub fn realtime_offset_ns() -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    let real = ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128;
    real - mono_ns() as i128
}

/// "2026-11-25T20:18:30.792Z" (what `why --json` writes) as
/// CLOCK_MONOTONIC ns, by the clocks' offset now.
pub fn json_time_mono(s: &str, offset: i128) -> u64 {
    let n = |a: usize, b: usize| -> i64 { s[a..b].parse().unwrap() };
    let (y, m, d) = (n(0, 4), n(5, 7), n(8, 10));
    // days since 1970-01-01 of a proleptic Gregorian date
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let secs = days * 86_400 + n(11, 13) * 3600 + n(14, 16) * 60 + n(17, 19);
    let real = secs as i128 * 1_000_000_000 + n(20, 23) as i128 * 1_000_000;
    (real - offset) as u64
}

/// A cumulative series' value at `t`, linear between its points.
pub fn at(series: &[(u64, u64)], t: u64) -> f64 {
    let i = series.partition_point(|p| p.0 <= t);
    assert!(
        i > 0 && i < series.len(),
        "{t} outside the series {:?}..{:?}",
        series.first(),
        series.last()
    );
    let ((t0, v0), (t1, v1)) = (series[i - 1], series[i]);
    v0 as f64 + (v1 as f64 - v0 as f64) * (t - t0) as f64 / (t1 - t0).max(1) as f64
}

/// The (start, end) of a `why --json` report's window on CLOCK_MONOTONIC,
/// by the clocks' `offset` (`realtime_offset_ns`).
pub fn why_window(v: &serde_json::Value, offset: i128) -> (u64, u64) {
    let t = |k: &str| json_time_mono(v[k].as_str().unwrap(), offset);
    (t("from"), t("to"))
}

/// Sample `read` every 20 ms on CLOCK_MONOTONIC until `stop`.
pub fn sample_until(
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    read: impl Fn() -> u64 + Send + 'static,
) -> std::thread::JoinHandle<Vec<(u64, u64)>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            v.push((mono_ns(), read()));
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        v.push((mono_ns(), read()));
        v
    })
}
