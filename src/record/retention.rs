//! What `record --dir` may delete, and in which order. A file is the
//! recorder's own only if its name is one the recorder gives
//! (`schedtop-HOST-YYYYMMDD-HHMMSS[-N].schedtop`) AND its header carries
//! this directory's mark (header::DirMark: the id kept in the directory's
//! lock file). Anything else in the directory (a user's `notes.schedtop`,
//! a `record -o` into it, files of an older version or copied from another
//! box) is left alone and named once. An own file whose writer's lock is
//! held (flock, as writer.rs takes it) is not deleted either.
//!
//! Order and age come from the recordings, not from mtime (which a clock
//! step moves): files go in the order the directory's sequence numbers
//! give, and a file's age is the recorded time since its last Sample. Gaps
//! between the Samples of one run count at most `GAP_CAP` intervals (a
//! running recorder takes a Sample every interval, so a longer gap is the
//! wall clock stepping); only the time between runs (the recorder was
//! stopped) is taken from the wall clock, never below zero.
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::dir::recording_files;
use super::header::DirMark;
use super::reader::Reader;

/// A gap inside one run counts at most this many intervals.
const GAP_CAP: u64 = 10;
/// Names listed in one message before "and N more".
const NAMES_SHOWN: usize = 8;

/// The directory's id from its lock file (held), written there first if
/// the file has none: "schedtop-dir 0123456789abcdef".
pub fn dir_id(lock: &mut File) -> Result<u64> {
    let mut text = String::new();
    lock.seek(SeekFrom::Start(0))?;
    // a lock file is a line; more is not ours to read
    let _ = lock.take(256).read_to_string(&mut text);
    if let Some(id) = text
        .trim()
        .strip_prefix("schedtop-dir ")
        .and_then(|h| u64::from_str_radix(h, 16).ok())
    {
        return Ok(id);
    }
    let id = random_u64();
    lock.set_len(0)?;
    lock.seek(SeekFrom::Start(0))?;
    lock.write_all(format!("schedtop-dir {id:016x}\n").as_bytes())?;
    lock.sync_all()?;
    Ok(id)
}

pub fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most b.len() bytes into b.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n == 8 {
        return u64::from_le_bytes(b);
    }
    super::writer::now_ns() ^ (u64::from(std::process::id()) << 32)
}

/// Whether `name` is one `record --dir` gives its files.
pub fn own_name(name: &str) -> bool {
    let Some(stem) = name
        .strip_prefix("schedtop-")
        .and_then(|n| n.strip_suffix(".schedtop"))
    else {
        return false;
    };
    // "-N" for a second file started in the same second
    let stem = match stem.rsplit_once('-') {
        Some((head, n)) if n.len() <= 3 && n.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => stem,
    };
    let b = stem.as_bytes();
    // HOST-YYYYMMDD-HHMMSS: a host of at least one character
    b.len() >= 17
        && b[b.len() - 16] == b'-'
        && b[b.len() - 7] == b'-'
        && b[b.len() - 15..b.len() - 7]
            .iter()
            .chain(&b[b.len() - 6..])
            .all(|c| c.is_ascii_digit())
}

/// What retention knows of one own file.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    pub path: PathBuf,
    pub bytes: u64,
    pub mark: DirMark,
    pub samples: usize,
    pub first_ns: u64,
    pub last_ns: u64,
    /// recorded time from the first Sample to the last, gaps capped
    pub span_ns: u64,
    /// the longest gap of one run counted whole (GAP_CAP intervals)
    pub gap_cap_ns: u64,
}

/// A file as read: the directory's own, or not.
#[derive(Clone, Debug)]
enum Kind {
    Own(Facts),
    Foreign,
}

fn read_facts(path: &Path, bytes: u64, id: u64) -> Kind {
    let Ok(r) = Reader::open(path) else {
        return Kind::Foreign;
    };
    let h = r.header();
    let mark = match h.dir {
        // one segment: a file someone appended to is not only ours
        Some(m) if m.id == id && r.segments() == 1 => m,
        _ => return Kind::Foreign,
    };
    let gap_cap_ns = h.interval_ns.max(1).saturating_mul(GAP_CAP);
    let times: Vec<u64> = (0..r.len()).filter_map(|i| r.time_of(i)).collect();
    let span_ns = times
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]).min(gap_cap_ns))
        .sum();
    Kind::Own(Facts {
        path: path.to_path_buf(),
        bytes,
        mark,
        samples: times.len(),
        first_ns: times.first().copied().unwrap_or(0),
        last_ns: times.last().copied().unwrap_or(0),
        span_ns,
        gap_cap_ns,
    })
}

