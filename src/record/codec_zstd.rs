//! A recorded Sample's compression: its encoded length, then one zstd
//! frame with a block boundary between thread streams (codec.rs).
use std::io::Read;

use super::format::MAX_RAW;
use super::varint::{put_u64, Cursor, DResult, DecodeError};

/// zstd-compress an encoded Sample: uncompressed length, then one zstd
/// frame, with a block boundary at each of `splits`.
pub fn compress(raw: &[u8], splits: &[usize], level: i32) -> Vec<u8> {
    let mut parts = Vec::with_capacity(splits.len() + 1);
    let mut start = 0;
    for &end in splits.iter().chain([raw.len()].iter()) {
        let end = end.clamp(start, raw.len());
        parts.push(&raw[start..end]);
        start = end;
    }
    compress_parts(&parts, level)
}

/// `compress` of the concatenation of `parts`, a block boundary after each.
pub(super) fn compress_parts(parts: &[&[u8]], level: i32) -> Vec<u8> {
    let n: usize = parts.iter().map(|p| p.len()).sum();
    let mut out = Vec::with_capacity(n / 4 + 16);
    put_u64(&mut out, n as u64);
    let mut write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut enc = zstd::stream::write::Encoder::new(&mut out, level)?;
        enc.include_contentsize(true)?;
        enc.set_pledged_src_size(Some(n as u64))?;
        for p in parts {
            enc.write_all(p)?;
            enc.flush()?; // ends the block
        }
        enc.finish().map(|_| ())
    };
    if write().is_err() {
        // compressing from memory fails only for lack of memory
        out.clear();
        put_u64(&mut out, n as u64);
        out.extend_from_slice(&zstd::bulk::compress(&parts.concat(), level).unwrap_or_default());
    }
    out
}

/// Inverse of `compress`, never allocating more than the declared length,
/// which is itself capped (MAX_RAW), nor a zstd window over 8 MiB.
pub fn decompress(payload: &[u8]) -> DResult<Vec<u8>> {
    super::fuzz_tally::tally(
        super::fuzz_tally::Decoder::Decompress,
        decompress_payload(payload),
    )
}

fn decompress_payload(payload: &[u8]) -> DResult<Vec<u8>> {
    let mut c = Cursor::new(payload);
    let n = c.u64()?;
    if n > MAX_RAW as u64 {
        return Err(DecodeError("declared Sample size over the limit"));
    }
    let n = n as usize;
    let z = c.take(c.remaining())?;
    let mut dec = zstd::stream::read::Decoder::with_buffer(z)
        .map_err(|_| DecodeError("zstd decoder failed to start"))?;
    dec.window_log_max(23)
        .map_err(|_| DecodeError("zstd decoder failed to start"))?;
    // grows with what really decompresses, up to n (+1 to detect overrun)
    let mut raw = Vec::with_capacity(n.min(1 << 20));
    let read = dec.take(n as u64 + 1).read_to_end(&mut raw);
    super::fuzz_tally::decompressed(raw.len());
    read.map_err(|_| DecodeError("zstd data damaged"))?;
    if raw.len() != n {
        return Err(DecodeError(
            "decompressed size differs from the declared size",
        ));
    }
    Ok(raw)
}
