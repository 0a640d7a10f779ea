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
use crate::model::counters::THREAD_COUNTERS;
use crate::model::fasthash::{IdMap, IdSet};

use super::bpf_skel::types::thread_stats;

/// (tid, start time): a thread, across tid reuse.
pub type ThreadKey = (u32, u64);

pub fn key_of(s: &thread_stats) -> ThreadKey {
    (s.tid, s.start_time)
}

/// What one drain reports (the whole-list form, `ThreadBook::drain`).
#[cfg(test)]
pub struct Drained {
    /// (record, exited), each thread once
    pub threads: Vec<(thread_stats, bool)>,
    /// threads first listed now that had a torn first copy last time: they
    /// started inside the previous interval even if their start time is older
    pub late_new: IdSet<ThreadKey>,
}

/// Of a thread's last good copy, what a torn copy takes from it: the
/// counters the probe keeps, its histograms as (slot, count) pairs of the
/// non-empty slots only (an idle thread's few; the whole record is 1.5 KB),
/// and its "why" counters only if any is non-zero. 64 bytes for a thread
/// that never switched while watched: there is one per live thread.
struct LastGood {
    nvcsw: u64,
    nivcsw: u64,
    switch_outs: u64,
    cgroup_id: u64,
    seen: u32,
    /// the drain that last listed the thread (`ThreadBook::generation`)
    listed: u32,
    /// slot index into slice, wakeup wait, preempt wait (in that order,
    /// HIST_SLOTS each) and its count
    hists: Box<[(u16, u32)]>,
    why: Option<Box<WhyCounters>>,
}

/// The probe's "why" counters of a record, and its generic counters
/// (model/counters.rs: a slot added there is kept here with no change).
struct WhyCounters {
    counters: [u64; THREAD_COUNTERS],
    mig_cause: [u64; 5],
    blocked_on: [u64; 9],
}

impl WhyCounters {
    const ZERO: WhyCounters = WhyCounters {
        counters: [0; THREAD_COUNTERS],
        mig_cause: [0; 5],
        blocked_on: [0; 9],
    };

    /// `kept` (None: all zero) holds what `s` does.
    fn same(kept: Option<&WhyCounters>, s: &thread_stats) -> bool {
        let k = kept.unwrap_or(&WhyCounters::ZERO);
        k.counters == s.counters && k.mig_cause == s.mig_cause && k.blocked_on == s.blocked_on
    }

    fn of(s: &thread_stats) -> Option<Box<WhyCounters>> {
        (!WhyCounters::same(None, s)).then(|| {
            Box::new(WhyCounters {
                counters: s.counters,
                mig_cause: s.mig_cause,
                blocked_on: s.blocked_on,
            })
        })
    }
}

fn hists_of(s: &thread_stats) -> [&[u32]; 3] {
    [&s.slice_hist, &s.wakeup_wait_hist, &s.preempt_wait_hist]
}

impl LastGood {
    fn of(s: &thread_stats, listed: u32) -> LastGood {
        let n = s.slice_hist.len();
        let hists = hists_of(s)
            .iter()
            .enumerate()
            .flat_map(|(h, slots)| {
                slots
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| c != 0)
                    .map(move |(i, &c)| ((h * n + i) as u16, c))
            })
            .collect();
        LastGood {
            nvcsw: s.nvcsw,
            nivcsw: s.nivcsw,
            switch_outs: s.switch_outs,
            cgroup_id: s.cgroup_id,
            seen: s.seen,
            listed,
            hists,
            why: WhyCounters::of(s),
        }
    }

    /// Nothing the probe counts moved: the switch-out and migrate probes
    /// change these together with the histograms.
    fn same_as(&self, s: &thread_stats) -> bool {
        self.switch_outs == s.switch_outs
            && self.nvcsw == s.nvcsw
            && self.nivcsw == s.nivcsw
            && self.seen == s.seen
            && self.cgroup_id == s.cgroup_id
            && WhyCounters::same(self.why.as_deref(), s)
    }

    /// Keep a torn record's identity and kernel-read fields, take the
    /// counters kept by the probe from this last good copy.
    fn mend(&self, torn: &thread_stats) -> thread_stats {
        let mut out = *torn;
        out.nvcsw = self.nvcsw;
        out.nivcsw = self.nivcsw;
        out.switch_outs = self.switch_outs;
        let why = self.why.as_deref().unwrap_or(&WhyCounters::ZERO);
        out.counters = why.counters;
        out.mig_cause = why.mig_cause;
        out.blocked_on = why.blocked_on;
        out.seen = self.seen;
        out.torn = 0;
        if out.cgroup_id == 0 {
            out.cgroup_id = self.cgroup_id;
        }
        let n = out.slice_hist.len();
        out.slice_hist.fill(0);
        out.wakeup_wait_hist.fill(0);
        out.preempt_wait_hist.fill(0);
        for &(at, c) in self.hists.iter() {
            let (h, i) = (usize::from(at) / n, usize::from(at) % n);
            match h {
                0 => out.slice_hist[i] = c,
                1 => out.wakeup_wait_hist[i] = c,
                _ => out.preempt_wait_hist[i] = c,
            }
        }
        out
    }
}

