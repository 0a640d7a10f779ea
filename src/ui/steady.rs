//! Figures that hold still on a slow link. A rate of 20 wakeups a second
//! reads 19, 21, 20 from one second to the next, and every such flicker is
//! a cursor move and a few cells on the wire (measured at 200x50: most of
//! the steady bytes were table cells whose figure moved by a few percent).
//! In the live view a figure that moved by 5 % or less (or half an event
//! a second, 0.2 CPU%) since it was last drawn keeps its drawn value; a
//! bigger move shows at once. Sorting still uses the true values; a replay
//! shows them exactly, and so does the live view with the setting
//! `exact_figures` (`--exact`, the setup screen's "Figures" line,
//! config.toml). Kept for the rows on screen only, updated when a Sample
//! arrives (never while drawing).
use std::collections::HashMap;

use crate::model::interval::{Row, RowKey};
use crate::model::metrics::{Unit, Value};
use crate::ui::columns::Column;

/// The drawn figures of the rows on screen, by row and column.
#[derive(Clone, Debug, Default)]
pub struct Steady {
    shown: HashMap<(RowKey, &'static str), Shown>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shown {
    F(f64),
    U(u64),
}

/// Whether `new` is close enough to the drawn `old` to keep `old`.
pub fn holds(unit: Unit, old: f64, new: f64) -> bool {
    let floor = match unit {
        Unit::PerSecond => 0.5,
        Unit::Percent => 0.2,
        _ => 0.0,
    };
    // zero stays exact: a thread that stopped shows it
    (old == 0.0) == (new == 0.0) && (new - old).abs() <= (old.abs() * 0.05).max(floor)
}

impl Steady {
    /// What to draw for `rows` now (each figure held or moved), forgetting
    /// rows no longer on screen.
    pub fn update<'a>(&mut self, rows: impl Iterator<Item = &'a Row>, cols: &[Column]) {
        let mut next = HashMap::with_capacity(self.shown.len());
        for r in rows {
            for &c in cols {
                let m = c.metric();
                let new = match m.value(r) {
                    Value::F(v) => Shown::F(v),
                    Value::U(v) => Shown::U(v),
                    _ => continue,
                };
                let key = (r.key, c.0);
                let keep = match (self.shown.get(&key), new) {
                    (Some(&Shown::F(o)), Shown::F(n)) if holds(m.unit, o, n) => Shown::F(o),
                    (Some(&Shown::U(o)), Shown::U(n)) if holds(m.unit, o as f64, n as f64) => {
                        Shown::U(o)
                    }
                    _ => new,
                };
                next.insert(key, keep);
            }
        }
        self.shown = next;
    }

    pub fn clear(&mut self) {
        self.shown.clear();
    }

    /// The cell of `c` for `r` as drawn: the held figure if there is one.
    pub fn cell(&self, c: Column, r: &Row) -> String {
        match self.shown.get(&(r.key, c.0)) {
            Some(&Shown::F(v)) => crate::ui::columns::cell_text(c.metric().unit, &Value::F(v)),
            Some(&Shown::U(v)) => crate::ui::columns::cell_text(c.metric().unit, &Value::U(v)),
            None => c.cell(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_moves_hold_and_big_ones_and_zero_show() {
        // 20 -> 21 wakeups/s: inside 5 %; 4 -> 5 is not
        assert!(holds(Unit::PerSecond, 20.0, 21.0));
        assert!(!holds(Unit::PerSecond, 4.0, 5.0));
        assert!(holds(Unit::PerSecond, 4.0, 4.4));
        // 100 -> 104: inside 5 %; 100 -> 106: not
        assert!(holds(Unit::PerSecond, 100.0, 104.0));
        assert!(!holds(Unit::PerSecond, 100.0, 106.0));
        // a thread that stopped, or started
        assert!(!holds(Unit::PerSecond, 1.0, 0.0));
        assert!(!holds(Unit::PerSecond, 0.0, 1.0));
        // durations: 5 % only (1.00 ms -> 1.04 ms holds, 1.06 ms shows)
        assert!(holds(Unit::Nanoseconds, 1e6, 1.04e6));
        assert!(!holds(Unit::Nanoseconds, 1e6, 1.06e6));
        assert!(holds(Unit::Percent, 3.0, 3.15));
        assert!(!holds(Unit::Percent, 3.0, 3.3));
    }
}
