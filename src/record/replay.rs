//! A recording as the UI's `Feed`: Samples delivered in file order at the
//! recorded pace (one per recorded interval, divided by `speed`), so the
//! live views show a recording exactly as they show this machine. Changing
//! the interval in the UI changes the pace (one Sample per new interval).
//! Seeking keys are the UI's to add: the reader API (`Reader::sample`,
//! `index_at_time`) is what they need.
//!
//! `schedtop replay` no longer uses this feed: `ui::replay` moves a cursor
//! through the file (step, jump, speed) and starts each segment without
//! rates. Fed through this feed, the first Sample of a second segment was
//! compared with the last of the first (another boot's counters).
use super::reader::Reader;
use super::storage::Storage;
use crate::collect::system::monotonic_ns;
use crate::model::HostInfo;
use crate::ui::feed::{Feed, FeedEvent};

pub struct ReplayFeed<S: Storage> {
    reader: Reader<S>,
    host: HostInfo,
    next: usize,
    /// monotonic ns when the next Sample is due (None: right away)
    due: Option<u64>,
    /// ns between Samples; None = the recorded spacing / speed
    pace: Option<u64>,
    speed: f64,
    ended: bool,
}

impl<S: Storage> ReplayFeed<S> {
    /// Start at Sample `start` (its predecessor is delivered first, at
    /// once, so the first screen already has rates).
    pub fn new(reader: Reader<S>, start: usize, speed: f64) -> Self {
        let start = reader.prev_of(start).unwrap_or(start);
        ReplayFeed {
            host: reader.host_of(start).clone(),
            reader,
            next: start,
            due: None,
            pace: None,
            speed: if speed.is_finite() && speed > 0.0 {
                speed
            } else {
                1.0
            },
            ended: false,
        }
    }

    /// `poll` with the clock given (tests).
    pub fn poll_at(&mut self, now_ns: u64) -> Option<FeedEvent> {
        if self.next >= self.reader.len() {
            if !self.ended && !self.reader.is_empty() {
                self.ended = true;
                return Some(FeedEvent::Error(format!(
                    "end of recording ({} Samples)",
                    self.reader.len()
                )));
            }
            return None;
        }
        if self.due.is_some_and(|d| now_ns < d) {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let gap = match (
            self.pace,
            self.reader.time_of(self.next),
            self.reader.time_of(i),
        ) {
            (Some(p), _, _) => p,
            // the predecessor of the start Sample goes out with it
            _ if self.due.is_none() && self.reader.prev_of(self.next) == Some(i) => 0,
            (None, Some(b), Some(a)) => {
                // recorded spacing, at most 10 s (a gap in the recording)
                ((b.saturating_sub(a).min(10_000_000_000)) as f64 / self.speed) as u64
            }
            _ => 0,
        };
        self.due = Some(now_ns + gap);
        match self.reader.sample(i) {
            Ok(s) => Some(FeedEvent::Sample(s)),
            Err(e) => Some(FeedEvent::Error(format!("{e:#}"))),
        }
    }
}

impl<S: Storage> Feed for ReplayFeed<S> {
    fn host(&self) -> &HostInfo {
        &self.host
    }

    fn poll(&mut self) -> Option<FeedEvent> {
        self.poll_at(monotonic_ns())
    }

    fn set_interval(&mut self, interval_ns: u64) {
        self.host.interval_ns = interval_ns;
        self.pace = Some(interval_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
    use crate::record::{Reader, WriteOptions, Writer};

    #[test]
    fn delivers_in_order_at_the_recorded_pace() {
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
        let r = Reader::open(&path).unwrap();
        let mut f = ReplayFeed::new(r, 2, 2.0);
        assert_eq!(f.host().hostname, "synth");
        let mut got = Vec::new();
        let mut now = 1_000u64;
        // the start Sample and its predecessor come at once
        for _ in 0..2 {
            match f.poll_at(now) {
                Some(FeedEvent::Sample(s)) => got.push(s),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(got, samples[1..3]);
        // then nothing until half the recorded second has passed (speed 2)
        assert!(f.poll_at(now + 100_000_000).is_none());
        now += 510_000_000;
        assert!(matches!(f.poll_at(now), Some(FeedEvent::Sample(s)) if s == samples[3]));
        assert!(f.poll_at(now).is_none());
        f.set_interval(1_000);
        now += 600_000_000;
        assert!(matches!(f.poll_at(now), Some(FeedEvent::Sample(s)) if s == samples[4]));
        assert!(matches!(f.poll_at(now + 1_000), Some(FeedEvent::Sample(s)) if s == samples[5]));
        assert!(
            matches!(f.poll_at(now + 2_000), Some(FeedEvent::Error(e)) if e.contains("end of recording"))
        );
        assert!(f.poll_at(now + 3_000).is_none());
    }
}
