//! `Tally`: what happened in one interval at one level — a thread, a
//! process (its threads summed), the system — as sums before dividing by
//! the interval's length. The table rows (interval.rs), the detail pane's
//! "since start" and the exporter's running totals are all sums of these,
//! and the level figures (figures.rs) read them, so a figure added here
//! reaches every level and every sink by the same path.
use super::counters::Counters;
use super::hist::Log2Hist;
use super::rates::ThreadInterval;
use super::why::WhyCounts;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub voluntary: u64,
    pub involuntary: u64,
    pub oncpu_ns: u64,
    pub wait_ns: u64,
    /// None where the source cannot see migrations (procfs)
    pub migrations: Option<u64>,
    /// the generic counters (model/counters.rs), summed slot by slot
    pub counters: Counters,
    /// None where the source has no histograms
    pub slice_hist: Option<Log2Hist>,
    pub wait_hist: Option<Log2Hist>,
    pub wakeup_wait_hist: Option<Log2Hist>,
    pub preempt_wait_hist: Option<Log2Hist>,
    /// migration causes, block reasons, preemptors (None where the source
    /// has none)
    pub why: Option<WhyCounts>,
}

impl Tally {
    /// A thread's own interval, moved (no histogram copied).
    pub fn of(i: ThreadInterval) -> Tally {
        Tally {
            voluntary: i.voluntary,
            involuntary: i.involuntary,
            oncpu_ns: i.oncpu_ns,
            wait_ns: i.wait_ns,
            migrations: i.migrations,
            counters: i.counters,
            slice_hist: i.slice_hist,
            wait_hist: i.wait_hist,
            wakeup_wait_hist: i.wakeup_wait_hist,
            preempt_wait_hist: i.preempt_wait_hist,
            why: i.why,
        }
    }

    /// Add `o`. Sums saturate: a hostile recording's counters cannot
    /// overflow them. A figure one side lacks stays as the other has it.
    pub fn add(&mut self, o: &Tally) {
        self.voluntary = self.voluntary.saturating_add(o.voluntary);
        self.involuntary = self.involuntary.saturating_add(o.involuntary);
        self.oncpu_ns = self.oncpu_ns.saturating_add(o.oncpu_ns);
        self.wait_ns = self.wait_ns.saturating_add(o.wait_ns);
        add_opt(&mut self.migrations, o.migrations);
        self.counters.add(&o.counters);
        merge_hist(&mut self.slice_hist, &o.slice_hist);
        merge_hist(&mut self.wait_hist, &o.wait_hist);
        merge_hist(&mut self.wakeup_wait_hist, &o.wakeup_wait_hist);
        merge_hist(&mut self.preempt_wait_hist, &o.preempt_wait_hist);
        if let Some(w) = &o.why {
            self.why.get_or_insert_with(WhyCounts::default).add(w);
        }
    }

    pub fn switches(&self) -> u64 {
        self.voluntary.saturating_add(self.involuntary)
    }
}

fn add_opt(into: &mut Option<u64>, from: Option<u64>) {
    if let Some(f) = from {
        *into = Some(into.unwrap_or(0).saturating_add(f));
    }
}

fn merge_hist(into: &mut Option<Log2Hist>, from: &Option<Log2Hist>) {
    if let Some(f) = from {
        into.get_or_insert_with(Log2Hist::new).merge(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_keeps_what_either_side_knows_and_saturates() {
        let a = Tally {
            voluntary: 3,
            involuntary: u64::MAX - 1,
            migrations: Some(2),
            wait_hist: Some(Log2Hist::from_counts([1, 0, 2])),
            ..Default::default()
        };
        let b = Tally {
            voluntary: 4,
            involuntary: 5,
            counters: Counters::of(&[(11, 1)]),
            wait_hist: Some(Log2Hist::from_counts([0, 0, 1, 7])),
            ..Default::default()
        };
        let mut s = a.clone();
        s.add(&b);
        assert_eq!(s.voluntary, 7);
        assert_eq!(s.involuntary, u64::MAX, "saturates, never wraps");
        assert_eq!(s.migrations, Some(2));
        assert_eq!(s.counters.get(11), Some(1));
        assert_eq!(s.wait_hist, Some(Log2Hist::from_counts([1, 0, 3, 7])));
        assert_eq!(s.slice_hist, None, "unknown on both sides stays unknown");
    }
}
