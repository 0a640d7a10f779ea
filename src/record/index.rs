//! The time index: index frames, written every so many frames and when a
//! recording closes, list the frames written since the previous index frame
//! (offset, kind, time, sequence number) and link back to it, so a reader
//! finds every frame by reading the chain from the end instead of the whole
//! file. Entries are varint deltas: about 6 bytes per Sample.
use super::format::{FrameHeader, Kind};
use super::varint::{put_delta, put_u64, Cursor, DResult, DecodeError};

/// Where a frame is and what its header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub offset: u64,
    pub kind: Kind,
    pub flags: u8,
    pub time_ns: u64,
    pub seq: u32,
    pub segment: u32,
    pub payload_len: u32,
}

impl Entry {
    pub fn new(offset: u64, h: &FrameHeader) -> Entry {
        Entry {
            offset,
            kind: h.kind,
            flags: h.flags,
            time_ns: h.time_ns,
            seq: h.seq,
            segment: h.segment,
            payload_len: h.payload_len,
        }
    }

    /// Whether a header read at `offset` is the frame this entry describes.
    pub fn matches(&self, h: &FrameHeader) -> bool {
        *self == Entry::new(self.offset, h)
    }

    pub fn is_key(&self) -> bool {
        self.flags & super::format::FLAG_KEY != 0
    }
}

/// Payload of an index frame.
pub fn encode(prev_index: Option<u64>, entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + entries.len() * 8);
    put_u64(&mut out, prev_index.map_or(0, |o| o + 1));
    put_u64(&mut out, entries.len() as u64);
    let (mut off, mut time, mut seq, mut seg) = (0u64, 0u64, 0u64, 0u64);
    for e in entries {
        put_delta(&mut out, e.offset, off);
        out.push(e.kind as u8);
        out.push(e.flags);
        put_delta(&mut out, e.time_ns, time);
        put_delta(&mut out, e.seq.into(), seq);
        put_delta(&mut out, e.segment.into(), seg);
        put_u64(&mut out, e.payload_len.into());
        (off, time, seq, seg) = (e.offset, e.time_ns, e.seq.into(), e.segment.into());
    }
    out
}

/// The previous index frame's offset and the entries.
pub fn decode(payload: &[u8]) -> DResult<(Option<u64>, Vec<Entry>)> {
    super::fuzz_tally::tally(super::fuzz_tally::Decoder::Index, decode_entries(payload))
}

fn decode_entries(payload: &[u8]) -> DResult<(Option<u64>, Vec<Entry>)> {
    let mut c = Cursor::new(payload);
    let prev = c.u64()?.checked_sub(1);
    let n = c.count(7)?;
    let mut entries = Vec::with_capacity(n);
    let (mut off, mut time, mut seq, mut seg) = (0u64, 0u64, 0u64, 0u64);
    let u32_of = |v: u64| u32::try_from(v).map_err(|_| DecodeError("index value over 32 bits"));
    for _ in 0..n {
        off = c.delta(off)?;
        let kind = Kind::from_u8(c.u8()?).ok_or(DecodeError("index entry of unknown kind"))?;
        let flags = c.u8()?;
        time = c.delta(time)?;
        seq = c.delta(seq)?;
        seg = c.delta(seg)?;
        let payload_len = c.u32()?;
        entries.push(Entry {
            offset: off,
            kind,
            flags,
            time_ns: time,
            seq: u32_of(seq)?,
            segment: u32_of(seg)?,
            payload_len,
        });
    }
    if !c.is_empty() {
        return Err(DecodeError("trailing bytes in index"));
    }
    Ok((prev, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips() {
        let entries: Vec<Entry> = (0..300u32)
            .map(|i| Entry {
                offset: 1000 + i as u64 * 5000,
                kind: if i % 100 == 0 {
                    Kind::Header
                } else {
                    Kind::Sample
                },
                flags: (i % 60 == 0) as u8,
                time_ns: 1_795_302_000_000_000_000 + i as u64 * 1_000_000_000,
                seq: i,
                segment: if i < 150 { 7 } else { u32::MAX },
                payload_len: 4000 + i,
            })
            .collect();
        let p = encode(Some(77), &entries);
        assert!(p.len() < entries.len() * 16, "{} bytes", p.len());
        assert_eq!(decode(&p).unwrap(), (Some(77), entries.clone()));
        assert_eq!(decode(&encode(None, &[])).unwrap(), (None, vec![]));
        for cut in 0..p.len().min(200) {
            assert!(decode(&p[..cut]).is_err());
        }
    }
}
