//! The files of a directory of recordings, listed once and opened only
//! when read. A listing learns from each file's index what placing,
//! pairing and seeking need (every Sample's time, which Samples follow
//! each other in a segment, each segment's host) without decoding a
//! Sample, and closes the file again: a week of `record --dir --rotate
//! 10m` is ~1,000 files, past a default limit of 1,024 descriptors. When
//! Samples are read, a few files stay open (least recently used first
//! out), and only the file being read keeps a decoded Sample.
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::reader::Reader;
use crate::model::HostInfo;

/// Files kept open at once while reading a directory.
pub const MAX_OPEN: usize = 8;

/// What the listing learnt of one recording.
pub struct Listed {
    pub path: PathBuf,
    /// the Samples' times, in file order (from the index)
    times: Vec<u64>,
    /// whether Sample j's rates come from Sample j-1 (same segment)
    chained: Vec<bool>,
    /// (first Sample, host) of each run of Samples under one header
    hosts: Vec<(usize, HostInfo)>,
    /// the file listed (device, inode): a file replaced since is refused
    id: (u64, u64),
}

/// A listed file, or why it is left out.
pub enum Listing {
    Listed(Listed, Vec<String>),
    /// header only (a file just started, or cut short), or 0 bytes: no
    /// data in it to lose
    Empty(String),
    Unreadable(String),
}

impl Listed {
    /// Open `path`, learn what the index holds, close it.
    pub fn scan(path: &Path) -> Listing {
        let r = match Reader::open(path) {
            Ok(r) => r,
            Err(e) => {
                let empty = std::fs::metadata(path).is_ok_and(|m| m.len() == 0);
                let line = format!("{}: left out: {e:#}", path.display());
                return if empty {
                    Listing::Empty(line)
                } else {
                    Listing::Unreadable(line)
                };
            }
        };
        if r.is_empty() {
            return Listing::Empty(format!(
                "{}: left out: no Samples (a file just started, or cut short)",
                path.display()
            ));
        }
        let damage = r
            .damage()
            .iter()
            .map(|d| format!("{}: skipped {d}", path.display()))
            .collect();
        let n = r.len();
        let times = (0..n).map(|j| r.time_of(j).unwrap_or(0)).collect();
        let chained = (0..n)
            .map(|j| j > 0 && r.prev_of(j) == Some(j - 1))
            .collect();
        let mut hosts: Vec<(usize, HostInfo)> = Vec::new();
        let mut last: Option<*const HostInfo> = None;
        for j in 0..n {
            let h = r.host_of(j);
            if last != Some(h as *const HostInfo) {
                last = Some(h as *const HostInfo);
                hosts.push((j, h.clone()));
            }
        }
        let id = file_id(path).unwrap_or_default();
        Listing::Listed(
            Listed {
                path: path.to_path_buf(),
                times,
                chained,
                hosts,
                id,
            },
            damage,
        )
    }

    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    pub fn time_of(&self, j: usize) -> Option<u64> {
        self.times.get(j).copied()
    }

    pub fn first_time(&self) -> u64 {
        self.times.iter().copied().min().unwrap_or(0)
    }

    pub fn host_of(&self, j: usize) -> &HostInfo {
        let k = self.hosts.partition_point(|(first, _)| *first <= j);
        &self.hosts[k.saturating_sub(1)].1
    }

    /// As `Reader::prev_of`.
    pub fn prev_of(&self, j: usize) -> Option<usize> {
        self.chained.get(j).copied().unwrap_or(false).then(|| j - 1)
    }

    /// As `Reader::index_at_time`.
    pub fn index_at_time(&self, time_ns: u64) -> Option<usize> {
        if self.times.is_empty() {
            return None;
        }
        Some(
            self.times
                .partition_point(|&t| t <= time_ns)
                .saturating_sub(1),
        )
    }

    /// As `Reader::index_from_time`.
    pub fn index_from_time(&self, time_ns: u64) -> Option<usize> {
        let n = self.times.partition_point(|&t| t < time_ns);
        (n < self.times.len()).then_some(n)
    }

    /// Open the file again for reading, refusing one that is not what was
    /// listed (replaced, or shorter: Sample j must still be Sample j).
    /// Files only grow at the end while a recorder writes them.
    fn reopen(&self) -> Result<Reader> {
        let r = Reader::open(&self.path)?;
        if file_id(&self.path).unwrap_or_default() != self.id {
            bail!("replaced since the directory was listed");
        }
        let n = self.len();
        let same = r.len() >= n
            && r.time_of(0) == self.time_of(0)
            && r.time_of(n - 1) == self.time_of(n - 1);
        if !same {
            bail!(
                "changed since the directory was listed ({n} Samples then, {} now)",
                r.len()
            );
        }
        Ok(r)
    }
}

fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The few files open at once, most recently read last.
#[derive(Default)]
pub struct OpenFiles {
    open: Vec<(usize, Reader)>,
    /// files that would not open again, and why (tried once each)
    failed: Vec<(usize, String)>,
}

impl OpenFiles {
    /// The reader of listed file `k`, opened if it is not, the least
    /// recently read one closed to make room. The others let go of their
    /// decoded Sample.
    pub fn get(&mut self, k: usize, file: &Listed) -> Result<&mut Reader> {
        if let Some((_, why)) = self.failed.iter().find(|(f, _)| *f == k) {
            bail!("{why}");
        }
        let at = match self.open.iter().position(|(f, _)| *f == k) {
            Some(at) => at,
            None => {
                let r = match file.reopen() {
                    Ok(r) => r,
                    Err(e) => {
                        let why = format!("{e:#}");
                        self.failed.push((k, why.clone()));
                        bail!("{why}");
                    }
                };
                if self.open.len() >= MAX_OPEN {
                    self.open.remove(0);
                }
                self.open.push((k, r));
                self.open.len() - 1
            }
        };
        let entry = self.open.remove(at);
        for (_, r) in &mut self.open {
            r.forget_decoded();
        }
        self.open.push(entry);
        match self.open.last_mut() {
            Some((_, r)) => Ok(r),
            None => bail!("no reader open"),
        }
    }

    /// Files open now.
    pub fn count(&self) -> usize {
        self.open.len()
    }

    /// Decoded Samples kept by the open files.
    pub fn decoded(&self) -> usize {
        self.open.iter().filter(|(_, r)| r.holds_decoded()).count()
    }
}
