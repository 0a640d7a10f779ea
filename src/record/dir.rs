//! A directory of recordings (what `record --dir` writes) read as one
//! timeline: a `Source` and `Seekable` over every file's Samples in time
//! order, so `replay`, `dump` and `snapshot --from` move across file
//! boundaries as within one file. Files are listed once and opened only
//! while read, a few at a time (dir_files.rs), so any number of them reads
//! under a small descriptor limit. A file that cannot be read (damaged,
//! not a recording) is left out and named; it costs only itself, and the
//! commands exit non-zero for it once they have read the rest.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::dir_files::{Listed, Listing, OpenFiles};
use super::reader::Reader;
use super::source::RecordingSource;
use crate::collect::{Seekable, Source};
use crate::model::{HostInfo, Sample};

/// The extension `record --dir` gives its files.
pub const EXT: &str = "schedtop";

struct Part {
    file: Listed,
    /// global index of this file's first Sample
    start: usize,
}

pub struct DirSource {
    parts: Vec<Part>,
    open: OpenFiles,
    len: usize,
    host: HostInfo,
    next: usize,
    /// damage skipped in readable files and files with no Samples, one
    /// line each
    notes: Vec<String>,
    /// files that could not be read at all, one line each naming the file
    unreadable: Vec<String>,
}

/// The recording files in `dir` (regular files named `*.schedtop`; no
/// symlinks), in no particular order.
pub fn recording_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let e = e.with_context(|| format!("reading {}", dir.display()))?;
        let p = e.path();
        let is_file = e.file_type().is_ok_and(|t| t.is_file());
        if is_file && p.extension().is_some_and(|x| x == EXT) {
            out.push(p);
        }
    }
    Ok(out)
}

/// Whether two hosts are the same machine and source, so counters carry
/// on from one file to the next.
fn continues(a: &HostInfo, b: &HostInfo) -> bool {
    a.hostname == b.hostname && a.source == b.source && a.topology == b.topology
}

impl DirSource {
    pub fn open(dir: &Path) -> Result<DirSource> {
        let mut notes = Vec::new();
        let mut unreadable = Vec::new();
        let mut listed = Vec::new();
        // one file open at a time
        for path in recording_files(dir)? {
            match Listed::scan(&path) {
                Listing::Listed(f, damage) => {
                    notes.extend(damage);
                    listed.push(f);
                }
                Listing::Empty(line) => notes.push(line),
                Listing::Unreadable(line) => unreadable.push(line),
            }
        }
        // time order (names sort by time too, but a clock step or a
        // renamed file should not reorder the timeline)
        listed.sort_by(|a, b| {
            (a.first_time())
                .cmp(&b.first_time())
                .then_with(|| a.path.cmp(&b.path))
        });
        let mut parts = Vec::with_capacity(listed.len());
        let mut len = 0;
        for file in listed {
            let n = file.len();
            parts.push(Part { file, start: len });
            len += n;
        }
        let Some(first) = parts.first() else {
            bail!(
                "{}: no readable recordings (*.{EXT}) in the directory{}",
                dir.display(),
                unreadable
                    .iter()
                    .chain(&notes)
                    .next()
                    .map(|p| format!("; {p}"))
                    .unwrap_or_default()
            );
        };
        let host = first.file.host_of(0).clone();
        Ok(DirSource {
            parts,
            open: OpenFiles::default(),
            len,
            host,
            next: 0,
            notes,
            unreadable,
        })
    }

    /// Damage skipped and files with no Samples, one line each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Files that could not be read, one line each.
    pub fn unreadable(&self) -> &[String] {
        &self.unreadable
    }

    /// Files open now (at most `dir_files::MAX_OPEN`), and decoded
    /// Samples they keep (at most one).
    pub fn open_files(&self) -> (usize, usize) {
        (self.open.count(), self.open.decoded())
    }

    /// (file, Sample within it) of global Sample `i`.
    fn locate(&self, i: usize) -> Option<(usize, usize)> {
        if i >= self.len {
            return None;
        }
        let k = self.parts.partition_point(|p| p.start <= i) - 1;
        Some((k, i - self.parts[k].start))
    }

    /// `next_sample` continues from Sample `i`.
    pub fn set_position(&mut self, i: usize) {
        self.next = i;
    }
}

impl Source for DirSource {
    fn host(&self) -> &HostInfo {
        &self.host
    }

    fn next_sample(&mut self) -> Result<Sample> {
        let i = self.next;
        if i >= self.len {
            bail!("end of the recordings ({} Samples)", self.len);
        }
        self.next += 1;
        self.host = self.host_of(i);
        Seekable::sample(self, i)
    }

    fn set_interval(&mut self, interval_ns: u64) {
        self.host.interval_ns = interval_ns;
    }
}

impl Seekable for DirSource {
    fn len(&self) -> usize {
        self.len
    }

    fn damaged(&self) -> bool {
        !self.notes.is_empty() || !self.unreadable.is_empty()
    }

