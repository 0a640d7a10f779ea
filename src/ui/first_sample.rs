//! The session's first Sample, the base of the detail pane's "since start"
//! figures. Kept encoded (a key frame of the recording codec: tens of bytes
//! per idle thread instead of a whole ThreadSample) for the life of the
//! session, and decoded only while the pane shows since-start: at 50,000
//! threads a Sample held forever was 20+ MB of the resident set.
use std::sync::Arc;

use crate::model::Sample;
use crate::record::codec;

#[derive(Clone, Debug)]
pub struct FirstSample {
    encoded: Vec<u8>,
    decoded: Option<Arc<Sample>>,
}

/// The same Sample (the encoding is deterministic).
impl PartialEq for FirstSample {
    fn eq(&self, o: &Self) -> bool {
        self.encoded == o.encoded
    }
}

impl FirstSample {
    pub fn keep(s: &Sample) -> Self {
        FirstSample {
            encoded: codec::encode(s, None),
            decoded: None,
        }
    }

    /// The Sample, decoded once and kept until `release` (None if it does
    /// not decode, which our own encoding always does).
    pub fn sample(&mut self) -> Option<Arc<Sample>> {
        if self.decoded.is_none() {
            self.decoded = codec::decode(&self.encoded, None).ok().map(Arc::new);
        }
        self.decoded.clone()
    }

    /// Drop the decoded copy (since-start not shown).
    pub fn release(&mut self) {
        self.decoded = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::testdata::SynthGen;

    #[test]
    fn round_trips_and_is_smaller() {
        let mut g = SynthGen::new(Default::default());
        let s = g.next_sample();
        let mut f = FirstSample::keep(&s);
        assert_eq!(*f.sample().unwrap(), s);
        // what the Sample takes in memory, as the codec counts it
        let threads = crate::record::codec::decoded_size(&s);
        assert!(
            f.encoded.len() * 4 < threads,
            "{} vs {threads}",
            f.encoded.len()
        );
        f.release();
        assert!(f.decoded.is_none());
        assert_eq!(*f.sample().unwrap(), s);
    }
}
