//! The black box: a directory of recordings fed one Sample at a time by
//! whatever sampler runs — `record --dir`'s, or `serve --record-dir`'s, so
//! one process with one set of probes can export and record. A new file
//! every `--rotate` (named by its start time,
//! `schedtop-HOST-YYYYMMDD-HHMMSS.schedtop`, UTC), each written as `record
//! -o` writes one (crash-safe: SIGKILL loses nothing written). One
//! recorder per directory (a lock file, which also keeps the directory's
//! id). Retention (retention.rs) deletes only the recorder's own files,
//! oldest first by their sequence: beyond `--retain`, `--retain-size`, and
//! to keep `--keep-free` free (disk_floor.rs). When even that cannot keep
//! the floor, or the disk fills (ENOSPC), writing pauses: Samples are
//! counted as dropped (said once, and in the next file's header) and
//! recording resumes in a new file when space returns.
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{bail, Context, Result};

use super::dir::EXT;
use super::disk_floor::{self, KeepFree};
use super::header::DirMark;
use super::retention::{self, Limits, Retention};
use super::writer::{LeftOut, OpenMode, WriteOptions, Writer};
use crate::collect::sampler::Flow;
use crate::model::{HostInfo, Sample};
use crate::util::clock::rfc3339;
use crate::util::names::file_name_ext;

/// The directory, created 0700 if missing, its lock (held while the
/// returned file is open) and its id.
fn prepare(dir: &Path) -> Result<(File, u64)> {
    if std::fs::symlink_metadata(dir).is_err() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let lock_path = dir.join(".schedtop-record.lock");
    let mut lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        bail!(
            "{} is being recorded by another schedtop record --dir",
            dir.display()
        );
    }
    let id = retention::dir_id(&mut lock).with_context(|| format!("{}", lock_path.display()))?;
    Ok((lock, id))
}

/// A new file for a segment starting at `time_ns`.
fn open_next(
    dir: &Path,
    host: &HostInfo,
    time_ns: u64,
    opts: WriteOptions,
) -> Result<(PathBuf, Writer)> {
    let t = UNIX_EPOCH + Duration::from_nanos(time_ns);
    let base = file_name_ext(&host.hostname, t, EXT);
    let stem = base.trim_end_matches(&format!(".{EXT}")).to_string();
    for n in 1..=100u32 {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{stem}-{n}.{EXT}")
        };
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        return Ok((path.clone(), Writer::open(&path, host, opts)?));
    }
    bail!("{}: 100 files named {stem}* exist already", dir.display())
}

/// Whether `e` is the filesystem being full (or the quota reached).
fn is_full(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .and_then(|io| io.raw_os_error())
            .is_some_and(|n| n == libc::ENOSPC || n == libc::EDQUOT)
    })
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
}

/// Room kept on top of the floor for the next write: the largest frame
/// yet, twice (a key frame), and the filesystem's own bookkeeping.
fn margin(largest_frame: u64) -> u64 {
    (2 * largest_frame).max(256 << 10)
}

struct Current {
    path: PathBuf,
    writer: Writer,
    started_mono: u64,
}

/// What a black box keeps and for how long.
#[derive(Clone, Debug)]
pub struct DirPolicy {
    pub rotate_ns: u64,
    /// delete files whose last Sample is longer ago than this
    pub retain_ns: Option<u64>,
    /// keep the directory's own recordings under this many bytes
    pub retain_bytes: Option<u64>,
    /// keep this much of the filesystem free
    pub keep_free: KeepFree,
}

/// A directory of recordings fed one Sample at a time, by whichever
/// sampler runs (`record --dir`'s own, or `serve --record-dir`'s).
pub struct BlackBox {
    dir: PathBuf,
    o: DirPolicy,
    /// held while the recorder lives: one recorder per directory
    _lock: File,
    id: u64,
    retention: Retention,
    next_seq: u64,
    cur: Option<Current>,
    /// Samples dropped since the last one written (for the next header)
    dropped: u64,
    dropped_total: u64,
    /// why writing is paused, once said
    paused: Option<String>,
    largest_frame: u64,
    left_out: LeftOut,
    /// the newest file and Sample safely written, for the closing message
    kept: Option<(PathBuf, u64)>,
    samples: u64,
    files: u64,
    /// the newest Sample's time, for retention at the end
    last_ns: u64,
}

impl BlackBox {
    fn limits(&self) -> Limits {
        Limits {
            retain_ns: self.o.retain_ns,
            retain_bytes: self.o.retain_bytes,
        }
    }

