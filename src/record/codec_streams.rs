//! The thread streams of an encoded Sample (codec.rs): like fields of
//! every thread side by side, one stream per kind, and the nanosecond
//! deltas split into a compressible high part and near-random low bits.
use super::varint::{put_u64, Cursor, DResult, DecodeError};

pub(super) const STREAMS: usize = 8;

#[derive(Default)]
pub(super) struct Streams {
    pub ids: Vec<u8>,
    pub flags: Vec<u8>,
    pub meta: Vec<u8>,
    pub strs: Vec<u8>,
    pub small: Vec<u8>,
    /// nanosecond deltas (zigzag) above their low 16 bits, as varints
    pub ns: Vec<u8>,
    /// their low 16 bits, 2 bytes each: near-random, kept apart so they do
    /// not spoil the statistics of the compressible part
    pub ns_lo: Vec<u8>,
    pub hist: Vec<u8>,
    /// what comes before the streams and after them (codec::encode_parts)
    pub head: Vec<u8>,
    pub tail: (Vec<u8>, Vec<u8>),
}

thread_local! {
    /// Each encoding thread's streams, emptied and used again: fresh ones
    /// (~1.5 MB at 50,000 threads) were page-faulted in at every frame.
    static SPARE_STREAMS: std::cell::RefCell<Streams> = std::cell::RefCell::default();
}

impl Streams {
    fn clear(&mut self) {
        for st in [
            &mut self.ids,
            &mut self.flags,
            &mut self.meta,
            &mut self.strs,
            &mut self.small,
            &mut self.ns,
            &mut self.ns_lo,
            &mut self.hist,
            &mut self.head,
            &mut self.tail.0,
            &mut self.tail.1,
        ] {
            st.clear();
        }
    }

    pub fn all(&self) -> [&Vec<u8>; STREAMS] {
        [
            &self.ids,
            &self.flags,
            &self.meta,
            &self.strs,
            &self.small,
            &self.ns,
            &self.ns_lo,
            &self.hist,
        ]
    }
}

/// `f` on this thread's streams, emptied.
pub(super) fn with_spare_streams<R>(f: impl FnOnce(&mut Streams) -> R) -> R {
    SPARE_STREAMS.with_borrow_mut(|s| {
        s.clear();
        f(s)
    })
}

pub(super) fn put_ns(s: &mut Streams, now: u64, before: u64) {
    let d = now.wrapping_sub(before) as i64;
    let z = ((d << 1) ^ (d >> 63)) as u64;
    s.ns_lo.extend_from_slice(&(z as u16).to_le_bytes());
    put_u64(&mut s.ns, z >> 16);
}

pub(super) fn get_ns(hi: &mut Cursor, lo: &mut Cursor, before: u64) -> DResult<u64> {
    let l = lo.take(2)?;
    let h = hi.u64()?;
    if h >> 48 != 0 {
        return Err(DecodeError("nanosecond delta over 64 bits"));
    }
    let z = (h << 16) | u64::from(u16::from_le_bytes([l[0], l[1]]));
    let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
    Ok(before.wrapping_add(d as u64))
}
