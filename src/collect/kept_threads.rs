//! The threads of the last Sample, kept by the BPF source while it reads
//! only the threads that changed (changed_threads.rs): the next Sample is
//! its live ones, each replaced by its fresh copy if it changed, without
//! the ones that exited, plus the new ones. The list is the Sample's own
//! (shared, `Threads`), not a copy.
use crate::model::fasthash::{IdFilter, IdMap, IdSet};
use std::sync::Arc;

use crate::model::why::{bound_pairs, PairKind, WhySample};
use crate::model::{ThreadSample, Threads};

use super::bpf_threads::ThreadKey;
use super::why_drain::{give_pairs, Pairs};

/// A fresh thread as read this drain, and its cgroup's kernel id (the
/// Sample's cgroup index is only good for that Sample's table).
pub(super) struct Kept {
    pub sample: ThreadSample,
    pub cgroup_id: u64,
}

/// The fresh threads of a drain by key. A thread read twice (switched out
/// again, or on a CPU, while the sets were read) comes twice: the later
/// copy is the newer, but the interval's preemptors went to the first
/// (they are taken out of the drained pairs once), so they move over.
pub(super) fn fresh_by_key(list: impl IntoIterator<Item = Kept>) -> IdMap<ThreadKey, Kept> {
    let mut out: IdMap<ThreadKey, Kept> = IdMap::default();
    for mut later in list {
        if let Some(earlier) = out.remove(&key(&later.sample)) {
            take_preemptors(&mut later.sample, earlier.sample);
        }
        out.insert(key(&later.sample), later);
    }
    out
}

fn take_preemptors(later: &mut ThreadSample, earlier: ThreadSample) {
    let Some(from) = earlier.why.filter(|w| w.has_pairs()) else {
        return;
    };
    let Some(into) = later.why.as_mut() else {
        return;
    };
    for kind in PairKind::ALL {
        let (list, rest) = from.pairs(kind);
        if list.is_empty() && rest == 0 {
            continue;
        }
        // both copies may hold some: the wakers counted in a record's own
        // slots go with each copy read (collect/waker_slots.rs)
        let (have, have_rest) = into.pairs(kind);
        let mut all = have.to_vec();
        for &(id, n) in list {
            match all.iter_mut().find(|p| p.0 == id) {
                Some(p) => p.1 = p.1.saturating_add(n),
                None => all.push((id, n)),
            }
        }
        let (kept, more) = bound_pairs(all);
        let (l, r) = Arc::make_mut(into).pairs_mut(kind);
        *l = kept;
        *r = have_rest.saturating_add(rest).saturating_add(more);
    }
}

#[derive(Default)]
pub(super) struct KeptThreads {
    /// the last Sample's threads: its exited ones first, then the live ones
    list: Threads,
    /// where the live ones begin in `list`
    live_from: usize,
    /// the cgroup kernel id of each live one, in order
    cgroup_ids: Vec<u64>,
    /// the live ones
    index: IdSet<ThreadKey>,
    /// CLOCK_MONOTONIC when the last full pass began: a thread started
    /// later and not kept was in no Sample yet
    pub full_pass_ns: u64,
}

fn key(t: &ThreadSample) -> ThreadKey {
    (t.tid, t.start_time_ns)
}

impl KeptThreads {
    /// Keep the Sample's `threads` (shared); `cgroup_ids` are theirs, one
    /// per thread. The exited ones come first (the source lists them
    /// first). `reindex`: the live ones are not those of the last list in
    /// the same order.
    pub fn keep(&mut self, threads: &Threads, mut cgroup_ids: Vec<u64>, reindex: bool) {
        let live_from = threads.iter().take_while(|t| t.exited).count();
        cgroup_ids.drain(..live_from.min(cgroup_ids.len()));
        self.list = threads.share();
        self.live_from = live_from;
        self.cgroup_ids = cgroup_ids;
        if reindex {
            let live = &self.list[live_from..];
            self.index.clear();
            self.index.extend(live.iter().map(key));
        }
    }

    fn live(&self) -> &[ThreadSample] {
        self.list.get(self.live_from..).unwrap_or_default()
    }

    /// Whether `key` was in no Sample yet although it may have started
    /// before the last drain: it had not switched out (nor run) until now.
    pub fn first_seen(&self, key: &ThreadKey) -> bool {
        key.1 >= self.full_pass_ns && !self.index.contains(key)
    }