#[derive(Default)]
pub struct ThreadBook {
    /// the live threads reported by the previous drain (good copies); a
    /// drain marks what it lists with its generation rather than moving
    /// 50,000 entries to a new map
    last: IdMap<ThreadKey, LastGood>,
    generation: u32,
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

/// One drain in progress: the records stream through `offer` one by one
/// (no list of every thread's 1.5 KB record is ever held).
pub struct Pass {
    generation: u32,
    dead: IdSet<ThreadKey>,
    /// exited threads still listed (a zombie leader until its process is
    /// reaped) stay remembered as long as they are listed
    still_exited: IdSet<ThreadKey>,
    deferred: IdSet<ThreadKey>,
}

impl Pass {
    /// The threads whose exit records this drain reports.
    pub fn dead(&self) -> &IdSet<ThreadKey> {
        &self.dead
    }
}

/// What `offer` makes of a listed record.
pub enum Offer {
    /// not reported (exited, or a new thread's torn first copy)
    Skip,
    /// reported as read; `late_new`: new since the previous drain although
    /// its start time is older (its first copy was torn then)
    Report { late_new: bool },
    /// a torn copy of a known thread, mended from its last good one
    Mended(Box<thread_stats>),
}

impl ThreadBook {
    /// Start a drain with the exited threads' final records; returns them
    /// ready to report (the exit path does not read the cgroup: the last
    /// listing's holds).
    pub fn begin(&mut self, exited: &mut [thread_stats]) -> Pass {
        self.generation = self.generation.wrapping_add(1);
        for s in exited.iter_mut() {
            if s.cgroup_id == 0 {
                if let Some(l) = self.last.get(&key_of(s)) {
                    s.cgroup_id = l.cgroup_id;
                }
            }
        }
        let dead: IdSet<ThreadKey> = exited.iter().map(key_of).collect();
        Pass {
            generation: self.generation,
            still_exited: dead.clone(),
            dead,
            deferred: IdSet::default(),
        }
    }

    /// A record the iterator listed: what to report of it.
    pub fn offer(&mut self, pass: &mut Pass, s: &thread_stats) -> Offer {
        let key = key_of(s);
        if pass.dead.contains(&key) {
            return Offer::Skip;
        }
        if self.last_exited.contains(&key) {
            pass.still_exited.insert(key);
            return Offer::Skip;
        }
        let g = pass.generation;
        if s.torn != 0 {
            self.torn_reads += 1;
            return match self.last.get_mut(&key) {
                Some(l) => {
                    l.listed = g;
                    Offer::Mended(Box::new(l.mend(s)))
                }
                None => {
                    pass.deferred.insert(key);
                    Offer::Skip
                }
            };
        }
        match self.last.get_mut(&key) {
            // unchanged since (an idle thread): nothing to rebuild
            Some(l) if l.same_as(s) => l.listed = g,
            Some(l) => *l = LastGood::of(s, g),
            None => {
                self.last.insert(key, LastGood::of(s, g));
            }
        }
        Offer::Report {
            late_new: self.deferred.contains(&key),
        }
    }

    /// End the drain: what the previous one listed and this one did not
    /// (nor reported exited) vanished.
    pub fn finish(&mut self, pass: Pass) {
        // vanished without an exit record: the final switch was not traced
        // (or the record comes with the next drain)
        self.exits_untraced += self
            .vanished
            .iter()
            .filter(|k| !pass.dead.contains(k))
            .count() as u64;
        let g = pass.generation;
        self.vanished = self
            .last
            .iter()
            .filter(|(k, l)| l.listed != g && !pass.deferred.contains(k) && !pass.dead.contains(k))
            .map(|(k, _)| *k)
            .collect();
        self.last.retain(|_, l| l.listed == g);
        self.last_exited = pass.still_exited;
        self.deferred = pass.deferred;
    }

