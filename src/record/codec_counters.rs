//! A thread's generic counters (model/counters.rs) in a recording, format
//! 6: a count, then for each slot that differs from the thread's reference
//! (its previous Sample's counters, or zero) the slot number and the
//! difference. A reader takes the slots it knows and skips the others (a
//! newer writer's), so a counter that gains a descriptor changes neither
//! this code nor the format version. Written only for a thread whose
//! counters are known (codec.rs `F_COUNTERS`); older files carried the
//! one counter of the time, cross-node migrations, in a field of its own
//! (`F_XNODE`), which the decoder reads into its slot.
use super::codec_budget::Budget;
use super::varint::{put_delta, put_u64, Cursor, DResult, DecodeError};
use crate::model::counters::{Counters, THREAD_COUNTERS};

/// More slots than any build will have: a corrupt count or slot number.
/// Nothing is allocated from either (the slots are a fixed array).
const MAX_SLOTS: u64 = 256;

/// Bytes a thread's own counter array takes decoded (codec_budget.rs).
pub const COUNTERS_SIZE: usize = std::mem::size_of::<[u64; THREAD_COUNTERS]>();

pub(super) fn put_counters(out: &mut Vec<u8>, now: &Counters, before: Option<&Counters>) {
    let zero = [0; THREAD_COUNTERS];
    let now = now.known().unwrap_or(&zero);
    let before = before.and_then(Counters::known).unwrap_or(&zero);
    let changed = || (0..THREAD_COUNTERS).filter(|&i| now[i] != before[i]);
    put_u64(out, changed().count() as u64);
    for i in changed() {
        put_u64(out, i as u64);
        put_delta(out, now[i], before[i]);
    }
}

/// The counters after `start` (the reference's, or the old field's value
/// already in its slot) with the written slots applied.
pub(super) fn get_counters(c: &mut Cursor, start: Counters, b: &mut Budget) -> DResult<Counters> {
    let n = c.u64()?;
    if n > MAX_SLOTS {
        return Err(DecodeError("more thread counters than the limit"));
    }
    let mut out = start;
    for _ in 0..n {
        let slot = c.u64()?;
        if slot >= MAX_SLOTS {
            return Err(DecodeError("thread counter slot past the limit"));
        }
        // a slot this build does not know: its value is read and dropped
        let before = usize::try_from(slot)
            .ok()
            .and_then(|s| out.get(s))
            .unwrap_or(0);
        let v = c.delta(before)?;
        out.set(slot as usize, v);
    }
    if !out.is_known() {
        out = Counters::zero();
    }
    if out.any() {
        b.take(COUNTERS_SIZE)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::counters::CTR_CROSS_NODE_MIGRATIONS as X;

    fn budget() -> Budget {
        Budget(1 << 20)
    }

    #[test]
    fn round_trip_on_a_reference_and_from_zero() {
        let before = Counters::of(&[(0, 100), (X, 3)]);
        let now = Counters::of(&[(0, 250), (X, 2), (15, u64::MAX)]);
        for (n, r) in [(&now, Some(&before)), (&now, None), (&before, Some(&now))] {
            let mut out = Vec::new();
            put_counters(&mut out, n, r);
            let start = r.cloned().unwrap_or_else(Counters::zero);
            let got = get_counters(&mut Cursor::new(&out), start, &mut budget()).unwrap();
            assert_eq!(&got, n);
        }
        // unchanged: one byte, and the shared zero array stays shared
        let mut out = Vec::new();
        put_counters(&mut out, &before, Some(&before));
        assert_eq!(out, [0]);
        let mut out = Vec::new();
        put_counters(&mut out, &Counters::zero(), None);
        assert_eq!(out, [0]);
        let got = get_counters(&mut Cursor::new(&out), Counters::UNKNOWN, &mut budget()).unwrap();
        assert!(got.is_known() && !got.any());
    }

    #[test]
    fn a_newer_writers_slots_are_skipped_and_a_hostile_count_refused() {
        // slot 3 = 7, then slot 40 (a newer build's) = 9, then slot 4 = 1
        let mut out = Vec::new();
        put_u64(&mut out, 3);
        for (s, v) in [(3u64, 7u64), (40, 9), (4, 1)] {
            put_u64(&mut out, s);
            put_delta(&mut out, v, 0);
        }
        let c = get_counters(&mut Cursor::new(&out), Counters::zero(), &mut budget()).unwrap();
        assert_eq!(c, Counters::of(&[(3, 7), (4, 1)]));
        // a count in the billions: an error at once, nothing allocated
        let mut out = Vec::new();
        put_u64(&mut out, 1 << 40);
        let e = get_counters(&mut Cursor::new(&out), Counters::zero(), &mut budget());
        assert!(e.unwrap_err().0.contains("limit"));
        // a slot number past any build
        let mut out = Vec::new();
        put_u64(&mut out, 1);
        put_u64(&mut out, u64::MAX);
        put_u64(&mut out, 0);
        let e = get_counters(&mut Cursor::new(&out), Counters::zero(), &mut budget());
        assert_eq!(e.unwrap_err().0, "thread counter slot past the limit");
        // a count larger than the data holding it: an error, not a hang
        let mut out = Vec::new();
        put_u64(&mut out, 200);
        assert!(get_counters(&mut Cursor::new(&out), Counters::zero(), &mut budget()).is_err());
        // the budget is charged for an array of its own only
        let mut b = Budget(COUNTERS_SIZE - 1);
        let mut out = Vec::new();
        put_counters(&mut out, &Counters::of(&[(1, 1)]), None);
        let e = get_counters(&mut Cursor::new(&out), Counters::zero(), &mut b);
        assert!(e.unwrap_err().0.contains("memory limit"));
    }
}
