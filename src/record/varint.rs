//! LEB128 varints and a bounds-checked cursor: every read from a recording
//! goes through `Cursor`, which fails instead of panicking or reading past
//! the end.
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for DecodeError {}

pub type DResult<T> = Result<T, DecodeError>;

pub fn put_u64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn put_i64(out: &mut Vec<u8>, v: i64) {
    put_u64(out, ((v << 1) ^ (v >> 63)) as u64);
}

/// `now - before` as a signed varint (wrapping, so any pair round-trips).
pub fn put_delta(out: &mut Vec<u8>, now: u64, before: u64) {
    put_i64(out, now.wrapping_sub(before) as i64);
}

pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Cursor { buf, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn u8(&mut self) -> DResult<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or(DecodeError("unexpected end of data"))?;
        self.pos += 1;
        Ok(b)
    }

    pub fn u64(&mut self) -> DResult<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return Err(DecodeError("varint overflows 64 bits"));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError("varint too long"))
    }

    pub fn u32(&mut self) -> DResult<u32> {
        u32::try_from(self.u64()?).map_err(|_| DecodeError("value over 32 bits"))
    }

    pub fn i64(&mut self) -> DResult<i64> {
        let z = self.u64()?;
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    /// Inverse of `put_delta`.
    pub fn delta(&mut self, before: u64) -> DResult<u64> {
        Ok(before.wrapping_add(self.i64()? as u64))
    }

    /// A count of items each taking at least `min_bytes` bytes: capped by
    /// what is left, so a damaged count cannot cause a huge allocation.
    pub fn count(&mut self, min_bytes: usize) -> DResult<usize> {
        let n = self.u64()?;
        let cap = self.remaining() / min_bytes.max(1);
        if n > cap as u64 {
            return Err(DecodeError("count larger than the data holding it"));
        }
        Ok(n as usize)
    }

    pub fn bytes(&mut self) -> DResult<&'a [u8]> {
        let n = self.count(1)?;
        self.take(n)
    }

    pub fn take(&mut self, n: usize) -> DResult<&'a [u8]> {
        if n > self.remaining() {
            return Err(DecodeError("unexpected end of data"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn f64(&mut self) -> DResult<f64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_bits(u64::from_le_bytes(a)))
    }

    pub fn string(&mut self) -> DResult<String> {
        self.str().map(str::to_owned)
    }

    /// A length-prefixed string, borrowed from the data.
    pub fn str(&mut self) -> DResult<&'a str> {
        let b = self.bytes()?;
        std::str::from_utf8(b).map_err(|_| DecodeError("string is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        let vals = [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut out = Vec::new();
        for &v in &vals {
            put_u64(&mut out, v);
            put_i64(&mut out, v as i64);
            put_delta(&mut out, v, 5);
        }
        let mut c = Cursor::new(&out);
        for &v in &vals {
            assert_eq!(c.u64().unwrap(), v);
            assert_eq!(c.i64().unwrap(), v as i64);
            assert_eq!(c.delta(5).unwrap(), v);
        }
        assert!(c.is_empty());
        assert!(c.u64().is_err());
        // 11 continuation bytes: too long, not a panic
        let mut c = Cursor::new(&[0xff; 11]);
        assert!(c.u64().is_err());
        // a count that claims more than there is
        let mut c = Cursor::new(&[0x7f, 1, 2]);
        assert!(c.count(1).is_err());
    }
}
