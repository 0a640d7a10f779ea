//! The live view's rewind buffer (`--history`): the last N minutes of
//! Samples, kept as the recording codec's frames (a key frame every
//! KEY_EVERY Samples, deltas between, each zstd-compressed) rather than as
//! structs, because Samples are cumulative and a full one per second of
//! 10,000 threads would take gigabytes over ten minutes. Bounded by age and
//! by bytes; the oldest key group goes first, and what went is counted.
//!
//! It is a `Seekable` source, so the replay cursor moves through it as it
//! moves through a file (ui/rewind.rs).
use std::collections::VecDeque;
use std::sync::Arc;

use anyhow::{anyhow, Result};

use crate::collect::Seekable;
use crate::export::incident::Kept;
use crate::model::{HostInfo, Sample};
use crate::record::codec;

/// `--history` default: ten minutes.
pub const DEFAULT_WINDOW_NS: u64 = 600_000_000_000;
/// Bytes of encoded Samples kept at most (the two decoded Samples the
/// buffer also holds, the delta base and the read cache, come on top).
pub const DEFAULT_BYTE_CAP: usize = 256 << 20;
/// A key frame every this many Samples: the unit that is dropped, and the
/// most deltas one random read decodes.
pub const KEY_EVERY: usize = 30;
/// zstd level (fast: this runs on the UI thread every interval).
const LEVEL: i32 = 1;

/// A frame's bytes are shared (Arc): a frozen copy for an incident
/// bundle's writer costs no copy of them.
#[derive(Clone)]
struct Frame {
    time_ns: u64,
    key: bool,
    data: Arc<[u8]>,
}

/// What one frame costs besides its bytes.
const FRAME_OVERHEAD: usize = std::mem::size_of::<Frame>();

pub struct History {
    host: HostInfo,
    window_ns: u64,
    byte_cap: usize,
    frames: VecDeque<Frame>,
    bytes: usize,
    dropped: u64,
    /// the newest Sample pushed (the next delta's base)
    last: Option<Arc<Sample>>,
    since_key: usize,
    /// the last Sample read, by absolute number (sequential reads decode
    /// one delta)
    cache: Option<(u64, Sample)>,
    /// absolute number of `frames[0]`
    base: u64,
}

impl History {
    /// Keep `window_ns` of Samples in at most `byte_cap` bytes.
    pub fn new(host: HostInfo, window_ns: u64, byte_cap: usize) -> History {
        History {
            host,
            window_ns,
            byte_cap,
            frames: VecDeque::new(),
            bytes: 0,
            dropped: 0,
            last: None,
            since_key: 0,
            cache: None,
            base: 0,
        }
    }

    /// Bytes of encoded Samples held (what the cap bounds).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Everything held: the frames and the two decoded Samples.
    pub fn resident_bytes(&self) -> usize {
        self.bytes
            + self.last.as_deref().map_or(0, codec::decoded_size)
            + self
                .cache
                .as_ref()
                .map_or(0, |(_, s)| codec::decoded_size(s))
    }

    /// Samples dropped so far (too old, or over the byte cap).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn byte_cap(&self) -> usize {
        self.byte_cap
    }

    /// Keep `s`; returns how many of the oldest Samples went to make room.
    pub fn push(&mut self, s: &Sample) -> usize {
        self.push_shared(&Arc::new(s.clone()))
    }

    /// `push` of a Sample the caller shares (the live feed hands the same
    /// one to the UI): the next delta frame's base is kept without a copy.
    pub fn push_shared(&mut self, s: &Arc<Sample>) -> usize {
        let key = self.last.is_none() || self.since_key + 1 >= KEY_EVERY;
        let prev = if key { None } else { self.last.as_deref() };
        let data: Arc<[u8]> = codec::encode_compressed(s, prev, LEVEL).into();
        self.since_key = if key { 0 } else { self.since_key + 1 };
        self.bytes += data.len() + FRAME_OVERHEAD;
        self.frames.push_back(Frame {
            time_ns: s.time_ns,
            key,
            data,
        });
        self.last = Some(Arc::clone(s));
        self.trim(s.time_ns)
    }

    /// Drop whole key groups from the front while too old or too big; the
    /// group the newest Sample is in stays.
    fn trim(&mut self, now_ns: u64) -> usize {
        let mut n = 0;
        while let Some(front) = self.frames.front() {
            let too_old = now_ns.saturating_sub(front.time_ns) > self.window_ns;
            if !too_old && self.bytes <= self.byte_cap {
                break;
            }
            // the end of the oldest group: the next key frame
            let Some(next_key) = self.frames.iter().skip(1).position(|f| f.key) else {
                if self.bytes > self.byte_cap {
                    // one group over the cap: start a new one at once
                    self.since_key = KEY_EVERY;
                }
                break;
            };
            for _ in 0..=next_key {
                if let Some(f) = self.frames.pop_front() {
                    self.bytes -= f.data.len() + FRAME_OVERHEAD;
                    n += 1;
                }
            }
        }
        self.base += n as u64;
        self.dropped += n as u64;
        if self.cache.as_ref().is_some_and(|(a, _)| *a < self.base) {
            self.cache = None;
        }
        n
    }

    fn decode_at(&self, i: usize, prev: Option<&Sample>) -> Result<Sample> {
        let f = &self.frames[i];
        codec::decode_compressed(&f.data, if f.key { None } else { prev })
            .map_err(|e| anyhow!("kept Sample {i}: {e}"))
    }
}

