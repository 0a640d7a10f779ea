//! From the task iterator's records and the exited threads' final counts to
//! one drain's thread list, with the rules that keep cumulative counters
//! honest across drains:
//! - a record the iterator could not copy consistently (`torn`) keeps the
//!   thread's last good counters, and the miss is counted; a thread with no
//!   good copy yet waits for the next drain (never a zeroed copy: a drop to
//!   zero would be read as the thread's whole history in one interval);
//! - a thread reported exited is never reported live again;
//! - a thread listed last time that is neither listed nor exited now died
//!   without its final switch being traced: counted.
use crate::model::fasthash::{IdMap, IdSet};

use super::bpf_skel::types::thread_stats;

/// (tid, start time): a thread, across tid reuse.
pub type ThreadKey = (u32, u64);

pub fn key_of(s: &thread_stats) -> ThreadKey {
    (s.tid, s.start_time)
}

/// What one drain reports.
pub struct Drained {
    /// (record, exited), each thread once
    pub threads: Vec<(thread_stats, bool)>,
    /// threads first listed now that had a torn first copy last time: they
    /// started inside the previous interval even if their start time is older
    pub late_new: IdSet<ThreadKey>,
}

#[derive(Default)]
pub struct ThreadBook {
    /// the live records reported by the previous drain (good copies)
    last: Vec<thread_stats>,
    /// threads exited in the previous drain (zombie leaders stay listed)
    last_exited: IdSet<ThreadKey>,
    /// new threads whose first copy was torn: reported next time
    deferred: IdSet<ThreadKey>,
    /// listed before, gone now, no exit record yet: the record may be on
    /// its way (the thread died between taking the exits and listing the
    /// threads); counted as untraced if it is not in the next drain either
    vanished: IdSet<ThreadKey>,
    pub torn_reads: u64,
    pub exits_untraced: u64,
}

/// Keep a torn record's identity and kernel-read fields, take the counters
/// kept by the probe from the last good copy.
fn mend(torn: &thread_stats, good: &thread_stats) -> thread_stats {
    let mut out = *torn;
    out.nvcsw = good.nvcsw;
    out.nivcsw = good.nivcsw;
    out.switch_outs = good.switch_outs;
    out.cross_node_migrations = good.cross_node_migrations;
    out.slice_hist = good.slice_hist;
    out.wakeup_wait_hist = good.wakeup_wait_hist;
    out.preempt_wait_hist = good.preempt_wait_hist;
    out.mig_cause = good.mig_cause;
    out.blocked_on = good.blocked_on;
    out.seen = good.seen;
    out.torn = 0;
    if out.cgroup_id == 0 {
        out.cgroup_id = good.cgroup_id;
    }
    out
}

