//! A recorded Sample's compression: its encoded length, then one zstd
//! frame with a block boundary between thread streams (codec.rs).
use std::io::Read;

use super::format::MAX_RAW;
use super::varint::{put_u64, Cursor, DResult, DecodeError};

/// zstd-compress an encoded Sample: uncompressed length, then one zstd
/// frame, with a block boundary at each of `splits`.
pub fn compress(raw: &[u8], splits: &[usize], level: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() / 4 + 16);
    put_u64(&mut out, raw.len() as u64);
    let z = compress_blocks(raw, splits, level).unwrap_or_else(|_| {
        // compressing from memory fails only for lack of memory
        zstd::bulk::compress(raw, level).unwrap_or_default()
    });
    out.extend_from_slice(&z);
    out
}

fn compress_blocks(raw: &[u8], splits: &[usize], level: i32) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut enc = zstd::stream::write::Encoder::new(Vec::with_capacity(raw.len() / 4), level)?;
    enc.include_contentsize(true)?;
    enc.set_pledged_src_size(Some(raw.len() as u64))?;
    let mut start = 0;
    for &end in splits.iter().chain([raw.len()].iter()) {
        let end = end.clamp(start, raw.len());
        enc.write_all(&raw[start..end])?;
        enc.flush()?; // ends the block
        start = end;
    }
    enc.finish()
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
