//! How much memory decoding one Sample may build (codec.rs).
use super::varint::{DResult, DecodeError};
use crate::model::{Log2Hist, Sample, ThreadSample};

/// Most memory one decoded Sample may take. A few KB of zstd can hold a
/// Sample of millions of 16-byte threads (zeros compress to nothing), so
/// neither the payload nor the decompressed size bounds what decoding
/// builds; this does. A real thread takes ~700 bytes decoded (names, two
/// histograms): ~190,000 threads fit, twice the largest Sample measured
/// (100,000 threads), and the writer refuses a Sample over it rather than
/// write one no reader opens. A dump holds about four Samples at once, so
/// the worst file costs ~600 MB, not the host.
pub const MAX_DECODED: usize = 128 << 20;

/// What decoding has left of MAX_DECODED.
pub(super) struct Budget(pub(super) usize);

impl Budget {
    pub(super) fn take(&mut self, bytes: usize) -> DResult<()> {
        self.0 = self
            .0
            .checked_sub(bytes)
            .ok_or(DecodeError("decoded Sample over the memory limit"))?;
        Ok(())
    }

    pub(super) fn items<T>(&mut self, n: usize) -> DResult<()> {
        self.take(n.saturating_mul(std::mem::size_of::<T>()))
    }
}

/// Memory one thread of a Sample takes as the decoder counts it.
pub fn thread_size(t: &ThreadSample) -> usize {
    use std::mem::size_of;
    let hist = |h: &Option<Log2Hist>| h.as_ref().map_or(0, |h| h.counts.len() * 8);
    size_of::<ThreadSample>()
        + t.comm.len()
        + t.process_comm.len()
        + hist(&t.slice_hist)
        + hist(&t.wait_hist)
        + hist(&t.wakeup_wait_hist)
        + hist(&t.preempt_wait_hist)
        + if t.counters.any() {
            super::codec_counters::COUNTERS_SIZE
        } else {
            0
        }
}

/// Memory `s` takes as the decoder counts it (see MAX_DECODED).
pub fn decoded_size(s: &Sample) -> usize {
    use std::mem::size_of;
    let threads: usize = s.threads.iter().map(thread_size).sum();
    let cpus: usize = s
        .cpus
        .iter()
        .map(|c| {
            size_of::<crate::model::CpuSample>() + c.rq.as_ref().map_or(0, |r| r.hist.len() * 8)
        })
        .sum();
    let outside: usize = s
        .outside
        .iter()
        .map(|o| size_of::<crate::model::OutsideThread>() + o.comm.len() + o.process_comm.len())
        .sum();
    threads + cpus + outside + s.migrations.len() * size_of::<crate::model::MigrationCount>()
}
