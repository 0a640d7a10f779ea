//! Each cgroup's throttled ms per second over the last `SERIES_CAP`
//! intervals, for the cgroups view's sparkline: appended from each
//! Interval's cgroup rows (the rate is derived there once, not here), kept
//! by path, dropped with the cgroup.
use std::collections::{HashMap, VecDeque};

use super::state_types::SERIES_CAP;
use crate::model::CgroupRow;

pub type ThrottleSeries = HashMap<String, VecDeque<u64>>;

/// Append one interval's rates (`rated`: the interval had a Sample before
/// it, so its rates exist; a first Sample adds nothing).
pub fn record(series: &mut ThrottleSeries, rows: &[CgroupRow], rated: bool) {
    series.retain(|path, _| rows.iter().any(|r| &r.path == path));
    if !rated {
        return;
    }
    for r in rows {
        let s = series.entry(r.path.clone()).or_default();
        if s.len() >= SERIES_CAP {
            s.pop_front();
        }
        // unknown this interval (a vanished or unlimited cgroup): none
        s.push_back(r.throttled_ms_per_s.map_or(0, |v| v.round() as u64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, ms: Option<f64>) -> CgroupRow {
        CgroupRow {
            path: path.into(),
            throttled_ms_per_s: ms,
            ..Default::default()
        }
    }

    #[test]
    fn appends_rounded_rates_caps_and_forgets_gone_cgroups() {
        let mut s = ThrottleSeries::new();
        record(&mut s, &[row("/a", Some(249.6))], false);
        assert!(s.is_empty());
        record(&mut s, &[row("/a", Some(249.6)), row("/b", None)], true);
        assert_eq!(s["/a"], [250]);
        assert_eq!(s["/b"], [0]);
        for _ in 0..SERIES_CAP + 5 {
            record(&mut s, &[row("/a", Some(1.0))], true);
        }
        assert_eq!(s["/a"].len(), SERIES_CAP);
        assert!(!s.contains_key("/b"));
    }
}
