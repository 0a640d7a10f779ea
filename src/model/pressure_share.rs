//! The system's CPU pressure over one interval: the share of it some (or
//! all) runnable threads waited for a CPU, from the kernel's cumulative
//! stall total in /proc/pressure/cpu (µs), else its 10 s average (the
//! first Sample, or a kernel whose total went back).
use super::{Pressure, Sample};

/// The `some` share from `prev` to `cur`, in %.
pub fn system_pressure_pct(prev: Option<&Sample>, cur: &Sample) -> Option<f64> {
    pressure_share(prev, cur, |p| Some((p.some_total_us, p.some_avg10)))
}

/// The same for `full` (all non-idle tasks waiting; None before 5.13).
pub fn system_full_pressure_pct(prev: Option<&Sample>, cur: &Sample) -> Option<f64> {
    pressure_share(prev, cur, |p| Some((p.full_total_us?, p.full_avg10?)))
}

fn pressure_share(
    prev: Option<&Sample>,
    cur: &Sample,
    line: impl Fn(&Pressure) -> Option<(u64, f64)>,
) -> Option<f64> {
    let (c_total, c_avg10) = line(cur.system.cpu_pressure.as_deref()?)?;
    let from_total = prev.and_then(|p| {
        let (p_total, _) = line(p.system.cpu_pressure.as_deref()?)?;
        let dt_us = cur.mono_ns.checked_sub(p.mono_ns)? as f64 / 1e3;
        let d = c_total.checked_sub(p_total)? as f64;
        (dt_us > 0.0).then(|| (d / dt_us * 100.0).min(100.0))
    });
    Some(from_total.unwrap_or(c_avg10))
}
