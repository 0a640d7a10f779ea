//! Each row's switch rates over the last `SERIES_CAP` intervals, for its
//! sparkline: kept for the rows that switched at least once, dropped with
//! the row.
use std::collections::VecDeque;

use super::state_types::SERIES_CAP;
use crate::model::fasthash::{IdFilter, IdMap, IdSet};
use crate::model::interval::RowKey;

pub type Series = IdMap<RowKey, VecDeque<u64>>;

/// Where each thread series' row was at the last record (its index among
/// the thread rows). Rows mostly stay in place from one interval to the
/// next, so the idle rows that have a series are found without a pass over
/// every row (that pass was 7 % of the live view at 50,000 threads).
pub type RowHints = IdMap<RowKey, usize>;

/// A row as the series see it: (key, id, switches/s).
pub type SeriesRow = (RowKey, u32, Option<f64>);

/// Append this interval's rates and forget the rows that are gone.
/// `thread(j)` is thread row `j`, `quiet[j]` whether its interval counted
/// nothing (its rate is 0 or unknown).
pub fn record(
    series: &mut Series,
    hints: &mut RowHints,
    quiet: &[bool],
    thread: impl Fn(usize) -> SeriesRow,
    processes: impl Iterator<Item = SeriesRow>,
) {
    let threads_with_series = series
        .keys()
        .filter(|k| matches!(k, RowKey::Thread { .. }))
        .count();
    let hinted = hints.len() == threads_with_series
        && hints
            .iter()
            .all(|(k, &j)| series.contains_key(k) && j < quiet.len() && thread(j).0 == *k);
    // most idle rows are known to have no series without a look in the map
    let may_have = IdFilter::of(series.keys().map(|k| match *k {
        RowKey::Thread { tid, .. } => tid,
        RowKey::Process { pid } | RowKey::Group { pid, .. } => pid,
        RowKey::Cgroup { .. } => 0,
    }));
    let listed = |id: u32| may_have.may_hold(id);
    let mut seen = IdSet::default();
    let mut visit = |(key, id, v): SeriesRow| {
        // an idle row never switched and has no series: no 300 zeros for
        // each of 10,000 idle threads
        if v.unwrap_or(0.0) == 0.0 && (!listed(id) || !series.contains_key(&key)) {
            return false;
        }
        seen.insert(key);
        if let Some(v) = v {
            let s = series.entry(key).or_default();
            if s.len() >= SERIES_CAP {
                s.pop_front();
            }
            s.push_back(v.round() as u64);
        }
        true
    };
    let mut at = RowHints::default();
    let mut visit_thread = |j: usize| {
        let row = thread(j);
        if visit(row) {
            at.insert(row.0, j);
        }
    };
    if hinted {
        // the rows that counted something, then the idle ones with a series
        (0..quiet.len())
            .filter(|&j| !quiet[j])
            .for_each(&mut visit_thread);
        hints
            .values()
            .copied()
            .filter(|&j| quiet[j])
            .for_each(&mut visit_thread);
    } else {
        (0..quiet.len()).for_each(&mut visit_thread);
    }
    for row in processes {
        visit(row);
    }
    series.retain(|k, _| seen.contains(k));
    at.retain(|k, _| series.contains_key(k));
    *hints = at;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(tid: u32) -> RowKey {
        RowKey::Thread {
            tid,
            start_time_ns: 7,
        }
    }

    /// One interval of thread rows (tid, rate), quiet where the rate is 0
    /// or unknown, and no process rows.
    fn step(s: &mut Series, h: &mut RowHints, rows: &[(u32, Option<f64>)]) {
        let quiet: Vec<bool> = rows.iter().map(|r| r.1.unwrap_or(0.0) == 0.0).collect();
        let row = |j: usize| (thread(rows[j].0), rows[j].0, rows[j].1);
        record(s, h, &quiet, row, std::iter::empty());
    }

    #[test]
    fn a_series_starts_at_the_first_switch_and_ends_with_its_row() {
        let (mut s, mut h) = (Series::default(), RowHints::default());
        // 5 and 4101 share their bit; 9 never switches
        step(
            &mut s,
            &mut h,
            &[(5, Some(0.0)), (4101, Some(3.0)), (9, Some(0.0))],
        );
        assert!(!s.contains_key(&thread(5)) && !s.contains_key(&thread(9)));
        assert_eq!(s[&thread(4101)], [3]);
        // idle now (found by its row's place): a zero; a rate unknown:
        // kept, nothing added
        step(
            &mut s,
            &mut h,
            &[(5, Some(0.0)), (4101, Some(0.0)), (9, None)],
        );
        assert_eq!(s[&thread(4101)], [3, 0]);
        assert_eq!(s.len(), 1);
        // moved to another row: found by the whole pass
        step(&mut s, &mut h, &[(9, None), (4101, Some(0.0))]);
        assert_eq!(s[&thread(4101)], [3, 0, 0]);
        step(&mut s, &mut h, &[(4101, None)]);
        assert_eq!(s[&thread(4101)], [3, 0, 0]);
        // gone
        step(&mut s, &mut h, &[(5, Some(0.0))]);
        assert!(s.is_empty() && h.is_empty());
        // capped
        for i in 0..SERIES_CAP as u32 + 10 {
            step(&mut s, &mut h, &[(2, None), (1, Some(f64::from(i + 1)))]);
        }
        let one = &s[&thread(1)];
        assert_eq!(one.len(), SERIES_CAP);
        assert_eq!(one.back(), Some(&(SERIES_CAP as u64 + 10)));
    }

    #[test]
    fn with_row_hints_every_series_gets_the_same_values_as_a_whole_pass() {
        // 200 rows, a few switching now and then; the hinted record and one
        // that never keeps hints (a whole pass each time) agree
        let (mut a, mut ha) = (Series::default(), RowHints::default());
        let mut b = Series::default();
        for i in 0..50u32 {
            let rows: Vec<(u32, Option<f64>)> = (0..200u32)
                .map(|t| {
                    let busy = (t * 7 + i) % 23 == 0;
                    (
                        t,
                        (t % 5 != 0).then_some(if busy { f64::from(t) } else { 0.0 }),
                    )
                })
                .collect();
            step(&mut a, &mut ha, &rows);
            step(&mut b, &mut RowHints::default(), &rows);
            assert_eq!(a, b, "interval {i}");
        }
        assert!(!a.is_empty());
    }
}
