//! Which thread of the Sample before is this one (ThreadMatcher): the
//! derivation and the codec's sections match every thread this way.
use super::fasthash::IdMap;
use super::sample::{ThreadSample, Threads};

/// Finds each thread of a Sample in the previous one. Sources list threads
/// in the same order from one Sample to the next (the kernel's task list,
/// /proc), so the match is almost always the next one along: a hash of
/// every thread is built only at the first thread that is not (and the
/// walk picks up again after it).
pub struct ThreadMatcher<'a> {
    prev: &'a [ThreadSample],
    next: usize,
    index: Option<IdMap<(u32, u64), usize>>,
    /// the list's own index, built once for every matcher of it
    shared: Option<&'a Threads>,
}

impl<'a> ThreadMatcher<'a> {
    pub fn new(prev: &'a [ThreadSample]) -> ThreadMatcher<'a> {
        ThreadMatcher {
            prev,
            next: 0,
            index: None,
            shared: None,
        }
    }

    /// A matcher into a Sample's list, sharing its index (`Threads::index`)
    /// with the other matchers into it (the derivation, the codec's thread
    /// and why sections).
    pub fn of(prev: Option<&'a Threads>) -> ThreadMatcher<'a> {
        ThreadMatcher {
            prev: prev.map_or(&[], |t| t.as_slice()),
            next: 0,
            index: None,
            shared: prev,
        }
    }

    /// The position in the previous Sample of the thread (tid, start).
    pub fn find(&mut self, tid: u32, start_time_ns: u64) -> Option<usize> {
        let same = |t: &ThreadSample| t.tid == tid && t.start_time_ns == start_time_ns;
        if self.prev.get(self.next).is_some_and(same) {
            self.next += 1;
            return Some(self.next - 1);
        }
        let prev = self.prev;
        let index = match self.shared {
            Some(list) => list.index(),
            None => self.index.get_or_insert_with(|| {
                prev.iter()
                    .enumerate()
                    .map(|(i, t)| ((t.tid, t.start_time_ns), i))
                    .collect()
            }),
        };
        let i = index.get(&(tid, start_time_ns)).copied()?;
        // a tid listed twice (exited, then reused) maps to the last one:
        // the walk's own position is the better answer when it matches
        self.next = i + 1;
        Some(i)
    }

    /// The thread itself.
    pub fn get(&mut self, t: &ThreadSample) -> Option<&'a ThreadSample> {
        let prev = self.prev;
        self.find(t.tid, t.start_time_ns).map(|i| &prev[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(tid: u32, start_time_ns: u64) -> ThreadSample {
        ThreadSample {
            tid,
            start_time_ns,
            ..Default::default()
        }
    }

    #[test]
    fn matchers_of_one_list_share_its_index_and_a_change_rebuilds_it() {
        let mut prev: Threads = (1..=50).map(|i| t(i, u64::from(i) * 10)).collect();
        // an exited thread listed first, out of step: the index is needed
        let cur = [t(30, 300), t(1, 10), t(2, 20), t(77, 5), t(31, 310)];
        let want = [Some(29), Some(0), Some(1), None, Some(30)];
        for _ in 0..2 {
            let mut m = ThreadMatcher::of(Some(&prev));
            let got: Vec<_> = cur.iter().map(|c| m.find(c.tid, c.start_time_ns)).collect();
            assert_eq!(got, want);
            // the same as a matcher with an index of its own
            let mut own = ThreadMatcher::new(&prev);
            let alone: Vec<_> = cur
                .iter()
                .map(|c| own.find(c.tid, c.start_time_ns))
                .collect();
            assert_eq!(alone, want);
        }
        let first: *const _ = prev.index();
        assert!(std::ptr::eq(first, prev.index()), "built once");
        // a reused tid, listed later: the later one
        prev.push(t(30, 999));
        prev.swap(0, 29);
        let mut m = ThreadMatcher::of(Some(&prev));
        assert_eq!(m.find(2, 20), Some(1));
        assert_eq!(m.find(1, 10), Some(29), "moved: the index was rebuilt");
        assert_eq!(m.find(30, 999), Some(50));
        assert_eq!(m.find(30, 300), Some(0));
        assert!(ThreadMatcher::of(None).find(1, 10).is_none());
    }
}
