//! Frames: the unit everything in a recording is written in
//! (docs/recording-format.md). A frame is a fixed 36-byte header and a
//! payload; both carry a CRC-32 so a reader can tell an intact frame from a
//! torn or damaged one, and the magic lets it find the next frame after
//! damage.
use std::fmt;

/// First four bytes of every frame. The non-ASCII first byte makes it rare
/// in text and in varint streams of small numbers.
pub const MAGIC: [u8; 4] = [0xA5, b'S', b'T', b'R'];
/// Bytes in a frame header.
pub const HEADER_LEN: usize = 36;
/// Format version this build writes; it reads every version up to it.
pub const FORMAT_VERSION: u32 = 6;
/// Largest payload a frame may declare. Checked before anything is allocated.
pub const MAX_PAYLOAD: u32 = 32 << 20;
/// Largest a decompressed Sample may be (a Sample of 100,000 threads is
/// about 20 MiB before compression).
pub const MAX_RAW: usize = 128 << 20;

/// What a frame holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// a segment's header: format version, tool version, host (JSON)
    Header = 1,
    /// one Sample, zstd-compressed (a key frame or a delta on the previous)
    Sample = 2,
    /// time index over earlier frames, with a link to the previous index
    Index = 3,
}

impl Kind {
    pub fn from_u8(b: u8) -> Option<Kind> {
        match b {
            1 => Some(Kind::Header),
            2 => Some(Kind::Sample),
            3 => Some(Kind::Index),
            _ => None,
        }
    }
}

/// Frame flag: a Sample that decodes on its own (not a delta).
pub const FLAG_KEY: u8 = 1;

/// A frame header as it is on disk (little-endian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub kind: Kind,
    pub flags: u8,
    pub payload_len: u32,
    pub payload_crc: u32,
    /// the Sample's wall-clock time (ns since the epoch); for other kinds the
    /// time they were written
    pub time_ns: u64,
    /// Sample number within its segment (0 = the segment's first Sample);
    /// a delta decodes only on the Sample numbered one less
    pub seq: u32,
    /// random id of the recording session (segment) that wrote the frame
    pub segment: u32,
}

/// Why bytes could not be read as a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// fewer bytes than a header, or than the payload it declares
    Truncated,
    BadMagic,
    BadHeaderCrc,
    BadKind,
    TooLarge,
    BadPayloadCrc,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FrameError::Truncated => "truncated frame",
            FrameError::BadMagic => "no frame magic",
            FrameError::BadHeaderCrc => "frame header CRC mismatch",
            FrameError::BadKind => "unknown frame kind",
            FrameError::TooLarge => "frame length over the limit",
            FrameError::BadPayloadCrc => "frame payload CRC mismatch",
        })
    }
}

/// CRC checks are skipped in fuzzing builds so the fuzzer reaches the
/// decoders behind them; everywhere else they are enforced.
fn crc_ok(expected: u32, actual: u32) -> bool {
    cfg!(fuzzing) || expected == actual
}

impl FrameHeader {
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC);
        b[4] = self.kind as u8;
        b[5] = self.flags;
        // b[6..8] reserved, zero
        b[8..12].copy_from_slice(&self.payload_len.to_le_bytes());
        b[12..16].copy_from_slice(&self.payload_crc.to_le_bytes());
        b[16..24].copy_from_slice(&self.time_ns.to_le_bytes());
        b[24..28].copy_from_slice(&self.seq.to_le_bytes());
        b[28..32].copy_from_slice(&self.segment.to_le_bytes());
        let crc = crc32fast::hash(&b[..32]);
        b[32..36].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Parse and check a header (not its payload).
    pub fn decode(b: &[u8]) -> Result<FrameHeader, FrameError> {
        if b.len() < HEADER_LEN {
            return Err(FrameError::Truncated);
        }
        if b[0..4] != MAGIC {
            return Err(FrameError::BadMagic);
        }
        if !crc_ok(le32(&b[32..36]), crc32fast::hash(&b[..32])) {
            return Err(FrameError::BadHeaderCrc);
        }
        let kind = Kind::from_u8(b[4]).ok_or(FrameError::BadKind)?;
        let payload_len = le32(&b[8..12]);
        if payload_len > MAX_PAYLOAD {
            return Err(FrameError::TooLarge);
        }
        Ok(FrameHeader {
            kind,
            flags: b[5],
            payload_len,
            payload_crc: le32(&b[12..16]),
            time_ns: le64(&b[16..24]),
            seq: le32(&b[24..28]),
            segment: le32(&b[28..32]),
        })
    }

    pub fn is_key(&self) -> bool {
        self.flags & FLAG_KEY != 0
    }

    /// Header and payload together.
    pub fn frame_len(&self) -> u64 {
        HEADER_LEN as u64 + self.payload_len as u64
    }

    pub fn check_payload(&self, payload: &[u8]) -> Result<(), FrameError> {
        if payload.len() != self.payload_len as usize {
            return Err(FrameError::Truncated);
        }
        if !crc_ok(self.payload_crc, crc32fast::hash(payload)) {
            return Err(FrameError::BadPayloadCrc);
        }
        Ok(())
    }
}

/// A whole frame ready to write with one `write` call.
pub fn frame(
    kind: Kind,
    flags: u8,
    time_ns: u64,
    seq: u32,
    segment: u32,
    payload: &[u8],
) -> Vec<u8> {
    let h = FrameHeader {
        kind,
        flags,
        payload_len: payload.len() as u32,
        payload_crc: crc32fast::hash(payload),
        time_ns,
        seq,
        segment,
    };
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&h.encode());
    out.extend_from_slice(payload);
    out
}

fn le32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_le_bytes(a)
}

fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_rejects_damage() {
        let f = frame(Kind::Sample, FLAG_KEY, 123, 7, 99, b"payload");
        let h = FrameHeader::decode(&f).unwrap();
        assert_eq!(h.kind, Kind::Sample);
        assert!(h.is_key());
        assert_eq!(
            (h.time_ns, h.seq, h.segment, h.payload_len),
            (123, 7, 99, 7)
        );
        h.check_payload(&f[HEADER_LEN..]).unwrap();
        assert_eq!(h.frame_len(), f.len() as u64);
        for i in 0..HEADER_LEN {
            let mut g = f.clone();
            g[i] ^= 0x10;
            assert!(FrameHeader::decode(&g).is_err(), "flip in header byte {i}");
        }
        let mut g = f.clone();
        g[HEADER_LEN + 2] ^= 1;
        assert_eq!(
            h.check_payload(&g[HEADER_LEN..]),
            Err(FrameError::BadPayloadCrc)
        );
        assert_eq!(FrameHeader::decode(&f[..10]), Err(FrameError::Truncated));
    }
}