/// Each file's age: the recorded time from its last Sample to `now_ns`
/// (the newest Sample, of run `run`). `files` in sequence order; files
/// without Samples have age 0 and do not break the chain.
pub fn ages(files: &[Facts], now_ns: u64, run: u64) -> Vec<u64> {
    let link = |last_ns: u64, last_run: u64, cap: u64, first_ns: u64, first_run: u64| {
        let gap = first_ns.saturating_sub(last_ns);
        if last_run == first_run {
            gap.min(cap)
        } else {
            gap
        }
    };
    let mut out = vec![0; files.len()];
    // walking back from now: (age at the start of the next file with
    // Samples, its first time and run)
    let mut next: (u64, u64, u64) = (0, now_ns, run);
    for (i, f) in files.iter().enumerate().rev() {
        if f.samples == 0 {
            continue;
        }
        let age = next.0 + link(f.last_ns, f.mark.run, f.gap_cap_ns, next.1, next.2);
        out[i] = age;
        next = (age + f.span_ns, f.first_ns, f.mark.run);
    }
    out
}

/// Limits on the own files.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub retain_ns: Option<u64>,
    pub retain_bytes: Option<u64>,
}

/// One pass of retention.
#[derive(Debug, Default)]
pub struct Pruned {
    /// files deleted, with why
    pub removed: Vec<(PathBuf, &'static str)>,
    pub freed: u64,
    /// lines for stderr about files left alone (each file named once a run)
    pub notes: Vec<String>,
}

/// A file as last read: (device, inode, size, mtime in ns).
type FileKey = (u64, u64, u64, i64);

pub struct Retention {
    dir: PathBuf,
    id: u64,
    run: u64,
    /// by path: (device, inode, size, mtime) when read, and what it was
    cache: HashMap<PathBuf, (FileKey, Kind)>,
    told: HashSet<PathBuf>,
}

/// Whether a writer holds `path`'s lock: Some(its pid if the kernel says).
fn held_by(path: &Path) -> Option<Option<u32>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    // SAFETY: flock on a descriptor we own (released when f closes).
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    (rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK))
        .then(|| super::lockinfo::holder(&f))
}

enum Removal {
    Removed,
    Held(Option<u32>),
    Gone,
}

/// Delete `path` unless a writer holds its lock: the lock is taken first
/// (so no `--append` starts on it meanwhile) and the file unlinked only if
/// the path still names the file locked.
fn remove_unless_held(path: &Path) -> Result<Removal> {
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Removal::Gone),
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Ok(Removal::Held(super::lockinfo::holder(&f)));
    }
    let (mine, there) = (f.metadata()?, std::fs::symlink_metadata(path));
    match there {
        Ok(m) if (m.dev(), m.ino()) == (mine.dev(), mine.ino()) => {}
        _ => return Ok(Removal::Gone),
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(Removal::Removed),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Removal::Gone),
        Err(e) => Err(e).with_context(|| format!("removing {}", path.display())),
    }
}

fn names(paths: &[PathBuf]) -> String {
    let mut s: Vec<String> = paths
        .iter()
        .take(NAMES_SHOWN)
        .map(|p| {
            p.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        })
        .collect();
    if paths.len() > NAMES_SHOWN {
        s.push(format!("and {} more", paths.len() - NAMES_SHOWN));
    }
    s.join(", ")
}

impl Retention {
    pub fn new(dir: &Path, id: u64, run: u64) -> Retention {
        Retention {
            dir: dir.to_path_buf(),
            id,
            run,
            cache: HashMap::new(),
            told: HashSet::new(),
        }
    }

    pub fn run_id(&self) -> u64 {
        self.run
    }

