//! Where Samples come from. Every mode (live view, batch, record,
//! snapshot, replay) reads one of these; none of them can tell a BPF
//! source from procfs, a recording or fixtures except by `HostInfo::source`.
use anyhow::Result;

use crate::model::{HostInfo, Sample};

/// A source of cumulative Samples, taken when the caller asks.
pub trait Source {
    /// The machine the Samples describe.
    fn host(&self) -> &HostInfo;
    /// The next Sample: the cumulative state now (live) or the next one
    /// stored (a recording, fixtures).
    fn next_sample(&mut self) -> Result<Sample>;
    /// The caller changed the sampling interval (shown in the header).
    fn set_interval(&mut self, interval_ns: u64);
}

/// A source whose Samples are stored, so they can be read in any order
/// (recordings, fixtures): what replay and rewind move through.
pub trait Seekable {
    /// Samples held.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Sample `i` decoded (an error for a damaged one).
    fn sample(&mut self, i: usize) -> Result<Sample>;
    /// The host of the segment Sample `i` belongs to.
    fn host_of(&self, i: usize) -> HostInfo;
    /// Wall-clock ns of Sample `i`.
    fn time_of(&self, i: usize) -> Option<u64>;
    /// The Sample before `i` in the same segment (None: `i` starts one, so
    /// it has no rates).
    fn prev_of(&self, i: usize) -> Option<usize>;
    /// The last Sample at or before `time_ns` (the first if all are later).
    fn index_at_time(&self, time_ns: u64) -> Option<usize>;
    /// The Sample whose interval holds `time_ns`.
    fn index_from_time(&self, time_ns: u64) -> Option<usize>;
    /// Damage found while opening (byte ranges or whole files that could
    /// not be used), beyond what `sample` reports Sample by Sample.
    fn damaged(&self) -> bool {
        false
    }
    /// The last Sample that reads, searching back from the end; with the
    /// reason the last one does not, if it does not.
    fn last_readable(&mut self) -> Option<(usize, Option<String>)> {
        let mut why = None;
        for i in (0..self.len()).rev() {
            match self.sample(i) {
                Ok(_) => return Some((i, why)),
                Err(e) if why.is_none() => why = Some(format!("{e:#}")),
                Err(_) => {}
            }
        }
        None
    }
}

/// Fixture Samples in memory, in order: a `Source` and `Seekable` for
/// tests and for headless rendering of known data.
#[derive(Clone, Debug)]
pub struct MemorySource {
    host: HostInfo,
    samples: Vec<Sample>,
    next: usize,
}

impl MemorySource {
    pub fn new(host: HostInfo, samples: Vec<Sample>) -> MemorySource {
        MemorySource {
            host,
            samples,
            next: 0,
        }
    }
}

impl Source for MemorySource {
    fn host(&self) -> &HostInfo {
        &self.host
    }

    fn next_sample(&mut self) -> Result<Sample> {
        let s = self
            .samples
            .get(self.next)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no more Samples ({} held)", self.samples.len()))?;
        self.next += 1;
        Ok(s)
    }

    fn set_interval(&mut self, interval_ns: u64) {
        self.host.interval_ns = interval_ns;
    }
}

impl Seekable for MemorySource {
    fn len(&self) -> usize {
        self.samples.len()
    }

    fn sample(&mut self, i: usize) -> Result<Sample> {
        self.samples
            .get(i)
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no Sample {i} ({} held)", self.samples.len()))
    }

    fn host_of(&self, _i: usize) -> HostInfo {
        self.host.clone()
    }

    fn time_of(&self, i: usize) -> Option<u64> {
        self.samples.get(i).map(|s| s.time_ns)
    }

    fn prev_of(&self, i: usize) -> Option<usize> {
        (i > 0 && i < self.samples.len()).then(|| i - 1)
    }

    fn index_at_time(&self, time_ns: u64) -> Option<usize> {
        if self.samples.is_empty() {
            return None;
        }
        let n = self.samples.partition_point(|s| s.time_ns <= time_ns);
        Some(n.saturating_sub(1))
    }

    fn index_from_time(&self, time_ns: u64) -> Option<usize> {
        let i = self.samples.partition_point(|s| s.time_ns < time_ns);
        (i < self.samples.len()).then_some(i)
    }
}
