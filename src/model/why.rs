//! Why a thread migrated, what it blocked on, and who ran when it was
//! preempted: the Sample's counters (cumulative, like the rest) and the
//! interval's figures derived from two Samples.
use serde::{Deserialize, Serialize};

/// Why a migration happened (bpf/why.bpf.h says how each is recognised).
/// The order is the probe's (`MIG_*` in bpf/schedtop.h) and the recording's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigCause {
    Wakeup = 0,
    LoadBalance = 1,
    NumaBalance = 2,
    Affinity = 3,
    Other = 4,
}

pub const MIG_CAUSES: usize = 5;

impl MigCause {
    pub const ALL: [MigCause; MIG_CAUSES] = [
        MigCause::Wakeup,
        MigCause::LoadBalance,
        MigCause::NumaBalance,
        MigCause::Affinity,
        MigCause::Other,
    ];

    /// The batch JSON key.
    pub fn key(self) -> &'static str {
        match self {
            MigCause::Wakeup => "wakeup",
            MigCause::LoadBalance => "load_balance",
            MigCause::NumaBalance => "numa_balance",
            MigCause::Affinity => "affinity",
            MigCause::Other => "other",
        }
    }

    /// A short label for a table cell.
    pub fn short(self) -> &'static str {
        match self {
            MigCause::Wakeup => "wake",
            MigCause::LoadBalance => "bal",
            MigCause::NumaBalance => "numa",
            MigCause::Affinity => "aff",
            MigCause::Other => "other",
        }
    }
}

/// What a voluntary switch-out waited for. The order is the probe's
/// (`BLK_*` in bpf/schedtop.h) and the recording's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockReason {
    Futex = 0,
    Sleep = 1,
    Poll = 2,
    Pipe = 3,
    Socket = 4,
    DiskIo = 5,
    PageFault = 6,
    Child = 7,
    Other = 8,
}

pub const BLOCK_REASONS: usize = 9;

impl BlockReason {
    pub const ALL: [BlockReason; BLOCK_REASONS] = [
        BlockReason::Futex,
        BlockReason::Sleep,
        BlockReason::Poll,
        BlockReason::Pipe,
        BlockReason::Socket,
        BlockReason::DiskIo,
        BlockReason::PageFault,
        BlockReason::Child,
        BlockReason::Other,
    ];

    /// A short label for a table cell.
    pub fn short(self) -> &'static str {
        match self {
            BlockReason::DiskIo => "disk",
            BlockReason::PageFault => "fault",
            r => r.key(),
        }
    }

    /// The batch JSON key.
    pub fn key(self) -> &'static str {
        match self {
            BlockReason::Futex => "futex",
            BlockReason::Sleep => "sleep",
            BlockReason::Poll => "poll",
            BlockReason::Pipe => "pipe",
            BlockReason::Socket => "socket",
            BlockReason::DiskIo => "disk_io",
            BlockReason::PageFault => "page_fault",
            BlockReason::Child => "child",
            BlockReason::Other => "other",
        }
    }
}

/// A thread's "why" counters in a Sample. Causes and reasons are cumulative
/// since the probes began watching the thread; `preempted_by` holds the
/// involuntary switch-outs since the previous Sample only (the kernel map is
/// emptied each drain to stay bounded), by the tid that ran next.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WhySample {
    pub migrations_by_cause: [u64; MIG_CAUSES],
    pub blocked_on: [u64; BLOCK_REASONS],
    /// (preemptor tid, count), largest first, at most `MAX_PREEMPTORS`
    pub preempted_by: Vec<(u32, u64)>,
    /// preemptions by threads beyond the list (and pairs the kernel map
    /// could not hold are counted in the source's drops)
    pub preempted_by_rest: u64,
    /// (waker tid or a pseudo-waker id, count) of the interval: the same
    /// pair list as `preempted_by` (at most `MAX_PREEMPTORS` threads, then
    /// every pseudo-waker the interval had)
    #[serde(default)]
    pub woken_by: Vec<(u32, u64)>,
    #[serde(default)]
    pub woken_by_rest: u64,
    /// wakeups the probe counted in the list (cumulative): the list and the
    /// rest of an interval sum to its delta. None where the source does not
    /// count wakers (the probes' waker counting off, older recordings):
    /// then every waker figure is unknown, not 0, and the lists are empty
    #[serde(default)]
    pub wakeups: Option<u64>,
}

/// Which pair list: the probe's `PAIR_*` kinds (bpf/schedtop.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairKind {
    Preempt = 0,
    Wake = 1,
}

