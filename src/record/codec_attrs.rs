//! A thread's attributes in a recording (format 2): a count, then each
//! slot as 0 (unknown) or 1 + its zigzag value, in `ThreadAttrs::values`
//! order. A reader takes the slots it knows and skips the rest, so adding
//! an attribute changes neither this code nor the format version. Written
//! only when they differ from the thread's previous Sample (codec.rs,
//! `F_ATTRS`); format 1 files have none (every attribute unknown).
use super::varint::{put_u64, Cursor, DResult, DecodeError};
use crate::model::ThreadAttrs;

/// More slots than any build has: a corrupt count.
const MAX_ATTRS: u64 = 64;

pub(super) fn put_attrs(out: &mut Vec<u8>, a: &ThreadAttrs) {
    let values = a.values();
    put_u64(out, values.len() as u64);
    for v in values {
        put_u64(out, v.map_or(0, |v| ((v << 1) ^ (v >> 63)) as u64 + 1));
    }
}

pub(super) fn get_attrs(c: &mut Cursor) -> DResult<ThreadAttrs> {
    let n = c.u64()?;
    if n > MAX_ATTRS {
        return Err(DecodeError("more thread attributes than the limit"));
    }
    let mut a = ThreadAttrs::default();
    for i in 0..n as usize {
        let code = c.u64()?;
        let v = code
            .checked_sub(1)
            .map(|z| ((z >> 1) as i64) ^ -((z & 1) as i64));
        a.set(i, v);
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_unknown_slots_and_a_corrupt_count() {
        for nice in [None, Some(-20), Some(0), Some(19)] {
            let a = ThreadAttrs {
                nice,
                ..Default::default()
            };
            let mut out = Vec::new();
            put_attrs(&mut out, &a);
            assert_eq!(get_attrs(&mut Cursor::new(&out)).unwrap(), a);
        }
        // policy, RT priority and allowed CPUs, each known or not
        let a = ThreadAttrs {
            nice: Some(0),
            policy: Some(1),
            rt_priority: Some(99),
            cpus_allowed: None,
            ppid: Some(1),
        };
        let mut out = Vec::new();
        put_attrs(&mut out, &a);
        assert_eq!(get_attrs(&mut Cursor::new(&out)).unwrap(), a);
        // an older writer's one slot: the rest stay unknown
        let mut out = Vec::new();
        put_u64(&mut out, 1);
        put_u64(&mut out, 2 * 5 + 1); // nice 5
        let old = get_attrs(&mut Cursor::new(&out)).unwrap();
        assert_eq!(
            (old.nice, old.policy, old.cpus_allowed, old.ppid),
            (Some(5), None, None, None)
        );
        // a newer writer's extra slot is skipped; what this build knows reads
        let mut out = Vec::new();
        put_u64(&mut out, 6);
        put_u64(&mut out, 2 * 5 + 1); // nice 5
        for _ in 0..4 {
            put_u64(&mut out, 0);
        }
        put_u64(&mut out, 7); // unknown slot
        assert_eq!(get_attrs(&mut Cursor::new(&out)).unwrap().nice, Some(5));
        let mut out = Vec::new();
        put_u64(&mut out, 1 << 40);
        assert!(get_attrs(&mut Cursor::new(&out)).is_err());
    }
}
