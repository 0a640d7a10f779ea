//! One probe record to one `ThreadSample`, as the drain streams them.
use crate::model::counters::{Counters, Mask};
use crate::model::{Log2Hist, ThreadAttrs, ThreadSample};

use super::bpf_skel::types::thread_stats;
use super::cgroups::{CgroupCollector, CgroupTable};
use super::name_intern::NameInterner;

/// The thread list a drain builds.
pub(super) struct ThreadsOut<'a> {
    /// CLOCK_MONOTONIC of the previous drain: threads started after it
    /// began from zero during the interval
    pub born_after: u64,
    pub pid_filter: &'a [u32],
    pub threads: Vec<ThreadSample>,
    pub cgroups: CgroupTable,
    /// the kernel's cgroup id of each of `threads`
    pub cgroup_ids: Vec<u64>,
    pub names: &'a mut NameInterner,
    /// what each thread's waker slots had at its last read
    pub wakers: &'a mut super::waker_slots::WakerSlots,
    /// counter slots the probes do not measure on this run (interrupt time
    /// with the interrupt-time probes off): unknown, not 0
    pub unmeasured: Mask,
    /// the probes count who woke each thread (SCHEDTOP_WAKERS=1); without
    /// them its wakeups and wakers are unknown, not 0
    pub wakers_counted: bool,
}

impl<'a> ThreadsOut<'a> {
    /// An empty list with room for `expected` threads.
    pub fn new(
        born_after: u64,
        pid_filter: &'a [u32],
        expected: usize,
        names: &'a mut NameInterner,
        wakers: &'a mut super::waker_slots::WakerSlots,
    ) -> Self {
        ThreadsOut {
            born_after,
            pid_filter,
            threads: crate::model::Threads::spare(expected),
            cgroups: CgroupTable::default(),
            cgroup_ids: Vec::with_capacity(expected),
            names,
            wakers,
            unmeasured: 0,
            wakers_counted: false,
        }
    }

    /// Add `s` (an exited thread's final record, or a listed one; `late_new`:
    /// new although its start time is older, see `ThreadBook::offer`).
    pub fn push(
        &mut self,
        s: &thread_stats,
        exited: bool,
        late_new: bool,
        cgroups: &mut CgroupCollector,
        pairs: &mut super::why_drain::Pairs,
    ) {
        if !self.pid_filter.is_empty() && !self.pid_filter.contains(&s.pid) {
            return;
        }
        let new = s.start_time >= self.born_after || late_new;
        self.wakers.take(s, exited, pairs);
        self.cgroup_ids.push(s.cgroup_id);
        self.threads.push(ThreadSample {
            tid: s.tid,
            pid: s.pid,
            comm: self.names.get(&s.comm),
            process_comm: self.names.get(&s.process_comm),
            cpu: s.last_cpu,
            start_time_ns: s.start_time,
            voluntary: s.nvcsw,
            involuntary: s.nivcsw,
            oncpu_ns: s.oncpu_ns,
            wait_ns: s.wait_ns,
            migrations: Some(s.migrations),
            counters: Counters::with_unmeasured(&s.counters, self.unmeasured),
            slice_hist: Some(hist(&s.slice_hist)),
            wait_hist: Some(summed_hist(&s.wakeup_wait_hist, &s.preempt_wait_hist)),
            wakeup_wait_hist: Some(hist(&s.wakeup_wait_hist)),
            preempt_wait_hist: Some(hist(&s.preempt_wait_hist)),
            // every thread alive at the previous drain is in that Sample;
            // one started since began from zero
            baseline: new.then(Box::default),
            exited,
            // the exit path does not read it
            attrs: if exited {
                ThreadAttrs::default()
            } else {
                ThreadAttrs {
                    nice: Some(s.nice as i8),
                    policy: Some(s.policy),
                    rt_priority: Some(s.rt_priority),
                    cpus_allowed: Some(u32::from(s.nr_cpus_allowed)),
                    ppid: Some(s.ppid),
                }
            },
            cgroup: cgroups.intern_id(&mut self.cgroups, s.cgroup_id),
            why: Some(super::why_drain::why_of(s, pairs, self.wakers_counted)),
        });
    }
}

/// Slots up to the last non-zero one: an idle thread's histogram is empty
/// and allocates nothing (the scan is the whole cost for the thousands of
/// idle threads of a drain).
fn used(h: &[u32]) -> usize {
    h.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1)
}

fn hist(h: &[u32]) -> Log2Hist {
    let n = used(h);
    Log2Hist::from_vec(h[..n].iter().map(|&c| u64::from(c)).collect())
}

/// The combined wait histogram: waits after a wakeup plus after a preemption.
fn summed_hist(a: &[u32], b: &[u32]) -> Log2Hist {
    let n = used(a).max(used(b));
    Log2Hist::from_vec(
        a[..n]
            .iter()
            .zip(&b[..n])
            .map(|(&x, &y)| u64::from(x) + u64::from(y))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hist::HIST_SLOTS;

    #[test]
    fn same_as_from_counts() {
        let mut a = [0u32; HIST_SLOTS];
        let mut b = [0u32; HIST_SLOTS];
        assert_eq!(hist(&a), Log2Hist::from_counts([]));
        assert!(hist(&a).counts.is_empty());
        a[3] = 7;
        a[HIST_SLOTS - 1] = u32::MAX;
        b[40] = u32::MAX;
        let wide = |h: &[u32]| Log2Hist::from_counts(h.iter().map(|&c| u64::from(c)));
        assert_eq!(hist(&a), wide(&a));
        assert_eq!(hist(&b), wide(&b));
        let sum =
            Log2Hist::from_counts(a.iter().zip(&b).map(|(&x, &y)| u64::from(x) + u64::from(y)));
        assert_eq!(summed_hist(&a, &b), sum);
        assert_eq!(summed_hist(&b, &a), sum);
        assert_eq!(summed_hist(&b, &[0; HIST_SLOTS]), wide(&b));
        assert_eq!(
            summed_hist(&[0; HIST_SLOTS], &[0; HIST_SLOTS]).counts.len(),
            0
        );
    }
}