impl PairKind {
    pub const ALL: [PairKind; 2] = [PairKind::Preempt, PairKind::Wake];
}

/// Reserved waker ids of wakeups from interrupt context or the idle task
/// (`WAKER_*` in bpf/schedtop.h), in `PseudoWaker` order from the first.
pub const PSEUDO_WAKER_BASE: u32 = 0xffff_ff00;

/// Who woke a thread when it was no thread: the probe's pseudo-wakers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PseudoWaker {
    Hardirq = 0,
    SoftirqTimer = 1,
    SoftirqNet = 2,
    SoftirqBlock = 3,
    SoftirqOther = 4,
    Idle = 5,
}

pub const PSEUDO_WAKERS: usize = 6;

impl PseudoWaker {
    pub const ALL: [PseudoWaker; PSEUDO_WAKERS] = [
        PseudoWaker::Hardirq,
        PseudoWaker::SoftirqTimer,
        PseudoWaker::SoftirqNet,
        PseudoWaker::SoftirqBlock,
        PseudoWaker::SoftirqOther,
        PseudoWaker::Idle,
    ];

    /// The pseudo-waker a waker id stands for, if it is one.
    pub fn of(id: u32) -> Option<PseudoWaker> {
        id.checked_sub(PSEUDO_WAKER_BASE)
            .and_then(|i| Self::ALL.get(i as usize).copied())
    }

    /// The batch JSON key (inside `woken_by_irq`) and the label shown.
    pub fn key(self) -> &'static str {
        match self {
            PseudoWaker::Hardirq => "hardirq",
            PseudoWaker::SoftirqTimer => "softirq_timer",
            PseudoWaker::SoftirqNet => "softirq_net",
            PseudoWaker::SoftirqBlock => "softirq_block",
            PseudoWaker::SoftirqOther => "softirq_other",
            PseudoWaker::Idle => "idle",
        }
    }
}

impl WhySample {
    /// The interval's list of `kind` and what it leaves out.
    pub fn pairs(&self, kind: PairKind) -> (&[(u32, u64)], u64) {
        match kind {
            PairKind::Preempt => (&self.preempted_by, self.preempted_by_rest),
            PairKind::Wake => (&self.woken_by, self.woken_by_rest),
        }
    }

    pub fn pairs_mut(&mut self, kind: PairKind) -> (&mut Vec<(u32, u64)>, &mut u64) {
        match kind {
            PairKind::Preempt => (&mut self.preempted_by, &mut self.preempted_by_rest),
            PairKind::Wake => (&mut self.woken_by, &mut self.woken_by_rest),
        }
    }

    /// Any pair list holds something (they are the interval's, not
    /// cumulative).
    pub fn has_pairs(&self) -> bool {
        PairKind::ALL.iter().any(|&k| {
            let (l, r) = self.pairs(k);
            !l.is_empty() || r != 0
        })
    }

    /// Empty every pair list (a copy of the figures for another interval).
    pub fn clear_pairs(&mut self) {
        for k in PairKind::ALL {
            let (l, r) = self.pairs_mut(k);
            l.clear();
            *r = 0;
        }
    }
}

/// Preemptors kept per thread in a Sample.
pub const MAX_PREEMPTORS: usize = 8;
/// Preemptors shown per thread or process.
pub const TOP_PREEMPTORS: usize = 5;

/// Who preempted a thread (or the threads of a process), resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preemptor {
    /// tid (per thread) or 0 (per process: the whole process)
    pub tid: u32,
    pub pid: u32,
    /// hostile: escape before display; "" when the thread is unknown
    pub comm: String,
    pub count: u64,
}

/// One interval's "why" figures of a row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WhyCounts {
    pub migrations_by_cause: [u64; MIG_CAUSES],
    pub blocked_on: [u64; BLOCK_REASONS],
    /// largest first, at most TOP_PREEMPTORS
    pub preempted_by: Vec<Preemptor>,
    /// preemptions not in the list
    pub preempted_by_rest: u64,
    /// who woke the row: largest first, at most TOP_PREEMPTORS threads
    /// (per process: waking processes)
    pub woken_by: Vec<Preemptor>,
    /// wakeups by threads not in the list
    pub woken_by_rest: u64,
    /// wakeups from interrupt context or the idle task (`PseudoWaker`)
    pub woken_by_irq: [u64; PSEUDO_WAKERS],
    /// wakeups the probe counted: the lists, rest and pseudo-wakers sum to
    /// it. None: the wakers were not counted, and every waker figure of the
    /// row is unknown (null in JSON, `-` on screen, no series in /metrics)
    pub wakeups: Option<u64>,
    /// the table's cells, set by `label`: the top block reason and its
    /// share ("pipe 98%"), the dominant migration cause ("bal"), the top
    /// waker and its share ("writer 97%", "hardirq 99%")
    pub blocks_on: String,
    pub migrated_by: &'static str,
    pub woken_label: String,
}

