//! The processes above a filtered thread list (`Sample::ancestors`) in a
//! recorded Sample, where a reader that does not know them never looks: a
//! zstd skippable frame between the Sample's declared length and its zstd
//! frame. zstd decoders pass over skippable frames by definition (RFC 8878,
//! 3.1.2), so a reader from before them decompresses the same bytes and
//! reads the Sample without ancestors; the Sample's own encoding (codec.rs),
//! whose trailing bytes those readers refuse, is untouched, and no format
//! version changes. A key frame carries them when there are any, a delta
//! when they differ from the previous Sample's; a delta without them has
//! the previous Sample's (none, in files written before them).
use super::varint::{put_bytes, put_u64, Cursor, DResult, DecodeError};
use crate::model::{AncestorProcess, Sample};

/// A skippable frame's magic is 0x184D2A50 to 0x184D2A5F (little-endian
/// on disk); schedtop's ancestors take the last one.
const MAGIC: u32 = 0x184D_2A5F;
/// More ancestors than a collector lists (collect/process_ancestors.rs):
/// damage.
const MAX_ANCESTORS: usize = 4096;

/// `payload` (a compressed Sample: its length, then its zstd frame) with
/// the ancestors' frame inserted where `cur`'s differ from `prev`'s.
pub(super) fn with_ancestors(payload: Vec<u8>, cur: &Sample, prev: Option<&Sample>) -> Vec<u8> {
    let before: &[AncestorProcess] = prev.map_or(&[], |p| &p.ancestors);
    if cur.ancestors == before {
        return payload;
    }
    let mut body = Vec::new();
    put_u64(&mut body, cur.ancestors.len() as u64);
    for a in &cur.ancestors {
        put_u64(&mut body, a.pid.into());
        put_u64(&mut body, a.ppid.into());
        put_bytes(&mut body, a.comm.as_bytes());
    }
    let Ok(len) = u32::try_from(body.len()) else {
        // cannot happen (4,096 names of at most a page); leave them out
        return payload;
    };
    let head = length_prefix(&payload);
    let mut out = Vec::with_capacity(payload.len() + body.len() + 8);
    out.extend_from_slice(&payload[..head]);
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&payload[head..]);
    out
}

/// Bytes the declared length takes at the start of `payload`.
pub(super) fn length_prefix(payload: &[u8]) -> usize {
    let mut c = Cursor::new(payload);
    match c.u64() {
        Ok(_) => payload.len() - c.remaining(),
        Err(_) => 0,
    }
}

/// The ancestors' frame of `payload`, if it has one; None when it has not
/// (codec.rs `decode_compressed` then takes the previous Sample's).
pub(super) fn ancestors_of(payload: &[u8]) -> DResult<Option<Vec<AncestorProcess>>> {
    let rest = &payload[length_prefix(payload)..];
    if rest.len() < 8 || rest[..4] != MAGIC.to_le_bytes() {
        return Ok(None);
    }
    let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
    let body = rest
        .get(8..8 + len)
        .ok_or(DecodeError("ancestors frame past the payload"))?;
    let mut c = Cursor::new(body);
    // pid, ppid and a name's length: 3 bytes at least
    let n = c.count(3)?;
    if n > MAX_ANCESTORS {
        return Err(DecodeError("more ancestors than the limit"));
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(AncestorProcess {
            pid: c.u32()?,
            ppid: c.u32()?,
            comm: c.string()?.into(),
        });
    }
    if !c.is_empty() {
        return Err(DecodeError("trailing bytes after the ancestors"));
    }
    Ok(Some(out))
}
