//! `Sample`: everything schedtop knows about one interval. Counters are
//! cumulative; rates are derived from two Samples (see `rates`).
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::fasthash::IdMap;
use super::hist::Log2Hist;

/// Where the Samples come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Bpf,
    Procfs,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Bpf => "bpf",
            SourceKind::Procfs => "procfs",
        }
    }
}

/// One CPU's place in the machine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTopology {
    pub cpu: u32,
    pub node: u32,
    /// id of the last-level cache it shares (lowest CPU id sharing it)
    pub llc: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// online CPUs, ascending
    pub cpus: Vec<CpuTopology>,
}

impl Topology {
    pub fn node_of(&self, cpu: u32) -> Option<u32> {
        self.cpus.iter().find(|c| c.cpu == cpu).map(|c| c.node)
    }
    pub fn nodes(&self) -> Vec<u32> {
        let mut n: Vec<u32> = self.cpus.iter().map(|c| c.node).collect();
        n.sort_unstable();
        n.dedup();
        n
    }
    /// One more than the highest CPU id (the size of CPU-indexed tables).
    pub fn cpu_slots(&self) -> u32 {
        self.cpus.iter().map(|c| c.cpu + 1).max().unwrap_or(0)
    }
}

/// Facts about the stream, fixed for its whole length.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub kernel: String,
    pub topology: Topology,
    pub source: SourceKind,
    /// Why the source is not BPF (one line, with what to do), if it is not.
    pub degraded_reason: Option<String>,
    /// The sched_ext BPF scheduler enabled when the source started (a live
    /// source only; a recording does not carry it).
    #[serde(default)]
    pub sched_ext: Option<String>,
    pub interval_ns: u64,
}

/// Values of a thread's cumulative counters when the source started watching
/// it, so its first interval has rates too. Absent when unknown (a thread that
/// was already running before a procfs source started).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    pub voluntary: u64,
    pub involuntary: u64,
    pub oncpu_ns: u64,
    pub wait_ns: u64,
}

/// A thread or process name, shared between Samples and rows.
pub type Name = std::sync::Arc<str>;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadSample {
    pub tid: u32,
    pub pid: u32,
    /// As the thread named itself: hostile, escape before display. Shared:
    /// the source interns names, so the thousands of idle threads of a
    /// Sample (and their rows) cost no allocation per interval.
    pub comm: Name,
    /// The process's (thread group leader's) name.
    pub process_comm: Name,
    /// CPU it last ran on.
    pub cpu: u32,
    /// task start time (ns since boot); with tid it identifies a thread
    /// across tid reuse.
    pub start_time_ns: u64,
    /// The kernel's own nvcsw / nivcsw (cumulative since thread start).
    pub voluntary: u64,
    pub involuntary: u64,
    pub oncpu_ns: u64,
    /// run-queue wait
    pub wait_ns: u64,
    /// None where the source cannot see migrations (procfs).
    pub migrations: Option<u64>,
    /// the probe's generic counters (model/counters.rs), cumulative;
    /// unknown where the source has none (procfs)
    #[serde(default)]
    pub counters: crate::model::counters::Counters,
    /// on-CPU slice lengths; None where the source has no histograms.
    pub slice_hist: Option<Log2Hist>,
    /// run-queue wait, from the moment the thread became runnable (a
    /// wakeup, or a preemption) to its switch-in: the sum of the two below
    pub wait_hist: Option<Log2Hist>,
    /// the waits that began at a wakeup (the thread had blocked)
    #[serde(default)]
    pub wakeup_wait_hist: Option<Log2Hist>,
    /// the waits that began at a preemption (switched out while runnable)
    #[serde(default)]
    pub preempt_wait_hist: Option<Log2Hist>,
    /// boxed: a thread has one only in its first Sample, and inline it was
    /// 32 of the 240 bytes every thread of every Sample takes
    pub baseline: Option<Box<Baseline>>,
    /// The thread exited; these are its final counts and it will not appear again.
    pub exited: bool,
    /// What the thread is set to (not a counter), as last seen.
    #[serde(default)]
    pub attrs: ThreadAttrs,
    /// Its cgroup (the one whose CPU quota applies): an index into
    /// `Sample::cgroups`; None where unknown.
    #[serde(default)]
    pub cgroup: Option<u32>,
    /// Migration causes, block reasons and preemptors; None where the
    /// source cannot see them (procfs, older recordings).
    #[serde(default)]
    pub why: Option<std::sync::Arc<crate::model::why::WhySample>>,
}