fn delta<const N: usize>(now: &[u64; N], before: Option<&[u64; N]>) -> [u64; N] {
    let mut out = *now;
    if let Some(b) = before {
        for (o, b) in out.iter_mut().zip(b) {
            *o = o.saturating_sub(*b);
        }
    }
    out
}

/// The wakeups of the interval: unknown where either end did not count
/// them (a delta on an uncounted start would be the thread's whole life).
fn wakeups_since(now: &WhySample, before: Option<&WhySample>) -> Option<u64> {
    let n = now.wakeups?;
    match before {
        None => Some(n),
        Some(b) => Some(n.saturating_sub(b.wakeups?)),
    }
}

/// Put what the causes do not explain into "other": a migration or a
/// voluntary switch the probe could not attribute is unknown, never guessed.
fn fill_other<const N: usize>(counts: &mut [u64; N], total: u64) {
    let sum = counts.iter().fold(0u64, |a, &c| a.saturating_add(c));
    if total > sum {
        counts[N - 1] = counts[N - 1].saturating_add(total - sum);
    }
}

/// The interval's causes and reasons from two Samples of a thread:
/// `migrations` and `voluntary` are the kernel's own deltas, so the causes
/// sum to the migrations and the reasons to the voluntary switches.
pub fn interval(
    now: &WhySample,
    before: Option<&WhySample>,
    migrations: Option<u64>,
    voluntary: u64,
) -> WhyCounts {
    let mut out = WhyCounts {
        migrations_by_cause: delta(
            &now.migrations_by_cause,
            before.map(|b| &b.migrations_by_cause),
        ),
        blocked_on: delta(&now.blocked_on, before.map(|b| &b.blocked_on)),
        preempted_by: Vec::new(),
        preempted_by_rest: now.preempted_by_rest,
        woken_by_rest: now.woken_by_rest,
        wakeups: wakeups_since(now, before),
        ..WhyCounts::default()
    };
    // the pseudo-wakers are the interval's counts as they are: no names
    // to resolve, so a process (and the exporter) sums them like counts
    for &(id, n) in &now.woken_by {
        if let Some(p) = PseudoWaker::of(id) {
            out.woken_by_irq[p as usize] = out.woken_by_irq[p as usize].saturating_add(n);
        }
    }
    if let Some(m) = migrations {
        fill_other(&mut out.migrations_by_cause, m);
    }
    fill_other(&mut out.blocked_on, voluntary);
    out
}

impl WhyCounts {
    /// Nothing counted: no migration, no block, no preemption, no wakeup
    /// (whether wakeups were counted or not).
    pub fn is_empty(&self) -> bool {
        self.preempted_by.is_empty()
            && self.preempted_by_rest == 0
            && self.wakeups.unwrap_or(0) == 0
            && self.woken_by.is_empty()
            && self.migrations_by_cause.iter().all(|&n| n == 0)
            && self.blocked_on.iter().all(|&n| n == 0)
    }

    /// Fill the table's cells from the counts.
    pub fn label(&mut self) {
        self.blocks_on = self.top_block().map_or(String::new(), |(r, share)| {
            format!("{} {:.0}%", r.short(), share * 100.0)
        });
        self.migrated_by = self.dominant_cause().map_or("", |(c, _)| c.short());
        self.woken_label = self.top_waker().map_or(String::new(), |(name, share)| {
            format!("{name} {:.0}%", share * 100.0)
        });
    }

    /// The wakeups the lists account for: threads, the rest, pseudo-wakers.
    pub fn wakeups_listed(&self) -> u64 {
        let threads = self.woken_by.iter().map(|p| p.count);
        threads
            .chain([self.woken_by_rest])
            .chain(self.woken_by_irq)
            .fold(0u64, |a, n| a.saturating_add(n))
    }

