//! Reading a small /proc text file that may hold a thread's name. A thread
//! names itself with any 15 bytes (prctl PR_SET_NAME, or its program's file
//! name) and the kernel writes them raw into `stat` and `status`: read as
//! UTF-8, the whole file is refused and the thread silently goes missing.
use std::io::Read;
use std::path::Path;

/// /proc files read here are a few KiB; the bound only guards a strange one.
const MAX_BYTES: u64 = 64 << 10;

/// The file's text, bytes that are not UTF-8 replaced by U+FFFD; None when
/// it cannot be read.
pub fn read_lossy(path: &Path) -> Option<String> {
    let mut raw = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_BYTES)
        .read_to_end(&mut raw)
        .ok()?;
    Some(match String::from_utf8(raw) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}