/// A thread's settings as last seen: shown as they are, no rates. The
/// recording stores them as a counted list of numbers (codec.rs), so a new
/// one needs no codec change: add the field here with its slot in `values`
/// and `set`, and a metric (metrics.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadAttrs {
    /// the nice value, -20 (most favoured) to 19; None where unknown
    pub nice: Option<i8>,
    /// the scheduling policy, as the kernel numbers it (SCHED_OTHER 0,
    /// FIFO 1, RR 2, BATCH 3, IDLE 5, DEADLINE 6, EXT 7); None where unknown
    #[serde(default)]
    pub policy: Option<u8>,
    /// the real-time priority, 1 (lowest) to 99 (highest); 0 for the
    /// policies that have none
    #[serde(default)]
    pub rt_priority: Option<u8>,
    /// how many CPUs the thread may run on (its affinity within its
    /// cpuset); None where unknown
    #[serde(default)]
    pub cpus_allowed: Option<u32>,
    /// the parent's pid (the process's parent for every thread of it, as
    /// /proc/<pid>/stat's field 4); None where unknown (recordings made
    /// before it was kept, a thread's exit record)
    #[serde(default)]
    pub ppid: Option<u32>,
}

impl ThreadAttrs {
    /// Every attribute in slot order (None: unknown).
    pub fn values(&self) -> Vec<Option<i64>> {
        vec![
            self.nice.map(i64::from),
            self.policy.map(i64::from),
            self.rt_priority.map(i64::from),
            self.cpus_allowed.map(i64::from),
            self.ppid.map(i64::from),
        ]
    }

    /// Set slot `i` (slots this build does not know are ignored: a newer
    /// recording still reads).
    pub fn set(&mut self, i: usize, v: Option<i64>) {
        match i {
            0 => self.nice = v.and_then(|v| i8::try_from(v).ok()),
            1 => self.policy = v.and_then(|v| u8::try_from(v).ok()),
            2 => self.rt_priority = v.and_then(|v| u8::try_from(v).ok()),
            3 => self.cpus_allowed = v.and_then(|v| u32::try_from(v).ok()),
            4 => self.ppid = v.and_then(|v| u32::try_from(v).ok()),
            _ => {}
        }
    }

    /// The policy's short name, as chrt and htop say it.
    pub fn policy_name(&self) -> Option<&'static str> {
        Some(match self.policy? {
            0 => "OTHER",
            1 => "FIFO",
            2 => "RR",
            3 => "BATCH",
            5 => "IDLE",
            6 => "DL",
            7 => "EXT",
            _ => "?",
        })
    }

    /// A real-time policy (FIFO, RR, DEADLINE): it runs before every
    /// normal thread on its CPU, whatever their nice values.
    pub fn realtime(&self) -> bool {
        matches!(self.policy, Some(1 | 2 | 6))
    }
}

/// Run-queue length sampled on a timer during the interval (cumulative).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RqSample {
    /// timer samples taken (an idle CPU takes none; see rates)
    pub samples: u64,
    /// sum of sampled lengths
    pub sum: u64,
    /// cumulative counts per queue length: exact below 32, log2 above
    pub hist: Vec<u64>,
    /// sampling frequency, Hz
    pub freq_hz: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSample {
    pub cpu: u32,
    pub switches: u64,
    pub busy_ns: u64,
    pub rq: Option<RqSample>,
    /// interrupt and steal time (live sources; recordings do not carry it
    /// yet: None, shown as unknown)
    #[serde(default)]
    pub irq: Option<CpuIrqSample>,
}

/// Time a CPU spent in interrupts, and lost to the hypervisor, cumulative ns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuIrqSample {
    /// /proc/stat's irq, softirq and steal columns. Without
    /// CONFIG_IRQ_TIME_ACCOUNTING the kernel counts irq and softirq only as
    /// the timer ticks that landed in one (coarse, often 0); steal needs a
    /// hypervisor that reports it (paravirt steal clock), else it stays 0.
    pub stat_irq_ns: u64,
    pub stat_softirq_ns: u64,
    pub stat_steal_ns: u64,
    /// the interrupt-time probes' own hardirq and softirq time, idle
    /// included; None where they are off
    pub probe_irq_ns: Option<u64>,
    pub probe_softirq_ns: Option<u64>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationCount {
    pub from_cpu: u32,
    pub to_cpu: u32,
    /// cumulative since the source started
    pub count: u64,
}

/// Updates that were lost rather than counted (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Losses {
    pub thread_map_full: u64,
    pub migration_matrix_overflow: u64,
    /// per-thread reads that found no stable copy (the thread's last good
    /// counts were kept, or a new thread was left for the next drain)
    #[serde(default)]
    pub torn_reads: u64,
    /// threads that vanished without their final switch being traced, so
    /// their last interval's counts are lost
    #[serde(default)]
    pub exits_untraced: u64,
    /// preemptions whose (victim, preemptor) pair did not fit the probe's
    /// bounded map: counted, not attributed
    #[serde(default)]
    pub preempt_pairs_full: u64,
    /// wakeups whose (wakee, waker) pair did not fit that map: counted,
    /// not attributed
    #[serde(default)]
    pub wake_pairs_full: u64,
}

