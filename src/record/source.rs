//! A recording as a `Source`: its Samples in file order, and `Seekable`
//! so replay (and rewind) can move through it. The UI cannot tell it from
//! the live source except by the mode in the header.
use anyhow::Result;

use super::reader::Reader;
use super::storage::Storage;
use crate::collect::{Seekable, Source};
use crate::model::{HostInfo, Sample};

pub struct RecordingSource<S: Storage = std::fs::File> {
    reader: Reader<S>,
    host: HostInfo,
    /// the Sample `next_sample` returns
    next: usize,
}

impl<S: Storage> RecordingSource<S> {
    pub fn new(reader: Reader<S>) -> RecordingSource<S> {
        RecordingSource {
            host: reader.host().clone(),
            reader,
            next: 0,
        }
    }

    pub fn reader(&self) -> &Reader<S> {
        &self.reader
    }

    /// `next_sample` continues from Sample `i`.
    pub fn set_position(&mut self, i: usize) {
        self.next = i;
        if i < self.reader.len() {
            self.host = self.reader.host_of(i).clone();
        }
    }
}

impl<S: Storage> Source for RecordingSource<S> {
    fn host(&self) -> &HostInfo {
        &self.host
    }

    fn next_sample(&mut self) -> Result<Sample> {
        let i = self.next;
        if i >= self.reader.len() {
            anyhow::bail!("end of recording ({} Samples)", self.reader.len());
        }
        self.next += 1;
        self.host = self.reader.host_of(i).clone();
        self.reader.sample(i)
    }

    fn set_interval(&mut self, interval_ns: u64) {
        self.host.interval_ns = interval_ns;
    }
}

impl<S: Storage> Seekable for RecordingSource<S> {
    fn len(&self) -> usize {
        self.reader.len()
    }

    fn sample(&mut self, i: usize) -> Result<Sample> {
        self.reader.sample(i)
    }

    fn damaged(&self) -> bool {
        !self.reader.damage().is_empty()
    }

    fn host_of(&self, i: usize) -> HostInfo {
        self.reader.host_of(i).clone()
    }

    fn time_of(&self, i: usize) -> Option<u64> {
        self.reader.time_of(i)
    }

    fn prev_of(&self, i: usize) -> Option<usize> {
        self.reader.prev_of(i)
    }

    fn index_at_time(&self, time_ns: u64) -> Option<usize> {
        self.reader.index_at_time(time_ns)
    }

    fn index_from_time(&self, time_ns: u64) -> Option<usize> {
        self.reader.index_from_time(time_ns)
    }
}

/// A reader is seekable as it is (dump, the fuzz target and tests use it
/// without a Source around it).
impl<S: Storage> Seekable for Reader<S> {
    fn len(&self) -> usize {
        Reader::len(self)
    }

    fn damaged(&self) -> bool {
        !self.damage().is_empty()
    }

    fn sample(&mut self, i: usize) -> Result<Sample> {
        Reader::sample(self, i)
    }

    fn host_of(&self, i: usize) -> HostInfo {
        Reader::host_of(self, i).clone()
    }

    fn time_of(&self, i: usize) -> Option<u64> {
        Reader::time_of(self, i)
    }

    fn prev_of(&self, i: usize) -> Option<usize> {
        Reader::prev_of(self, i)
    }

    fn index_at_time(&self, time_ns: u64) -> Option<usize> {
        Reader::index_at_time(self, time_ns)
    }

    fn index_from_time(&self, time_ns: u64) -> Option<usize> {
        Reader::index_from_time(self, time_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
    use crate::record::{WriteOptions, Writer};

    #[test]
    fn reads_in_order_and_seeks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.schedtop");
        let o = SynthOptions {
            threads: 4,
            samples: 6,
            ..Default::default()
        };
        let samples = synthetic_samples(&o);
        let mut w = Writer::open(&path, &synthetic_host(&o), WriteOptions::default()).unwrap();
        for s in &samples {
            w.write_sample(s).unwrap();
        }
        w.finish().unwrap();
        let mut src = RecordingSource::new(Reader::open(&path).unwrap());
        assert_eq!(Source::host(&src).hostname, "synth");
        assert_eq!(Seekable::len(&src), 6);
        for s in &samples[..3] {
            assert_eq!(&src.next_sample().unwrap(), s);
        }
        src.set_position(5);
        assert_eq!(src.next_sample().unwrap(), samples[5]);
        let e = src.next_sample().unwrap_err().to_string();
        assert!(e.contains("end of recording"), "{e}");
        // random access, and the times the index holds
        assert_eq!(Seekable::sample(&mut src, 2).unwrap(), samples[2]);
        assert_eq!(src.time_of(4), Some(samples[4].time_ns));
        assert_eq!(src.index_at_time(samples[3].time_ns + 1), Some(3));
        assert_eq!(src.index_from_time(samples[3].time_ns + 1), Some(4));
        assert_eq!(src.prev_of(3), Some(2));
        assert_eq!(src.prev_of(0), None);
    }
}
