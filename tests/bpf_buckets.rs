//! The probe's bucketing, run in the kernel: bpf/schedtop.bpf.c's
//! hist_slot() and rq_slot() are executed through BPF_PROG_TEST_RUN and
//! compared with the plain definitions user space reads the slots by
//! (model/hist.rs slot_of_us, model/rates.rs rq_slot_low).
mod common;

use common::cannot_run;
use schedtop::collect::bpf::BucketCode;
use schedtop::model::hist::{slot_of_us, HIST_SLOTS};
use schedtop::model::rates::rq_slot_low;

fn code() -> Option<BucketCode> {
    match BucketCode::load() {
        Ok(c) => Some(c),
        Err(e) => {
            if std::env::var("SCHEDTOP_REQUIRE_BPF").as_deref() == Ok("1") {
                panic!("BPF required (SCHEDTOP_REQUIRE_BPF=1) but unavailable: {e:#}");
            }
            cannot_run(&format!("BPF cannot load here: {e:#}"));
            None
        }
    }
}

#[test]
fn hist_slot_in_the_kernel_matches_the_definition() {
    let Some(code) = code() else {
        return;
    };
    // every edge: k us and k us +- 1 ns for each power of two k
    let mut inputs = vec![0u64, 1, 999, 1000, 1001, 1999, 2000, u64::MAX];
    for slot in 0..HIST_SLOTS as u32 + 4 {
        let us = 1u64 << slot;
        for d in [0u64, 1] {
            inputs.push((us * 1000).saturating_sub(d));
            inputs.push(us * 1000 + d);
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
        let got = code.hist_slot(ns).unwrap() as usize;
        assert_eq!(got, slot_of_us(ns / 1000), "hist_slot({ns} ns)");
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
