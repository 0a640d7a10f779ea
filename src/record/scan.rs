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
    const CHUNK: u64 = 1 << 16;
    let mut pos = from;
    let mut buf = Vec::new();
    while pos < to {
        let n = CHUNK.min(to - pos) as usize;
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

/// Walk frames from `from` to `to`, resynchronising after damage.
pub fn walk<S: Storage>(st: &S, from: u64, to: u64, out: &mut Table) {
    let mut pos = from;
    while pos < to {
        match read_frame(st, pos) {
            Ok((h, _)) if pos + h.frame_len() <= to => {
                if h.kind != Kind::Index {
                    out.entries.push(Entry::new(pos, &h));
                }
                pos += h.frame_len();
            }
            other => {
                let why = match other {
                    Err(FrameError::Truncated) if to - pos < HEADER_LEN as u64 => {
                        "incomplete frame at the end (an interrupted write)".to_string()
                    }
                    Err(e) => e.to_string(),
                    Ok(_) => "frame overlaps the indexed part".to_string(),
                };
                let next = next_magic(st, pos + 1, to).unwrap_or(to);
                note(&mut out.damage, pos, next - pos, &why);
                pos = next;
            }
        }
    }
}

/// The last intact index frame within `limit` bytes of the end.
fn find_last_index<S: Storage>(st: &S, limit: u64) -> Option<(u64, FrameHeader, Vec<u8>)> {
    const CHUNK: u64 = 1 << 20;
    let size = st.size();
    let floor = size.saturating_sub(limit);
    let mut end = size;
    let mut buf = Vec::new();
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
            if buf[at..at + MAGIC.len()] == MAGIC {
                if let Ok((h, p)) = read_frame(st, start + at as u64) {
                    if h.kind == Kind::Index {
                        return Some((start + at as u64, h, p));
                    }
                }
            }
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
                let (h, pl) = read_frame(st, p).ok()?;
                if h.kind != Kind::Index {
                    return None;
                }
                at = p;
                index_frames.push((p, p + h.frame_len()));
                (prev, entries) = index::decode(&pl).ok()?;
            }
            Some(_) => return None,
        }
    }
    let mut all = Vec::new();
    let mut last: Option<u64> = None;
    for (entries, _) in lists.into_iter().rev() {
        for e in entries {
            if last.is_some_and(|l| e.offset <= l) {
                return None;
            }
            last = Some(e.offset);
            if e.kind != Kind::Index {
                all.push(e);
            }
        }
    }
    Some((all, index_frames))
}

/// Bytes between the frames an index chain accounts for: a frame torn by a
/// crash and then followed by an appended segment.
fn note_gaps(entries: &[Entry], index_frames: &[(u64, u64)], damage: &mut Vec<Damage>) {
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
    let mut end = 0;
    for (s, e) in ranges {
        if s > end {
            note(
                damage,
                end,
                s - end,
                "bytes outside any frame (a torn write)",
            );
        }
        end = end.max(e);
    }
}

/// Every header and Sample frame of the recording.
pub fn table<S: Storage>(st: &S) -> Table {
    let size = st.size();
    let mut t = Table::default();
    if let Some((off, h, payload)) = find_last_index(st, 256 << 20) {
        if let Some((entries, index_frames)) = follow_chain(st, off, h.frame_len(), &payload) {
            note_gaps(&entries, &index_frames, &mut t.damage);
            t.entries = entries;
            t.last_index = Some(off);
            t.unindexed_from = t.entries.len();
            walk(st, off + h.frame_len(), size, &mut t);
            return t;
        }
        note(
            &mut t.damage,
            off,
            0,
            "index chain damaged: read the whole file instead",
        );
    }
    walk(st, 0, size, &mut t);
    t
}
