//! A row's four histograms (slice, run-queue wait, wait after a wakeup,
//! wait after a preemption) behind one pointer. Four `Option<Log2Hist>`
//! were 64 bytes of every row, and the live view keeps two row sets alive
//! (100,000 threads: 12 MB); most rows are idle threads whose histograms
//! hold no counts, so those share one of a few interned sets instead.
use std::sync::{Arc, LazyLock};

use crate::model::hist::Counts;
use crate::model::Log2Hist;

/// The four histograms in row order.
type Four = [Option<Log2Hist>; 4];

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowHists(Option<Arc<Four>>);

/// Every set whose histograms store no counts, by `shape_index`: absent,
/// empty, or empty and octaves only, for each of the four (3^4 sets).
static EMPTY_SETS: LazyLock<Vec<Arc<Four>>> = LazyLock::new(|| {
    (0..81)
        .map(|mut i| {
            Arc::new(std::array::from_fn(|_| {
                let kind = i % 3;
                i /= 3;
                (kind > 0).then(|| Log2Hist {
                    counts: Counts::default(),
                    octaves_only: kind == 2,
                })
            }))
        })
        .collect()
});

/// Where a set of histograms without counts sits in `EMPTY_SETS` (None:
/// one of them holds counts).
fn shape_index(four: &Four) -> Option<usize> {
    let mut index = 0;
    for h in four.iter().rev() {
        let kind = match h {
            None => 0,
            Some(h) if !h.counts.same(&Counts::default()) => return None,
            Some(h) => 1 + usize::from(h.octaves_only),
        };
        index = index * 3 + kind;
    }
    Some(index)
}

impl RowHists {
    /// The four histograms: slice, wait, wait after a wakeup, after a
    /// preemption.
    pub fn new(four: Four) -> RowHists {
        if four.iter().all(Option::is_none) {
            return RowHists(None);
        }
        match shape_index(&four) {
            Some(i) => RowHists(Some(EMPTY_SETS[i].clone())),
            None => RowHists(Some(Arc::new(four))),
        }
    }

    /// Histogram `i` in row order.
    pub fn get(&self, i: usize) -> Option<&Log2Hist> {
        self.0.as_ref()?.get(i)?.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_without_counts_share_a_set_and_read_back_the_same() {
        let fine = Some(Log2Hist::new());
        let octaves = Some(Log2Hist {
            octaves_only: true,
            ..Log2Hist::new()
        });
        let four = [fine.clone(), None, octaves.clone(), fine.clone()];
        let a = RowHists::new(four.clone());
        let b = RowHists::new(four.clone());
        assert!(Arc::ptr_eq(a.0.as_ref().unwrap(), b.0.as_ref().unwrap()));
        for (i, h) in four.iter().enumerate() {
            assert_eq!(a.get(i), h.as_ref());
            assert_eq!(
                a.get(i).map(|h| h.octaves_only),
                h.as_ref().map(|h| h.octaves_only)
            );
        }
        assert_eq!(RowHists::new([None, None, None, None]), RowHists(None));
        // one with counts: its own set, read back as given
        let counted = Some(Log2Hist::from_counts([0, 3, 1]));
        let c = RowHists::new([fine.clone(), counted.clone(), None, octaves]);
        assert!(!Arc::ptr_eq(c.0.as_ref().unwrap(), a.0.as_ref().unwrap()));
        assert_eq!(c.get(1).map(Log2Hist::total), Some(4));
        assert_eq!(c.get(2), None);
        assert_eq!(c.get(4), None);
    }
}