    /// The top waker (a thread or process name, or a pseudo-waker's key)
    /// and its share of the wakeups listed, if any were.
    pub fn top_waker(&self) -> Option<(String, f64)> {
        let total = self.wakeups_listed();
        let thread = self.woken_by.first().map(|p| {
            let name = if p.comm.is_empty() {
                p.tid.max(p.pid).to_string()
            } else {
                p.comm.clone()
            };
            (name, p.count)
        });
        let pseudo =
            top(&self.woken_by_irq).map(|(i, n)| (PseudoWaker::ALL[i].key().to_string(), n));
        let best = match (thread, pseudo) {
            (Some(t), Some(p)) => Some(if p.1 > t.1 { p } else { t }),
            (t, p) => t.or(p),
        }?;
        (total > 0).then(|| (best.0, best.1 as f64 / total as f64))
    }

    /// Add another row's figures (a process sums its threads; the preemptor
    /// lists are merged by the caller, who knows the processes).
    pub fn add(&mut self, o: &WhyCounts) {
        for (a, b) in self
            .migrations_by_cause
            .iter_mut()
            .zip(&o.migrations_by_cause)
        {
            *a = a.saturating_add(*b);
        }
        for (a, b) in self.blocked_on.iter_mut().zip(&o.blocked_on) {
            *a = a.saturating_add(*b);
        }
        self.preempted_by_rest = self.preempted_by_rest.saturating_add(o.preempted_by_rest);
        self.woken_by_rest = self.woken_by_rest.saturating_add(o.woken_by_rest);
        for (a, b) in self.woken_by_irq.iter_mut().zip(&o.woken_by_irq) {
            *a = a.saturating_add(*b);
        }
        // known where either is (a source counts wakers for every thread
        // or none; a row's sum starts from nothing)
        self.wakeups = match (self.wakeups, o.wakeups) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        };
    }

    /// Whether the waker figures were counted (else they are unknown).
    pub fn wakers_known(&self) -> bool {
        self.wakeups.is_some()
    }

    /// The cause with the most migrations, if any migrated.
    pub fn dominant_cause(&self) -> Option<(MigCause, u64)> {
        top(&self.migrations_by_cause).map(|(i, n)| (MigCause::ALL[i], n))
    }

    /// The most frequent block reason and its share of the voluntary
    /// switch-outs (0..=1), if the row blocked at all.
    pub fn top_block(&self) -> Option<(BlockReason, f64)> {
        let total: u64 = self.blocked_on.iter().sum();
        top(&self.blocked_on).map(|(i, n)| (BlockReason::ALL[i], n as f64 / total as f64))
    }
}

/// CPU→CPU migrations of `cause` during the interval, (from, to, count),
/// non-zero only (empty where the source has no by-cause counts).
pub fn cause_moves(
    prev: Option<&super::Sample>,
    cur: &super::Sample,
    cause: MigCause,
) -> Vec<(u32, u32, u64)> {
    fn list(s: &super::Sample, cause: MigCause) -> &[super::MigrationCount] {
        s.system
            .migrations_by_cause
            .get(cause as usize)
            .map_or(&[], |v| v.as_slice())
    }
    let before: std::collections::HashMap<(u32, u32), u64> = prev
        .map(|p| {
            list(p, cause)
                .iter()
                .map(|m| ((m.from_cpu, m.to_cpu), m.count))
                .collect()
        })
        .unwrap_or_default();
    list(cur, cause)
        .iter()
        .filter_map(|m| {
            let b = before.get(&(m.from_cpu, m.to_cpu)).copied().unwrap_or(0);
            let d = m.count.saturating_sub(b);
            (d > 0).then_some((m.from_cpu, m.to_cpu, d))
        })
        .collect()
}

/// Index and count of the largest nonzero entry (the first on ties).
fn top(counts: &[u64]) -> Option<(usize, u64)> {
    let mut best: Option<(usize, u64)> = None;
    for (i, &n) in counts.iter().enumerate() {
        if n > 0 && best.is_none_or(|(_, b)| n > b) {
            best = Some((i, n));
        }
    }
    best
}

/// Keep the largest `MAX_PREEMPTORS` (tid, count) pairs of threads,
/// largest first (ties by tid, so the order is stable), then every
/// pseudo-waker (never folded into the rest: they are few and named); the
/// rest is summed.
pub fn bound_pairs(pairs: Vec<(u32, u64)>) -> (Vec<(u32, u64)>, u64) {
    let (mut pairs, mut pseudo): (Vec<_>, Vec<_>) = pairs
        .into_iter()
        .partition(|p| PseudoWaker::of(p.0).is_none());
    pairs.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let rest = pairs
        .iter()
        .skip(MAX_PREEMPTORS)
        .fold(0u64, |a, p| a.saturating_add(p.1));
    pairs.truncate(MAX_PREEMPTORS);
    pseudo.sort_unstable();
    pairs.extend(pseudo);
    (pairs, rest)
}

