//! The table's rows in screen order: indices into the interval's rows
//! (filtered, never copied), sorted only as far as the screen has looked.
//! At 100,000 rows a full sort is 15-19 ms and a copy of every row more;
//! a page needs one partial sort (`select_nth_unstable`), then a sort of
//! the page.
use std::cmp::Ordering;
use std::ops::Index;
use std::sync::Arc;

use crate::model::interval::{Row, RowKey};
use crate::model::metrics::{Metric, Value};

/// Up to this many rows a refresh sorts them all (nothing to gain below).
pub const FULL_SORT_MAX: usize = 2_000;

#[derive(Clone, Debug, Default)]
pub struct RowOrder {
    idx: Vec<u32>,
    /// `idx[..sorted]` holds the first rows in their final order; every
    /// row after them sorts after them
    sorted: usize,
    /// the sort column's numbers, read once (`sort_metric_upto`)
    keys: Option<SortKeys>,
    /// the order is given (the process tree's), not sorted here
    fixed: bool,
}

/// A numeric sort column's values and the rows' ids, by base row: the
/// partial sort compares these 16 bytes rather than two whole rows at
/// random places (at 50,000 rows those cache misses were 8 % of the live
/// view's work).
#[derive(Clone, Debug)]
struct SortKeys {
    metric: &'static str,
    descending: bool,
    keys: Vec<SortKey>,
}

#[derive(Clone, Copy, Debug)]
struct SortKey {
    value: f64,
    known: bool,
    id: u32,
}

impl SortKeys {
    /// None for a text column (names compare as text).
    fn of(metric: &Metric, descending: bool, base: &[Arc<Row>]) -> Option<SortKeys> {
        let keys = base
            .iter()
            .map(|r| match metric.value(r) {
                Value::Text(_) => None,
                v => Some(SortKey {
                    value: v.number().unwrap_or(0.0),
                    known: v.number().is_some(),
                    id: r.id,
                }),
            })
            .collect::<Option<Vec<SortKey>>>()?;
        Some(SortKeys {
            metric: metric.key,
            descending,
            keys,
        })
    }

    /// `columns::compare_by` for numbers: unknown values last in either
    /// direction, ties by id.
    fn cmp(&self, a: u32, b: u32) -> Ordering {
        let (a, b) = (&self.keys[a as usize], &self.keys[b as usize]);
        let primary = match (a.known, b.known) {
            (true, true) => {
                let o = a.value.partial_cmp(&b.value).unwrap_or(Ordering::Equal);
                if self.descending {
                    o.reverse()
                } else {
                    o
                }
            }
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => Ordering::Equal,
        };
        primary.then(a.id.cmp(&b.id))
    }
}

impl RowOrder {
    pub fn new(idx: Vec<u32>) -> RowOrder {
        RowOrder {
            idx,
            sorted: 0,
            keys: None,
            fixed: false,
        }
    }

    /// Rows in an order decided elsewhere (the process tree): never
    /// re-sorted, a row's rank is its place.
    pub fn fixed(idx: Vec<u32>) -> RowOrder {
        RowOrder {
            sorted: idx.len(),
            idx,
            keys: None,
            fixed: true,
        }
    }

    /// `sort_rows_upto` by a column: a numeric one through its values read
    /// once; `by` is the same order on rows (text columns).
    pub fn sort_metric_upto(
        &mut self,
        upto: usize,
        base: &[Arc<Row>],
        (metric, descending): (&Metric, bool),
        by: impl Fn(&Row, &Row) -> Ordering,
    ) {
        let stale = self
            .keys
            .as_ref()
            .is_none_or(|k| k.metric != metric.key || k.descending != descending);
        if stale && upto.min(self.idx.len()) > self.sorted {
            self.keys = SortKeys::of(metric, descending, base);
        }
        match self.keys.take() {
            Some(keys) if keys.keys.len() == base.len() => {
                self.sort_upto(upto, |a, b| keys.cmp(*a, *b));
                self.keys = Some(keys);
            }
            _ => self.sort_rows_upto(upto, base, by),
        }
    }

    /// The rows of `base` the `/` filter keeps, in no order yet.
    pub fn filtered(base: &[Arc<Row>], filter: &str) -> RowOrder {
        let f = RowFilter::new(filter);
        let n = base.len() as u32;
        RowOrder::new((0..n).filter(|&i| f.matches(&base[i as usize])).collect())
    }

    pub fn len(&self) -> usize {
        self.idx.len()
    }

    pub fn is_empty(&self) -> bool {
        self.idx.is_empty()
    }

    /// Put the first `upto` of `base`'s listed rows in their final order
    /// by `by`, a total order (the table breaks ties by id).
    pub fn sort_rows_upto(
        &mut self,
        upto: usize,
        base: &[Arc<Row>],
        by: impl Fn(&Row, &Row) -> Ordering,
    ) {
        self.sort_upto(upto, |a, b| by(&base[*a as usize], &base[*b as usize]));
    }

    /// Where the row `key` of `base` goes by `by`, None when not listed.
    pub fn rank_of_key(
        &self,
        key: RowKey,
        base: &[Arc<Row>],
        by: impl Fn(&Row, &Row) -> Ordering,
    ) -> Option<usize> {
        let at = base.iter().position(|r| r.key == key)? as u32;
        self.rank_of(at, |a, b| by(&base[*a as usize], &base[*b as usize]))
    }

    /// Put the first `upto` rows in their final order. `cmp` must be a
    /// total order (the table breaks ties by id).
    pub fn sort_upto(&mut self, upto: usize, cmp: impl Fn(&u32, &u32) -> Ordering) {
        let upto = upto.min(self.idx.len());
        if upto <= self.sorted {
            return;
        }
        let rest = &mut self.idx[self.sorted..];
        let k = upto - self.sorted;
        if k < rest.len() {
            rest.select_nth_unstable_by(k - 1, &cmp);
        }
        rest[..k].sort_unstable_by(&cmp);
        self.sorted = upto;
    }

