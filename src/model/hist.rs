//! Histograms of durations with four sub-buckets per bpftrace `hist()`
//! octave of microseconds: octave 0 is `[0, 1)` µs, octave `o ≥ 1` is
//! `[2^(o-1), 2^o)` µs, and each octave is cut in quarters of its width:
//! `[0, 0.25)`, `[0.25, 0.5)`, …, `[1, 1.25)`, …, `[2, 2.5)`, …, `[4, 5)`, …
//! (bucket width ≤ 25 % of its lower bound). Slot `s` lies in octave `s >> 2`,
//! so folding back to bpftrace's buckets is exact. The BPF program fills the
//! same slots (bpf/hist_slot.h); `slot_of_ns` here is the plain definition it
//! is tested against (tests/live/bpf_buckets.rs runs the BPF code itself).
//!
//! Recordings written before the sub-buckets (format 3 and older) hold
//! octaves only: their counts sit in each octave's first slot and the
//! histogram is marked `octaves_only`, so views, quantiles and exports treat
//! it as what it is.
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Octaves (bpftrace `hist()` buckets); the last one also holds everything
/// longer (2^26 µs ≈ 67 s).
pub const HIST_OCTAVES: usize = 28;
/// Sub-buckets per octave.
pub const SUB_BUCKETS: usize = 4;
/// Number of slots; the last one is open.
pub const HIST_SLOTS: usize = HIST_OCTAVES * SUB_BUCKETS;

/// Cumulative counts per slot. `counts` may be shorter than HIST_SLOTS:
/// missing slots are zero (an idle thread's histograms hold no memory), and
/// two histograms are equal when their counts are, whatever the lengths.
/// The counts are shared: a thread's histogram repeated from one Sample to
/// the next, and its copies in the source and the rows, are one allocation
/// (written through `Counts::make_mut`: copied only when changed).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Log2Hist {
    pub counts: Counts,
    /// Only whole octaves are known (an old recording): counts sit in slot
    /// `4 * octave`.
    #[serde(default)]
    pub octaves_only: bool,
}

/// A histogram's per-slot counts, read as a slice. An empty one stores
/// nothing at all: not even a shared empty allocation, whose one reference
/// count every empty histogram's clone and drop would bump, from the
/// collector's thread and the UI's at once (9 % of the live view's CPU at
/// 50,000 idle threads went to that one cache line).
#[derive(Clone, Debug, Default)]
pub struct Counts(Option<Arc<Vec<u64>>>);

impl Counts {
    fn from_vec(counts: Vec<u64>) -> Counts {
        Counts((!counts.is_empty()).then(|| Arc::new(counts)))
    }

    /// The counts to write to: copied first if shared.
    pub fn make_mut(&mut self) -> &mut Vec<u64> {
        Arc::make_mut(self.0.get_or_insert_with(Default::default))
    }

    /// The same allocation (or both empty): equal without a look.
    pub fn same(&self, other: &Counts) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Deref for Counts {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl Serialize for Counts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Counts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Counts, D::Error> {
        Vec::<u64>::deserialize(d).map(Counts::from_vec)
    }
}

impl PartialEq for Log2Hist {
    fn eq(&self, other: &Self) -> bool {
        let n = self.counts.len().max(other.counts.len());
        self.octaves_only == other.octaves_only && (0..n).all(|i| self.get(i) == other.get(i))
    }
}

impl Eq for Log2Hist {}

/// The lowest duration (ns) a slot holds: 0, 250, 500, 750, 1000, 1250, …
pub fn slot_low_ns(slot: usize) -> u64 {
    let slot = slot.min(HIST_SLOTS - 1);
    let (o, j) = (slot / SUB_BUCKETS, (slot % SUB_BUCKETS) as u64);
    if o == 0 {
        250 * j
    } else {
        (250u64 << (o - 1)) * (4 + j)
    }
}

/// One past the highest duration (ns) a slot holds; `None` for the open last slot.
pub fn slot_high_ns(slot: usize) -> Option<u64> {
    (slot + 1 < HIST_SLOTS).then(|| slot_low_ns(slot + 1))
}

/// A slot's lower bound in µs (a fraction below 4 µs).
pub fn slot_low_us(slot: usize) -> f64 {
    slot_low_ns(slot) as f64 / 1000.0
}

/// The slot a duration in ns falls in: the last slot whose lower bound is at
/// most `ns` (the plain definition the probe's arithmetic is tested against).
pub fn slot_of_ns(ns: u64) -> usize {
    (0..HIST_SLOTS)
        .rev()
        .find(|&s| slot_low_ns(s) <= ns)
        .unwrap_or(0)
}

/// The slot of a whole number of microseconds.
pub fn slot_of_us(us: u64) -> usize {
    slot_of_ns(us.saturating_mul(1000))
}

/// bpftrace's `hist()` bucket of a duration in whole microseconds.
pub fn octave_of_us(us: u64) -> usize {
    if us == 0 {
        return 0;
    }
    ((64 - us.leading_zeros()) as usize).min(HIST_OCTAVES - 1)
}

/// The lowest value (µs) an octave holds: 0, 1, 2, 4, 8, …
pub fn octave_low_us(octave: usize) -> u64 {
    if octave == 0 {
        0
    } else {
        1u64 << (octave - 1)
    }
}

/// One past the highest value (µs) an octave holds; `None` for the open last one.
pub fn octave_high_us(octave: usize) -> Option<u64> {
    (octave + 1 < HIST_OCTAVES).then(|| 1u64 << octave)
}

/// A `[lower bound µs, count]` pair of the JSON and CSV forms: the bound is
/// written as an integer where it is one (1, 2, 4, …) and as a decimal
/// fraction below 4 µs (0.25, 1.5, 2.5, …), exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistPair {
    pub low_ns: u64,
    pub count: u64,
}

