//! What each thread stream of an encoded Sample weighs, raw and compressed:
//! for the size benchmark (which fields cost what), not for recording.
use super::codec::encode_threads;
use super::codec_streams::STREAMS;
use super::varint::Cursor;

/// Raw and zstd-compressed size of each thread stream of `cur` encoded on
/// `prev` (for the size benchmark: which fields cost what).
#[doc(hidden)]
pub fn stream_sizes(
    cur: &crate::model::Sample,
    prev: Option<&crate::model::Sample>,
    level: i32,
) -> Vec<(&'static str, usize, usize)> {
    let p = prev.cloned().unwrap_or_default();
    let mut out = Vec::new();
    encode_threads(&mut out, &cur.threads, &p.threads);
    let mut c = Cursor::new(&out);
    let names = [
        "ids", "flags", "meta", "strs", "small", "ns", "ns_lo", "hist",
    ];
    let _ = c.u64();
    let lens: Vec<usize> = (0..STREAMS)
        .map(|_| c.u64().unwrap_or(0) as usize)
        .collect();
    names
        .iter()
        .zip(lens)
        .map(|(n, l)| {
            let b = c.take(l).unwrap_or(&[]);
            (*n, l, zstd::bulk::compress(b, level).map_or(0, |z| z.len()))
        })
        .collect()
}
