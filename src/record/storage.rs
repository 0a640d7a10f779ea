//! Positioned reads from a recording: a file, or bytes in memory (tests,
//! fuzzing). Reads never move a shared cursor, so the reader needs only `&`.
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

pub trait Storage {
    fn size(&self) -> u64;
    /// Fill `buf` from `offset`; Ok(false) if the data ends first.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<bool>;
}

impl Storage for File {
    fn size(&self) -> u64 {
        self.metadata().map(|m| m.len()).unwrap_or(0)
    }

    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<bool> {
        while !buf.is_empty() {
            match FileExt::read_at(self, buf, offset) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }
}

impl Storage for Vec<u8> {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<bool> {
        let Ok(start) = usize::try_from(offset) else {
            return Ok(false);
        };
        match start
            .checked_add(buf.len())
            .and_then(|end| self.get(start..end))
        {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}