impl HistPair {
    pub fn low_us(&self) -> f64 {
        self.low_ns as f64 / 1000.0
    }
}

impl std::fmt::Display for HistPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.low_ns.is_multiple_of(1000) {
            write!(f, "{}:{}", self.low_ns / 1000, self.count)
        } else {
            write!(f, "{}:{}", self.low_us(), self.count)
        }
    }
}

impl Serialize for HistPair {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut t = ser.serialize_tuple(2)?;
        if self.low_ns.is_multiple_of(1000) {
            t.serialize_element(&(self.low_ns / 1000))?;
        } else {
            t.serialize_element(&self.low_us())?;
        }
        t.serialize_element(&self.count)?;
        t.end()
    }
}

impl Log2Hist {
    /// Empty: slots are allocated up to the highest one used (a histogram
    /// of 112 u64 slots is 896 bytes; most use a few octaves).
    pub fn new() -> Self {
        Log2Hist::default()
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
        Log2Hist::from_vec(buf[..len].to_vec())
    }

    /// From per-slot counts with no trailing empty slots.
    pub fn from_vec(counts: Vec<u64>) -> Self {
        Log2Hist {
            counts: Counts::from_vec(counts),
            octaves_only: false,
        }
    }

    /// From per-octave counts (a recording from before the sub-buckets).
    pub fn from_octaves(octaves: impl IntoIterator<Item = u64>) -> Self {
        let mut counts = vec![0u64; HIST_SLOTS];
        for (o, c) in octaves.into_iter().take(HIST_OCTAVES).enumerate() {
            counts[o * SUB_BUCKETS] = c;
        }
        Log2Hist {
            octaves_only: true,
            ..Log2Hist::from_counts(counts)
        }
    }

    /// The count in `slot` (zero past the stored ones).
    pub fn get(&self, slot: usize) -> u64 {
        self.counts.get(slot).copied().unwrap_or(0)
    }

    /// The count in a bpftrace octave (its four slots).
    pub fn octave(&self, octave: usize) -> u64 {
        (0..SUB_BUCKETS).fold(0u64, |a, j| {
            a.saturating_add(self.get(octave * SUB_BUCKETS + j))
        })
    }

    /// Per-octave counts, trailing empty octaves left out.
    pub fn octaves(&self) -> Vec<u64> {
        let mut v: Vec<u64> = (0..HIST_OCTAVES).map(|o| self.octave(o)).collect();
        while v.last() == Some(&0) {
            v.pop();
        }
        v
    }

    /// The same counts folded to whole octaves (each in its first slot).
    pub fn folded(&self) -> Log2Hist {
        Log2Hist::from_octaves(self.octaves())
    }

    pub fn record_us(&mut self, us: u64) {
        self.add_at(slot_of_us(us), 1);
    }

    pub fn record_ns(&mut self, ns: u64) {
        self.add_at(slot_of_ns(ns), 1);
    }

