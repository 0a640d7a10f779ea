//! Hostile and damaged recordings, built byte by byte: what the reader must
//! survive (tests/record/record_hostile.rs, the fixtures in tests/fixtures/hostile/
//! and the fuzz seeds). Each builder says what it attacks.
use super::codec;
use super::format::{frame, Kind, FLAG_KEY, MAX_RAW};
use super::header::FileHeader;
use super::index::{self, Entry};
use super::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use super::varint::put_u64;
use crate::model::Sample;

const T0: u64 = 1_795_302_000_000_000_000;

fn header_payload(format_version: u32, tool: &str) -> Vec<u8> {
    let host = synthetic_host(&SynthOptions::default());
    let mut h = FileHeader::new(&host, T0, 4);
    h.format_version = format_version;
    h.tool = tool.into();
    h.to_bytes()
}

/// A well-formed recording of `samples` as segment `segment`: two headers,
/// a key frame every 4 Samples, a closing index (offsets from `base`, where
/// the bytes will start in the file).
pub fn segment(segment: u32, samples: &[Sample], format_version: u32, base: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut entries = Vec::new();
    let mut push = |out: &mut Vec<u8>, f: Vec<u8>| {
        let h = super::format::FrameHeader::decode(&f).expect("own frame");
        if h.kind != Kind::Index {
            entries.push(Entry::new(base + out.len() as u64, &h));
        }
        out.extend_from_slice(&f);
    };
    let hp = header_payload(format_version, &format!("schedtop {format_version}.0.0"));
    for _ in 0..2 {
        push(&mut out, frame(Kind::Header, 0, T0, 0, segment, &hp));
    }
    let mut prev: Option<&Sample> = None;
    for (i, s) in samples.iter().enumerate() {
        let key = i % 4 == 0;
        let (raw, splits) = codec::encode_split(s, if key { None } else { prev });
        let payload = codec::compress(&raw, &splits, 3);
        let flags = if key { FLAG_KEY } else { 0 };
        push(
            &mut out,
            frame(Kind::Sample, flags, s.time_ns, i as u32, segment, &payload),
        );
        prev = Some(s);
    }
    let ix = index::encode(None, &entries);
    out.extend_from_slice(&frame(Kind::Index, 0, T0, 0, segment, &ix));
    out
}

/// Small synthetic Samples (deterministic).
pub fn samples(n: usize, seed: u64) -> Vec<Sample> {
    synthetic_samples(&SynthOptions {
        threads: 6,
        samples: n,
        seed,
        start_ns: T0 + seed * 1_000_000_000_000,
        ..Default::default()
    })
}

/// An intact recording of 12 Samples.
pub fn clean() -> Vec<u8> {
    segment(0x1111, &samples(12, 1), 1, 0)
}

/// One Sample frame whose payload is `raw` compressed (a key frame).
fn sample_frame(raw: &[u8], seq: u32, segment: u32) -> Vec<u8> {
    let z = codec::compress(raw, &[], 1);
    frame(Kind::Sample, FLAG_KEY, T0 + seq as u64, seq, segment, &z)
}

fn with_header(frames: &[Vec<u8>]) -> Vec<u8> {
    let hp = header_payload(1, "schedtop 0.1.0");
    let mut out = frame(Kind::Header, 0, T0, 0, 7, &hp);
    for f in frames {
        out.extend_from_slice(f);
    }
    out
}

/// The start of an encoded key Sample up to its CPU count: mode, times,
/// the system part.
fn sample_prefix() -> Vec<u8> {
    let mut raw = vec![0u8]; // key frame
    put_u64(&mut raw, 0); // time delta
    put_u64(&mut raw, 0); // mono delta
    raw.extend_from_slice(&[0, 0, 0]); // switches, running, blocked
    raw.extend_from_slice(&[0; 24]); // load
    raw.extend_from_slice(&[0, 0]); // losses
    raw
}

/// Counts far beyond what their data holds, in a payload of a few KB that
/// decompresses to just under the raw-size limit: a thread count and a CPU
/// count each as large as the decompressed size allows, a histogram length,
/// a migration count.
pub fn huge_counts() -> Vec<u8> {
    let fill = MAX_RAW - 64;
    let mut frames = Vec::new();
    // threads: claimed as many as 11-byte threads the raw size could hold,
    // all stream lengths zero but the last, which takes the rest
    let mut raw = sample_prefix();
    raw.extend_from_slice(&[0, 0]); // no CPUs, no migrations
    put_u64(&mut raw, (fill / 11) as u64);
    for _ in 0..7 {
        put_u64(&mut raw, 0);
    }
    put_u64(&mut raw, (fill - 16) as u64);
    raw.resize(raw.len() + fill - 16, 0);
    frames.push(sample_frame(&raw, 0, 7));
    // CPUs: as many as 4-byte ones would fit
    let mut raw = sample_prefix();
    put_u64(&mut raw, (fill / 4) as u64);
    raw.resize(raw.len() + fill, 0);
    frames.push(sample_frame(&raw, 1, 7));
    // migrations
    let mut raw = sample_prefix();
    raw.push(0);
    put_u64(&mut raw, (fill / 3) as u64);
    raw.resize(raw.len() + fill, 0);
    frames.push(sample_frame(&raw, 2, 7));
    with_header(&frames)
}

/// A Sample that is well-formed all through: millions of threads made of
/// zero bytes (the cheapest thread there is, 16 bytes each before
/// compression), a few KB on disk.
pub fn zero_threads() -> Vec<u8> {
    let per = [2usize, 1, 3, 2, 2, 2, 4, 0];
    zero_threads_n((MAX_RAW - 256) / per.iter().sum::<usize>())
}

