//! A thread's generic counters (model/counters.rs) in a recording, format
//! 6: a count, then for each slot that differs from the thread's reference
//! (its previous Sample's counters, or zero) the slot number and the
//! difference. A reader takes the slots it knows and skips the others (a
//! newer writer's), so a counter that gains a descriptor changes neither
//! this code nor the format version. Written only for a thread whose
//! counters are known (codec.rs `F_COUNTERS`); older files carried the
//! one counter of the time, cross-node migrations, in a field of its own
//! (`F_XNODE`), which the decoder reads into its slot.
//!
//! Which slots the source did not measure (interrupt time with the
//! interrupt-time probes off) travels as one more pseudo-slot,
//! `UNMEASURED_SLOT`, written when it changes, its value the mask itself
//! (a delta on 0): readers from before it skip it as a newer writer's slot
//! (and read those figures as 0, as they always did).
use super::codec_budget::{Budget, COUNTERS_SIZE};
use super::varint::{put_delta, put_u64, Cursor, DResult, DecodeError};
use crate::model::counters::{Counters, Mask, CTR_CROSS_NODE_MIGRATIONS, THREAD_COUNTERS};

/// More slots than any build will have: a corrupt count or slot number.
/// Nothing is allocated from either (the slots are a fixed array).
const MAX_SLOTS: u64 = 256;

/// The pseudo-slot carrying the unmeasured mask (counters.rs `Mask`).
const UNMEASURED_SLOT: u64 = MAX_SLOTS - 1;

pub(super) fn put_counters(out: &mut Vec<u8>, now_c: &Counters, before_c: Option<&Counters>) {
    let zero = [0; THREAD_COUNTERS];
    let now = now_c.known().unwrap_or(&zero);
    let before = before_c.and_then(Counters::known).unwrap_or(&zero);
    let changed = || (0..THREAD_COUNTERS).filter(|&i| now[i] != before[i]);
    let mask = now_c.unmeasured();
    let mask_changed = mask != before_c.map_or(0, Counters::unmeasured);
    put_u64(out, changed().count() as u64 + u64::from(mask_changed));
    for i in changed() {
        put_u64(out, i as u64);
        put_delta(out, now[i], before[i]);
    }
    // after the values: setting a value marks its slot measured
    if mask_changed {
        put_u64(out, UNMEASURED_SLOT);
        put_delta(out, u64::from(mask), 0);
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
        if slot == UNMEASURED_SLOT {
            let m = Mask::try_from(c.delta(0)?)
                .map_err(|_| DecodeError("unmeasured counter mask past the slots"))?;
            out.set_unmeasured(m);
            continue;
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

/// Format 5 and older: cross-node migrations as a delta of their own (in
/// `small`), read into their slot of `counters`.
pub(super) fn get_old_cross_node(
    small: &mut Cursor,
    reference: Option<&Counters>,
    counters: &mut Counters,
    b: &mut Budget,
) -> DResult<()> {
    let before = reference.and_then(|r| r.get(CTR_CROSS_NODE_MIGRATIONS));
    let v = small.delta(before.unwrap_or(0))?;
    if !counters.any() && v != 0 {
        b.take(COUNTERS_SIZE)?;
    }
    counters.set(CTR_CROSS_NODE_MIGRATIONS, v);
    Ok(())
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
    fn unmeasured_slots_round_trip() {
        use crate::model::counters::{mask_of, STOLEN};
        let off = mask_of(STOLEN.slots());
        let mut a = Counters::of(&[(X, 4)]);
        a.set_unmeasured(off);
        let b = Counters::of(&[(X, 6), (0, 8)]);
        for (n, r) in [(&a, None), (&a, Some(&a)), (&b, Some(&a)), (&a, Some(&b))] {
            let mut out = Vec::new();
            put_counters(&mut out, n, r);
            let start = r.cloned().unwrap_or_else(Counters::zero);
            let got = get_counters(&mut Cursor::new(&out), start, &mut budget()).unwrap();
            assert_eq!(&got, n);
            assert_eq!(STOLEN.total(&got), STOLEN.total(n));
        }
        assert_eq!(STOLEN.total(&a), None);
        // a mask past the slots is refused
        let mut out = Vec::new();
        put_u64(&mut out, 1);
        put_u64(&mut out, UNMEASURED_SLOT);
        put_delta(&mut out, 1 << 20, 0);
        assert!(get_counters(&mut Cursor::new(&out), Counters::zero(), &mut budget()).is_err());
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
