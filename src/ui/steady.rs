//! Numbers that hold still in the live view: a rate that moved less than
//! `HOLD` of itself since the figure on screen keeps the figure on screen.
//! At a 1 s refresh the last digit of every busy row's switches/s and CPU%
//! changed each second, faster than anyone reads it, and each change is
//! bytes on the wire (over SSH, lag). Off in tests, replay and snapshots:
//! they show each interval's exact figures.
use std::collections::HashMap;

use crate::model::interval::{Derived, Row, RowKey};

/// A change smaller than this share of the figure shown is not shown...
pub const HOLD: f64 = 0.05;
/// ...nor one smaller than this many switches a second or CPU percent: a
/// table sorted by a rate that idles at 0-3 a second reshuffled its quiet
/// half every second (whole rows rewritten, most of the bytes measured at
/// 200x50 with 300 threads that wake 20 times a second).
pub const HOLD_SWITCHES: f64 = 2.0;
pub const HOLD_CPU_PCT: f64 = 0.5;

#[derive(Clone, Debug, Default)]
pub struct Steady {
    pub on: bool,
    /// the figures on screen, per row: voluntary/s, involuntary/s, CPU%
    shown: HashMap<RowKey, [Option<f64>; 3]>,
}

fn held(shown: Option<f64>, new: Option<f64>, floor: f64) -> Option<f64> {
    match (shown, new) {
        (Some(s), Some(n)) if (n - s).abs() <= (HOLD * s.abs()).max(floor) => Some(s),
        _ => new,
    }
}

impl Steady {
    /// Hold the rates of `d`'s rows that barely moved; remember what is shown.
    pub fn hold(&mut self, d: &mut Derived) {
        if !self.on {
            return;
        }
        let mut shown = HashMap::with_capacity(self.shown.len());
        let rows = d
            .threads
            .iter_mut()
            .zip(d.quiet.iter().map(Some).chain(std::iter::repeat(None)));
        for (r, quiet) in rows {
            if quiet == Some(&true) {
                continue;
            }
            self.hold_row(r, &mut shown);
        }
        for r in d.processes.iter_mut() {
            self.hold_row(r, &mut shown);
        }
        self.shown = shown;
    }

    fn hold_row(&self, r: &mut Row, shown: &mut HashMap<RowKey, [Option<f64>; 3]>) {
        let before = self.shown.get(&r.key).copied().unwrap_or_default();
        r.vcsw_s = held(before[0], r.vcsw_s, HOLD_SWITCHES);
        r.nvcsw_s = held(before[1], r.nvcsw_s, HOLD_SWITCHES);
        r.cpu_pct = held(before[2], r.cpu_pct, HOLD_CPU_PCT);
        if r.vcsw_s.is_some() || r.nvcsw_s.is_some() || r.cpu_pct.is_some() {
            shown.insert(r.key, [r.vcsw_s, r.nvcsw_s, r.cpu_pct]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::held;

    #[test]
    fn small_moves_hold_big_ones_show() {
        assert_eq!(held(Some(100.0), Some(104.0), 2.0), Some(100.0));
        assert_eq!(held(Some(100.0), Some(96.0), 2.0), Some(100.0));
        assert_eq!(held(Some(100.0), Some(106.0), 2.0), Some(106.0));
        assert_eq!(held(Some(0.0), Some(1.0), 2.0), Some(0.0));
        assert_eq!(held(Some(0.0), Some(3.0), 2.0), Some(3.0));
        assert_eq!(held(None, Some(1.0), 2.0), Some(1.0));
        assert_eq!(held(Some(3.0), None, 2.0), None);
    }
}