    /// The own files in sequence order, and the others (newly seen ones
    /// reported once through `notes`).
    fn scan(&mut self, notes: &mut Vec<String>) -> Result<Vec<Facts>> {
        let mut own = Vec::new();
        let mut foreign = Vec::new();
        let mut seen = HashSet::new();
        for p in recording_files(&self.dir)? {
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            seen.insert(p.clone());
            let name_ok = p.file_name().and_then(|n| n.to_str()).is_some_and(own_name);
            let key = (
                m.dev(),
                m.ino(),
                m.len(),
                m.mtime_nsec() + m.mtime() * 1_000_000_000,
            );
            let kind = match self.cache.get(&p) {
                Some((k, kind)) if *k == key => kind.clone(),
                _ => {
                    let kind = if name_ok {
                        read_facts(&p, m.len(), self.id)
                    } else {
                        Kind::Foreign
                    };
                    self.cache.insert(p.clone(), (key, kind.clone()));
                    kind
                }
            };
            match kind {
                Kind::Own(f) => own.push(f),
                Kind::Foreign => {
                    if self.told.insert(p.clone()) {
                        foreign.push(p);
                    }
                }
            }
        }
        self.cache.retain(|p, _| seen.contains(p));
        if !foreign.is_empty() {
            foreign.sort();
            notes.push(format!(
                "{}: {} file(s) not written by this directory's recorder, left alone and not counted in --retain-size: {}",
                self.dir.display(),
                foreign.len(),
                names(&foreign)
            ));
        }
        own.sort_by(|a, b| a.mark.seq.cmp(&b.mark.seq).then(a.path.cmp(&b.path)));
        Ok(own)
    }

    /// The sequence number for the next file: one past the highest of the
    /// own files.
    pub fn next_seq(&mut self) -> Result<(u64, Vec<String>)> {
        let mut notes = Vec::new();
        let own = self.scan(&mut notes)?;
        Ok((own.last().map_or(0, |f| f.mark.seq + 1), notes))
    }

    /// Delete own files, oldest first, never those in `keep` (the file
    /// being written and the newest one written): those without
    /// Samples, those older than `retain_ns`, while the own files total
    /// over `retain_bytes`, and until `need` bytes are freed (the
    /// free-space floor). `now_ns` is the newest Sample's time.
    pub fn prune(
        &mut self,
        keep: &[&Path],
        now_ns: u64,
        limits: Limits,
        need: u64,
    ) -> Result<Pruned> {
        let mut out = Pruned::default();
        let own = self.scan(&mut out.notes)?;
        let ages = ages(&own, now_ns, self.run);
        // a held file is not the recorder's to free: not counted in
        // --retain-size either, so it does not push out the others
        let holders: Vec<Option<Option<u32>>> = own
            .iter()
            .map(|f| {
                if keep.contains(&f.path.as_path()) {
                    None
                } else {
                    held_by(&f.path)
                }
            })
            .collect();
        let mut total: u64 = own
            .iter()
            .zip(&holders)
            .filter(|(_, h)| h.is_none())
            .map(|(f, _)| f.bytes)
            .sum();
        let mut held = Vec::new();
        let mut note_held = |path: &Path, pid: Option<u32>, told: &mut HashSet<PathBuf>| {
            if told.insert(path.to_path_buf()) {
                let who = pid.map_or_else(String::new, |p| format!(" by pid {p}"));
                held.push(format!(
                    "{} is held{who}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        };
        for ((f, age), holder) in own.iter().zip(ages).zip(holders) {
            if keep.contains(&f.path.as_path()) {
                continue;
            }
            if let Some(pid) = holder {
                note_held(&f.path, pid, &mut self.told);
                continue;
            }
            let why = if f.samples == 0 {
                "no Samples"
            } else if limits.retain_ns.is_some_and(|r| age > r) {
                "older than --retain"
            } else if limits.retain_bytes.is_some_and(|b| total > b) {
                "beyond --retain-size"
            } else if out.freed < need {
                "free-space floor"
            } else {
                continue;
            };
            match remove_unless_held(&f.path)? {
                Removal::Removed => {
                    out.freed += f.bytes;
                    out.removed.push((f.path.clone(), why));
                }
                // (taken since it was looked at)
                Removal::Held(pid) => note_held(&f.path, pid, &mut self.told),
                Removal::Gone => {}
            }
            total -= f.bytes;
        }
        if !held.is_empty() {
            out.notes.push(format!(
                "{}: {} file(s) being written by another process, left alone: {}",
                self.dir.display(),
                held.len(),
                held.join(", ")
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "retention_tests.rs"]
mod tests;