impl Losses {
    pub fn total(&self) -> u64 {
        self.thread_map_full
            .saturating_add(self.migration_matrix_overflow)
            .saturating_add(self.torn_reads)
            .saturating_add(self.exits_untraced)
            .saturating_add(self.preempt_pairs_full)
            .saturating_add(self.wake_pairs_full)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemSample {
    /// /proc/stat ctxt (cumulative, all CPUs)
    pub context_switches: u64,
    pub procs_running: u32,
    pub procs_blocked: u32,
    pub load: [f64; 3],
    pub losses: Losses,
    /// `/proc/pressure/cpu`; None where the kernel has no PSI
    #[serde(default)]
    pub cpu_pressure: Option<Box<super::cgroup_sample::Pressure>>,
    /// CPU→CPU migrations by cause (model::why::MigCause order, 5 lists
    /// like `Sample::migrations`, cumulative); empty where unknown
    #[serde(default)]
    pub migrations_by_cause: Vec<Vec<MigrationCount>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// wall clock at the end of the interval, ns since the Unix epoch
    pub time_ns: u64,
    /// CLOCK_MONOTONIC at the same moment: elapsed time between Samples is
    /// measured with it (a stopped process or a clock step cannot spike rates)
    pub mono_ns: u64,
    pub threads: Threads,
    pub cpus: Vec<CpuSample>,
    /// cumulative CPU→CPU migration counts (non-zero cells only)
    pub migrations: Vec<MigrationCount>,
    pub system: SystemSample,
    /// the threads' cgroups and their ancestors, as cgroupfs showed them
    #[serde(default)]
    pub cgroups: Vec<super::cgroup_sample::CgroupSample>,
    /// threads its preemptor lists name that are not in `threads` (outside
    /// a pid filter), as /proc showed them at the drain; ordered by tid
    #[serde(default)]
    pub outside: Vec<OutsideThread>,
    /// under a filter (`-p`, `-u`, `--cgroup`): the processes above the
    /// listed ones that the filter left out, up to the first process, so
    /// the tree stays a tree; identity only, no counters (a recording
    /// carries them beside the Sample: record/codec_ancestors.rs)
    #[serde(default)]
    pub ancestors: Vec<AncestorProcess>,
}

/// A process above a filtered thread list, known by its place in the
/// process tree only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AncestorProcess {
    pub pid: u32,
    /// its parent (0: none, as for the first process)
    pub ppid: u32,
    /// hostile: escape before display
    pub comm: Name,
}

/// A thread outside the Sample's thread list, known by name only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OutsideThread {
    pub tid: u32,
    pub pid: u32,
    /// hostile, as both names: escape before display
    pub comm: Name,
    /// its process's (leader's) name
    pub process_comm: Name,
}

impl Sample {
    pub fn thread(&self, tid: u32) -> Option<&ThreadSample> {
        self.threads.iter().find(|t| t.tid == tid)
    }
}

/// A Sample's thread list, shared: the BPF source repeats most threads
/// from one Sample to the next and keeps the list it sent for that, so the
/// source's copy and the consumers' Sample are one allocation (at 50,000
/// threads the source's own copy was 12 MB). Reads go through the slice;
/// a write copies the list first if anyone else holds it.
#[derive(Clone, Debug, Default)]
pub struct Threads(Arc<Vec<ThreadSample>>, Arc<ThreadIndex>);

/// Where each thread of a list sits, by (tid, start time), built the first
/// time someone asks and kept with the list. Matching a Sample's threads to
/// the ones before mostly walks both lists in step; an exited thread is
/// listed first, out of step, so nearly every interval needs the index, and
/// the derivation and the codec's sections each built their own: five
/// 100,000-entry maps an interval, 14 % of the live view's CPU time.
#[derive(Default)]
pub struct ThreadIndex(std::sync::OnceLock<IdMap<(u32, u64), usize>>);

impl std::fmt::Debug for ThreadIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ThreadIndex")
    }
}

impl PartialEq for Threads {
    fn eq(&self, other: &Threads) -> bool {
        self.0 == other.0
    }
}

impl Threads {
    /// Another holder of the same list (no copy).
    pub fn share(&self) -> Threads {
        self.clone()
    }

    /// Each thread's position by (tid, start time); a tid listed twice
    /// (exited, then reused) maps to the later one.
    pub fn index(&self) -> &IdMap<(u32, u64), usize> {
        self.1 .0.get_or_init(|| {
            self.0
                .iter()
                .enumerate()
                .map(|(i, t)| ((t.tid, t.start_time_ns), i))
                .collect()
        })
    }

    /// The list to own: moved out if no one else holds it, else copied.
    pub fn into_vec(mut self) -> Vec<ThreadSample> {
        match Arc::get_mut(&mut self.0) {
            Some(list) => std::mem::take(list),
            None => (*self.0).clone(),
        }
    }

