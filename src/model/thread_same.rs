//! When a thread of a Sample is the same thread of the previous Sample,
//! unchanged: the recording codec writes it as one flag (format 5) and the
//! rows skip working out its interval, which is known to be empty.
use super::hist::Log2Hist;
use super::sample::ThreadSample;

impl ThreadSample {
    /// Every field but the cgroup and the why figures as `r`'s (the
    /// histograms sharing their counts): an idle thread between two drains.
    pub fn unchanged_from(&self, r: &ThreadSample) -> bool {
        let t = self;
        let same_hist = |a: &Option<Log2Hist>, b: &Option<Log2Hist>| match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => a.octaves_only == b.octaves_only && a.counts.same(&b.counts),
            _ => false,
        };
        r.tid == t.tid
            && r.pid == t.pid
            && r.cpu == t.cpu
            && r.start_time_ns == t.start_time_ns
            && r.voluntary == t.voluntary
            && r.involuntary == t.involuntary
            && r.oncpu_ns == t.oncpu_ns
            && r.wait_ns == t.wait_ns
            && r.migrations == t.migrations
            && r.cross_node_migrations == t.cross_node_migrations
            && r.baseline == t.baseline
            && r.exited == t.exited
            && r.attrs == t.attrs
            && r.comm == t.comm
            && r.process_comm == t.process_comm
            && same_hist(&r.slice_hist, &t.slice_hist)
            && same_hist(&r.wait_hist, &t.wait_hist)
            && same_hist(&r.wakeup_wait_hist, &t.wakeup_wait_hist)
            && same_hist(&r.preempt_wait_hist, &t.preempt_wait_hist)
    }
}