    fn sample(&mut self, i: usize) -> Result<Sample> {
        let (k, j) = self
            .locate(i)
            .ok_or_else(|| anyhow::anyhow!("no Sample {i} ({} held)", self.len))?;
        let file = &self.parts[k].file;
        let path = file.path.display();
        let r = self.open.get(k, file).with_context(|| format!("{path}"))?;
        r.sample(j).with_context(|| format!("{path}"))
    }

    fn host_of(&self, i: usize) -> HostInfo {
        match self.locate(i) {
            Some((k, j)) => self.parts[k].file.host_of(j).clone(),
            None => self.host.clone(),
        }
    }

    fn time_of(&self, i: usize) -> Option<u64> {
        let (k, j) = self.locate(i)?;
        self.parts[k].file.time_of(j)
    }

    /// Within a file, the recording's own rule; the first Sample of a file
    /// follows the last of the previous file when that file was written by
    /// the same recorder run just before (same machine and source, no gap
    /// longer than three intervals): rotation does not cost a rate.
    fn prev_of(&self, i: usize) -> Option<usize> {
        let (k, j) = self.locate(i)?;
        if j > 0 {
            return self.parts[k]
                .file
                .prev_of(j)
                .map(|p| self.parts[k].start + p);
        }
        let before = self.parts.get(k.checked_sub(1)?)?;
        let last = before.file.len().checked_sub(1)?;
        let (h0, h1) = (before.file.host_of(last), self.parts[k].file.host_of(0));
        let (t0, t1) = (before.file.time_of(last)?, self.parts[k].file.time_of(0)?);
        let gap_ok = t1 > t0 && t1 - t0 <= h1.interval_ns.saturating_mul(3);
        (continues(h0, h1) && gap_ok).then_some(before.start + last)
    }

    fn index_at_time(&self, time_ns: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        // the last file starting at or before the time, then within it
        let k = self
            .parts
            .partition_point(|p| p.file.time_of(0).is_some_and(|t| t <= time_ns));
        let k = k.saturating_sub(1);
        let p = &self.parts[k];
        p.file.index_at_time(time_ns).map(|j| p.start + j)
    }

    fn index_from_time(&self, time_ns: u64) -> Option<usize> {
        // the first file whose last Sample is at or after the time
        let k = self.parts.partition_point(|p| {
            p.file
                .len()
                .checked_sub(1)
                .and_then(|l| p.file.time_of(l))
                .is_some_and(|t| t < time_ns)
        });
        let p = self.parts.get(k)?;
        p.file.index_from_time(time_ns).map(|j| p.start + j)
    }
}

/// A recording or a directory of them, opened as one timeline.
pub struct Timeline {
    pub source: Box<dyn Seekable + Send>,
    /// damage skipped in readable files, files with no Samples: one line
    /// each, said on stderr; they do not change the exit status
    pub notes: Vec<String>,
    /// files of a directory that could not be read at all, one line each
    /// naming the file: the command reads the rest, then fails
    pub unreadable: Vec<String>,
}

impl Timeline {
    /// Say every note and every file left out on stderr.
    pub fn say_problems(&self) {
        for p in self.notes.iter().chain(&self.unreadable) {
            crate::say!("schedtop: {p}");
        }
    }
}

/// An error naming the files of a directory that could not be read (each
/// said on stderr already), if any: the exit status once everything
/// readable was read.
pub fn check_unreadable(path: &Path, unreadable: &[String]) -> Result<()> {
    match unreadable.len() {
        0 => Ok(()),
        1 => bail!(
            "{}: 1 recording could not be read (named above)",
            path.display()
        ),
        n => bail!(
            "{}: {n} recordings could not be read (named above)",
            path.display()
        ),
    }
}