    fn prune(&mut self, now_ns: u64, need: u64) -> Result<u64> {
        // the file being written and the newest one written are kept: the
        // newest data is never what makes room
        let current = self.cur.as_ref().map(|c| c.path.clone());
        let newest = self.kept.as_ref().map(|k| k.0.clone());
        let keep: Vec<&Path> = current.iter().chain(&newest).map(|p| p.as_path()).collect();
        let p = self.retention.prune(&keep, now_ns, self.limits(), need)?;
        for n in &p.notes {
            crate::say!("schedtop: {n}");
        }
        for (g, why) in &p.removed {
            crate::say!("schedtop: removed {} ({why})", g.display());
        }
        Ok(p.freed)
    }

    /// Close the current file; one without Samples is removed.
    fn close(&mut self) -> Result<()> {
        let Some(c) = self.cur.take() else {
            return Ok(());
        };
        if c.writer.samples() == 0 {
            c.writer.remove_own(&c.path);
            return Ok(());
        }
        match c.writer.finish() {
            // the closing index did not fit: the file reads without it
            Err(e) if is_full(&e) => Ok(()),
            r => r.with_context(|| format!("closing {}", c.path.display())),
        }
    }

    /// Stop writing until space returns, saying why once.
    fn pause(&mut self, why: String) -> Result<Flow> {
        self.close()?;
        self.dropped += 1;
        self.dropped_total += 1;
        if self.paused.is_none() {
            crate::say!(
                "schedtop: {}: {why}: writing paused, Samples dropped until there is room",
                self.dir.display()
            );
            self.paused = Some(why);
        }
        Ok(Flow::Continue)
    }

    /// Whether there is room for the next Sample above the floor, after
    /// removing own files if need be; Err(why) if not.
    fn room(&mut self, now_ns: u64) -> Result<Result<(), String>> {
        let s = disk_floor::space(&self.dir)
            .with_context(|| format!("statvfs {}", self.dir.display()))?;
        let floor = self.o.keep_free.bytes(s.total);
        // no floor (--keep-free 0): a full disk is met as ENOSPC
        let want = match floor {
            0 => 0,
            f => f.saturating_add(margin(self.largest_frame)),
        };
        if s.avail >= want {
            return Ok(Ok(()));
        }
        self.prune(now_ns, want - s.avail)?;
        let s = disk_floor::space(&self.dir)
            .with_context(|| format!("statvfs {}", self.dir.display()))?;
        if s.avail >= want {
            return Ok(Ok(()));
        }
        Ok(Err(format!(
            "{} free, under the --keep-free floor of {} (and {} for the next write) with every older recording of its own but the newest removed",
            mib(s.avail),
            mib(floor),
            mib(margin(self.largest_frame))
        )))
    }

    /// Write `s` (or count it dropped at the floor). An error is one
    /// this recorder cannot go on from (not a full disk).
    pub fn take(&mut self, host: &HostInfo, s: &Sample) -> Result<()> {
        self.last_ns = s.time_ns;
        self.take_flow(host, s).map(|_| ())
    }

