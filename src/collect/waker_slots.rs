//! The wakers a probe record counts in its own slots (bpf/why.bpf.h
//! `why_wakeup`: the first few distinct wakers of a thread, each with a
//! cumulative count, so most wakeups cost no map update). A slot's waker
//! never changes, so a drain's share of it is the difference to the last
//! read of the same thread; it joins the interval's (wakee, waker) pairs
//! beside those the pair map held.
use super::bpf_skel::types::thread_stats;
use super::why_drain::Pairs;
use crate::model::fasthash::IdMap;
use crate::model::why::PairKind;

/// WAKER_SLOTS of bpf/schedtop.h
const SLOTS: usize = 4;

/// What the last read of one thread's slots had.
#[derive(Default)]
struct Read {
    start_time: u64,
    ids: [u32; SLOTS],
    counts: [u64; SLOTS],
    /// the full pass that last read it
    pass: u64,
}

/// The last read of every thread that has a waker in its slots.
#[derive(Default)]
pub(super) struct WakerSlots {
    read: IdMap<u32, Read>,
    pass: u64,
}

impl WakerSlots {
    /// Add what `s`'s slots counted since this thread's last read to the
    /// wake pairs; `exited`: its final record (the thread is forgotten).
    pub fn take(&mut self, s: &thread_stats, exited: bool, pairs: &mut Pairs) {
        let ids: &[u32; SLOTS] = &s.waker_id;
        if ids[0] == 0 {
            // slots fill in order: no waker yet
            return;
        }
        let pass = self.pass;
        let r = self.read.entry(s.tid).or_default();
        if r.start_time != s.start_time {
            // a new thread, or the tid reused
            *r = Read {
                start_time: s.start_time,
                ..Read::default()
            };
        }
        for (i, (&id, &n)) in ids.iter().zip(&s.waker_count).enumerate() {
            if id == 0 {
                break;
            }
            if r.ids[i] != id {
                r.ids[i] = id;
                r.counts[i] = 0;
            }
            // a copy older than the last read (a torn one mended) adds
            // nothing and leaves the mark where it is
            if n > r.counts[i] {
                add_pair(pairs, s.tid, id, n - r.counts[i]);
                r.counts[i] = n;
            }
        }
        r.pass = pass;
        if exited {
            self.read.remove(&s.tid);
        }
    }

    /// A drain that reads every task begins.
    pub fn full_pass_begins(&mut self) {
        self.pass += 1;
    }

    /// It ended: a thread it did not read is gone (every live thread is
    /// read by a full pass, and its slots with it).
    pub fn full_pass_ended(&mut self) {
        let pass = self.pass;
        self.read.retain(|_, r| r.pass == pass);
    }

    #[cfg(test)]
    fn known(&self) -> usize {
        self.read.len()
    }
}

fn add_pair(pairs: &mut Pairs, tid: u32, other: u32, n: u64) {
    let list = pairs[PairKind::Wake as usize].entry(tid).or_default();
    match list.iter_mut().find(|p| p.0 == other) {
        Some(p) => p.1 = p.1.saturating_add(n),
        None => list.push((other, n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tid: u32, start: u64, slots: &[(u32, u64)]) -> thread_stats {
        let mut s = thread_stats {
            tid,
            start_time: start,
            ..Default::default()
        };
        for (i, &(id, n)) in slots.iter().enumerate() {
            s.waker_id[i] = id;
            s.waker_count[i] = n;
        }
        s
    }

    fn wakes(pairs: &Pairs, tid: u32) -> Vec<(u32, u64)> {
        let mut v = pairs[PairKind::Wake as usize]
            .get(&tid)
            .cloned()
            .unwrap_or_default();
        v.sort_unstable();
        v
    }

    #[test]
    fn each_read_adds_what_the_slots_counted_since_the_last() {
        let mut w = WakerSlots::default();
        let mut p = Pairs::default();
        w.take(&record(7, 100, &[(8, 5)]), false, &mut p);
        assert_eq!(wakes(&p, 7), [(8, 5)]);

        // the next drain: 8 woke it 3 more times, 9 twice; the pair map
        // also held a waker of 7 (a fifth one)
        let mut p = Pairs::default();
        p[PairKind::Wake as usize].insert(7, vec![(50, 1)]);
        w.take(&record(7, 100, &[(8, 8), (9, 2)]), false, &mut p);
        assert_eq!(wakes(&p, 7), [(8, 3), (9, 2), (50, 1)]);

        // read twice in a drain, or an older (mended) copy: nothing twice
        let mut p = Pairs::default();
        w.take(&record(7, 100, &[(8, 8), (9, 2)]), false, &mut p);
        w.take(&record(7, 100, &[(8, 6), (9, 1)]), false, &mut p);
        assert_eq!(wakes(&p, 7), []);
        w.take(&record(7, 100, &[(8, 9), (9, 2)]), false, &mut p);
        assert_eq!(wakes(&p, 7), [(8, 1)]);

        // the tid reused by a new thread: its counts start from zero
        let mut p = Pairs::default();
        w.take(&record(7, 200, &[(3, 4)]), false, &mut p);
        assert_eq!(wakes(&p, 7), [(3, 4)]);

        // its exit record: the rest, then forgotten
        let mut p = Pairs::default();
        w.take(&record(7, 200, &[(3, 6)]), true, &mut p);
        assert_eq!(wakes(&p, 7), [(3, 2)]);
        assert_eq!(w.known(), 0);
    }

    #[test]
    fn a_full_pass_forgets_the_threads_it_did_not_read() {
        let mut w = WakerSlots::default();
        let mut p = Pairs::default();
        w.take(&record(1, 1, &[(2, 1)]), false, &mut p);
        w.take(&record(3, 1, &[(2, 1)]), false, &mut p);
        // a thread without wakers is not kept at all
        w.take(&record(4, 1, &[]), false, &mut p);
        assert_eq!(w.known(), 2);
        w.full_pass_begins();
        w.take(&record(3, 1, &[(2, 1)]), false, &mut p);
        w.full_pass_ended();
        assert_eq!(w.known(), 1);
        // thread 1 came back (a pid filter let it out, say): counted from zero
        let mut p = Pairs::default();
        w.take(&record(1, 1, &[(2, 4)]), false, &mut p);
        assert_eq!(wakes(&p, 1), [(2, 4)]);
    }
}
