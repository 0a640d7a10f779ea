//! A list of counters (a histogram, a CPU's migration targets) as deltas
//! against the same list in the reference Sample: sparse (a bitmap of the
//! slots that changed) when short, dense when long.
use super::codec_budget::Budget;
use super::varint::{put_delta, put_u64, Cursor, DResult, DecodeError};

/// Longest histogram accepted (Log2Hist has 112 slots, run-queue ones ~60).
const MAX_HIST: usize = 4096;
/// Slots up to this many are written sparsely (bitmap of changed slots).
const SPARSE_HIST: usize = 64;

pub(super) fn encode_counts(out: &mut Vec<u8>, cur: &[u64], refv: Option<&[u64]>) {
    let r = |i: usize| refv.and_then(|r| r.get(i)).copied().unwrap_or(0);
    put_u64(out, cur.len() as u64);
    if cur.len() <= SPARSE_HIST {
        let mut map = 0u64;
        for (i, &v) in cur.iter().enumerate() {
            if v != r(i) {
                map |= 1 << i;
            }
        }
        put_u64(out, map);
        for (i, &v) in cur.iter().enumerate() {
            if map & (1 << i) != 0 {
                put_delta(out, v, r(i));
            }
        }
    } else {
        for (i, &v) in cur.iter().enumerate() {
            put_delta(out, v, r(i));
        }
    }
}

pub(super) fn decode_counts(
    c: &mut Cursor,
    refv: Option<&[u64]>,
    b: &mut Budget,
) -> DResult<Vec<u64>> {
    let r = |i: usize| refv.and_then(|r| r.get(i)).copied().unwrap_or(0);
    let n = c.u64()?;
    if n > MAX_HIST as u64 {
        return Err(DecodeError("histogram longer than the limit"));
    }
    let n = n as usize;
    b.items::<u64>(n)?;
    let mut v = Vec::with_capacity(n);
    if n <= SPARSE_HIST {
        let map = c.u64()?;
        if n < 64 && map >> n != 0 {
            return Err(DecodeError("histogram bitmap past its length"));
        }
        for i in 0..n {
            v.push(if map & (1 << i) != 0 {
                c.delta(r(i))?
            } else {
                r(i)
            });
        }
    } else {
        if n > c.remaining() {
            return Err(DecodeError("histogram longer than its data"));
        }
        for i in 0..n {
            v.push(c.delta(r(i))?);
        }
    }
    Ok(v)
}