/// The most a pair list of a thread holds in a Sample.
pub const MAX_PAIRS: usize = MAX_PREEMPTORS + PSEUDO_WAKERS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unattributed_moves_and_blocks_are_other_and_sums_are_exact() {
        let before = WhySample {
            migrations_by_cause: [1, 2, 0, 3, 0],
            blocked_on: [5, 0, 0, 0, 0, 0, 0, 0, 1],
            ..WhySample::default()
        };
        let now = WhySample {
            migrations_by_cause: [4, 2, 0, 7, 0],
            blocked_on: [9, 1, 0, 0, 0, 0, 0, 0, 1],
            ..WhySample::default()
        };
        let w = interval(&now, Some(&before), Some(10), 6);
        assert_eq!(w.migrations_by_cause, [3, 0, 0, 4, 3]);
        assert_eq!(w.blocked_on, [4, 1, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(w.dominant_cause(), Some((MigCause::Affinity, 4)));
        let (r, share) = w.top_block().unwrap();
        assert_eq!(r, BlockReason::Futex);
        assert!((share - 4.0 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn wakers_not_counted_stay_unknown_through_the_interval_and_the_sums() {
        let counted = |n| WhySample {
            wakeups: Some(n),
            ..WhySample::default()
        };
        let off = WhySample::default();
        // counted at both ends: the delta
        assert_eq!(
            interval(&counted(9), Some(&counted(4)), None, 0).wakeups,
            Some(5)
        );
        assert_eq!(interval(&counted(9), None, None, 0).wakeups, Some(9));
        // not counted at either end: unknown, never 0 or the whole count
        let w = interval(&off, Some(&off), None, 0);
        assert_eq!(w.wakeups, None);
        assert!(!w.wakers_known() && w.is_empty());
        assert_eq!(interval(&counted(9), Some(&off), None, 0).wakeups, None);
        assert_eq!(interval(&off, Some(&counted(4)), None, 0).wakeups, None);
        // a sum starts unknown and is known once a known row is added
        let mut sum = WhyCounts::default();
        sum.add(&w);
        assert_eq!(sum.wakeups, None);
        sum.add(&interval(&counted(3), None, None, 0));
        sum.add(&interval(&counted(4), None, None, 0));
        assert_eq!(sum.wakeups, Some(7));
    }

    #[test]
    fn preemptor_list_is_bounded_and_the_rest_counted() {
        let pairs: Vec<(u32, u64)> = (1..=12).map(|t| (t, u64::from(t) * 10)).collect();
        let (kept, rest) = bound_pairs(pairs);
        assert_eq!(kept.len(), MAX_PREEMPTORS);
        assert_eq!(kept[0], (12, 120));
        assert_eq!(rest, 10 + 20 + 30 + 40);
    }

    #[test]
    fn pseudo_wakers_stay_listed_after_the_threads_and_the_share_counts_them() {
        let hard = PSEUDO_WAKER_BASE;
        let mut pairs: Vec<(u32, u64)> = (1..=10).map(|t| (t, 5)).collect();
        pairs.push((hard, 1));
        pairs.push((PSEUDO_WAKER_BASE + 5, 2));
        let (kept, rest) = bound_pairs(pairs);
        assert_eq!(kept.len(), MAX_PREEMPTORS + 2);
        assert_eq!(
            &kept[MAX_PREEMPTORS..],
            [(hard, 1), (PSEUDO_WAKER_BASE + 5, 2)]
        );
        assert_eq!(rest, 10);
        assert_eq!(PseudoWaker::of(PSEUDO_WAKER_BASE + 6), None);
        assert_eq!(PseudoWaker::of(7), None);
        let mut w = WhyCounts {
            woken_by_irq: [30, 0, 0, 0, 0, 10],
            woken_by: vec![Preemptor {
                tid: 4,
                pid: 4,
                comm: "b".into(),
                count: 50,
            }],
            woken_by_rest: 10,
            ..WhyCounts::default()
        };
        w.label();
        assert_eq!(w.wakeups_listed(), 100);
        assert_eq!(w.woken_label, "b 50%");
        w.woken_by_irq[0] = 60;
        w.label();
        assert_eq!(w.woken_label, "hardirq 46%");
    }
}