    fn take_flow(&mut self, host: &HostInfo, s: &Sample) -> Result<Flow> {
        let due = self
            .cur
            .as_ref()
            .is_some_and(|c| s.mono_ns.saturating_sub(c.started_mono) >= self.o.rotate_ns);
        if due {
            self.close()?;
        }
        for retry in [false, true] {
            if let Err(why) = self.room(s.time_ns)? {
                return self.pause(why);
            }
            match self.write(host, s) {
                Ok(()) => return Ok(Flow::Continue),
                // the disk is full (ENOSPC, no floor, or others filled it):
                // room is made as for the floor, the oldest own files
                // first, and the Sample tried once more (a partial frame
                // was cut off: the file ends with its last whole one)
                Err(e) if is_full(&e) => {
                    let freed = self.prune(s.time_ns, margin(self.largest_frame))?;
                    if freed == 0 || retry {
                        return self.pause(format!("{e:#}"));
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Flow::Continue)
    }

    /// Write `s` to the current file, opened first if need be.
    fn write(&mut self, host: &HostInfo, s: &Sample) -> Result<()> {
        if self.cur.is_none() {
            let opts = WriteOptions {
                mode: OpenMode::CreateNew,
                dir: Some(DirMark {
                    id: self.id,
                    seq: self.next_seq,
                    run: self.retention.run_id(),
                }),
                dropped_before: self.dropped,
                ..Default::default()
            };
            // (a file whose header did not fit is removed by Writer::open)
            let (path, writer) = open_next(&self.dir, host, s.time_ns, opts)?;
            self.next_seq += 1;
            self.files += 1;
            self.cur = Some(Current {
                path,
                writer,
                started_mono: s.mono_ns,
            });
        }
        let c = self.cur.as_mut().expect("opened above");
        let opened = c.writer.samples() == 0;
        let before = (c.writer.size(), c.writer.left_out());
        if let Err(e) = c.writer.write_sample(s) {
            return Err(e).with_context(|| format!("writing {}", c.path.display()));
        }
        self.largest_frame = self
            .largest_frame
            .max(c.writer.size().saturating_sub(before.0));
        self.note_left_out(before.1, s.threads.len());
        let c = self.cur.as_ref().expect("written above");
        if let Some(why) = self.paused.take() {
            crate::say!(
                "schedtop: {}: recording again in {} ({} Samples dropped while paused: {why})",
                self.dir.display(),
                c.path.display(),
                self.dropped
            );
        }
        self.dropped = 0;
        self.kept = Some((c.path.clone(), s.time_ns));
        self.samples += 1;
        if opened {
            // retention at each new file, once it holds a Sample
            self.prune(s.time_ns, 0)?;
        }
        Ok(())
    }

    /// Count what the writer left out of this Sample; say it the first time.
    fn note_left_out(&mut self, before: LeftOut, threads: usize) {
        let Some(c) = &self.cur else { return };
        let now = c.writer.left_out();
        let first = self.left_out == LeftOut::default();
        self.left_out.trimmed_samples += now.trimmed_samples - before.trimmed_samples;
        self.left_out.threads += now.threads - before.threads;
        self.left_out.idle_threads += now.idle_threads - before.idle_threads;
        self.left_out.skipped_samples += now.skipped_samples - before.skipped_samples;
        if first && self.left_out != LeftOut::default() {
            crate::say!(
                "schedtop: a Sample of {threads} threads is too large for a frame: {}",
                left_out_line(&self.left_out)
            );
        }
    }
}

/// What was left out of Samples too large for a frame, in words.
pub fn left_out_line(l: &LeftOut) -> String {
    format!(
        "{} Sample(s) written without {} threads ({} of them idle), {} not written",
        l.trimmed_samples, l.threads, l.idle_threads, l.skipped_samples
    )
}

impl BlackBox {
    /// Lock and prepare `dir` (created 0700 if missing); what it found
    /// there that is not its own is said on stderr.
    pub fn open(dir: &Path, policy: DirPolicy) -> Result<BlackBox> {
        let (lock, id) = prepare(dir)?;
        let mut retention = Retention::new(dir, id, retention::random_u64());
        let (next_seq, notes) = retention.next_seq()?;
        for n in &notes {
            crate::say!("schedtop: {n}");
        }
        Ok(BlackBox {
            dir: dir.to_path_buf(),
            o: policy,
            _lock: lock,
            id,
            retention,
            next_seq,
            cur: None,
            dropped: 0,
            dropped_total: 0,
            paused: None,
            largest_frame: 0,
            left_out: LeftOut::default(),
            kept: None,
            samples: 0,
            files: 0,
            last_ns: 0,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// For the start line: how often a new file, what floor.
    pub fn describe(&self) -> String {
        let floor = disk_floor::space(&self.dir).map_or(0, |s| self.o.keep_free.bytes(s.total));
        format!(
            "a new file every {} s, keeping {} free",
            self.o.rotate_ns as f64 / 1e9,
            mib(floor)
        )
    }

    /// Close the file and apply retention once more; the closing line's
    /// figures ("N samples in M files in DIR, ...").
    pub fn finish(mut self) -> Result<String> {
        self.close()?;
        let last = self.last_ns;
        self.prune(last, 0)?;
        let mut extra = String::new();
        if self.dropped_total > 0 {
            extra += &format!(", {} dropped at the free-space floor", self.dropped_total);
        }
        if self.left_out != LeftOut::default() {
            extra += &format!("; too large for a frame: {}", left_out_line(&self.left_out));
        }
        Ok(format!(
            "{} samples in {} files in {}{extra}",
            self.samples,
            self.files,
            self.dir.display()
        ))
    }

    /// After an error that stops recording: close what was written (it
    /// stays readable) and say what is kept.
    pub fn abandon(mut self, e: anyhow::Error) -> anyhow::Error {
        let _ = self.close();
        let kept = self.kept.as_ref().map_or_else(
            || "no Sample of this run was written".to_string(),
            |(path, t)| {
                format!(
                    "Samples up to {} are kept in {} and the files before it",
                    rfc3339(*t),
                    path.display()
                )
            },
        );
        anyhow::anyhow!("{e:#}; stopped recording ({kept})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_recorder_on_the_same_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let (_held, id) = prepare(d.path()).unwrap();
        let e = prepare(d.path()).err().unwrap().to_string();
        assert!(e.contains("another schedtop record"), "{e}");
        let nested = d.path().join("x/y");
        let (_, other) = prepare(&nested).unwrap();
        assert_ne!(id, other, "each directory its own id");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&nested).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