/// A recording file or a directory of them, as one seekable timeline,
/// with what was skipped while opening it.
pub fn open_timeline(path: &Path) -> Result<Timeline> {
    if path.is_dir() {
        let d = DirSource::open(path)?;
        let notes = d.notes().to_vec();
        let unreadable = d.unreadable().to_vec();
        return Ok(Timeline {
            source: Box::new(d),
            notes,
            unreadable,
        });
    }
    let r = Reader::open(path)?;
    let notes = r
        .damage()
        .iter()
        .map(|d| format!("{}: skipped {d}", path.display()))
        .collect();
    Ok(Timeline {
        source: Box::new(RecordingSource::new(r)),
        notes,
        unreadable: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
    use crate::record::{WriteOptions, Writer};

    fn write(path: &Path, o: &SynthOptions, samples: &[Sample]) {
        let mut w = Writer::open(path, &synthetic_host(o), WriteOptions::default()).unwrap();
        for s in samples {
            w.write_sample(s).unwrap();
        }
        w.finish().unwrap();
    }

    #[test]
    fn three_files_are_one_timeline_and_a_bad_one_costs_itself() {
        let dir = tempfile::tempdir().unwrap();
        let o = SynthOptions {
            threads: 3,
            samples: 12,
            ..Default::default()
        };
        let all = synthetic_samples(&o);
        // written out of name order on purpose: time decides
        write(&dir.path().join("c.schedtop"), &o, &all[0..4]);
        write(&dir.path().join("a.schedtop"), &o, &all[4..8]);
        write(&dir.path().join("b.schedtop"), &o, &all[8..12]);
        std::fs::write(dir.path().join("d.schedtop"), b"not a recording").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"ignored").unwrap();
        let mut src = DirSource::open(dir.path()).unwrap();
        assert_eq!(src.len(), 12);
        assert_eq!(src.unreadable().len(), 1, "{:?}", src.unreadable());
        assert!(src.unreadable()[0].contains("d.schedtop"));
        assert!(src.notes().is_empty(), "{:?}", src.notes());
        for (i, s) in all.iter().enumerate() {
            assert_eq!(&Seekable::sample(&mut src, i).unwrap(), s);
            assert_eq!(src.time_of(i), Some(s.time_ns));
        }
        // rates carry across the file boundaries
        assert_eq!(src.prev_of(4), Some(3));
        assert_eq!(src.prev_of(8), Some(7));
        assert_eq!(src.prev_of(0), None);
        // seeks across files
        assert_eq!(src.index_at_time(all[5].time_ns + 1), Some(5));
        assert_eq!(src.index_from_time(all[7].time_ns + 1), Some(8));
        assert_eq!(src.index_from_time(all[11].time_ns + 1), None);
        assert_eq!(src.index_at_time(0), Some(0));
        src.set_position(7);
        assert_eq!(src.next_sample().unwrap(), all[7]);
        assert_eq!(src.next_sample().unwrap(), all[8]);
    }

    #[test]
    fn a_gap_or_another_machine_restarts_rates() {
        let dir = tempfile::tempdir().unwrap();
        let o = SynthOptions {
            threads: 2,
            samples: 4,
            ..Default::default()
        };
        let all = synthetic_samples(&o);
        write(&dir.path().join("a.schedtop"), &o, &all[0..2]);
        let mut later = all[2..4].to_vec();
        for s in &mut later {
            s.time_ns += 3600 * 1_000_000_000;
        }
        write(&dir.path().join("b.schedtop"), &o, &later);
        let src = DirSource::open(dir.path()).unwrap();
        assert_eq!(src.prev_of(2), None, "an hour apart");
        let empty = tempfile::tempdir().unwrap();
        let e = DirSource::open(empty.path()).err().unwrap().to_string();
        assert!(e.contains("no readable recordings"), "{e}");
    }

    #[test]
    fn many_files_read_with_few_open_and_one_decoded() {
        let dir = tempfile::tempdir().unwrap();
        let o = SynthOptions {
            threads: 2,
            samples: 60,
            ..Default::default()
        };
        let all = synthetic_samples(&o);
        let names: Vec<PathBuf> = (0..30)
            .map(|k| dir.path().join(format!("{k:03}.schedtop")))
            .collect();
        for (k, p) in names.iter().enumerate() {
            write(p, &o, &all[2 * k..2 * k + 2]);
        }
        let mut src = DirSource::open(dir.path()).unwrap();
        assert_eq!(src.len(), 60);
        assert_eq!(src.open_files(), (0, 0), "listing closes every file");
        // back and forth across every file: jumps, steps back, the ends
        let order = (0..60).rev().chain((0..60).step_by(7)).chain([59, 0, 31]);
        let mut most_open = 0;
        for i in order {
            assert_eq!(Seekable::sample(&mut src, i).unwrap(), all[i], "{i}");
            let (open, decoded) = src.open_files();
            assert!(open <= super::super::dir_files::MAX_OPEN && decoded == 1);
            most_open = most_open.max(open);
            assert_eq!(src.prev_of(i), i.checked_sub(1), "{i}");
        }
        assert_eq!(
            most_open,
            super::super::dir_files::MAX_OPEN,
            "the cache is used"
        );
        // a file gone since the listing: named, the rest still reads
        std::fs::remove_file(&names[3]).unwrap();
        // a file replaced by another with the same name: refused
        std::fs::remove_file(&names[20]).unwrap();
        write(&names[20], &o, &all[40..41]);
        for i in [6, 7, 40, 41] {
            let e = format!("{:#}", Seekable::sample(&mut src, i).unwrap_err());
            let name = if i < 10 { "003" } else { "020" };
            assert!(e.contains(&format!("{name}.schedtop")), "{e}");
        }
        let e = format!("{:#}", Seekable::sample(&mut src, 41).unwrap_err());
        assert!(e.contains("since the directory was listed"), "{e}");
        for i in [5, 8, 39, 42] {
            assert_eq!(Seekable::sample(&mut src, i).unwrap(), all[i], "{i}");
        }
    }
}