    pub fn add_at(&mut self, slot: usize, n: u64) {
        let slot = slot.min(HIST_SLOTS - 1);
        if n == 0 {
            return;
        }
        let counts = self.counts.make_mut();
        if counts.len() <= slot {
            counts.resize(slot + 1, 0);
        }
        counts[slot] = counts[slot].saturating_add(n);
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// Counts added since `earlier` (the same thread's histogram: a new
    /// thread under a reused id has another start time and no `earlier`).
    pub fn since(&self, earlier: &Log2Hist) -> Log2Hist {
        self.since_counted(earlier).0
    }

    /// `since`, and how many slots went down. A cumulative slot of the same
    /// thread cannot: one that does (a 32-bit slot that wrapped, a glitch)
    /// is an anomaly, counted, and adds nothing — taking the whole history
    /// as new would show a spike of everything the thread ever did.
    pub fn since_counted(&self, earlier: &Log2Hist) -> (Log2Hist, u32) {
        let octaves_only = self.octaves_only || earlier.octaves_only;
        if self.counts.same(&earlier.counts) {
            // repeated unchanged (most threads, most intervals)
            let counts = Counts::default();
            return (
                Log2Hist {
                    counts,
                    octaves_only,
                },
                0,
            );
        }
        let n = self.counts.len().max(earlier.counts.len()).min(HIST_SLOTS);
        let mut d = Vec::with_capacity(n);
        let mut down = 0;
        for slot in 0..n {
            let (c, e) = (self.get(slot), earlier.get(slot));
            if c < e {
                down += 1;
            }
            d.push(c.saturating_sub(e));
        }
        while d.last() == Some(&0) {
            d.pop();
        }
        let mut h = Log2Hist::from_vec(d);
        h.octaves_only = octaves_only;
        (h, down)
    }

    pub fn merge(&mut self, other: &Log2Hist) {
        for (slot, &c) in other.counts.iter().enumerate() {
            self.add_at(slot, c);
        }
        self.octaves_only |= other.octaves_only;
    }

    /// Buckets as (low µs, high µs or None for the open last one, count):
    /// the slots, or the octaves when only those are known.
    fn buckets(&self) -> Vec<(f64, Option<f64>, u64)> {
        if self.octaves_only {
            (0..HIST_OCTAVES)
                .map(|o| {
                    let high = octave_high_us(o).map(|h| h as f64);
                    (octave_low_us(o) as f64, high, self.octave(o))
                })
                .collect()
        } else {
            (0..self.counts.len().min(HIST_SLOTS))
                .map(|s| {
                    let high = slot_high_ns(s).map(|h| h as f64 / 1000.0);
                    (slot_low_us(s), high, self.get(s))
                })
                .collect()
        }
    }

    /// The q-quantile (0 < q ≤ 1) in µs, interpolated linearly within its
    /// bucket (so off by at most the bucket's width, ≤ 25 % with
    /// sub-buckets, and usually much less); the open last bucket gives its
    /// lower bound.
    pub fn quantile_us_f64(&self, q: f64) -> Option<f64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let rank = (q * total as f64).clamp(f64::MIN_POSITIVE, total as f64);
        let mut before = 0u64;
        for (low, high, c) in self.buckets() {
            if c == 0 {
                continue;
            }
            if (before.saturating_add(c)) as f64 >= rank {
                let Some(high) = high else { return Some(low) };
                let frac = ((rank - before as f64) / c as f64).clamp(0.0, 1.0);
                return Some(low + (high - low) * frac);
            }
            before = before.saturating_add(c);
        }
        None
    }

    /// `quantile_us_f64` in whole µs, rounded; a quantile between 0 and
    /// 1 µs reads 1, not 0 (a wait is never nothing).
    pub fn quantile_us(&self, q: f64) -> Option<u64> {
        self.quantile_us_f64(q).map(|v| {
            if v > 0.0 && v < 1.0 {
                1
            } else {
                v.round() as u64
            }
        })
    }

    /// Non-empty buckets as `[low bound µs, count]` pairs (the JSON shape):
    /// slots, or octaves when only those are known.
    pub fn nonzero_pairs(&self) -> Vec<HistPair> {
        let src = if self.octaves_only {
            self.folded()
        } else {
            self.clone()
        };
        src.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(slot, &c)| HistPair {
                low_ns: slot_low_ns(slot),
                count: c,
            })
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
    fn slots_are_quarters_of_bpftrace_octaves() {
        let lows: Vec<f64> = (0..16).map(slot_low_us).collect();
        assert_eq!(
            lows,
            [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0]
        );
        assert_eq!(slot_low_ns(HIST_SLOTS - 1), (250u64 << 26) * 7);
        assert_eq!(slot_high_ns(HIST_SLOTS - 1), None);
        for s in 0..HIST_SLOTS - 1 {
            let (lo, hi) = (slot_low_ns(s), slot_high_ns(s).unwrap());
            assert!(lo < hi);
            // no bucket wider than a quarter of its lower bound (above 1 µs)
            if s >= SUB_BUCKETS {
                assert!((hi - lo) * 4 <= lo, "slot {s}: [{lo}, {hi})");
            }
            assert_eq!(slot_of_ns(lo), s);
            assert_eq!(slot_of_ns(hi - 1), s);
            assert_eq!(slot_of_ns(hi), s + 1);
        }
        assert_eq!(slot_of_ns(u64::MAX), HIST_SLOTS - 1);
    }

