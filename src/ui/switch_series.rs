//! Each row's switch rates over the last `SERIES_CAP` intervals, for its
//! sparkline: kept for the rows that switched at least once, dropped with
//! the row.
use std::collections::VecDeque;

use super::state_types::SERIES_CAP;
use crate::model::fasthash::{IdMap, IdSet};
use crate::model::interval::RowKey;

pub type Series = IdMap<RowKey, VecDeque<u64>>;

/// Append this interval's rates, given per row as (key, id, switches/s),
/// and forget the rows that are gone.
pub fn record(series: &mut Series, rows: impl Iterator<Item = (RowKey, u32, Option<f64>)>) {
    // rows that have a series (an idle row never switched and has none:
    // no 300 zeros for each of 10,000 idle threads, no set of every key)
    let mut seen = IdSet::default();
    // a bit per id modulo 4096: most idle rows are known to have no series
    // without a look in the map (a hash per row was 4 % of the live view
    // at 50,000 threads)
    let mut may_have = [0u64; 64];
    for k in series.keys() {
        let id = match *k {
            RowKey::Thread { tid, .. } => tid,
            RowKey::Process { pid } => pid,
        };
        may_have[(id as usize / 64) % 64] |= 1 << (id % 64);
    }
    let listed = |id: u32| may_have[(id as usize / 64) % 64] & (1 << (id % 64)) != 0;
    for (key, id, v) in rows {
        if v.unwrap_or(0.0) == 0.0 && (!listed(id) || !series.contains_key(&key)) {
            continue;
        }
        seen.insert(key);
        if let Some(v) = v {
            let s = series.entry(key).or_default();
            if s.len() >= SERIES_CAP {
                s.pop_front();
            }
            s.push_back(v.round() as u64);
        }
    }
    series.retain(|k, _| seen.contains(k));
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

    #[test]
    fn a_series_starts_at_the_first_switch_and_ends_with_its_row() {
        let mut s = Series::default();
        // 5 and 4101 share their bit; 9 never switches
        let step = |s: &mut Series, rows: &[(u32, Option<f64>)]| {
            record(s, rows.iter().map(|&(tid, v)| (thread(tid), tid, v)));
        };
        step(&mut s, &[(5, Some(0.0)), (4101, Some(3.0)), (9, Some(0.0))]);
        assert!(!s.contains_key(&thread(5)) && !s.contains_key(&thread(9)));
        assert_eq!(s[&thread(4101)], [3]);
        // idle now: a zero; a rate unknown: kept, nothing added
        step(&mut s, &[(5, Some(0.0)), (4101, Some(0.0)), (9, None)]);
        assert_eq!(s[&thread(4101)], [3, 0]);
        assert_eq!(s.len(), 1);
        step(&mut s, &[(4101, None)]);
        assert_eq!(s[&thread(4101)], [3, 0]);
        // gone
        step(&mut s, &[(5, Some(0.0))]);
        assert!(s.is_empty());
        // capped
        for i in 0..SERIES_CAP as u32 + 10 {
            step(&mut s, &[(1, Some(f64::from(i + 1)))]);
        }
        let one = &s[&thread(1)];
        assert_eq!(one.len(), SERIES_CAP);
        assert_eq!(one.back(), Some(&(SERIES_CAP as u64 + 10)));
    }
}
