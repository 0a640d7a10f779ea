//! A Sample too large for one frame (over the decoder's memory cap, about
//! 190,000 threads) is written without some of its threads rather than not
//! at all: the idle ones first (nothing ran since the Sample before), then
//! the least busy. A local user who may start that many tasks must not be
//! able to turn the recorder off.
use std::collections::HashMap;

use super::codec::thread_size;
use crate::model::{Sample, ThreadSample};

/// What trimming left out of one Sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trim {
    /// threads left out
    pub threads: usize,
    /// of them, threads that had not run since the Sample before
    pub idle: usize,
}

/// Work a thread did since `before` (its counters then): CPU time plus
/// switches. None when it did nothing; a thread not seen before counts
/// everything it did since it started.
fn work(t: &ThreadSample, before: Option<&(u64, u64, u64)>) -> Option<u64> {
    let (cpu, vol, invol) = before.copied().unwrap_or((0, 0, 0));
    let w = t
        .oncpu_ns
        .saturating_sub(cpu)
        .saturating_add(t.voluntary.saturating_sub(vol))
        .saturating_add(t.involuntary.saturating_sub(invol));
    (w > 0).then_some(w)
}

/// `s` with threads left out until the decoder would count at most
/// `max_bytes` for it (`codec::decoded_size`), idle threads (against
/// `prev`, the Sample written before) first, then the least busy. None if
/// even no threads at all would not fit.
pub fn trim(s: &Sample, prev: Option<&Sample>, max_bytes: usize) -> Option<(Sample, Trim)> {
    let sizes: Vec<usize> = s.threads.iter().map(thread_size).collect();
    let all = super::codec::decoded_size(s);
    let others = all - sizes.iter().sum::<usize>();
    if others > max_bytes {
        return None;
    }
    let before: HashMap<(u32, u64), (u64, u64, u64)> = prev
        .map(|p| {
            p.threads
                .iter()
                .map(|t| {
                    (
                        (t.tid, t.start_time_ns),
                        (t.oncpu_ns, t.voluntary, t.involuntary),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let works: Vec<Option<u64>> = s
        .threads
        .iter()
        .map(|t| work(t, before.get(&(t.tid, t.start_time_ns))))
        .collect();
    // idle (None) sorts before any work; ties by position, so the result
    // does not depend on the sort
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| (works[i], i));
    let mut keep = vec![true; sizes.len()];
    let mut total = all;
    let mut cut = Trim::default();
    for i in order {
        if total <= max_bytes {
            break;
        }
        keep[i] = false;
        total -= sizes[i];
        cut.threads += 1;
        cut.idle += usize::from(works[i].is_none());
    }
    let threads: Vec<ThreadSample> = s
        .threads
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(t, _)| t.clone())
        .collect();
    let out = Sample {
        threads: threads.into(),
        ..s.clone()
    };
    Some((out, cut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::codec::decoded_size;

    fn thread(tid: u32, oncpu_ns: u64, voluntary: u64) -> ThreadSample {
        ThreadSample {
            tid,
            pid: tid,
            oncpu_ns,
            voluntary,
            ..Default::default()
        }
    }

    #[test]
    fn idle_threads_go_first_then_the_least_busy() {
        // before: threads 1..=6 with these counters
        let prev = Sample {
            threads: (1..=6).map(|t| thread(t, 1000, 10)).collect(),
            ..Default::default()
        };
        // now: 1, 3, 5 idle; 2 ran 5 ns, 4 ran 500 ns, 6 ran 50 ns
        let ran = [0, 5, 0, 500, 0, 50];
        let s = Sample {
            threads: (1..=6)
                .map(|t| thread(t, 1000 + ran[t as usize - 1], 10))
                .collect(),
            cpus: vec![Default::default(); 2],
            ..Default::default()
        };
        let one = thread_size(&s.threads[0]);
        let base = decoded_size(&s) - 6 * one;
        // room for two threads: the two busiest stay, in their order
        let (out, cut) = trim(&s, Some(&prev), base + 2 * one).unwrap();
        let tids: Vec<u32> = out.threads.iter().map(|t| t.tid).collect();
        assert_eq!(tids, vec![4, 6]);
        assert_eq!(
            cut,
            Trim {
                threads: 4,
                idle: 3
            }
        );
        assert!(decoded_size(&out) <= base + 2 * one);
        // room for four: only the idle ones go (and only as many as needed)
        let (out, cut) = trim(&s, Some(&prev), base + 4 * one).unwrap();
        assert_eq!(out.threads.len(), 4);
        assert_eq!(
            cut,
            Trim {
                threads: 2,
                idle: 2
            }
        );
        // a Sample that fits is left whole
        let (out, cut) = trim(&s, Some(&prev), decoded_size(&s)).unwrap();
        assert_eq!((out.threads.len(), cut), (6, Trim::default()));
        // without a Sample before, every thread counts all it did
        let (out, cut) = trim(&s, None, base + one).unwrap();
        assert_eq!(out.threads[0].tid, 4);
        assert_eq!(
            cut,
            Trim {
                threads: 5,
                idle: 0
            }
        );
        // not even the CPUs fit: nothing to write
        assert!(trim(&s, None, base - 1).is_none());
    }
}