    /// The rows in this order (those past the sorted ones in no order).
    pub fn rows<'a>(&'a self, base: &'a [Arc<Row>]) -> Rows<'a> {
        Rows {
            base,
            idx: &self.idx,
        }
    }

    /// Where row `at` (an index into the base rows) goes: the number of
    /// listed rows that sort before it, None when it is not listed.
    pub fn rank_of(&self, at: u32, cmp: impl Fn(&u32, &u32) -> Ordering) -> Option<usize> {
        if self.fixed {
            return self.idx.iter().position(|&j| j == at);
        }
        self.idx.contains(&at).then(|| {
            self.idx
                .iter()
                .filter(|&j| cmp(j, &at) == Ordering::Less)
                .count()
        })
    }
}

/// The `/` filter, lowercased once: a name, pid or tid, or part of a cgroup
/// path or short name.
pub struct RowFilter {
    text: String,
    id: Option<u32>,
}

impl RowFilter {
    pub fn new(filter: &str) -> RowFilter {
        let text = filter.to_lowercase();
        RowFilter {
            id: text.trim().parse::<u32>().ok(),
            text,
        }
    }

    pub fn matches(&self, r: &Row) -> bool {
        if self.text.is_empty() || self.id.is_some_and(|n| r.id == n || r.pid == n) {
            return true;
        }
        let has = |t: &str| t.to_lowercase().contains(&self.text);
        has(&r.comm)
            || has(&r.process_comm)
            // the cgroup's path or its short name ("ctr 9b1c", "nginx.service")
            || r.cgroup.as_deref().is_some_and(has)
            || r.cgroup_name.as_deref().is_some_and(has)
    }
}

/// The visible rows, indexable like a slice.
#[derive(Clone, Copy)]
pub struct Rows<'a> {
    base: &'a [Arc<Row>],
    idx: &'a [u32],
}

impl<'a> Rows<'a> {
    pub fn len(&self) -> usize {
        self.idx.len()
    }

    pub fn is_empty(&self) -> bool {
        self.idx.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&'a Row> {
        self.idx.get(i).map(|&j| &*self.base[j as usize])
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a Row> + 'a {
        let base = self.base;
        self.idx.iter().map(move |&j| &*base[j as usize])
    }

    /// Rows `from..to` (clamped).
    pub fn range(&self, from: usize, to: usize) -> impl Iterator<Item = &'a Row> + 'a {
        let to = to.min(self.idx.len());
        let base = self.base;
        self.idx[from.min(to)..to]
            .iter()
            .map(move |&j| &*base[j as usize])
    }

    pub fn to_vec(&self) -> Vec<Row> {
        self.iter().cloned().collect()
    }
}

impl Index<usize> for Rows<'_> {
    type Output = Row;

    fn index(&self, i: usize) -> &Row {
        &self.base[self.idx[i] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_window_matches_a_full_sort() {
        // a pseudo-random permutation of values with ties (broken by index)
        let vals: Vec<u64> = (0..10_000u64).map(|i| (i * 7919) % 997).collect();
        let cmp = |a: &u32, b: &u32| {
            vals[*a as usize]
                .cmp(&vals[*b as usize])
                .reverse()
                .then(a.cmp(b))
        };
        let mut full: Vec<u32> = (0..vals.len() as u32).collect();
        full.sort_by(cmp);
        let mut o = RowOrder::new((0..vals.len() as u32).rev().collect());
        for upto in [50, 50, 49, 120, 4_000, 4_050, 10_000, 20_000] {
            o.sort_upto(upto, cmp);
            let n = upto.min(vals.len());
            assert_eq!(&o.idx[..n], &full[..n], "first {n}");
        }
        let o = RowOrder::new((0..vals.len() as u32).collect());
        for at in [0u32, 17, 9_999] {
            let rank = o.rank_of(at, cmp).unwrap();
            assert_eq!(full[rank], at);
        }
        assert_eq!(RowOrder::new(vec![1, 2]).rank_of(5, cmp), None);
    }

    #[test]
    fn a_numeric_column_sorts_by_its_values_read_once_as_by_the_rows() {
        use crate::model::interval::derive;
        use crate::ui::columns::compare_by;
        use crate::ui::fixtures::{samples, STEPS};
        let s = samples(crate::model::SourceKind::Bpf);
        let mut rows = derive(Some(&s[STEPS - 2]), &s[STEPS - 1], 1.0).threads;
        // unknown values and ties: a rate missing, one shared
        Arc::make_mut(&mut rows[0]).vcsw_s = Default::default();
        let v = rows[1].vcsw_s;
        Arc::make_mut(&mut rows[2]).vcsw_s = v;
        for key in ["vcsw", "cpu_pct", "tid", "p99_wait", "comm"] {
            let metric = crate::model::metrics::by_key(key).unwrap();
            for desc in [false, true] {
                let by = |a: &Row, b: &Row| compare_by(metric, a, b, desc);
                let n = rows.len() as u32;
                let mut want: Vec<u32> = (0..n).collect();
                want.sort_by(|a, b| by(&rows[*a as usize], &rows[*b as usize]));
                let mut o = RowOrder::new((0..n).rev().collect());
                o.sort_metric_upto(usize::MAX, &rows, (metric, desc), by);
                assert_eq!(o.idx, want, "{key} descending {desc}");
                assert_eq!(o.keys.is_some(), key != "comm", "{key}");
            }
        }
    }
}
