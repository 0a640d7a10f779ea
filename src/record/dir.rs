//! A directory of recordings (what `record --dir` writes) read as one
//! timeline: a `Source` and `Seekable` over every file's Samples in time
//! order, so `replay`, `dump` and `snapshot --from` move across file
//! boundaries as within one file. A file that cannot be opened (damaged,
//! half-written, not a recording) is left out and reported; it costs
//! only itself.
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::reader::Reader;
use super::source::RecordingSource;
use crate::collect::{Seekable, Source};
use crate::model::{HostInfo, Sample};

/// The extension `record --dir` gives its files.
pub const EXT: &str = "schedtop";

struct Part {
    path: PathBuf,
    src: RecordingSource,
    /// global index of this file's first Sample
    start: usize,
}

pub struct DirSource {
    parts: Vec<Part>,
    len: usize,
    host: HostInfo,
    next: usize,
    /// files left out and damage found in the others, one line each
    problems: Vec<String>,
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
        let mut problems = Vec::new();
        let mut opened = Vec::new();
        for path in recording_files(dir)? {
            match Reader::open(&path) {
                Ok(r) if r.is_empty() => problems.push(format!(
                    "{}: left out: no Samples (a file just started, or cut short)",
                    path.display()
                )),
                Ok(r) => {
                    for d in r.damage() {
                        problems.push(format!("{}: skipped {d}", path.display()));
                    }
                    opened.push((r.first_time().unwrap_or(0), path, r));
                }
                Err(e) => problems.push(format!("{}: left out: {e:#}", path.display())),
            }
        }
        // time order (names sort by time too, but a clock step or a
        // renamed file should not reorder the timeline)
        opened.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        let mut parts = Vec::with_capacity(opened.len());
        let mut len = 0;
        for (_, path, r) in opened {
            let n = r.len();
            parts.push(Part {
                path,
                src: RecordingSource::new(r),
                start: len,
            });
            len += n;
        }
        let Some(first) = parts.first() else {
            bail!(
                "{}: no readable recordings (*.{EXT}) in the directory{}",
                dir.display(),
                problems
                    .first()
                    .map(|p| format!("; {p}"))
                    .unwrap_or_default()
            );
        };
        let host = first.src.host_of(0);
        Ok(DirSource {
            parts,
            len,
            host,
            next: 0,
            problems,
        })
    }

    /// Files left out and damage skipped, one line each.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    pub fn files(&self) -> Vec<&Path> {
        self.parts.iter().map(|p| p.path.as_path()).collect()
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

    pub fn first_time(&self) -> Option<u64> {
        (0..self.len).filter_map(|i| self.time_of(i)).min()
    }

    pub fn last_time(&self) -> Option<u64> {
        (0..self.len).filter_map(|i| self.time_of(i)).max()
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
        !self.problems.is_empty()
    }

    fn sample(&mut self, i: usize) -> Result<Sample> {
        let (k, j) = self
            .locate(i)
            .ok_or_else(|| anyhow::anyhow!("no Sample {i} ({} held)", self.len))?;
        let p = &mut self.parts[k];
        Seekable::sample(&mut p.src, j).with_context(|| format!("{}", p.path.display()))
    }

    fn host_of(&self, i: usize) -> HostInfo {
        match self.locate(i) {
            Some((k, j)) => self.parts[k].src.host_of(j),
            None => self.host.clone(),
        }
    }

    fn time_of(&self, i: usize) -> Option<u64> {
        let (k, j) = self.locate(i)?;
        self.parts[k].src.time_of(j)
    }

    /// Within a file, the recording's own rule; the first Sample of a file
    /// follows the last of the previous file when that file was written by
    /// the same recorder run just before (same machine and source, no gap
    /// longer than three intervals): rotation does not cost a rate.
    fn prev_of(&self, i: usize) -> Option<usize> {
        let (k, j) = self.locate(i)?;
        if j > 0 {
            return self.parts[k]
                .src
                .prev_of(j)
                .map(|p| self.parts[k].start + p);
        }
        let before = self.parts.get(k.checked_sub(1)?)?;
        let last = before.src.len().checked_sub(1)?;
        let (h0, h1) = (before.src.host_of(last), self.parts[k].src.host_of(0));
        let (t0, t1) = (before.src.time_of(last)?, self.parts[k].src.time_of(0)?);
        let gap_ok = t1 > t0 && t1 - t0 <= h1.interval_ns.saturating_mul(3);
        (continues(&h0, &h1) && gap_ok).then_some(before.start + last)
    }

    fn index_at_time(&self, time_ns: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        // the last file starting at or before the time, then within it
        let k = self
            .parts
            .partition_point(|p| p.src.time_of(0).is_some_and(|t| t <= time_ns));
        let k = k.saturating_sub(1);
        let p = &self.parts[k];
        p.src.index_at_time(time_ns).map(|j| p.start + j)
    }

    fn index_from_time(&self, time_ns: u64) -> Option<usize> {
        // the first file whose last Sample is at or after the time
        let k = self.parts.partition_point(|p| {
            p.src
                .len()
                .checked_sub(1)
                .and_then(|l| p.src.time_of(l))
                .is_some_and(|t| t < time_ns)
        });
        let p = self.parts.get(k)?;
        p.src.index_from_time(time_ns).map(|j| p.start + j)
    }
}

/// A recording file or a directory of them, as one seekable timeline,
/// with what was skipped while opening it (one line each).
pub fn open_timeline(path: &Path) -> Result<(Box<dyn Seekable + Send>, Vec<String>)> {
    if path.is_dir() {
        let d = DirSource::open(path)?;
        let problems = d.problems().to_vec();
        return Ok((Box::new(d), problems));
    }
    let r = Reader::open(path)?;
    let problems = r
        .damage()
        .iter()
        .map(|d| format!("{}: skipped {d}", path.display()))
        .collect();
    Ok((Box::new(RecordingSource::new(r)), problems))
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
        assert_eq!(src.problems().len(), 1, "{:?}", src.problems());
        assert!(src.problems()[0].contains("d.schedtop"));
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
}
