//! A window of Samples as one interval: the first Sample and the last one,
//! which is exact for every cumulative counter. Two things are not
//! cumulative and are carried over here: who preempted whom (each Sample
//! holds only its own interval's pairs: they are summed over the window),
//! and threads that exited inside the window (their final counts are in
//! the Sample where they exited, not in the last one).
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::why::{bound_pairs, PairKind};
use super::{OutsideThread, Sample, ThreadSample};

type Key = (u32, u64);
/// A thread's pairs over the window: other -> count, and the rest.
type Summed = HashMap<Key, (BTreeMap<u32, u64>, u64)>;

/// The Sample that, paired with `samples[0]`, spans the whole window
/// (None for fewer than two Samples).
pub fn window_end(samples: &[Sample]) -> Option<Sample> {
    let (last, between) = samples.split_last()?;
    if between.is_empty() {
        return None;
    }
    let later = &samples[1..];
    // per pair list kind: thread -> (other -> count, rest)
    let mut pairs: [Summed; 2] = Default::default();
    for s in later {
        for t in &s.threads {
            let Some(w) = t.why.as_ref() else { continue };
            for kind in PairKind::ALL {
                let (list, rest) = w.pairs(kind);
                if list.is_empty() && rest == 0 {
                    continue;
                }
                let e = pairs[kind as usize]
                    .entry((t.tid, t.start_time_ns))
                    .or_default();
                for &(tid, n) in list {
                    let c = e.0.entry(tid).or_default();
                    *c = c.saturating_add(n);
                }
                e.1 = e.1.saturating_add(rest);
            }
        }
    }
    let in_last: HashSet<Key> = last
        .threads
        .iter()
        .map(|t| (t.tid, t.start_time_ns))
        .collect();
    let mut gone: Vec<ThreadSample> = Vec::new();
    let mut seen: HashSet<Key> = HashSet::new();
    for s in later[..later.len() - 1].iter().rev() {
        for t in s.threads.iter().filter(|t| t.exited) {
            let k = (t.tid, t.start_time_ns);
            if !in_last.contains(&k) && seen.insert(k) {
                gone.push(t.clone());
            }
        }
    }
    let mut end = last.clone();
    let mut threads = std::mem::take(&mut end.threads).into_vec();
    threads.extend(gone);
    for t in &mut threads {
        let Some(w) = t.why.as_mut() else { continue };
        for kind in PairKind::ALL {
            let (by, rest) = match pairs[kind as usize].remove(&(t.tid, t.start_time_ns)) {
                Some((m, rest)) => {
                    let (kept, more) = bound_pairs(m.into_iter().collect());
                    (kept, rest.saturating_add(more))
                }
                None => (Vec::new(), 0),
            };
            if w.pairs(kind) != (&by[..], rest) {
                let (l, r) = Arc::make_mut(w).pairs_mut(kind);
                *l = by;
                *r = rest;
            }
        }
    }
    end.threads = threads.into();
    // every preemptor named outside the thread list during the window
    let mut outside: BTreeMap<u32, OutsideThread> = BTreeMap::new();
    for s in later {
        for o in &s.outside {
            outside.insert(o.tid, o.clone());
        }
    }
    end.outside = outside.into_values().collect();
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::why::WhySample;

    fn t(tid: u32, oncpu_ns: u64, by: Vec<(u32, u64)>, exited: bool) -> ThreadSample {
        ThreadSample {
            tid,
            pid: tid,
            start_time_ns: 7,
            oncpu_ns,
            involuntary: by.iter().map(|p| p.1).sum(),
            exited,
            why: Some(Arc::new(WhySample {
                preempted_by: by,
                ..WhySample::default()
            })),
            ..ThreadSample::default()
        }
    }

    #[test]
    fn preemptors_are_summed_over_the_window_and_exited_threads_kept() {
        let s = |mono, threads: Vec<ThreadSample>| Sample {
            mono_ns: mono,
            threads: threads.into(),
            ..Sample::default()
        };
        // the first Sample's pairs belong to the interval before the window
        let a = s(
            0,
            vec![t(1, 0, vec![(9, 100)], false), t(2, 0, vec![], false)],
        );
        let b = s(
            1,
            vec![
                t(1, 5, vec![(9, 3), (8, 1)], false),
                t(2, 9, vec![(9, 2)], true),
            ],
        );
        let c = s(2, vec![t(1, 8, vec![(9, 4)], false)]);
        let end = window_end(&[a, b, c]).unwrap();
        let one = end.thread(1).unwrap();
        assert_eq!(one.why.as_ref().unwrap().preempted_by, [(9, 7), (8, 1)]);
        assert_eq!(one.oncpu_ns, 8, "the last Sample's counters");
        let two = end.thread(2).expect("exited inside the window: kept");
        assert!(two.exited);
        assert_eq!(two.why.as_ref().unwrap().preempted_by, [(9, 2)]);
        assert!(
            window_end(&[Sample::default()]).is_none(),
            "one Sample: no interval"
        );
    }
}
