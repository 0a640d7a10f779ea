//! A thread's histograms in the recording: four sub-buckets per octave
//! (format 4, flag F_FINE), or bpftrace octaves (older recordings, and a
//! histogram that only ever knew octaves). Each is a delta on the reference
//! thread's histogram in the same form.
use super::codec_budget::Budget;
use super::codec_counts::{decode_counts, encode_counts};
use super::varint::{Cursor, DResult, DecodeError};
use crate::model::hist::{HIST_OCTAVES, HIST_SLOTS};
use crate::model::{Log2Hist, ThreadSample};

/// A thread's histograms are written with their sub-buckets unless one of
/// them only knows octaves (then all go as octaves).
pub(super) fn fine_hists(t: &ThreadSample) -> bool {
    ![
        &t.slice_hist,
        &t.wait_hist,
        &t.wakeup_wait_hist,
        &t.preempt_wait_hist,
    ]
    .iter()
    .any(|h| h.as_ref().is_some_and(|h| h.octaves_only))
}

pub(super) fn encode_hist(out: &mut Vec<u8>, h: &Log2Hist, rh: Option<&Log2Hist>, fine: bool) {
    if fine {
        encode_counts(out, &h.counts, rh.map(|x| &x.counts[..]));
    } else {
        let rh = rh.map(|x| x.octaves());
        encode_counts(out, &h.octaves(), rh.as_deref());
    }
}

pub(super) fn decode_hist(
    c: &mut Cursor,
    rh: Option<&Log2Hist>,
    fine: bool,
    b: &mut Budget,
) -> DResult<Log2Hist> {
    if fine {
        let counts = decode_counts(c, rh.map(|h| &h.counts[..]), b)?;
        if counts.len() > HIST_SLOTS {
            return Err(DecodeError("histogram longer than its slots"));
        }
        return Ok(Log2Hist::from_counts(counts));
    }
    let rh = rh.map(|h| h.octaves());
    let octaves = decode_counts(c, rh.as_deref(), b)?;
    if octaves.len() > HIST_OCTAVES {
        return Err(DecodeError("histogram longer than its octaves"));
    }
    Ok(Log2Hist::from_octaves(octaves))
}
