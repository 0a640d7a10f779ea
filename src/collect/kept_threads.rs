//! The live threads of the last Sample, kept by the BPF source while it
//! reads only the threads that changed (changed_threads.rs): the next
//! Sample is these, each replaced by its fresh copy if it changed, without
//! the ones that exited, plus the new ones.
use crate::model::fasthash::{IdMap, IdSet};
use std::sync::Arc;

use crate::model::why::WhySample;
use crate::model::ThreadSample;

use super::bpf_threads::ThreadKey;

/// A thread as the last Sample had it, and its cgroup's kernel id (the
/// Sample's cgroup index is only good for that Sample's table).
pub(super) struct Kept {
    pub sample: ThreadSample,
    pub cgroup_id: u64,
}

#[derive(Default)]
pub(super) struct KeptThreads {
    /// in the last Sample's order
    list: Vec<Kept>,
    index: IdMap<ThreadKey, u32>,
    /// CLOCK_MONOTONIC when the last full pass began: a thread started
    /// later and not kept was in no Sample yet
    pub full_pass_ns: u64,
}

fn key(k: &Kept) -> ThreadKey {
    (k.sample.tid, k.sample.start_time_ns)
}

impl KeptThreads {
    /// After a full pass: its live threads.
    pub fn replace(&mut self, live: impl Iterator<Item = Kept>) {
        self.list.clear();
        self.list.extend(live);
        self.reindex();
    }

    fn reindex(&mut self) {
        self.index.clear();
        for (i, k) in self.list.iter().enumerate() {
            self.index.insert(key(k), i as u32);
        }
    }

    /// Whether `key` was in no Sample yet although it may have started
    /// before the last drain: it had not switched out (nor run) until now.
    pub fn first_seen(&self, key: &ThreadKey) -> bool {
        key.1 >= self.full_pass_ns && !self.index.contains_key(key)
    }

    /// The Sample's live threads into `out`: every kept one, replaced by its
    /// fresh copy if it changed (`fresh`), without the `dead`; then the
    /// fresh ones that are new, oldest first. `refresh` re-interns a kept
    /// thread's cgroup for this Sample's table. They are kept for the next.
    pub fn assemble(
        &mut self,
        mut fresh: IdMap<ThreadKey, Kept>,
        dead: &IdSet<ThreadKey>,
        mut refresh: impl FnMut(u64) -> Option<u32>,
        out: &mut Vec<ThreadSample>,
    ) {
        let before = self.list.len();
        self.list.retain(|k| !dead.contains(&key(k)));
        let mut moved = self.list.len() != before;
        for k in self.list.iter_mut() {
            match fresh.remove(&key(k)) {
                Some(f) => *k = f,
                None => {
                    // unchanged: no new rates, no preemptors this interval
                    k.sample.baseline = None;
                    k.sample.cgroup = refresh(k.cgroup_id);
                    let had = |w: &&mut Arc<WhySample>| {
                        !w.preempted_by.is_empty() || w.preempted_by_rest != 0
                    };
                    // shared with the Samples that had it: copied only if
                    // it listed preemptors
                    if let Some(w) = k.sample.why.as_mut().filter(had) {
                        let w = Arc::make_mut(w);
                        w.preempted_by.clear();
                        w.preempted_by_rest = 0;
                    }
                }
            }
            out.push(k.sample.clone());
        }
        let mut new: Vec<Kept> = fresh.into_values().collect();
        new.sort_by_key(|k| (k.sample.start_time_ns, k.sample.tid));
        for k in new {
            out.push(k.sample.clone());
            self.list.push(k);
            moved = true;
        }
        if moved {
            self.reindex();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::why::WhySample;
    use crate::model::Baseline;

    fn kept(tid: u32, voluntary: u64, cgroup_id: u64) -> Kept {
        let sample = ThreadSample {
            tid,
            pid: 1,
            start_time_ns: 100 + u64::from(tid),
            voluntary,
            baseline: Some(Baseline::default()),
            cgroup: Some(0),
            why: Some(Arc::new(WhySample {
                preempted_by: vec![(9, 2)],
                preempted_by_rest: 1,
                ..Default::default()
            })),
            ..Default::default()
        };
        Kept { sample, cgroup_id }
    }

    fn fresh(list: Vec<Kept>) -> IdMap<ThreadKey, Kept> {
        list.into_iter().map(|k| (key(&k), k)).collect()
    }

    #[test]
    fn unchanged_threads_repeat_without_this_intervals_news() {
        let mut kt = KeptThreads::default();
        kt.replace([kept(1, 5, 70), kept(2, 6, 80), kept(3, 7, 70)].into_iter());
        let dead: IdSet<ThreadKey> = [(3, 103)].into_iter().collect();
        let mut out = Vec::new();
        // the cgroups of this Sample's table: 80 first, then 70
        let table = |id| Some(if id == 80 { 0 } else { 1 });
        let late = kept(4, 1, 70);
        kt.assemble(fresh(vec![kept(2, 9, 80), late]), &dead, table, &mut out);
        let got: Vec<_> = out
            .iter()
            .map(|t| (t.tid, t.voluntary, t.baseline.is_some(), t.cgroup))
            .collect();
        // 1 repeated (no baseline, its cgroup re-interned), 2 fresh as read,
        // 3 gone, 4 new
        assert_eq!(
            got,
            [
                (1, 5, false, Some(1)),
                (2, 9, true, Some(0)),
                (4, 1, true, Some(0))
            ]
        );
        let w = out[0].why.as_ref().unwrap();
        assert!(w.preempted_by.is_empty() && w.preempted_by_rest == 0);
        assert_eq!(out[1].why.as_ref().unwrap().preempted_by, [(9, 2)]);
        // the next drain starts from what this one made
        assert!(!kt.first_seen(&(4, 104)) && !kt.first_seen(&(2, 102)));
        let mut again = Vec::new();
        kt.assemble(IdMap::default(), &IdSet::default(), table, &mut again);
        let tids: Vec<_> = again.iter().map(|t| (t.tid, t.voluntary)).collect();
        assert_eq!(tids, [(1, 5), (2, 9), (4, 1)]);
    }

    #[test]
    fn a_thread_is_first_seen_only_if_unknown_and_started_after_the_full_pass() {
        let mut kt = KeptThreads::default();
        kt.replace([kept(1, 5, 0)].into_iter());
        kt.full_pass_ns = 150;
        assert!(!kt.first_seen(&(1, 101)));
        // unknown and started before the full pass: it was listed then,
        // or filtered out; not new
        assert!(!kt.first_seen(&(7, 140)));
        assert!(kt.first_seen(&(7, 160)));
    }
}
