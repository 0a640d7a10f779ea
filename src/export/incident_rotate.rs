//! Incident bundles rotate: beyond `--max-incidents` or
//! `--incident-max-size` the oldest bundle goes, so the newest incident is
//! never the one lost. Only bundles schedtop made are counted and removed:
//! a directory (not a link) named `schedtop-incident-…` that holds the
//! `summary.json` schedtop writes first (a regular file naming schedtop's
//! version and the firing time). A look-alike directory without it is
//! someone else's: never counted, never touched. Age is the firing time
//! the summary holds, not the directory's mtime (a clock step or a touch
//! does not reorder bundles). A bundle whose recording is still locked by
//! its writer (another schedtop sharing the directory) is never removed,
//! and neither is the bundle the caller is writing.
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// What every bundle directory's name starts with.
pub const PREFIX: &str = "schedtop-incident-";
/// The recording's name inside a bundle.
pub const RECORDING: &str = "recording.schedtop";
/// The file that marks a bundle as schedtop's.
pub const MARKER: &str = "summary.json";
/// A summary larger than this is not one schedtop wrote.
const MARKER_MAX: u64 = 1 << 20;

/// A bundle schedtop made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    pub path: PathBuf,
    /// the firing's wall-clock time, from its summary
    pub time_ns: u64,
    /// bytes of its files (one level down, links not followed)
    pub bytes: u64,
}

/// A bundle removed to stay within the caps, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removed {
    pub path: PathBuf,
    pub bytes: u64,
    pub why: String,
}

/// The firing time in `dir`'s summary, if schedtop wrote it.
fn marker_time(dir: &Path) -> Option<u64> {
    use crate::util::read_regular::{read_regular, Links};
    // checked on the opened file: a FIFO put there after a check of the
    // path would block the read for ever
    let bytes = read_regular(&dir.join(MARKER), Links::Refuse, MARKER_MAX).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    v.get("schedtop_version")?.as_str()?;
    v.get("time_ns")?.as_u64()
}

/// Bytes of the files in a bundle (one level down, links not followed).
pub fn bundle_bytes(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .filter_map(|f| f.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// The bundles schedtop made in `dir`, oldest first.
pub fn bundles(dir: &Path) -> Vec<Bundle> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Bundle> = rd
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        // file_type does not follow a link
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let path = e.path();
            let time_ns = marker_time(&path)?;
            let bytes = bundle_bytes(&path);
            Some(Bundle {
                path,
                time_ns,
                bytes,
            })
        })
        .collect();
    out.sort_by(|a, b| a.time_ns.cmp(&b.time_ns).then_with(|| a.path.cmp(&b.path)));
    out
}

