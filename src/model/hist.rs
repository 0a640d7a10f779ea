//! log2 histograms in microseconds, bucketed like bpftrace's `hist()`:
//! `[0]`, `[1]`, `[2, 4)`, `[4, 8)`, … The BPF program fills the same slots
//! (bpf/schedtop.h, HIST_SLOTS), so this is also the reference for its
//! bucketing.
use serde::{Deserialize, Serialize};

/// Number of slots; the last one also holds everything longer (2^26 us ≈ 67 s).
pub const HIST_SLOTS: usize = 28;

/// Cumulative counts per slot. `counts` may be shorter than HIST_SLOTS:
/// missing slots are zero (an idle thread's histograms hold no memory), and
/// two histograms are equal when their counts are, whatever the lengths.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Log2Hist {
    pub counts: Vec<u64>,
}

impl PartialEq for Log2Hist {
    fn eq(&self, other: &Self) -> bool {
        let n = self.counts.len().max(other.counts.len());
        (0..n).all(|i| self.get(i) == other.get(i))
    }
}

impl Eq for Log2Hist {}

/// The slot a duration in microseconds falls in.
pub fn slot_of_us(us: u64) -> usize {
    if us == 0 {
        return 0;
    }
    let slot = (63 - us.leading_zeros() as usize) + 1;
    slot.min(HIST_SLOTS - 1)
}

/// The lowest value (us) a slot holds: 0, 1, 2, 4, 8, …
pub fn slot_low_us(slot: usize) -> u64 {
    if slot == 0 {
        0
    } else {
        1u64 << (slot - 1)
    }
}

/// One past the highest value (us) a slot holds; `None` for the open last slot.
pub fn slot_high_us(slot: usize) -> Option<u64> {
    if slot + 1 >= HIST_SLOTS {
        None
    } else {
        Some(1u64 << slot)
    }
}

impl Log2Hist {
    pub fn new() -> Self {
        Log2Hist {
            counts: vec![0; HIST_SLOTS],
        }
    }

    /// From per-slot counts; trailing empty slots are not stored.
    pub fn from_counts(counts: impl IntoIterator<Item = u64>) -> Self {
        let mut buf = [0u64; HIST_SLOTS];
        let mut len = 0;
        for (slot, c) in counts.into_iter().take(HIST_SLOTS).enumerate() {
            buf[slot] = c;
            if c != 0 {
                len = slot + 1;
            }
        }
        // exactly sized: an idle thread's histogram allocates nothing
        Log2Hist {
            counts: buf[..len].to_vec(),
        }
    }

    /// The count in `slot` (zero past the stored ones).
    pub fn get(&self, slot: usize) -> u64 {
        self.counts.get(slot).copied().unwrap_or(0)
    }

    pub fn record_us(&mut self, us: u64) {
        self.add_at(slot_of_us(us), 1);
    }

