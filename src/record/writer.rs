//! Writing a recording: a segment header (twice), then one frame per Sample,
//! each written with a single write(2) as soon as it is encoded, an index
//! frame every `index_every` frames and at the end. A key frame every
//! `key_every` Samples bounds what one damaged frame can take with it and
//! how far a seek decodes.
//!
//! Durability: a frame is in the kernel's page cache when `write_sample`
//! returns, so killing the recorder (even with SIGKILL) loses nothing
//! written; fdatasync runs at most once per `sync_every` (default 1 s), so a
//! power cut loses at most about that much.
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Seek, SeekFrom, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::codec;
use super::format::{frame, FrameHeader, Kind, FLAG_KEY, HEADER_LEN, MAX_PAYLOAD};
use super::header::{DirMark, FileHeader};
use super::index::{self, Entry};
use super::reader::Reader;
use crate::model::{HostInfo, Sample};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// fail if the file exists
    CreateNew,
    /// add a segment to an existing recording (created if missing)
    Append,
    /// remove an existing file first
    Replace,
}

#[derive(Clone, Debug)]
pub struct WriteOptions {
    pub mode: OpenMode,
    /// a key frame every this many Samples
    pub key_every: u32,
    /// an index frame every this many frames
    pub index_every: u32,
    /// zstd level
    pub level: i32,
    pub sync_every: Duration,
    /// stop writing before the file would grow past this
    pub max_size: Option<u64>,
    /// `record --dir`'s mark for the header (header.rs)
    pub dir: Option<DirMark>,
    /// Samples dropped before this file, for the header
    pub dropped_before: u64,
    /// a Sample the decoder would count over this many bytes is trimmed
    /// (codec::MAX_DECODED; lowered only by tests)
    pub max_decoded: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            mode: OpenMode::CreateNew,
            // 20 s at 1 s: a seek decodes at most 19 deltas; costs ~2 % in size
            key_every: 20,
            index_every: 256,
            level: 3,
            sync_every: Duration::from_secs(1),
            max_size: None,
            dir: None,
            dropped_before: 0,
            max_decoded: test_max_decoded().unwrap_or(codec::MAX_DECODED),
        }
    }
}

/// SCHEDTOP_TEST_MAX_DECODED=BYTES lowers the cap on a Sample (never
/// raises it): how the tests make a real Sample "too large" without
/// starting 190,000 threads.
fn test_max_decoded() -> Option<usize> {
    std::env::var("SCHEDTOP_TEST_MAX_DECODED")
        .ok()?
        .parse::<usize>()
        .ok()
        .map(|n| n.min(codec::MAX_DECODED))
}

/// What became of a Sample handed to the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// taken: written, perhaps without some threads if it was too large
    /// for a frame, or (when not even its CPUs fit) left out; both counted
    /// in `Writer::left_out`
    Ok,
    /// not written: it would have passed `max_size`
    Full,
}

/// What the writer left out of Samples too large for a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Samples written without some of their threads
    pub trimmed_samples: u64,
    /// threads left out of them
    pub threads: u64,
    /// of those, threads that had not run since the Sample before
    pub idle_threads: u64,
    /// Samples not written at all
    pub skipped_samples: u64,
}

pub struct Writer {
    file: File,
    /// Samples written by this writer
    samples: u64,
    left_out: LeftOut,
    pos: u64,
    segment: u32,
    seq: u32,
    since_key: u32,
    prev: Option<Sample>,
    pending: Vec<Entry>,
    last_index: Option<u64>,
    opts: WriteOptions,
    last_sync: Instant,
}

fn random_u32() -> u32 {
    let mut b = [0u8; 4];
    // SAFETY: getrandom writes at most b.len() bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n == 4 {
        return u32::from_le_bytes(b);
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (t ^ (std::process::id() as u64).rotate_left(32)) as u32
}

pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Create a file 0600 without following a symlink or replacing anything.
fn create_new(path: &Path) -> Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true) // O_CREAT|O_EXCL: never follows a symlink either
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| {
            if e.kind() == ErrorKind::AlreadyExists {
                anyhow::anyhow!(
                    "{} exists: use --append to add to it or --force to replace it",
                    path.display()
                )
            } else {
                anyhow::Error::new(e).context(format!("{}", path.display()))
            }
        })
}

fn sync_parent(path: &Path) {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(parent) {
        let _ = d.sync_all();
    }
}

/// Clears O_NONBLOCK, which was only for the open.
fn blocking(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor we own; no memory is involved.
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    // SAFETY: as above
    if flags < 0
        || unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// One writer per recording: an exclusive advisory lock held while the
/// file is open (two recorders appending to one file would interleave).
/// Taken before anything is read from the file or done to it.
fn lock(file: &File, path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor we own; no memory is involved.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let who = super::lockinfo::holder(file)
                .map_or_else(String::new, |pid| format!(" (pid {pid})"));
            bail!(
                "{} is being written by another schedtop record{who}",
                path.display()
            );
        }
        return Err(anyhow::Error::new(e).context(format!("{}: cannot lock", path.display())));
    }
    Ok(())
}