    /// The Sample's live threads into `out` (and their cgroup ids into
    /// `ids`): every kept one, replaced by its fresh copy if it changed
    /// (`fresh`), without the `dead`; then the fresh ones that are new,
    /// oldest first. `refresh` re-interns a kept thread's cgroup for this
    /// Sample's table. `late`: the drain's pairs no fresh copy took, which
    /// go to the unchanged threads they belong to (a pair counted after the
    /// last drain read its thread, which has not switched since). Returns
    /// whether the live list is not the kept one in the same order (for
    /// `keep`).
    pub fn assemble(
        &self,
        mut fresh: IdMap<ThreadKey, Kept>,
        late: &mut Pairs,
        dead: &IdSet<ThreadKey>,
        mut refresh: impl FnMut(u64) -> Option<u32>,
        out: &mut Vec<ThreadSample>,
        ids: &mut Vec<u64>,
    ) -> bool {
        let mut moved = false;
        // most kept threads are neither fresh nor dead: a filter on their
        // tids spares each a map lookup (and the last cgroup one a lookup
        // in the table: threads side by side share their cgroup)
        let may_change = IdFilter::of(fresh.keys().chain(dead).map(|k| k.0));
        let mut last_cgroup: Option<(u64, Option<u32>)> = None;
        let may_be_late = IdFilter::of(late.iter().flat_map(|m| m.keys().copied()));
        let is_late = |tid: u32, late: &Pairs| {
            may_be_late.may_hold(tid) && late.iter().any(|m| m.contains_key(&tid))
        };
        for (t, &id) in self.live().iter().zip(&self.cgroup_ids) {
            if t.exited {
                moved = true;
                continue;
            }
            if may_change.may_hold(t.tid) {
                let k = key(t);
                if dead.contains(&k) {
                    moved = true;
                    continue;
                }
                if let Some(f) = fresh.remove(&k) {
                    out.push(f.sample);
                    ids.push(f.cgroup_id);
                    continue;
                }
            }
            // unchanged: no new rates, no preemptors this interval
            let mut t = t.clone();
            t.baseline = None;
            t.cgroup = match last_cgroup {
                Some((last, i)) if last == id => i,
                _ => {
                    let i = refresh(id);
                    last_cgroup = Some((id, i));
                    i
                }
            };
            let late_here = is_late(t.tid, late);
            let had = |w: &&mut Arc<WhySample>| late_here || w.has_pairs();
            // shared with the Samples that had it: copied only if it
            // listed preemptors or wakers, or has some now
            if let Some(w) = t.why.as_mut().filter(had) {
                give_pairs(Arc::make_mut(w), t.tid, late);
            }
            out.push(t);
            ids.push(id);
        }
        let mut new: Vec<Kept> = fresh.into_values().collect();
        new.sort_by_key(|k| (k.sample.start_time_ns, k.sample.tid));
        moved |= !new.is_empty();
        for k in new {
            out.push(k.sample);
            ids.push(k.cgroup_id);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::why::WhySample;

    fn kept(tid: u32, voluntary: u64, cgroup_id: u64) -> Kept {
        let sample = ThreadSample {
            tid,
            pid: 1,
            start_time_ns: 100 + u64::from(tid),
            voluntary,
            baseline: Some(Box::default()),
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
        list.into_iter().map(|k| (key(&k.sample), k)).collect()
    }

    /// Kept as a full pass leaves them.
    fn after_full_pass(list: Vec<Kept>) -> KeptThreads {
        let mut kt = KeptThreads::default();
        let ids = list.iter().map(|k| k.cgroup_id).collect();
        let threads: Threads = list.into_iter().map(|k| k.sample).collect();
        kt.keep(&threads, ids, true);
        kt
    }

    /// One drain: assemble, then keep what it made (as the source does).
    fn drain(
        kt: &mut KeptThreads,
        fresh: IdMap<ThreadKey, Kept>,
        dead: &IdSet<ThreadKey>,
        table: impl FnMut(u64) -> Option<u32>,
    ) -> Threads {
        let (mut out, mut ids) = (Vec::new(), Vec::new());
        let mut late = Pairs::default();
        let moved = kt.assemble(fresh, &mut late, dead, table, &mut out, &mut ids);
        let threads = Threads::from(out);
        kt.keep(&threads, ids, moved);
        threads
    }

    #[test]
    fn a_thread_read_twice_keeps_the_later_copy_and_the_preemptors() {
        // the first copy took the interval's pairs; the later one is newer
        let first = kept(5, 3, 70);
        let mut later = kept(5, 4, 70);
        later.sample.why = Some(Arc::default());
        let got = fresh_by_key([first, later, kept(6, 1, 70)]);
        assert_eq!(got.len(), 2);
        let t = &got[&(5, 105)].sample;
        assert_eq!(t.voluntary, 4, "the later copy");
        let w = t.why.as_ref().unwrap();
        assert_eq!(
            (w.preempted_by.as_slice(), w.preempted_by_rest),
            (&[(9, 2)][..], 1)
        );
    }

    #[test]
    fn unchanged_threads_repeat_without_this_intervals_news() {
        let mut kt = after_full_pass(vec![kept(1, 5, 70), kept(2, 6, 80), kept(3, 7, 70)]);
        let dead: IdSet<ThreadKey> = [(3, 103)].into_iter().collect();
        // the cgroups of this Sample's table: 80 first, then 70
        let table = |id| Some(if id == 80 { 0 } else { 1 });
        let late = kept(4, 1, 70);
        let out = drain(&mut kt, fresh(vec![kept(2, 9, 80), late]), &dead, table);
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
        let again = drain(&mut kt, IdMap::default(), &IdSet::default(), table);
        let tids: Vec<_> = again.iter().map(|t| (t.tid, t.voluntary)).collect();
        assert_eq!(tids, [(1, 5), (2, 9), (4, 1)]);
        // the kept list is the Sample's own, not a copy
        assert!(std::ptr::eq(kt.list.as_ptr(), again.as_ptr()));
    }

    #[test]
    fn the_exited_threads_of_the_last_sample_are_not_repeated() {
        let mut gone = kept(9, 3, 70);
        gone.sample.exited = true;
        let mut kt = after_full_pass(vec![gone, kept(1, 5, 70), kept(2, 6, 80)]);
        let (mut out, mut ids) = (Vec::new(), Vec::new());
        let table = |id| Some(if id == 80 { 0 } else { 1 });
        let moved = kt.assemble(
            IdMap::default(),
            &mut Pairs::default(),
            &IdSet::default(),
            table,
            &mut out,
            &mut ids,
        );
        let got: Vec<_> = out.iter().map(|t| (t.tid, t.cgroup)).collect();
        assert_eq!(got, [(1, Some(1)), (2, Some(0))]);
        assert_eq!(ids, [70, 80]);
        // the live ones, in the same order: nothing to re-index
        assert!(!moved);
        kt.keep(&Threads::from(out), ids, moved);
        assert!(kt.first_seen(&(9, 109)) && !kt.first_seen(&(1, 101)));
    }

    #[test]
    fn pairs_counted_after_an_unchanged_thread_was_read_come_with_it() {
        // thread 1 was preempted by 9 after the last drain read it, and has
        // not switched since: this drain's pairs are its, not lost
        let kt = after_full_pass(vec![kept(1, 5, 70), kept(2, 6, 70)]);
        let mut late = Pairs::default();
        late[PairKind::Preempt as usize].insert(1, vec![(9, 1)]);
        // a thread outside the Sample (filtered out): left alone
        late[PairKind::Wake as usize].insert(3, vec![(9, 4)]);
        let (mut out, mut ids) = (Vec::new(), Vec::new());
        kt.assemble(
            IdMap::default(),
            &mut late,
            &IdSet::default(),
            |_| Some(0),
            &mut out,
            &mut ids,
        );
        let why = |i: usize| out[i].why.as_deref().unwrap();
        assert_eq!(
            (why(0).preempted_by.as_slice(), why(0).preempted_by_rest),
            (&[(9, 1)][..], 0)
        );
        // the other one's pairs of the last interval are not repeated
        assert!(!why(1).has_pairs(), "{:?}", why(1));
        assert!(late[0].is_empty() && late[1].contains_key(&3));
    }

    #[test]
    fn a_thread_is_first_seen_only_if_unknown_and_started_after_the_full_pass() {
        let mut kt = after_full_pass(vec![kept(1, 5, 0)]);
        kt.full_pass_ns = 150;
        assert!(!kt.first_seen(&(1, 101)));
        // unknown and started before the full pass: it was listed then,
        // or filtered out; not new
        assert!(!kt.first_seen(&(7, 140)));
        assert!(kt.first_seen(&(7, 160)));
    }
}