impl ThreadBook {
    pub fn drain(&mut self, exited: Vec<thread_stats>, live: Vec<thread_stats>) -> Drained {
        let dead: IdSet<ThreadKey> = exited.iter().map(key_of).collect();
        let mut index: Option<IdMap<ThreadKey, usize>> = None;
        let mut kept = Vec::with_capacity(live.len());
        let mut late_new = IdSet::default();
        let mut deferred = IdSet::default();
        // exited threads still listed (a zombie leader until its process is
        // reaped) stay remembered as long as they are listed
        let mut still_exited = dead.clone();
        for s in live {
            let key = key_of(&s);
            if dead.contains(&key) {
                continue;
            }
            if self.last_exited.contains(&key) {
                still_exited.insert(key);
                continue;
            }
            let s = if s.torn != 0 {
                self.torn_reads += 1;
                let index = index.get_or_insert_with(|| {
                    self.last
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (key_of(r), i))
                        .collect()
                });
                match index.get(&key) {
                    Some(&i) => mend(&s, &self.last[i]),
                    None => {
                        deferred.insert(key);
                        continue;
                    }
                }
            } else {
                if self.deferred.contains(&key) {
                    late_new.insert(key);
                }
                s
            };
            kept.push(s);
        }
        // vanished without an exit record: the final switch was not traced
        // (or the record comes with the next drain)
        let now: IdSet<ThreadKey> = kept
            .iter()
            .map(key_of)
            .chain(deferred.iter().copied())
            .collect();
        self.exits_untraced += self.vanished.iter().filter(|k| !dead.contains(k)).count() as u64;
        self.vanished = self
            .last
            .iter()
            .map(key_of)
            .filter(|k| !now.contains(k) && !dead.contains(k))
            .collect();
        // the exit path does not read the cgroup: the last listing's holds
        let last_index: IdMap<ThreadKey, usize> = if exited.is_empty() {
            IdMap::default()
        } else {
            self.last
                .iter()
                .enumerate()
                .map(|(i, r)| (key_of(r), i))
                .collect()
        };
        let threads = exited
            .iter()
            .map(|s| {
                let mut s = *s;
                if s.cgroup_id == 0 {
                    if let Some(&i) = last_index.get(&key_of(&s)) {
                        s.cgroup_id = self.last[i].cgroup_id;
                    }
                }
                (s, true)
            })
            .chain(kept.iter().map(|s| (*s, false)))
            .collect();
        self.last = kept;
        self.last_exited = still_exited;
        self.deferred = deferred;
        Drained { threads, late_new }
    }

    /// Keys of the threads the last drain found alive (listed, or left for
    /// the next drain after a torn first copy).
    pub fn last_live(&self) -> IdSet<ThreadKey> {
        self.last
            .iter()
            .map(key_of)
            .chain(self.deferred.iter().copied())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(tid: u32, nvcsw: u64, torn: bool) -> thread_stats {
        let mut s = thread_stats {
            tid,
            pid: tid,
            start_time: 1000 + tid as u64,
            nvcsw,
            seen: 1,
            torn: torn as u32,
            ..Default::default()
        };
        s.slice_hist[3] = nvcsw as u32;
        s
    }

    fn counts(d: &Drained) -> Vec<(u32, u64, u64, bool)> {
        d.threads
            .iter()
            .map(|(s, e)| (s.tid, s.nvcsw, u64::from(s.slice_hist[3]), *e))
            .collect()
    }

    #[test]
    fn the_record_fits_a_2_kib_task_storage_allocation() {
        // task storage puts the value at offset 72 of its element and
        // allocates in power-of-two classes: past 2 KiB every thread that
        // ever ran would cost 4 KiB of kernel memory. Hence u32 slots (one
        // wraps after 2^32 events, about 6 h at 200,000 switches/s in that
        // one slot: counted as an anomaly for that interval).
        let s = thread_stats::default();
        assert_eq!(std::mem::size_of_val(&s.slice_hist[0]), 4);
        assert!(72 + std::mem::size_of::<thread_stats>() <= 2048);
    }

    #[test]
    fn torn_copy_keeps_last_good_counters_and_counts_the_miss() {
        let mut b = ThreadBook::default();
        b.drain(vec![], vec![rec(1, 10, false), rec(2, 5, false)]);
        // a torn copy's counters are garbage (here: zero)
        let d = b.drain(vec![], vec![rec(1, 0, true), rec(2, 6, false)]);
        assert_eq!(counts(&d), [(1, 10, 10, false), (2, 6, 6, false)]);
        assert_eq!(b.torn_reads, 1);
        let d = b.drain(vec![], vec![rec(1, 12, false), rec(2, 7, false)]);
        assert_eq!(counts(&d), [(1, 12, 12, false), (2, 7, 7, false)]);
        assert_eq!(b.exits_untraced, 0);
    }

    #[test]
    fn an_exit_record_one_drain_late_is_not_an_untraced_exit() {
        let mut b = ThreadBook::default();
        b.drain(vec![], vec![rec(1, 1, false), rec(2, 1, false)]);
        // 1 died after the exits were taken: unlisted, record not yet here
        let d = b.drain(vec![], vec![rec(2, 2, false)]);
        assert_eq!(counts(&d), [(2, 2, 2, false)]);
        let d = b.drain(vec![rec(1, 3, false)], vec![rec(2, 3, false)]);
        assert_eq!(counts(&d), [(1, 3, 3, true), (2, 3, 3, false)]);
        b.drain(vec![], vec![rec(2, 4, false)]);
        assert_eq!(b.exits_untraced, 0);
    }

    #[test]
    fn a_new_thread_with_a_torn_first_copy_waits_and_is_marked_new() {
        let mut b = ThreadBook::default();
        let d = b.drain(vec![], vec![rec(3, 0, true)]);
        assert!(d.threads.is_empty());
        let d = b.drain(vec![], vec![rec(3, 4, false)]);
        assert_eq!(counts(&d), [(3, 4, 4, false)]);
        assert!(d.late_new.contains(&(3, 1003)));
        assert_eq!((b.torn_reads, b.exits_untraced), (1, 0));
    }

    #[test]
    fn exited_once_never_live_again_and_untraced_exits_are_counted() {
        let mut b = ThreadBook::default();
        b.drain(
            vec![],
            vec![rec(1, 1, false), rec(2, 1, false), rec(4, 1, false)],
        );
        // 1 exits (listed too, as a zombie leader); 4 vanishes untraced
        let d = b.drain(
            vec![rec(1, 2, false)],
            vec![rec(1, 2, false), rec(2, 2, false)],
        );
        assert_eq!(counts(&d), [(1, 2, 2, true), (2, 2, 2, false)]);
        // 4's exit record may still come with the next drain: not yet
        assert_eq!(b.exits_untraced, 0);
        // the zombie is still listed by the iterator: not reported again
        for n in 3..6 {
            let d = b.drain(vec![], vec![rec(1, 2, false), rec(2, n, false)]);
            assert_eq!(counts(&d), [(2, n, n, false)]);
            assert_eq!(b.exits_untraced, 1);
        }
        // reaped at last: not an untraced exit either
        b.drain(vec![], vec![rec(2, 6, false)]);
        assert_eq!(b.exits_untraced, 1);
    }

    #[test]
    fn an_exited_thread_keeps_the_cgroup_it_was_last_listed_in() {
        let mut b = ThreadBook::default();
        let mut r = rec(1, 1, false);
        r.cgroup_id = 77;
        b.drain(vec![], vec![r]);
        // the exit record has no cgroup; neither has a torn copy
        let d = b.drain(vec![rec(1, 2, false)], vec![]);
        assert_eq!(d.threads[0].0.cgroup_id, 77);
        let mut b = ThreadBook::default();
        b.drain(vec![], vec![r]);
        let d = b.drain(vec![], vec![rec(1, 0, true)]);
        assert_eq!(d.threads[0].0.cgroup_id, 77);
    }
}
