//! The probe's bucketing, run in the kernel: bpf/schedtop.bpf.c's
//! fine_slot() (bpf/hist_slot.h) and rq_slot() are executed through BPF_PROG_TEST_RUN and
//! compared with the plain definitions user space reads the slots by
//! (model/hist.rs slot_of_ns, model/rates.rs rq_slot_low).
use crate::common;

use schedtop::collect::bpf::BucketCode;
use schedtop::model::hist::{octave_of_us, slot_low_ns, slot_of_ns, HIST_SLOTS};
use schedtop::model::rates::rq_slot_low;

fn code() -> Option<BucketCode> {
    match BucketCode::load() {
        Ok(c) => Some(c),
        Err(e) => {
            common::skip::bpf_unavailable(&format!("BPF cannot load here: {e:#}"));
            None
        }
    }
}

#[test]
fn fine_slot_in_the_kernel_matches_the_definition() {
    let Some(code) = code() else {
        return;
    };
    // every bucket edge and its neighbours, across the whole range
    let mut inputs = vec![0u64, 1, 249, 250, 999, 1000, 1001, u64::MAX, u64::MAX - 1];
    for slot in 0..HIST_SLOTS {
        let low = slot_low_ns(slot);
        inputs.extend([low.saturating_sub(1), low, low + 1]);
    }
    // octave edges far past the last slot (where 1000 << k would overflow)
    for k in 0..64 {
        let p = 1u64 << k;
        inputs.extend([p - 1, p, p.saturating_add(1)]);
        for j in 0..4u64 {
            if let Some(cut) = (1000u64.checked_shl(k)).filter(|c| c >> k == 1000) {
                let cut = cut.saturating_add(j * (250u64 << k.min(60)));
                inputs.extend([cut.saturating_sub(1), cut, cut.saturating_add(1)]);
            }
        }
    }
    // and spread values over every magnitude
    let mut x: u64 = 7;
    for _ in 0..20_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        inputs.push(x >> (x % 64));
    }
    for ns in inputs {
        let got = code.fine_slot(ns).unwrap() as usize;
        assert_eq!(got, slot_of_ns(ns), "fine_slot({ns} ns)");
        // folds back to bpftrace's hist() of whole microseconds
        assert_eq!(got >> 2, octave_of_us(ns / 1000), "octave of {ns} ns");
    }
}

#[test]
fn rq_slot_in_the_kernel_matches_the_slot_bounds() {
    let Some(code) = code() else {
        return;
    };
    let last = 43; // RQ_SLOTS - 1 (bpf/schedtop.h)
    let mut inputs: Vec<u32> = (0..300).collect();
    for b in 5..32 {
        inputs.extend([(1u32 << b) - 1, 1 << b, (1 << b) + 1]);
    }
    inputs.push(u32::MAX);
    for len in inputs {
        let slot = code.rq_slot(len).unwrap() as usize;
        assert!(slot <= last, "rq_slot({len}) = {slot}");
        assert!(rq_slot_low(slot) <= len as u64, "rq_slot({len}) = {slot}");
        if slot < last {
            assert!(
                (len as u64) < rq_slot_low(slot + 1),
                "rq_slot({len}) = {slot}"
            );
        }
    }
}
