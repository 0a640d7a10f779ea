//! Reading a recording: open (finds every frame through the index, or by
//! walking the file), then Samples by position or by time. Damaged frames
//! cost only themselves and the deltas that depend on them; everything else
//! reads. Nothing read from the file can make it panic or allocate without
//! bound.
use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use super::codec;
use super::format::{Kind, FORMAT_VERSION};
use super::header::FileHeader;
use super::index::Entry;
use super::scan::{self, read_frame, Damage};
use super::storage::Storage;
use crate::model::{HostInfo, Sample};

pub struct Reader<S: Storage = File> {
    st: S,
    /// Sample frames, in file order
    samples: Vec<Entry>,
    /// segment id → its header
    headers: HashMap<u32, (FileHeader, HostInfo)>,
    /// for Samples whose segment header is lost
    fallback: (FileHeader, HostInfo),
    damage: Vec<Damage>,
    /// the last decoded Sample, so stepping forward decodes one frame
    cache: Option<(usize, Sample)>,
    /// the last Sample that could not be read, so the deltas after it fail
    /// at once instead of decoding back to their key frame each
    failed: Option<Lost>,
    table: scan::Table,
}

/// A Sample that could not be read, and the one whose damage caused it
/// (itself, or the damaged Sample a chain of deltas leads back to).
/// Numbers are the Sample's number in its segment, as the writer gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    /// position in the reader's list
    pub index: usize,
    pub number: u32,
    pub offset: u64,
    pub root_number: u32,
    pub root_offset: u64,
    pub cause: String,
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sample {} at offset {}: ", self.number, self.offset)?;
        if self.root_offset != self.offset {
            write!(
                f,
                "a delta of Sample {} at offset {}, which is damaged: ",
                self.root_number, self.root_offset
            )?;
        }
        f.write_str(&self.cause)
    }
}

impl std::error::Error for Lost {}

impl Reader<File> {
    pub fn open(path: &Path) -> Result<Reader<File>> {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO for reading waits for a writer;
        // regular files ignore the flag
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .with_context(|| format!("{}", path.display()))?;
        if !f.metadata().map(|m| m.is_file()).unwrap_or(false) {
            bail!("{}: not a regular file", path.display());
        }
        Reader::from_storage(f).with_context(|| format!("{}", path.display()))
    }
}

impl<S: Storage> Reader<S> {
    pub fn from_storage(st: S) -> Result<Reader<S>> {
        if st.size() == 0 {
            bail!("empty file, not a schedtop recording");
        }
        let table = scan::table(&st);
        let mut damage = table.damage.clone();
        let mut headers = HashMap::new();
        let mut first: Option<(FileHeader, HostInfo)> = None;
        let mut samples = Vec::new();
        // segment → (tool, format) of segments newer than this reader
        let mut newer: HashMap<u32, (String, u32)> = HashMap::new();
        for e in &table.entries {
            match e.kind {
                Kind::Header => {
                    if headers.contains_key(&e.segment) || newer.contains_key(&e.segment) {
                        continue; // the second copy
                    }
                    let h = read_frame(&st, e.offset)
                        .ok()
                        .filter(|(h, _)| e.matches(h))
                        .and_then(|(_, p)| FileHeader::from_bytes(&p));
                    match h {
                        Some(h) => {
                            if h.format_version > FORMAT_VERSION {
                                newer.insert(e.segment, (h.tool.clone(), h.format_version));
                                continue;
                            }
                            let host = h.host();
                            first.get_or_insert_with(|| (h.clone(), host.clone()));
                            headers.insert(e.segment, (h, host));
                        }
                        None => damage.push(Damage {
                            offset: e.offset,
                            len: e.payload_len as u64,
                            what: "segment header unreadable".into(),
                        }),
                    }
                }
                Kind::Sample => samples.push(*e),
                Kind::Index => {}
            }
        }
        if !newer.is_empty() {
            // read the segments this version knows; name the others
            if headers.is_empty() {
                let (tool, v) = newer.values().next().cloned().unwrap_or_default();
                bail!(
                    "written by a newer schedtop ({tool}, format {v}); this one reads format {FORMAT_VERSION} and older"
                );
            }
            damage.extend(skip_newer(&table.entries, &newer));
            samples.retain(|e| !newer.contains_key(&e.segment));
        }
        let fallback = match first {
            Some(f) => f,
            None if samples.is_empty() => bail!("not a schedtop recording (no intact frame)"),
            None => {
                let h = FileHeader {
                    hostname: "?".into(),
                    kernel: "?".into(),
                    ..Default::default()
                };
                let host = h.host();
                (h, host)
            }
        };
        Ok(Reader {
            st,
            samples,
            headers,
            fallback,
            damage,
            cache: None,
            failed: None,
            table,
        })
    }

