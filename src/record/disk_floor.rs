//! `record --dir`'s free-space floor (`--keep-free`): the recorder never
//! leaves less than this free on the directory's filesystem. Free means
//! what statvfs calls f_bavail, the space an unprivileged user may still
//! take: a recorder running as root would otherwise write into the blocks
//! ext4 reserves for root (5 % by default) and leave the box's own
//! services, running as root too, nothing.
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::timeexpr::parse_size;

const GIB: u64 = 1 << 30;

/// The floor as given: bytes, or a share of the filesystem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeepFree {
    /// as journald's SystemKeepFree= (see `default_floor`)
    Default,
    Bytes(u64),
    Percent(f64),
}

/// `--keep-free`: 2G, 500M, 15%, or 0 (no floor).
pub fn parse_keep_free(s: &str) -> Result<KeepFree, String> {
    let t = s.trim();
    if let Some(p) = t.strip_suffix('%') {
        return p
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| (0.0..100.0).contains(v))
            .map(KeepFree::Percent)
            .ok_or_else(|| format!("bad share {s:?}: expected e.g. 15% (0 to 99.9)"));
    }
    if t == "0" {
        return Ok(KeepFree::Bytes(0));
    }
    parse_size(t).map(KeepFree::Bytes)
}

/// The default floor on a filesystem of `total` bytes: the larger of 15 %
/// and 1 GiB, as journald keeps free, but at most 4 GiB (journald's cap)
/// and at most a quarter of the filesystem (1 GiB would be all of a small
/// one: a 2 GiB disk keeps 512 MiB, a 32 MiB one 8 MiB).
pub fn default_floor(total: u64) -> u64 {
    (total / 20 * 3).clamp(GIB, 4 * GIB).min(total / 4)
}

impl KeepFree {
    /// The floor in bytes on a filesystem of `total` bytes.
    pub fn bytes(self, total: u64) -> u64 {
        match self {
            KeepFree::Default => default_floor(total),
            KeepFree::Bytes(b) => b,
            KeepFree::Percent(p) => (total as f64 * p / 100.0) as u64,
        }
    }
}

/// A filesystem's size and the space an unprivileged user may still take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    pub total: u64,
    pub avail: u64,
}

/// statvfs(2) on `dir`'s filesystem.
pub fn space(dir: &Path) -> std::io::Result<Space> {
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: statvfs is plain data, filled by the call; c is a valid C string.
    let mut v: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut v) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let frsize = v.f_frsize as u64;
    Ok(Space {
        total: (v.f_blocks as u64).saturating_mul(frsize),
        avail: (v.f_bavail as u64).saturating_mul(frsize),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors() {
        const MIB: u64 = 1 << 20;
        // 15 % wins from 6.7 GiB, the 4 GiB cap from 26.7 GiB
        assert_eq!(default_floor(100 * GIB), 4 * GIB);
        assert_eq!(default_floor(20 * GIB), 3 * GIB);
        assert_eq!(default_floor(5 * GIB), GIB);
        assert_eq!(default_floor(2 * GIB), 512 * MIB);
        assert_eq!(default_floor(32 * MIB), 8 * MIB);
        assert_eq!(parse_keep_free("15%"), Ok(KeepFree::Percent(15.0)));
        assert_eq!(KeepFree::Percent(15.0).bytes(200 * MIB), 30 * MIB);
        assert_eq!(parse_keep_free("2G"), Ok(KeepFree::Bytes(2 * GIB)));
        assert_eq!(parse_keep_free("0"), Ok(KeepFree::Bytes(0)));
        for bad in ["100%", "-1%", "x%", "lots", ""] {
            assert!(parse_keep_free(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn statvfs_agrees_with_df() {
        // df's "Avail" is f_bavail too; both in 1K blocks here
        let d = tempfile::tempdir().unwrap();
        let s = space(d.path()).unwrap();
        let out = std::process::Command::new("df")
            .args(["-k", "--output=size,avail"])
            .arg(d.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Vec<u64> = text
            .lines()
            .nth(1)
            .unwrap()
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(s.total / 1024, v[0]);
        // others write meanwhile: within 64 MiB
        assert!((s.avail / 1024).abs_diff(v[1]) < 64 << 10, "{s:?} {v:?}");
    }
}
