//! When a thread of a Sample is the same thread of the previous Sample,
//! unchanged: the recording codec writes it as one flag (format 5) and the
//! rows skip working out its interval, which is known to be empty.
use super::hist::Log2Hist;
use super::sample::ThreadSample;

impl ThreadSample {
    /// Every field but the cgroup and the why figures as `r`'s (the
    /// histograms sharing their counts): an idle thread between two drains.
    pub fn unchanged_from(&self, r: &ThreadSample) -> bool {
        let same_hist = |a: &Option<Log2Hist>, b: &Option<Log2Hist>| match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => a.octaves_only == b.octaves_only && a.counts.same(&b.counts),
            _ => false,
        };
        // Every field named, no `..`: a field added to ThreadSample does
        // not compile here until it is compared (or said to be left out),
        // so the codec's "same" flag can never drop a new figure silently.
        let ThreadSample {
            tid,
            pid,
            comm,
            process_comm,
            cpu,
            start_time_ns,
            voluntary,
            involuntary,
            oncpu_ns,
            wait_ns,
            migrations,
            counters,
            slice_hist,
            wait_hist,
            wakeup_wait_hist,
            preempt_wait_hist,
            baseline,
            exited,
            attrs,
            // the cgroup and the why figures travel on their own in the
            // codec (and interval.rs compares the whys by pointer)
            cgroup: _,
            why: _,
        } = self;
        r.tid == *tid
            && r.pid == *pid
            && r.cpu == *cpu
            && r.start_time_ns == *start_time_ns
            && r.voluntary == *voluntary
            && r.involuntary == *involuntary
            && r.oncpu_ns == *oncpu_ns
            && r.wait_ns == *wait_ns
            && r.migrations == *migrations
            && r.counters == *counters
            && r.baseline == *baseline
            && r.exited == *exited
            && r.attrs == *attrs
            && r.comm == *comm
            && r.process_comm == *process_comm
            && same_hist(&r.slice_hist, slice_hist)
            && same_hist(&r.wait_hist, wait_hist)
            && same_hist(&r.wakeup_wait_hist, wakeup_wait_hist)
            && same_hist(&r.preempt_wait_hist, preempt_wait_hist)
    }
}