    /// End a drain that read only the threads that changed: nothing can be
    /// said to have vanished (the next full pass decides that); the exited
    /// are forgotten. Not added to `last_exited`: at 10,000 exits a second
    /// that set would grow until the next full pass, and both kernel readers
    /// already skip a thread whose exit record went out (a zombie leader).
    pub fn finish_changed(&mut self, pass: Pass) {
        for k in pass.dead.iter() {
            self.last.remove(k);
        }
        self.deferred.extend(pass.deferred);
    }

    /// A drain that failed part-way: keep what the previous one knew (and
    /// the copies this one got), decide nothing about the rest.
    pub fn abandon(&mut self, pass: Pass) {
        self.deferred.extend(pass.deferred);
    }

    /// The whole drain at once (tests): exited first, then the listed.
    #[cfg(test)]
    pub fn drain(&mut self, mut exited: Vec<thread_stats>, live: Vec<thread_stats>) -> Drained {
        let mut pass = self.begin(&mut exited);
        let mut late_new = IdSet::default();
        let mut threads: Vec<(thread_stats, bool)> =
            exited.into_iter().map(|s| (s, true)).collect();
        for s in live {
            match self.offer(&mut pass, &s) {
                Offer::Skip => {}
                Offer::Report { late_new: new } => {
                    if new {
                        late_new.insert(key_of(&s));
                    }
                    threads.push((s, false));
                }
                Offer::Mended(m) => threads.push((*m, false)),
            }
        }
        self.finish(pass);
        Drained { threads, late_new }
    }

    /// Keys of the threads the last drain found alive (listed, or left for
    /// the next drain after a torn first copy).
    pub fn last_live(&self) -> IdSet<ThreadKey> {
        self.last
            .keys()
            .chain(self.deferred.iter())
            .copied()
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
    fn a_mended_copy_has_every_histogram_slot_and_why_of_the_last_good_one() {
        let mut b = ThreadBook::default();
        let mut good = rec(1, 10, false);
        let n = good.slice_hist.len();
        good.slice_hist[n - 1] = 7;
        good.wakeup_wait_hist[0] = u32::MAX;
        good.preempt_wait_hist[n / 2] = 3;
        good.blocked_on[2] = 4;
        good.mig_cause[1] = 5;
        b.drain(vec![], vec![good]);
        // the same thread again, unchanged: the kept copy is reused; then
        // migrated by the load balancer without a switch: rebuilt
        let mut moved = good;
        moved.mig_cause[1] = 6;
        b.drain(vec![], vec![good]);
        b.drain(vec![], vec![moved]);
        let mut torn = rec(1, 0, true);
        torn.nice = -3;
        let d = b.drain(vec![], vec![torn]);
        let (m, _) = d.threads[0];
        assert_eq!(m.slice_hist, moved.slice_hist);
        assert_eq!(m.wakeup_wait_hist, moved.wakeup_wait_hist);
        assert_eq!(m.preempt_wait_hist, moved.preempt_wait_hist);
        assert_eq!(
            (m.blocked_on, m.mig_cause),
            (moved.blocked_on, moved.mig_cause)
        );
        assert_eq!((m.nvcsw, m.nice, m.torn), (10, -3, 0));
    }

    #[test]
    fn an_abandoned_pass_forgets_nothing() {
        let mut b = ThreadBook::default();
        b.drain(vec![], vec![rec(1, 1, false), rec(2, 1, false)]);
        let mut pass = b.begin(&mut []);
        assert!(matches!(
            b.offer(&mut pass, &rec(1, 2, false)),
            Offer::Report { .. }
        ));
        b.abandon(pass);
        // 2 was never reached: neither vanished nor forgotten
        let d = b.drain(vec![], vec![rec(1, 3, false), rec(2, 0, true)]);
        assert_eq!(counts(&d), [(1, 3, 3, false), (2, 1, 1, false)]);
        b.drain(vec![], vec![rec(1, 3, false), rec(2, 2, false)]);
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
