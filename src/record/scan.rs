//! Finding the frames of a recording: through the index chain when it is
//! intact, by walking the file frame by frame otherwise (and always for the
//! part written after the last index frame). The walk resynchronises on the
//! magic after damage and notes every range of bytes it could not use.
use std::fmt;

use super::format::{FrameError, FrameHeader, Kind, HEADER_LEN, MAGIC};
use super::index::{self, Entry};
use super::storage::Storage;

/// Bytes the reader could not use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    pub offset: u64,
    pub len: u64,
    pub what: String,
}

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} bytes at offset {}: {}",
            self.len, self.offset, self.what
        )
    }
}

/// Read and check the frame at `offset` (header, bounds, payload CRC).
/// The payload allocation is bounded by MAX_PAYLOAD and by the file size.
pub fn read_frame<S: Storage>(st: &S, offset: u64) -> Result<(FrameHeader, Vec<u8>), FrameError> {
    let mut hb = [0u8; HEADER_LEN];
    if !st.read_exact_at(&mut hb, offset).unwrap_or(false) {
        return Err(FrameError::Truncated);
    }
    let h = FrameHeader::decode(&hb)?;
    if offset.saturating_add(h.frame_len()) > st.size() {
        return Err(FrameError::Truncated);
    }
    let mut payload = vec![0u8; h.payload_len as usize];
    if !st
        .read_exact_at(&mut payload, offset + HEADER_LEN as u64)
        .unwrap_or(false)
    {
        return Err(FrameError::Truncated);
    }
    h.check_payload(&payload)?;
    Ok((h, payload))
}

/// Offset of the next frame magic at or after `from`, if any before `to`.
fn next_magic<S: Storage>(st: &S, from: u64, to: u64) -> Option<u64> {
    // small first: the next magic is usually near (the next frame header)
    let mut chunk: u64 = 256;
    let mut pos = from;
    let mut buf = Vec::new();
    while pos < to {
        let n = chunk.min(to - pos) as usize;
        chunk = (chunk * 4).min(1 << 16);
        buf.resize(n, 0);
        if !st.read_exact_at(&mut buf, pos).unwrap_or(false) {
            return None;
        }
        if let Some(i) = buf.windows(MAGIC.len()).position(|w| w == MAGIC) {
            return Some(pos + i as u64);
        }
        if n < MAGIC.len() {
            return None;
        }
        // overlap so a magic across the chunk edge is found
        pos += (n - (MAGIC.len() - 1)) as u64;
    }
    None
}

/// What a walk or the index found.
#[derive(Default, Debug)]
pub struct Table {
    /// header and Sample frames in file order (index frames left out)
    pub entries: Vec<Entry>,
    pub damage: Vec<Damage>,
    /// the last intact index frame whose chain is whole, if any
    pub last_index: Option<u64>,
    /// entries[unindexed_from..] are not listed by that chain
    pub unindexed_from: usize,
}

fn note(damage: &mut Vec<Damage>, offset: u64, len: u64, what: &str) {
    if let Some(last) = damage.last_mut() {
        if last.offset + last.len == offset && last.what == what {
            last.len += len;
            return;
        }
    }
    damage.push(Damage {
        offset,
        len,
        what: what.to_string(),
    });
}

/// The frame header at `offset`, if one is there and intact (the payload
/// is not read).
fn header_at<S: Storage>(st: &S, offset: u64) -> Result<FrameHeader, FrameError> {
    let mut hb = [0u8; HEADER_LEN];
    if !st.read_exact_at(&mut hb, offset).unwrap_or(false) {
        return Err(FrameError::Truncated);
    }
    FrameHeader::decode(&hb)
}

/// Offset of the first intact frame header in `from..to`.
fn next_header<S: Storage>(st: &S, mut from: u64, to: u64) -> Option<u64> {
    while let Some(m) = next_magic(st, from, to) {
        if header_at(st, m).is_ok() {
            return Some(m);
        }
        from = m + 1;
    }
    None
}

/// Walk frames from `from` to `to`, resynchronising after damage.
///
/// Linear in `to - from` whatever the bytes are: a frame's payload is read
/// only when no intact frame header starts inside it (a real payload never
/// holds one: it is zstd, JSON or varints, and a header needs the magic and
/// its CRC), so the payloads read never overlap; and a search for the next
/// header never covers the same bytes twice.
pub fn walk<S: Storage>(st: &S, from: u64, to: u64, out: &mut Table) {
    let mut pos = from;
    while pos < to {
        let h = match header_at(st, pos) {
            Ok(h) => h,
            Err(e) => {
                let why = if e == FrameError::Truncated {
                    "incomplete frame at the end (an interrupted write)".to_string()
                } else {
                    e.to_string()
                };
                let next = next_header(st, pos + 1, to).unwrap_or(to);
                note(&mut out.damage, pos, next - pos, &why);
                pos = next;
                continue;
            }
        };
        let end = pos.saturating_add(h.frame_len());
        if let Some(q) = next_header(st, pos + 1, end.min(to)) {
            let why = if end > to && to == st.size() {
                "incomplete frame (an interrupted write)"
            } else {
                "frame cut short by the next one (a torn write)"
            };
            note(&mut out.damage, pos, q - pos, why);
            pos = q;
            continue;
        }
        if end > to {
            let why = if to == st.size() {
                "incomplete frame at the end (an interrupted write)"
            } else {
                "frame cut short by the next one (a torn write)"
            };
            note(&mut out.damage, pos, to - pos, why);
            pos = to;
            continue;
        }
        match read_frame(st, pos) {
            Ok((h, _)) => {
                if h.kind != Kind::Index {
                    out.entries.push(Entry::new(pos, &h));
                }
            }
            Err(e) => note(&mut out.damage, pos, end - pos, &e.to_string()),
        }
        pos = end;
    }
}

