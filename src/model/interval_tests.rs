//! derive_reusing against derive: rows kept in place are those built afresh.
use super::*;
use crate::model::why::WhySample;

fn thread(tid: u32, voluntary: u64) -> ThreadSample {
    let hist = Log2Hist::from_counts([0, voluntary]);
    ThreadSample {
        tid,
        pid: 1,
        comm: "worker".into(),
        start_time_ns: 10 + u64::from(tid),
        voluntary,
        oncpu_ns: voluntary * 1000,
        migrations: Some(0),
        slice_hist: Some(hist.clone()),
        wait_hist: Some(hist),
        why: Some(Arc::new(WhySample::default())),
        ..Default::default()
    }
}

fn at(step: u64, threads: Vec<ThreadSample>) -> Sample {
    Sample {
        time_ns: step * 1_000_000_000,
        mono_ns: step * 1_000_000_000,
        threads: threads.into(),
        ..Default::default()
    }
}

#[test]
fn rows_kept_in_place_are_the_rows_built_afresh() {
    let (a, b) = (thread(1, 5), thread(2, 7));
    let mut b_renamed = b.clone();
    b_renamed.comm = "renamed".into();
    let mut a_ran = a.clone();
    a_ran.voluntary += 3;
    // another process's thread with no histograms, migrations or why
    // figures (as procfs sees one): an empty interval of its own kind
    let c = ThreadSample {
        tid: 3,
        pid: 3,
        comm: "plain".into(),
        start_time_ns: 13,
        voluntary: 4,
        ..Default::default()
    };
    let samples = [
        at(0, vec![a.clone(), b.clone(), c.clone()]),
        at(1, vec![a.clone(), b.clone(), c.clone()]),
        at(2, vec![a.clone(), b.clone(), c.clone()]),
        at(3, vec![a.clone(), b_renamed.clone(), c.clone()]),
        at(4, vec![a_ran.clone(), b_renamed.clone(), c.clone()]),
        at(5, vec![a_ran, b_renamed, c]),
    ];
    let mut spare = Derived::default();
    let mut kept = Vec::new();
    for (i, cur) in samples.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| &samples[p]);
        let before: Vec<_> = spare.threads.iter().map(|r| r.why.clone()).collect();
        spare = derive_reusing(prev, cur, 1.0, spare);
        let afresh = derive(prev, cur, 1.0);
        assert_eq!(spare.threads, afresh.threads, "step {i}");
        assert_eq!(spare.processes, afresh.processes, "step {i}");
        assert_eq!(spare.cgroups, afresh.cgroups, "step {i}");
        // a row kept in place still holds the previous interval's
        // shared empty why; a rebuilt one this interval's
        let same: Vec<bool> = spare
            .threads
            .iter()
            .zip(&before)
            .map(|(r, w)| matches!((&r.why, w), (Some(x), Some(y)) if Arc::ptr_eq(x, y)))
            .collect();
        kept.push(same);
    }
    // 1: both quiet, but not the interval before (the first has no
    // previous Sample); 2: both kept; 3: the renamed one rebuilt; 4: the
    // one that ran rebuilt, the renamed one kept; 5: the one that ran
    // was not quiet the interval before
    // (the third has no why figures to tell by: always false)
    let want: [&[bool]; 6] = [
        &[],
        &[false, false, false],
        &[true, true, false],
        &[true, false, false],
        &[false, true, false],
        &[false, true, false],
    ];
    assert_eq!(kept, want);
}