impl Kept for History {
    /// The kept frames as they are now, readable on another thread while
    /// this one goes on (nothing pushed to it afterwards).
    fn frozen(&self) -> Box<dyn Seekable + Send> {
        Box::new(History {
            host: self.host.clone(),
            window_ns: self.window_ns,
            byte_cap: self.byte_cap,
            frames: self.frames.clone(),
            bytes: self.bytes,
            dropped: self.dropped,
            last: None,
            since_key: self.since_key,
            cache: None,
            base: self.base,
        })
    }
}

impl Seekable for History {
    fn len(&self) -> usize {
        self.frames.len()
    }

    fn sample(&mut self, i: usize) -> Result<Sample> {
        if i >= self.frames.len() {
            return Err(anyhow!("no kept Sample {i} ({} kept)", self.frames.len()));
        }
        let abs = self.base + i as u64;
        if let Some((a, s)) = &self.cache {
            if *a == abs {
                return Ok(s.clone());
            }
        }
        let key = (0..=i).rev().find(|&k| self.frames[k].key).unwrap_or(0);
        // from the cache when it lies between the key frame and `i`
        let (mut j, mut cur) = match self.cache.take() {
            Some((a, s)) if a >= self.base + key as u64 && a < abs => {
                ((a - self.base) as usize + 1, Some(s))
            }
            _ => (key, None),
        };
        while j <= i {
            cur = Some(self.decode_at(j, cur.as_ref())?);
            j += 1;
        }
        let s = cur.ok_or_else(|| anyhow!("no kept Sample {i}"))?;
        self.cache = Some((abs, s.clone()));
        Ok(s)
    }

    fn host_of(&self, _i: usize) -> HostInfo {
        self.host.clone()
    }

    fn time_of(&self, i: usize) -> Option<u64> {
        self.frames.get(i).map(|f| f.time_ns)
    }

    fn prev_of(&self, i: usize) -> Option<usize> {
        (i > 0 && i < self.frames.len()).then(|| i - 1)
    }

    fn index_at_time(&self, time_ns: u64) -> Option<usize> {
        if self.frames.is_empty() {
            return None;
        }
        let n = self.frames.partition_point(|f| f.time_ns <= time_ns);
        Some(n.saturating_sub(1))
    }

    fn index_from_time(&self, time_ns: u64) -> Option<usize> {
        let i = self.frames.partition_point(|f| f.time_ns < time_ns);
        (i < self.frames.len()).then_some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};

    fn synth(threads: usize, samples: usize) -> (HostInfo, Vec<Sample>) {
        let o = SynthOptions {
            threads,
            samples,
            churn: 0.02,
            ..Default::default()
        };
        (synthetic_host(&o), synthetic_samples(&o))
    }

    #[test]
    fn reads_back_every_kept_sample_in_any_order() {
        let (host, samples) = synth(50, 100);
        let mut h = History::new(host, DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
        for s in &samples {
            assert_eq!(h.push(s), 0);
        }
        assert_eq!(h.len(), 100);
        for i in [99, 0, 45, 46, 47, 31, 30, 29, 5] {
            assert_eq!(h.sample(i).unwrap(), samples[i], "Sample {i}");
        }
        assert_eq!(h.index_at_time(samples[10].time_ns + 1), Some(10));
        assert_eq!(h.index_from_time(samples[10].time_ns + 1), Some(11));
    }

    #[test]
    fn drops_the_oldest_whole_groups_by_age_and_counts_them() {
        let (host, samples) = synth(20, 200);
        // 100 s window at 1 s per Sample
        let mut h = History::new(host, 100_000_000_000, DEFAULT_BYTE_CAP);
        let mut dropped = 0;
        for s in &samples {
            dropped += h.push(s);
        }
        assert_eq!(dropped as u64, h.dropped());
        assert_eq!(h.len() + dropped, 200);
        let oldest = h.time_of(0).unwrap();
        let newest = h.time_of(h.len() - 1).unwrap();
        assert!(newest - oldest <= 100_000_000_000);
        // at most one group more than the window needs
        assert!(h.len() <= 101 + KEY_EVERY, "{} kept", h.len());
        assert!(h.len() >= 101 - KEY_EVERY, "{} kept", h.len());
        // what is kept still decodes, the oldest from its key frame
        assert_eq!(h.sample(0).unwrap(), samples[dropped]);
        assert_eq!(h.sample(h.len() - 1).unwrap(), samples[199]);
    }

    #[test]
    fn the_byte_cap_holds() {
        let (host, samples) = synth(200, 300);
        let cap = 64 << 10;
        let mut h = History::new(host, DEFAULT_WINDOW_NS, cap);
        for s in &samples {
            h.push(s);
            assert!(h.bytes() <= cap || h.len() <= KEY_EVERY, "{}", h.bytes());
        }
        assert!(h.dropped() > 0);
        let last = h.len() - 1;
        assert_eq!(h.sample(last).unwrap(), samples[299]);
    }
}