/// Two key Samples of `n` zero threads each (the largest that decodes
/// within the budget is the worst case for memory).
pub fn zero_threads_n(n: usize) -> Vec<u8> {
    let per = [2usize, 1, 3, 2, 2, 2, 4, 0];
    let mut raw = sample_prefix();
    raw.extend_from_slice(&[0, 0]);
    put_u64(&mut raw, n as u64);
    for p in per {
        put_u64(&mut raw, (p * n) as u64);
    }
    raw.resize(raw.len() + per.iter().sum::<usize>() * n, 0);
    if n == (MAX_RAW - 256) / per.iter().sum::<usize>() {
        return with_header(&[sample_frame(&raw, 0, 7)]);
    }
    with_header(&[sample_frame(&raw, 0, 7), sample_frame(&raw, 1, 7)])
}

/// `n` copies of a segment header, each of another segment, then one
/// recording: opening must stay linear and read the recording.
pub fn repeated_headers(n: u32) -> Vec<u8> {
    let hp = header_payload(1, "schedtop 0.1.0");
    let mut out = Vec::new();
    for seg in 0..n {
        out.extend_from_slice(&frame(Kind::Header, 0, T0, 0, 0x10_0000 + seg, &hp));
    }
    let base = out.len() as u64;
    out.extend_from_slice(&segment(0x2222, &samples(8, 2), 1, base));
    out
}

/// Three segments; the middle one written by a format version this build
/// does not know (its own + 1).
pub fn newer_segment() -> Vec<u8> {
    let mut out = segment(0x3331, &samples(6, 3), 1, 0);
    let newer = super::format::FORMAT_VERSION + 1;
    let b = segment(0x3332, &samples(6, 4), newer, out.len() as u64);
    out.extend_from_slice(&b);
    let c = segment(0x3333, &samples(6, 5), 1, out.len() as u64);
    out.extend_from_slice(&c);
    out
}

/// One byte of junk before an intact recording: its index offsets are all
/// off by one.
pub fn junk_prefix() -> Vec<u8> {
    let mut out = vec![b'#'];
    out.extend_from_slice(&clean());
    out
}

/// Two recordings, each written on its own, then `cat a b`.
pub fn concatenated() -> Vec<u8> {
    let mut out = clean();
    out.extend_from_slice(&segment(0x4444, &samples(10, 6), 1, 0));
    out
}

/// A recording cut in the middle of its last Sample frame (so no closing
/// index either), as a recorder killed mid-write leaves it.
pub fn truncated() -> Vec<u8> {
    let full = segment(0x1111, &samples(8, 1), 1, 0);
    let r = super::reader::Reader::from_storage(full.clone()).expect("clean");
    let (start, end) = r.frame_range(7).expect("sample 7");
    full[..((start + end) / 2) as usize].to_vec()
}

/// One bit flipped in the payload of the 2nd Sample (a delta): it and
/// the two deltas after it are lost, the next key frame reads again.
pub fn bit_flipped() -> Vec<u8> {
    let mut out = clean();
    let r = super::reader::Reader::from_storage(out.clone()).expect("clean");
    let (start, end) = r.frame_range(1).expect("sample 1");
    out[((start + end) / 2) as usize] ^= 0x10;
    out
}

/// A valid header frame, then `n` frame headers back to back, each
/// claiming a payload of 2 MiB whose CRC does not match: a resync that
/// reads the claimed payload at every header is quadratic.
pub fn resync_storm(n: usize) -> Vec<u8> {
    resync_storm_of(Kind::Sample, n)
}

/// The same with index frames, which the reader looks for from the end.
pub fn index_storm(n: usize) -> Vec<u8> {
    resync_storm_of(Kind::Index, n)
}

fn resync_storm_of(kind: Kind, n: usize) -> Vec<u8> {
    let mut out = with_header(&[]);
    let h = super::format::FrameHeader {
        kind,
        flags: 0,
        payload_len: 2 << 20,
        payload_crc: 0xdead_beef,
        time_ns: T0,
        seq: 0,
        segment: 7,
    }
    .encode();
    for _ in 0..n {
        out.extend_from_slice(&h);
    }
    out
}

/// Flip a bit in the middle of Sample `i`'s frame payload.
fn flip_sample(mut b: Vec<u8>, i: usize) -> Vec<u8> {
    let r = super::reader::Reader::from_storage(b.clone()).expect("intact");
    let (start, end) = r.frame_range(i).expect("sample");
    b[((start + end) / 2) as usize] ^= 0x10;
    b
}

/// The last of 12 Samples damaged (the ones before it read).
pub fn last_sample_damaged() -> Vec<u8> {
    flip_sample(clean(), 11)
}

/// No index (a killed recorder), and Sample 5 (a delta) damaged: the walk
/// finds 11 frames, so list positions and Sample numbers part after it.
pub fn unindexed_damaged() -> Vec<u8> {
    let c = flip_sample(clean(), 5);
    let ix = index_len(&c);
    c[..c.len() - ix].to_vec()
}

/// Bytes of the closing index frame (the last frame of `seg`).
fn index_len(seg: &[u8]) -> usize {
    let m = super::format::MAGIC;
    let at = (0..seg.len() - 4)
        .rev()
        .find(|&i| seg[i..i + 4] == m && seg[i + 4] == Kind::Index as u8)
        .expect("index frame");
    seg.len() - at
}