/// Whether a writer still holds the lock on the bundle's recording.
fn being_written(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: a FIFO put there would wait for a writer for ever
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(dir.join(RECORDING))
    else {
        return false;
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    // SAFETY: flock on a descriptor we own; released when `f` closes.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

/// Remove the oldest of schedtop's bundles in `dir` (never `keep`, never
/// one still being written) until at most `max_count` remain and they
/// take at most `max_bytes`. Returns what went, oldest first; a bundle
/// that cannot be removed is skipped (the caller sees the caps unmet).
pub fn prune(dir: &Path, keep: Option<&Path>, max_count: usize, max_bytes: u64) -> Vec<Removed> {
    let mut all = bundles(dir);
    let mut count = all.len();
    let mut bytes: u64 = all.iter().map(|b| b.bytes).sum();
    let mut removed = Vec::new();
    for b in all.drain(..) {
        if count <= max_count && bytes <= max_bytes {
            break;
        }
        if keep.is_some_and(|k| k == b.path) || being_written(&b.path) {
            continue;
        }
        let why = if count > max_count {
            format!("more than {max_count} other bundles")
        } else {
            format!("bundles over {max_bytes} bytes")
        };
        // remove_dir_all does not follow links inside the bundle
        if std::fs::remove_dir_all(&b.path).is_ok() {
            count -= 1;
            bytes = bytes.saturating_sub(b.bytes);
            removed.push(Removed {
                path: b.path,
                bytes: b.bytes,
                why,
            });
        }
    }
    removed
}

/// Bundles schedtop made in `dir` and their bytes.
pub fn usage(dir: &Path) -> (usize, u64) {
    let b = bundles(dir);
    (b.len(), b.iter().map(|b| b.bytes).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(dir: &Path, name: &str, time_ns: u64, bytes: usize) -> PathBuf {
        let p = dir.join(format!("{PREFIX}{name}"));
        std::fs::create_dir(&p).unwrap();
        let s = format!("{{\"schedtop_version\":\"0\",\"time_ns\":{time_ns}}}");
        std::fs::write(p.join(MARKER), s).unwrap();
        std::fs::write(p.join("data"), vec![0u8; bytes]).unwrap();
        p
    }

    #[test]
    fn oldest_by_firing_time_goes_and_strangers_stay() {
        let d = tempfile::tempdir().unwrap();
        // names sort the other way round: the summary's time decides
        let a = bundle(d.path(), "c", 1, 1000);
        let b = bundle(d.path(), "b", 2, 1000);
        let c = bundle(d.path(), "a", 3, 1000);
        // a look-alike without schedtop's summary, one with a foreign one
        let stranger = d.path().join(format!("{PREFIX}x"));
        std::fs::create_dir(&stranger).unwrap();
        let forged = d.path().join(format!("{PREFIX}y"));
        std::fs::create_dir(&forged).unwrap();
        std::fs::write(forged.join(MARKER), "{\"time_ns\":0}").unwrap();
        assert_eq!(usage(d.path()).0, 3);
        let gone = prune(d.path(), Some(&a), 2, u64::MAX);
        let gone: Vec<&Path> = gone.iter().map(|r| r.path.as_path()).collect();
        assert_eq!(gone, [b.as_path()], "the oldest but the kept one");
        assert!(a.exists() && c.exists() && stranger.exists() && forged.exists());
        let gone = prune(d.path(), None, 10, 1500);
        assert_eq!(gone.len(), 1);
        assert_eq!(gone[0].path, a);
        assert!(c.exists() && stranger.exists() && forged.exists());
    }

    /// A bundle whose recording is a FIFO (planted in a shared incident
    /// directory): asking whether a writer holds it opened the FIFO and
    /// waited for a writer for ever, so the recorder stopped at its next
    /// bundle.
    #[test]
    fn a_fifo_for_a_recording_does_not_hang_the_pruning() {
        let d = tempfile::tempdir().unwrap();
        let old = bundle(d.path(), "old", 1, 10);
        let fifo = std::ffi::CString::new(old.join(RECORDING).to_str().unwrap()).unwrap();
        // SAFETY: a valid C string
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let new = bundle(d.path(), "new", 2, 10);
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = d.path().to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(prune(&dir, None, 1, u64::MAX));
        });
        let got = rx.recv_timeout(std::time::Duration::from_secs(5));
        if got.is_err() {
            // free the pruner: a writer opens the FIFO and goes
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .open(old.join(RECORDING));
        }
        let gone = got.expect("pruning hung on a FIFO for 5 s");
        let gone: Vec<&Path> = gone.iter().map(|r| r.path.as_path()).collect();
        assert_eq!(gone, [old.as_path()]);
        assert!(new.exists());
    }
}

#[cfg(test)]
mod race_tests {
    use super::*;
    use crate::util::read_regular::FifoSwapper;
    use std::time::{Duration, Instant};

    /// The summary was checked with stat and then read by name: a FIFO put
    /// there in between (a shared incident directory) blocked the read for
    /// ever, and with it the recorder's next bundle. 2 s of checks while a
    /// FIFO and the summary swap places.
    #[test]
    fn a_summary_swapped_for_a_fifo_after_its_check_does_not_hang() {
        let d = tempfile::tempdir().unwrap();
        let b = d.path().join(format!("{PREFIX}b"));
        std::fs::create_dir(&b).unwrap();
        let summary = br#"{"schedtop_version":"0","time_ns":7}"#;
        let swap = FifoSwapper::start(&b.join(MARKER), summary);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (t0, mut seen) = (Instant::now(), [0u32; 2]);
            while t0.elapsed() < Duration::from_secs(2) {
                match marker_time(&b) {
                    Some(t) => {
                        assert_eq!(t, 7);
                        seen[0] += 1
                    }
                    None => seen[1] += 1,
                }
            }
            let _ = tx.send(seen);
        });
        let got = rx.recv_timeout(Duration::from_secs(10));
        drop(swap);
        let [read, refused] = got.expect("reading a summary hung on a FIFO");
        // both sides of the race were met
        assert!(read > 0 && refused > 0, "read {read}, refused {refused}");
    }
}