    /// An empty list to build the next Sample's threads in, with room for
    /// `n`: the buffer of a big list no one holds any more if there is one.
    /// A fresh 12 MB list (50,000 threads) each drain cost a page fault per
    /// 4 KiB when it was first written, ~12 % of the live view's CPU time.
    pub fn spare(n: usize) -> Vec<ThreadSample> {
        let spare = SPARE.lock().ok().and_then(|mut s| s.take());
        let mut list = spare.unwrap_or_default();
        // the threads of the list before are dropped here (see Drop)
        list.clear();
        list.reserve(n);
        list
    }
}

/// Lists shorter than this are left to the allocator.
const SPARE_MIN: usize = 4096;

/// One big thread list no one holds, for `Threads::spare`. One is enough: a
/// drain builds one list while the one before is still held.
static SPARE: std::sync::Mutex<Option<Vec<ThreadSample>>> = std::sync::Mutex::new(None);

impl Drop for Threads {
    fn drop(&mut self) {
        if self.0.capacity() < SPARE_MIN {
            return;
        }
        // The last holder of a big list leaves it, threads and all, for the
        // next drain to empty and fill. Thousands of threads share a name
        // and the empty why figures: their reference counts are counted down
        // best on the thread that counts them up (the collector's), not
        // bounced between two CPUs' caches.
        if let Some(list) = Arc::get_mut(&mut self.0) {
            let list = std::mem::take(list);
            let unused = SPARE.lock().ok().and_then(|mut spare| {
                if spare
                    .as_ref()
                    .is_none_or(|s| s.capacity() <= list.capacity())
                {
                    spare.replace(list)
                } else {
                    Some(list)
                }
            });
            // dropped outside the lock
            drop(unused);
        }
    }
}

impl From<Vec<ThreadSample>> for Threads {
    fn from(v: Vec<ThreadSample>) -> Threads {
        Threads(Arc::new(v), Arc::default())
    }
}

impl FromIterator<ThreadSample> for Threads {
    fn from_iter<I: IntoIterator<Item = ThreadSample>>(it: I) -> Threads {
        Threads::from(it.into_iter().collect::<Vec<_>>())
    }
}

impl Deref for Threads {
    type Target = Vec<ThreadSample>;
    fn deref(&self) -> &Vec<ThreadSample> {
        &self.0
    }
}

impl DerefMut for Threads {
    fn deref_mut(&mut self) -> &mut Vec<ThreadSample> {
        // the list may change: its index (if built) no longer holds
        if self.1 .0.get().is_some() {
            self.1 = Arc::default();
        }
        Arc::make_mut(&mut self.0)
    }
}

impl<'a> IntoIterator for &'a Threads {
    type Item = &'a ThreadSample;
    type IntoIter = std::slice::Iter<'a, ThreadSample>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a mut Threads {
    type Item = &'a mut ThreadSample;
    type IntoIter = std::slice::IterMut<'a, ThreadSample>;
    fn into_iter(self) -> Self::IntoIter {
        self.deref_mut().iter_mut()
    }
}

impl Serialize for Threads {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Threads, D::Error> {
        Vec::deserialize(d).map(Threads::from)
    }
}

#[cfg(test)]
mod threads_tests {
    use super::*;

    fn t(tid: u32) -> ThreadSample {
        ThreadSample {
            tid,
            ..Default::default()
        }
    }

    #[test]
    fn a_shared_list_is_copied_on_write_and_the_other_holder_keeps_its_own() {
        let a: Threads = vec![t(1), t(2)].into();
        let mut b = a.share();
        assert!(std::ptr::eq(a.as_ptr(), b.as_ptr()), "shared, not copied");
        b.push(t(3));
        assert_eq!(a.len(), 2);
        assert_eq!(b.iter().map(|t| t.tid).collect::<Vec<_>>(), [1, 2, 3]);
        // sole holder: moved out, no copy
        let p = b.as_ptr();
        let owned = b.into_vec();
        assert_eq!(owned.as_ptr(), p);
    }

    #[test]
    fn the_last_holder_of_a_big_list_leaves_its_buffer_for_the_next() {
        let big: Threads = (0..SPARE_MIN as u32).map(t).collect();
        let p = big.as_ptr();
        let other = big.share();
        drop(big);
        // still held: nothing to reuse yet
        let first = Threads::spare(10);
        assert_ne!(first.as_ptr(), p);
        drop(other);
        let next = Threads::spare(SPARE_MIN);
        assert_eq!(next.as_ptr(), p, "the dropped list's buffer");
        assert!(next.is_empty() && next.capacity() >= SPARE_MIN);
        // taken: the one after gets a new one
        let after = Threads::spare(10);
        assert_ne!(after.as_ptr(), p);
    }
}