    #[test]
    fn slots_fold_back_to_bpftrace_hist_exactly() {
        assert_eq!(octave_of_us(0), 0);
        assert_eq!(octave_of_us(1), 1);
        assert_eq!(octave_of_us(3), 2);
        assert_eq!(octave_of_us(1024), 11);
        assert_eq!(octave_of_us(u64::MAX), HIST_OCTAVES - 1);
        let mut inputs = vec![0u64, 1, 999, 1000, 1001, u64::MAX];
        for s in 0..HIST_SLOTS {
            let lo = slot_low_ns(s);
            inputs.extend([lo.saturating_sub(1), lo, lo + 1]);
        }
        let mut x: u64 = 11;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            inputs.push(x >> (x % 64));
        }
        for ns in inputs {
            assert_eq!(
                slot_of_ns(ns) / SUB_BUCKETS,
                octave_of_us(ns / 1000),
                "{ns} ns"
            );
        }
        for o in 0..HIST_OCTAVES {
            assert_eq!(slot_low_ns(o * SUB_BUCKETS), octave_low_us(o) * 1000);
        }
    }

    // The probe's own division-free bucketing (bpf/hist_slot.h fine_slot)
    // is checked against slot_of_ns by tests/live/bpf_buckets.rs, which runs the
    // BPF code itself.

    #[test]
    fn quantiles_are_interpolated_within_the_bucket() {
        let mut h = Log2Hist::new();
        for _ in 0..100 {
            h.record_ns(3_100); // [3, 3.5) µs
        }
        // the rank's position inside the bucket, not its bound
        assert!((h.quantile_us_f64(0.5).unwrap() - 3.25).abs() < 1e-9);
        assert!((h.quantile_us_f64(0.99).unwrap() - 3.495).abs() < 1e-9);
        assert_eq!(h.quantile_us(0.99), Some(3));
        h.record_us(5000); // [4096, 5120)
        assert!((h.quantile_us_f64(1.0).unwrap() - 5120.0).abs() < 1e-9);
        // the open last bucket gives its lower bound
        let mut far = Log2Hist::new();
        far.record_us(u64::MAX / 1000);
        assert_eq!(far.quantile_us(0.5), Some((250u64 << 26) * 7 / 1000));
        // sub-µs quantiles read 1, not 0
        let mut tiny = Log2Hist::new();
        tiny.record_ns(300);
        assert_eq!(tiny.quantile_us(0.5), Some(1));
        assert_eq!(Log2Hist::new().quantile_us(0.99), None);
    }

    #[test]
    fn octave_only_histograms_stay_octaves() {
        // an old recording's [2, 4) µs octave: 10 events
        let h = Log2Hist::from_octaves([0, 0, 10]);
        assert!(h.octaves_only);
        assert_eq!(h.octave(2), 10);
        // interpolated over the whole octave, not over its first quarter
        assert!((h.quantile_us_f64(0.5).unwrap() - 3.0).abs() < 1e-9);
        assert_eq!(
            h.nonzero_pairs(),
            vec![HistPair {
                low_ns: 2000,
                count: 10
            }]
        );
        // merging fine counts into it keeps it octave-only
        let mut m = h.clone();
        let mut fine = Log2Hist::new();
        fine.record_ns(3_500);
        m.merge(&fine);
        assert!(m.octaves_only);
        assert_eq!(m.nonzero_pairs()[0].count, 11);
        assert_eq!(fine.folded().octaves(), vec![0, 0, 1]);
    }

    #[test]
    fn pairs_write_fractions_only_where_needed() {
        let mut h = Log2Hist::new();
        h.record_ns(1_300); // [1.25, 1.5)
        h.record_ns(100); // [0, 0.25)
        h.record_us(9); // [8, 10)
        h.record_us(9);
        let json = serde_json::to_string(&h.nonzero_pairs()).unwrap();
        assert_eq!(json, "[[0,1],[1.25,1],[8,2]]");
        let csv: Vec<String> = h.nonzero_pairs().iter().map(|p| p.to_string()).collect();
        assert_eq!(csv, ["0:1", "1.25:1", "8:2"]);
    }

    #[test]
    fn since_subtracts_and_counts_slots_that_went_down() {
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
        // an earlier histogram longer than the later one: slot 3 went down,
        // an anomaly that adds nothing (not all of `a` again)
        assert_eq!(
            a.since_counted(&Log2Hist::from_counts([1, 2, 3, 9])),
            (Log2Hist::new(), 1)
        );
        let c = Log2Hist::from_counts([2, 6, 4]);
        let d = c.since(&a);
        assert_eq!(&d.counts[..3], &[1, 4, 1]);
        let lows: Vec<u64> = d.nonzero_pairs().iter().map(|p| p.low_ns).collect();
        assert_eq!(lows, [0, 250, 500]);
        // slot 2 went down: counted; slot 1's growth is all that is new
        assert_eq!(b.since_counted(&a), (Log2Hist::from_counts([0, 3]), 1));
    }
}