    pub fn add_at(&mut self, slot: usize, n: u64) {
        if self.counts.len() < HIST_SLOTS {
            self.counts.resize(HIST_SLOTS, 0);
        }
        let slot = slot.min(HIST_SLOTS - 1);
        self.counts[slot] = self.counts[slot].saturating_add(n);
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// Counts added since `earlier`. If any slot went down the counters
    /// restarted (a new thread under a reused id): everything is new.
    pub fn since(&self, earlier: &Log2Hist) -> Log2Hist {
        let n = self.counts.len().max(earlier.counts.len()).min(HIST_SLOTS);
        let mut d = Vec::with_capacity(n);
        for slot in 0..n {
            let (c, e) = (self.get(slot), earlier.get(slot));
            if c < e {
                return Log2Hist::from_counts(self.counts.iter().copied());
            }
            d.push(c - e);
        }
        Log2Hist::from_counts(d)
    }

    pub fn merge(&mut self, other: &Log2Hist) {
        for (slot, &c) in other.counts.iter().enumerate() {
            self.add_at(slot, c);
        }
    }

    /// Upper bound (us) of the slot holding the q-quantile (0 < q ≤ 1), so
    /// "p99 ≤ x": with log2 buckets the answer is only known to a factor of 2.
    /// For the open last slot the slot's low bound is returned.
    pub fn quantile_us(&self, q: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0u64;
        for (slot, &c) in self.counts.iter().enumerate() {
            seen = seen.saturating_add(c);
            if seen >= rank {
                return Some(slot_high_us(slot).unwrap_or_else(|| slot_low_us(slot)));
            }
        }
        None
    }

    /// Non-empty slots as `[bucket_low_us, count]` pairs (the JSON shape).
    pub fn nonzero_pairs(&self) -> Vec<[u64; 2]> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(slot, &c)| [slot_low_us(slot), c])
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_match_bpftrace_hist() {
        assert_eq!(slot_of_us(0), 0);
        assert_eq!(slot_of_us(1), 1);
        assert_eq!(slot_of_us(2), 2);
        assert_eq!(slot_of_us(3), 2);
        assert_eq!(slot_of_us(4), 3);
        assert_eq!(slot_of_us(7), 3);
        assert_eq!(slot_of_us(8), 4);
        assert_eq!(slot_of_us(1023), 10);
        assert_eq!(slot_of_us(1024), 11);
        assert_eq!(slot_of_us(u64::MAX), HIST_SLOTS - 1);
        for slot in 1..HIST_SLOTS - 1 {
            let low = slot_low_us(slot);
            let high = slot_high_us(slot).unwrap();
            assert_eq!(slot_of_us(low), slot, "low edge of {slot}");
            assert_eq!(slot_of_us(high - 1), slot, "high edge of {slot}");
            assert_eq!(slot_of_us(high), slot + 1, "next after {slot}");
        }
        assert_eq!(slot_high_us(HIST_SLOTS - 1), None);
    }

    // The probe's own division-free bucketing (bpf/schedtop.bpf.c
    // hist_slot) is checked against slot_of_us by tests/bpf_buckets.rs,
    // which runs the BPF code itself.

    #[test]
    fn quantile_is_upper_bound_of_bucket() {
        let mut h = Log2Hist::new();
        for _ in 0..99 {
            h.record_us(3); // [2,4)
        }
        h.record_us(5000); // [4096, 8192)
        assert_eq!(h.quantile_us(0.5), Some(4));
        assert_eq!(h.quantile_us(0.99), Some(4));
        assert_eq!(h.quantile_us(1.0), Some(8192));
        assert_eq!(Log2Hist::new().quantile_us(0.99), None);
    }

    #[test]
    fn since_subtracts_and_handles_restart() {
        let a = Log2Hist::from_counts([1, 2, 3]);
        let b = Log2Hist::from_counts([1, 5, 1]);
        // idle: nothing stored, and equal to an all-zero histogram
        assert!(Log2Hist::from_counts([0, 0, 0]).counts.is_empty());
        assert_eq!(Log2Hist::from_counts([0, 0]), Log2Hist::new());
        assert_eq!(
            Log2Hist::from_counts([1, 2]),
            Log2Hist::from_counts([1, 2, 0, 0])
        );
        assert_ne!(
            Log2Hist::from_counts([1, 2]),
            Log2Hist::from_counts([1, 2, 1])
        );
        // an earlier histogram longer than the later one: a restart
        assert_eq!(a.since(&Log2Hist::from_counts([1, 2, 3, 9])), a);
        let c = Log2Hist::from_counts([2, 6, 4]);
        let d = c.since(&a);
        assert_eq!(&d.counts[..3], &[1, 4, 1]);
        assert_eq!(d.nonzero_pairs(), vec![[0, 1], [1, 4], [2, 1]]);
        // slot 2 went down: a restarted counter, all of b is new
        assert_eq!(b.since(&a), b);
    }
}