/// The last intact index frame within `limit` bytes of the end.
///
/// Linear: an index frame's payload is read only if it ends before the
/// nearest intact header after it, so the payloads read never overlap.
fn find_last_index<S: Storage>(st: &S, limit: u64) -> Option<(u64, FrameHeader, Vec<u8>)> {
    const CHUNK: u64 = 1 << 20;
    let size = st.size();
    let floor = size.saturating_sub(limit);
    let mut end = size;
    let mut buf = Vec::new();
    // offset of the nearest intact frame header after the one looked at
    let mut next_hdr = size;
    while end > floor {
        let start = end.saturating_sub(CHUNK).max(floor);
        buf.resize((end - start) as usize, 0);
        if !st.read_exact_at(&mut buf, start).unwrap_or(false) {
            return None;
        }
        let mut i = buf.len();
        while i >= MAGIC.len() {
            i -= 1;
            let at = i + 1 - MAGIC.len();
            if buf[at..at + MAGIC.len()] != MAGIC {
                continue;
            }
            let off = start + at as u64;
            if off >= next_hdr {
                continue; // seen in the previous chunk (the overlap)
            }
            let Ok(h) = header_at(st, off) else {
                continue;
            };
            if h.kind == Kind::Index && off.saturating_add(h.frame_len()) <= next_hdr {
                if let Ok((h, p)) = read_frame(st, off) {
                    return Some((off, h, p));
                }
            }
            next_hdr = off;
        }
        if start == floor {
            break;
        }
        // overlap: a magic straddling the boundary is seen in the next chunk
        end = start + (MAGIC.len() as u64 - 1);
    }
    None
}

/// Bytes `start..end` of a frame.
type Range = (u64, u64);

/// Entries listed by the index chain ending at the frame at `offset`, or None
/// if any link is damaged or inconsistent.
fn follow_chain<S: Storage>(
    st: &S,
    offset: u64,
    len: u64,
    payload: &[u8],
) -> Option<(Vec<Entry>, Vec<Range>)> {
    let mut lists = Vec::new();
    let mut at = offset;
    let mut index_frames = vec![(offset, offset + len)];
    let (mut prev, mut entries) = index::decode(payload).ok()?;
    loop {
        // entries of one index frame: strictly increasing, before the frame
        let mut last = None;
        for e in &entries {
            if e.offset >= at || last.is_some_and(|l| e.offset <= l) {
                return None;
            }
            last = Some(e.offset);
        }
        lists.push((entries, prev));
        match prev {
            None => break,
            Some(p) if p < at => {
                // an index frame ends before the next one starts, so the
                // chain reads each byte at most once
                let h = header_at(st, p).ok()?;
                if h.kind != Kind::Index || p.saturating_add(h.frame_len()) > at {
                    return None;
                }
                let (h, pl) = read_frame(st, p).ok()?;
                at = p;
                index_frames.push((p, p + h.frame_len()));
                (prev, entries) = index::decode(&pl).ok()?;
            }
            Some(_) => return None,
        }
    }
    // frames listed in file order, none overlapping the next
    let mut all = Vec::new();
    let mut end = 0u64;
    for (entries, _) in lists.into_iter().rev() {
        for e in entries {
            if e.offset < end {
                return None;
            }
            end = e.offset + HEADER_LEN as u64 + u64::from(e.payload_len);
            if e.kind != Kind::Index {
                all.push(e);
            }
        }
    }
    // the index must describe this file: two recordings concatenated, or
    // bytes before the first frame, leave every offset pointing elsewhere
    let lines_up = |e: &Entry| header_at(st, e.offset).is_ok_and(|h| e.matches(&h));
    if !all.first().is_none_or(lines_up) || !all.last().is_none_or(lines_up) {
        return None;
    }
    Some((all, index_frames))
}

/// Byte ranges before the end of the last index frame that no frame of
/// the chain accounts for: a frame torn by a crash and then an appended
/// segment, or a segment whose index does not link to the one before.
fn gaps(entries: &[Entry], index_frames: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = entries
        .iter()
        .map(|e| {
            (
                e.offset,
                e.offset + HEADER_LEN as u64 + e.payload_len as u64,
            )
        })
        .chain(index_frames.iter().copied())
        .collect();
    ranges.sort_unstable();
    let mut out = Vec::new();
    let mut end = 0;
    for (s, e) in ranges {
        if s > end {
            out.push((end, s));
        }
        end = end.max(e);
    }
    out
}

/// Every header and Sample frame of the recording.
pub fn table<S: Storage>(st: &S) -> Table {
    let size = st.size();
    let mut t = Table::default();
    if let Some((off, h, payload)) = find_last_index(st, 256 << 20) {
        if let Some((entries, index_frames)) = follow_chain(st, off, h.frame_len(), &payload) {
            // what the chain does not cover is walked: the frames found
            // there join the listed ones in file order
            let mut found = Table::default();
            for (from, to) in gaps(&entries, &index_frames) {
                walk(st, from, to, &mut found);
            }
            t.damage = found.damage;
            t.entries = entries;
            if !found.entries.is_empty() {
                t.entries.extend(found.entries);
                t.entries.sort_unstable_by_key(|e| e.offset);
                // frames the chain does not list: an appender's next index
                // must list them, so it starts a fresh chain
                t.last_index = None;
                t.unindexed_from = 0;
            } else {
                t.last_index = Some(off);
                t.unindexed_from = t.entries.len();
            }
            walk(st, off + h.frame_len(), size, &mut t);
            return t;
        }
    }
    walk(st, 0, size, &mut t);
    t
}