impl Writer {
    /// Open `path` and write a new segment header for `host`.
    pub fn open(path: &Path, host: &HostInfo, opts: WriteOptions) -> Result<Writer> {
        let existing = std::fs::symlink_metadata(path).ok();
        if let Some(m) = &existing {
            if m.file_type().is_symlink() {
                bail!(
                    "{} is a symbolic link: refusing to write through it",
                    path.display()
                );
            }
            if !m.is_file() {
                bail!("{} exists and is not a regular file", path.display());
            }
        }
        // a file this call creates is removed again if its header fails
        let created_here = opts.mode != OpenMode::Append || existing.is_none();
        let mut used_segments = Vec::new();
        let mut pending = Vec::new();
        let mut last_index = None;
        let (file, pos) = match (opts.mode, existing) {
            (OpenMode::Append, Some(_)) => {
                // checked again on the opened file: a FIFO put there since
                // the check above was opened, locked and written to (the
                // error was fdatasync's EINVAL); O_NONBLOCK until then, as
                // a device's open (a serial line) may wait
                let file = OpenOptions::new()
                    .read(true)
                    .append(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
                    .open(path)
                    .with_context(|| format!("{}", path.display()))?;
                if !file.metadata()?.is_file() {
                    bail!("{} exists and is not a regular file", path.display());
                }
                blocking(&file).with_context(|| format!("{}", path.display()))?;
                // the lock first: the size and index read below must be
                // the ones no other writer changes any more
                lock(&file, path)?;
                let size = file.metadata()?.len();
                if size > 0 {
                    let r = Reader::from_storage(file.try_clone()?)
                        .with_context(|| format!("{}: cannot append", path.display()))?;
                    let (li, unindexed) = r.index_state();
                    last_index = li;
                    pending = unindexed.to_vec();
                    used_segments = r.segment_ids();
                }
                (file, size)
            }
            (OpenMode::Replace, Some(_)) => {
                // a recorder still writing the old file keeps it: replacing
                // it under its lock would leave it writing a deleted file
                let old = OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
                    .open(path)
                    .with_context(|| format!("{}: cannot replace", path.display()))?;
                lock(&old, path)?;
                std::fs::remove_file(path)
                    .with_context(|| format!("{}: cannot replace", path.display()))?;
                let file = create_new(path)?;
                lock(&file, path)?;
                (file, 0)
            }
            _ => {
                let file = create_new(path)?;
                lock(&file, path)?;
                (file, 0)
            }
        };
        let mut segment = random_u32();
        while used_segments.contains(&segment) {
            segment = random_u32();
        }
        let mut w = Writer {
            file,
            samples: 0,
            left_out: LeftOut::default(),
            pos,
            segment,
            seq: 0,
            since_key: 0,
            prev: None,
            pending,
            last_index,
            opts: WriteOptions {
                key_every: opts.key_every.max(1),
                index_every: opts.index_every.max(1),
                ..opts
            },
            last_sync: Instant::now(),
        };
        let created = now_ns();
        let mut h = FileHeader::new(host, created, w.opts.key_every);
        h.dir = w.opts.dir;
        h.dropped_before = w.opts.dropped_before;
        let h = h.to_bytes();
        // two copies: a damaged one does not orphan the segment's Samples
        let started = (0..2)
            .try_for_each(|_| w.put(frame(Kind::Header, 0, created, 0, segment, &h)))
            .and_then(|()| w.file.sync_data().context("syncing the recording"));
        if let Err(e) = started {
            // (a full disk) a file made here and left without its header
            // would only be an empty file in the way of the next run
            if created_here {
                w.remove_own(path);
            }
            return Err(e.context(format!("{}", path.display())));
        }
        sync_parent(path);
        Ok(w)
    }

    /// Remove the file at `path` if it is still the one this writer has
    /// open (it holds the lock; a file put there since is not touched).
    pub fn remove_own(&self, path: &Path) {
        use std::os::unix::fs::MetadataExt;
        let (Ok(mine), Ok(there)) = (self.file.metadata(), std::fs::symlink_metadata(path)) else {
            return;
        };
        if (mine.dev(), mine.ino()) == (there.dev(), there.ino()) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Samples written by this writer (not those of earlier segments).
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// What was left out of Samples too large for a frame.
    pub fn left_out(&self) -> LeftOut {
        self.left_out
    }

    fn put(&mut self, bytes: Vec<u8>) -> Result<()> {
        let h = FrameHeader::decode(&bytes[..HEADER_LEN])
            .map_err(|e| anyhow::anyhow!("internal: bad frame: {e}"))?;
        if let Err(e) = self.file.write_all(&bytes) {
            // a partial frame (a full filesystem) is cut off, so the file
            // ends with its last complete frame; the position goes back
            // with it (a later write must not leave a hole)
            let _ = self.file.set_len(self.pos);
            let _ = self.file.seek(SeekFrom::Start(self.pos));
            return Err(anyhow::Error::new(e).context("writing the recording"));
        }
        if h.kind != Kind::Index {
            self.pending.push(Entry::new(self.pos, &h));
        }
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Bytes in the file.
    pub fn size(&self) -> u64 {
        self.pos
    }

    /// The Sample as it will be written, and its payload: trimmed when no
    /// reader would decode it whole (codec::MAX_DECODED) or its frame would
    /// be over MAX_PAYLOAD. None: not even its CPUs fit.
    fn fit(&mut self, s: &Sample, key: bool) -> Option<(Option<Sample>, Vec<u8>)> {
        let mut cap = self.opts.max_decoded;
        let mut trimmed: Option<(Sample, super::sample_trim::Trim)> = None;
        for _ in 0..16 {
            let this = trimmed.as_ref().map_or(s, |t| &t.0);
            if codec::decoded_size(this) > cap {
                trimmed = Some(super::sample_trim::trim(s, self.prev.as_ref(), cap)?);
                continue;
            }
            let base = if key { None } else { self.prev.as_ref() };
            let payload = codec::encode_compressed(this, base, self.opts.level);
            if payload.len() <= MAX_PAYLOAD as usize {
                if let Some((_, cut)) = &trimmed {
                    self.left_out.trimmed_samples += 1;
                    self.left_out.threads += cut.threads as u64;
                    self.left_out.idle_threads += cut.idle as u64;
                }
                return Some((trimmed.map(|t| t.0), payload));
            }
            // threads that compress badly: half the room, and again
            cap = codec::decoded_size(this) / 2;
        }
        None
    }

    pub fn write_sample(&mut self, s: &Sample) -> Result<Written> {
        let key = self.prev.is_none() || self.since_key >= self.opts.key_every;
        let Some((trimmed, payload)) = self.fit(s, key) else {
            self.left_out.skipped_samples += 1;
            return Ok(Written::Ok);
        };
        let s = trimmed.as_ref().unwrap_or(s);
        let flags = if key { FLAG_KEY } else { 0 };
        let bytes = frame(
            Kind::Sample,
            flags,
            s.time_ns,
            self.seq,
            self.segment,
            &payload,
        );
        if let Some(max) = self.opts.max_size {
            // room for this frame and for the index that lists it
            let index_room = (self.pending.len() as u64 + 1) * 24 + 64;
            if self.pos + bytes.len() as u64 + index_room > max {
                return Ok(Written::Full);
            }
        }
        self.put(bytes)?;
        self.samples += 1;
        self.seq = self.seq.wrapping_add(1);
        self.since_key = if key { 1 } else { self.since_key + 1 };
        self.prev = Some(s.clone());
        if self.pending.len() >= self.opts.index_every as usize {
            self.write_index()?;
        }
        if self.last_sync.elapsed() >= self.opts.sync_every {
            self.file.sync_data().context("syncing the recording")?;
            self.last_sync = Instant::now();
        }
        Ok(Written::Ok)
    }

    fn write_index(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let payload = index::encode(self.last_index, &self.pending);
        let at = self.pos;
        self.put(frame(Kind::Index, 0, now_ns(), 0, self.segment, &payload))?;
        self.pending.clear();
        self.last_index = Some(at);
        Ok(())
    }

    /// Write the closing index and sync.
    pub fn finish(mut self) -> Result<()> {
        self.write_index()?;
        self.file.sync_data().context("syncing the recording")?;
        Ok(())
    }
}

/// A new recording in `dir` named `name` (`STEM.schedtop`), or `STEM-2…`,
/// `STEM-3…` when that is taken by a file or a planted symlink: as the
/// screenshot and trace keys pick their names. Never opens through a
/// symlink or over a file (O_EXCL|O_NOFOLLOW).
pub fn open_unique(
    dir: &Path,
    name: &str,
    host: &HostInfo,
    opts: WriteOptions,
) -> Result<(std::path::PathBuf, Writer)> {
    let stem = name.strip_suffix(".schedtop").unwrap_or(name);
    for n in 1..=100u32 {
        let path = if n == 1 {
            dir.join(name)
        } else {
            dir.join(format!("{stem}-{n}.schedtop"))
        };
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        // (a name taken between the check and the open fails with a
        // message, as does a write error after the file was created)
        return Writer::open(&path, host, opts).map(|w| (path, w));
    }
    bail!("100 files named {stem}* exist already in {}", dir.display())
}

#[cfg(test)]
#[path = "writer_race_tests.rs"]
mod race_tests;