    /// Number of Samples the recording holds (some may turn out damaged).
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Host of the first segment (a recording appended to on another boot
    /// or with another interval has one header per segment: `host_of`).
    pub fn host(&self) -> &HostInfo {
        &self.fallback.1
    }

    /// Format version, tool version and the rest of the first header.
    pub fn header(&self) -> &FileHeader {
        &self.fallback.0
    }

    /// Host of the segment Sample `i` belongs to.
    pub fn host_of(&self, i: usize) -> &HostInfo {
        self.samples
            .get(i)
            .and_then(|e| self.headers.get(&e.segment))
            .map_or(&self.fallback.1, |h| &h.1)
    }

    /// Number of recording sessions (segments) in the file.
    pub fn segments(&self) -> usize {
        self.headers.len().max(1)
    }

    /// Wall-clock time of Sample `i` (from the index; nothing is decoded).
    pub fn time_of(&self, i: usize) -> Option<u64> {
        self.samples.get(i).map(|e| e.time_ns)
    }

    pub fn first_time(&self) -> Option<u64> {
        self.samples.iter().map(|e| e.time_ns).min()
    }

    pub fn last_time(&self) -> Option<u64> {
        self.samples.iter().map(|e| e.time_ns).max()
    }

    /// The last Sample at or before `time_ns` (the first one if it is
    /// earlier than all), None if there are none.
    pub fn index_at_time(&self, time_ns: u64) -> Option<usize> {
        if self.samples.is_empty() {
            return None;
        }
        let n = self.samples.partition_point(|e| e.time_ns <= time_ns);
        Some(n.saturating_sub(1))
    }

    /// The first Sample at or after `time_ns`, None if all are earlier.
    pub fn index_from_time(&self, time_ns: u64) -> Option<usize> {
        let n = self.samples.partition_point(|e| e.time_ns < time_ns);
        (n < self.samples.len()).then_some(n)
    }

    /// The Sample rates of `i` are computed against: the one before it in
    /// the same segment (a new segment restarts the counters).
    pub fn prev_of(&self, i: usize) -> Option<usize> {
        let cur = self.samples.get(i)?;
        let p = self.samples.get(i.checked_sub(1)?)?;
        (p.segment == cur.segment && p.seq < cur.seq).then_some(i - 1)
    }

    /// Damage found while opening (unusable byte ranges). Samples that turn
    /// out damaged when read are reported by `sample`'s error.
    pub fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// Let go of the decoded Sample kept for stepping (a directory of
    /// recordings keeps one decoded Sample, not one per open file).
    pub fn forget_decoded(&mut self) {
        self.cache = None;
    }

    /// Whether a decoded Sample is kept.
    pub(crate) fn holds_decoded(&self) -> bool {
        self.cache.is_some()
    }

    /// Byte offset of Sample `i`'s frame.
    pub fn offset_of(&self, i: usize) -> Option<u64> {
        self.samples.get(i).map(|e| e.offset)
    }

    /// Bytes `start..end` of Sample `i`'s frame.
    pub fn frame_range(&self, i: usize) -> Option<(u64, u64)> {
        self.samples.get(i).map(|e| {
            let end = e.offset + super::format::HEADER_LEN as u64 + e.payload_len as u64;
            (e.offset, end)
        })
    }

    /// Whether Sample `i` is a key frame (decodes without the ones before).
    pub fn is_key(&self, i: usize) -> bool {
        self.samples.get(i).is_some_and(|e| e.is_key())
    }

    /// Sample `i` (0-based, file order).
    pub fn sample(&mut self, i: usize) -> Result<Sample> {
        if i >= self.samples.len() {
            bail!("no Sample {i} (the recording has {})", self.samples.len());
        }
        if let Some((ci, s)) = &self.cache {
            if *ci == i {
                return Ok(s.clone());
            }
        }
        // back to the key frame this delta chain starts at, or to the
        // cached Sample if it is on the way
        let cached = self.cache.as_ref().map(|(ci, _)| *ci);
        let mut k = i;
        let mut from_cache = false;
        loop {
            if k != i && cached == Some(k) {
                from_cache = true;
                break;
            }
            if self.samples[k].is_key() {
                break;
            }
            let seq = self.samples[k].seq;
            match self
                .prev_of(k)
                .filter(|&p| self.samples[p].seq.checked_add(1) == Some(seq))
            {
                Some(p) => match &self.failed {
                    Some(f) if f.index == p => {
                        let f = f.clone();
                        return Err(self.lose(i, f.root_number, f.root_offset, f.cause));
                    }
                    _ => k = p,
                },
                None => {
                    let e = self.samples[k];
                    let cause = format!(
                        "the Sample it is a delta of (Sample {}) is missing",
                        seq.wrapping_sub(1)
                    );
                    return Err(self.lose(i, e.seq, e.offset, cause));
                }
            }
        }
        let (mut prev, start) = match (&self.cache, from_cache) {
            (Some((_, s)), true) => (Some(s.clone()), k + 1),
            _ => (None, k),
        };
        for j in start..=i {
            match self.decode_at(j, prev.as_ref()) {
                Ok(s) => prev = Some(s),
                Err(cause) => {
                    let e = self.samples[j];
                    return Err(self.lose(i, e.seq, e.offset, cause));
                }
            }
        }
        let s = prev.ok_or_else(|| anyhow!("no Sample decoded"))?;
        self.cache = Some((i, s.clone()));
        Ok(s)
    }

    /// Sample `i` is lost because of the Sample numbered `root_number`.
    fn lose(
        &mut self,
        i: usize,
        root_number: u32,
        root_offset: u64,
        cause: String,
    ) -> anyhow::Error {
        let e = self.samples[i];
        let l = Lost {
            index: i,
            number: e.seq,
            offset: e.offset,
            root_number,
            root_offset,
            cause,
        };
        self.failed = Some(l.clone());
        anyhow::Error::new(l)
    }

    /// Sample `j` on `prev`; the error says why, without saying which.
    fn decode_at(&self, j: usize, prev: Option<&Sample>) -> Result<Sample, String> {
        let e = &self.samples[j];
        let (h, payload) = read_frame(&self.st, e.offset).map_err(|err| err.to_string())?;
        if !e.matches(&h) {
            return Err("frame is not the one indexed".into());
        }
        let base = if e.is_key() { None } else { prev };
        codec::decode_compressed(&payload, base).map_err(|err| err.to_string())
    }

    /// For the writer appending: the last intact index frame and the frames
    /// no index lists yet.
    pub(crate) fn index_state(&self) -> (Option<u64>, &[Entry]) {
        let t = &self.table;
        (
            t.last_index,
            &t.entries[t.unindexed_from.min(t.entries.len())..],
        )
    }

    /// Segment ids in use (a new segment must pick another).
    pub(crate) fn segment_ids(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.table.entries.iter().map(|e| e.segment).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// One Damage per segment written by a newer format: its bytes, its
/// Sample count, who wrote it.
fn skip_newer(entries: &[Entry], newer: &HashMap<u32, (String, u32)>) -> Vec<Damage> {
    let mut segs: Vec<u32> = newer.keys().copied().collect();
    segs.sort_unstable();
    segs.iter()
        .filter_map(|seg| {
            let mine: Vec<&Entry> = entries.iter().filter(|e| e.segment == *seg).collect();
            let first = mine.first()?;
            let last = mine.last()?;
            let samples = mine.iter().filter(|e| e.kind == Kind::Sample).count();
            let (tool, v) = &newer[seg];
            Some(Damage {
                offset: first.offset,
                len: last.offset + super::format::HEADER_LEN as u64 + u64::from(last.payload_len)
                    - first.offset,
                what: format!(
                    "segment {seg:08x} ({samples} Samples) written by a newer schedtop ({tool}, format {v}); this one reads format {FORMAT_VERSION} and older"
                ),
            })
        })
        .collect()
}
