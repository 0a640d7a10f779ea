//! The interval between two neighbouring Samples, derived once with
//! `model::rates`: one row per thread, and per process the sum of its
//! threads, plus system figures. The views, `--batch`/`dump` JSON and CSV
//! all read these rows (through the metric table, metrics.rs).
use crate::model::opt_rate::OptRate;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::cgroup::{CgroupAcc, CgroupRow};
use crate::model::cgroup_name::short_name;

use crate::model::rates::{
    counter_delta, elapsed_s, thread_interval, ThreadInterval, ThreadMatcher,
};
use crate::model::tally::Tally;
use crate::model::why::WhyCounts;
use crate::model::{Log2Hist, Sample, ThreadAttrs, ThreadSample};

use super::row::p99_us;
pub use super::row::{Row, RowFigures, RowKey};

/// System-wide figures for the header.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SystemRates {
    pub interval_s: f64,
    /// /proc/stat ctxt per second (None on the first Sample)
    pub switches_s: Option<f64>,
    /// the threads' own voluntary / involuntary counters summed (idle excluded)
    pub voluntary_s: f64,
    pub involuntary_s: f64,
    /// thread counters or histogram slots that went down this interval (a
    /// wrapped or glitched counter), counted as no change
    pub counter_anomalies: u64,
    /// the threads' migrations per second summed (None: no thread's
    /// migrations are known, procfs without schedstat)
    pub migrations_s: Option<f64>,
    /// the system's `some` CPU pressure over the interval, % of it
    /// (pressure_share.rs; None without PSI)
    pub pressure_some_pct: Option<f64>,
    /// the share of all CPUs' time (%) in hardirqs, softirqs and steal
    /// (`interrupt_steal_shares`; None: a CPU without interrupt figures)
    pub interrupt_steal_pct: Option<[f64; 3]>,
}

/// The whole machine's hardirq, softirq and steal shares (% of all CPUs'
/// time, as top's `hi si st`) from `prev` to `cur`, `dt` seconds.
fn machine_interrupt_shares(prev: Option<&Sample>, cur: &Sample, dt: f64) -> Option<[f64; 3]> {
    let prev = prev.filter(|_| dt > 0.0)?;
    let shares: Option<Vec<super::rates::CpuIrqShares>> = cur
        .cpus
        .iter()
        .map(|c| {
            let p = prev.cpus.iter().find(|x| x.cpu == c.cpu)?.irq.as_ref()?;
            Some(super::rates::cpu_irq_shares(p, c.irq.as_ref()?, dt))
        })
        .collect();
    interrupt_steal_shares(&shares?)
}

/// The mean of CPUs' shares: interrupts from the probes where they are
/// on, else /proc/stat's; None without CPUs.
pub fn interrupt_steal_shares(cpus: &[super::rates::CpuIrqShares]) -> Option<[f64; 3]> {
    let mut sum = [0.0; 3];
    for i in cpus {
        sum[0] += i.probe_irq_pct.unwrap_or(i.irq_pct);
        sum[1] += i.probe_softirq_pct.unwrap_or(i.softirq_pct);
        sum[2] += i.steal_pct;
    }
    let n = cpus.len() as f64;
    (n > 0.0).then(|| sum.map(|s| s / n))
}

/// The figures of a row from its interval totals (moved into the row).
/// `no_why` is shared by every row whose interval has no why figures (an
/// idle thread's): no allocation per idle row; one with its wakers unknown,
/// one with none counted.
fn fill(row: &mut Row, t: Option<Tally>, dt: f64, no_why: &NoWhy) {
    let Some(t) = t else { return };
    // (one copy of the shared unknown figures, then written in place)
    let row: &mut RowFigures = row;
    row.oncpu_ns = Some(t.oncpu_ns);
    row.wait_ns = Some(t.wait_ns);
    row.migrations = t.migrations;
    row.counters = t.counters;
    row.interval_s = dt;
    row.vcsw_s = OptRate::from(Some(ThreadInterval::per_s(t.voluntary, dt)));
    row.nvcsw_s = OptRate::from(Some(ThreadInterval::per_s(t.involuntary, dt)));
    row.cpu_pct = OptRate::from((dt > 0.0).then(|| t.oncpu_ns as f64 / 1e9 / dt * 100.0));
    // completed slices: the histogram's count where there is one, else one
    // slice ends with every switch-out
    let slices = t
        .slice_hist
        .as_ref()
        .map(Log2Hist::total)
        .filter(|&n| n > 0)
        .unwrap_or(t.voluntary.saturating_add(t.involuntary));
    row.avg_slice_ns = OptRate::from((slices > 0).then(|| t.oncpu_ns as f64 / slices as f64));
    row.p99_slice_us = p99_us(t.slice_hist.as_ref());
    row.p99_wait_us = p99_us(t.wait_hist.as_ref());
    row.p99_wakeup_wait_us = p99_us(t.wakeup_wait_hist.as_ref());
    row.p99_preempt_wait_us = p99_us(t.preempt_wait_hist.as_ref());
    row.migr_s = OptRate::from(t.migrations.map(|m| ThreadInterval::per_s(m, dt)));
    row.hists = crate::model::row_hists::RowHists::new([
        t.slice_hist,
        t.wait_hist,
        t.wakeup_wait_hist,
        t.preempt_wait_hist,
    ]);
    row.why = t.why.map(|mut w| {
        if w.is_empty() {
            return no_why[usize::from(w.wakers_known())].clone();
        }
        w.label();
        Arc::new(w)
    });
}

/// The empty why figures, wakers unknown and counted (none).
type NoWhy = [Arc<WhyCounts>; 2];

fn no_why() -> NoWhy {
    let counted = WhyCounts {
        wakeups: Some(0),
        ..WhyCounts::default()
    };
    [Arc::new(WhyCounts::default()), Arc::new(counted)]
}

/// A row with nothing counted yet.
pub fn empty_row(key: RowKey, id: u32, pid: u32) -> Row {
    Row {
        key,
        id,
        pid,
        comm: super::row::no_name(),
        process_comm: super::row::no_name(),
        cpu: None,
        threads: 1,
        exited: false,
        voluntary: 0,
        involuntary: 0,
        attrs: ThreadAttrs::default(),
        cgroup: None,
        cgroup_name: None,
        figures: super::row::unknown_figures(),
    }
}

/// `row`'s figures, shared with an earlier row's of the same interval
/// where equal (idle threads' rows: one set for all).
fn share_figures(row: &mut Row, seen: &mut Vec<Arc<RowFigures>>) {
    match seen.iter().find(|f| ***f == *row.figures) {
        Some(f) => row.figures = f.clone(),
        None if seen.len() < 16 => seen.push(row.figures.clone()),
        None => {}
    }
}

/// Everything the tables need from one Sample and its predecessor.
#[derive(Clone, Debug, Default)]
pub struct Derived {
    /// one row per thread of the Sample, in its order; an idle thread's
    /// row is shared with the Intervals before (read only: `Arc::make_mut`
    /// to change one)
    pub threads: Vec<Arc<Row>>,
    pub processes: Vec<Arc<Row>>,
    pub system: SystemRates,
    /// one row per cgroup of the Sample, in its order
    pub cgroups: Vec<CgroupRow>,
    /// per thread row: its interval was quiet (nothing counted, and a
    /// non-zero interval length), so the row holds nothing but the
    /// thread's own fields and zeros (`reusable`), and the next interval
    /// may share it
    pub quiet: Vec<bool>,
    /// per process (by pid): what its threads added since the previous
    /// Sample, a thread seen for the first time with its whole history
    /// (the exporter's running totals sum these, never a delta of their own)
    pub increments: Vec<(u32, Tally)>,
}

/// Rows for the interval ending with `cur`. `nominal_s` stands in for the
/// elapsed time when there is no earlier Sample.
pub fn derive(prev: Option<&Sample>, cur: &Sample, nominal_s: f64) -> Derived {
    derive_reusing(prev, cur, nominal_s, Derived::default())
}

/// `derive`, sharing the rows of `spare` (the interval before's, whose
/// rows are those of `prev`'s threads, in its order) where a thread was
/// quiet then and is quiet again: its row is the same one, by pointer.
/// Two Intervals alive at once (the one on screen and the one being
/// derived) then cost one row per idle thread, not two, and an idle
/// thread's row is neither rebuilt nor dropped (at 50,000 threads that was
/// a fifth of the live view's work) — also when threads start or end,
/// which moved every row before.
pub fn derive_reusing(
    prev: Option<&Sample>,
    cur: &Sample,
    nominal_s: f64,
    spare: Derived,
) -> Derived {
    super::derivation_count::count();
    let dt = prev.map_or(nominal_s, |p| elapsed_s(p, cur));
    let n = cur.threads.len();
    // the rows before, by the previous Sample's thread positions (a spare
    // made for another Sample fails `reusable`'s key check, row by row)
    let (old_rows, was_quiet) = match prev {
        Some(p) if dt > 0.0 && spare.threads.len() == p.threads.len() => {
            (spare.threads, spare.quiet)
        }
        _ => Default::default(),
    };
    let mut threads = Vec::with_capacity(n);
    let mut quiet = Vec::with_capacity(n);
    let mut processes = spare.processes;
    processes.clear();
    let mut procs: BTreeMap<u32, (Row, Option<Tally>)> = BTreeMap::new();
    let mut system = SystemRates {
        interval_s: dt,
        switches_s: prev.map(|p| {
            let d = counter_delta(cur.system.context_switches, p.system.context_switches);
            ThreadInterval::per_s(d, dt)
        }),
        interrupt_steal_pct: machine_interrupt_shares(prev, cur, dt),
        ..Default::default()
    };
    let paths: Vec<Arc<str>> = cur
        .cgroups
        .iter()
        .map(|c| Arc::from(c.path.as_str()))
        .collect();
    let names: Vec<Arc<str>> = cur
        .cgroups
        .iter()
        .map(|c| Arc::from(short_name(&c.path)))
        .collect();
    let mut cgroups = CgroupAcc::new(cur);
    let no_why = no_why();
    // (not `each_interval`: its (thread, interval) pairs, ~300 bytes, were
    // copied through two iterator adapters per thread, 7 % of the live
    // view at 50,000 threads)
    let prev_threads: &[ThreadSample] = prev.map_or(&[], |p| &p.threads);
    let mut before = ThreadMatcher::of(prev.map(|p| &p.threads));
    let mut empties = EmptyIntervals::default();
    let mut quiet_figures = Vec::new();
    let mut born: BTreeMap<u32, Tally> = BTreeMap::new();
    for t in cur.threads.iter() {
        let at = before.find(t.tid, t.start_time_ns);
        let p = at.map(|i| &prev_threads[i]);
        // the thread's row before, if its interval was quiet then
        let old = at
            .filter(|&i| was_quiet.get(i) == Some(&true))
            .and_then(|i| old_rows.get(i))
            .filter(|r| reusable(r, t, &paths));
        // idle since the previous Sample, and its row kept the interval
        // before: the row stays, its interval is the empty one of its shape
        if let Some(old) = old {
            let idle = p.filter(|p| idle_since(p, t));
            if let Some((iv, tt)) = idle.and_then(|p| empties.of(t, p)) {
                cgroups.add(t.cgroup, Some(iv));
                quiet.push(true);
                add_to_process(&mut procs, t, Some(tt), &paths, &names);
                threads.push(old.clone());
                continue;
            }
        }
        let iv = thread_interval(t, p);
        if iv.is_none() {
            let all = crate::model::rates::thread_interval_or_all(t, None);
            born.entry(t.pid).or_default().add(&Tally::of(all));
        }
        cgroups.add(t.cgroup, iv.as_ref());
        system.counter_anomalies += iv.as_ref().map_or(0, |i| u64::from(i.anomalies));
        let is_quiet = dt > 0.0 && iv.as_ref().is_some_and(quiet_interval);
        quiet.push(is_quiet);
        let totals = iv.map(Tally::of);
        add_to_process(&mut procs, t, totals.as_ref(), &paths, &names);
        if let Some(tt) = &totals {
            system.voluntary_s += ThreadInterval::per_s(tt.voluntary, dt);
            system.involuntary_s += ThreadInterval::per_s(tt.involuntary, dt);
        }
        if let Some(old) = old.filter(|_| is_quiet) {
            threads.push(old.clone());
            continue;
        }
        let mut row = empty_row(
            RowKey::Thread {
                tid: t.tid,
                start_time_ns: t.start_time_ns,
            },
            t.tid,
            t.pid,
        );
        row.comm = t.comm.clone();
        row.process_comm = t.process_comm.clone();
        row.cpu = Some(t.cpu);
        row.exited = t.exited;
        row.attrs = t.attrs;
        row.cgroup = t.cgroup.and_then(|i| paths.get(i as usize).cloned());
        row.cgroup_name = t.cgroup.and_then(|i| names.get(i as usize).cloned());
        row.voluntary = t.voluntary;
        row.involuntary = t.involuntary;
        fill(&mut row, totals, dt, &no_why);
        if is_quiet {
            share_figures(&mut row, &mut quiet_figures);
        }
        threads.push(Arc::new(row));
    }
    drop(old_rows);
    let mut increments = spare.increments;
    increments.clear();
    processes.extend(procs.into_iter().map(|(pid, (mut r, t))| {
        let mut inc = born.remove(&pid).unwrap_or_default();
        if let Some(t) = &t {
            inc.add(t);
        }
        increments.push((pid, inc));
        fill(&mut r, t, dt, &no_why);
        Arc::new(r)
    }));
    crate::model::why_resolve::preemptors(cur, &mut threads, &mut processes);
    system.migrations_s = threads
        .iter()
        .filter_map(|r| r.migr_s.get())
        .fold(None, |sum, m| Some(sum.unwrap_or(0.0) + m));
    system.pressure_some_pct = crate::model::pressure_share::system_pressure_pct(prev, cur);
    Derived {
        threads,
        processes,
        system,
        cgroups: cgroups.rows(prev, cur, dt),
        quiet,
        increments,
    }
}

/// A thread's process row: its counts and, from its main thread (or the
/// first one seen), the name, settings and cgroup.
fn add_to_process(
    procs: &mut BTreeMap<u32, (Row, Option<Tally>)>,
    t: &ThreadSample,
    totals: Option<&Tally>,
    paths: &[Arc<str>],
    names: &[Arc<str>],
) {
    let (p, ptot) = procs.entry(t.pid).or_insert_with(|| {
        let mut r = empty_row(RowKey::Process { pid: t.pid }, t.pid, t.pid);
        r.threads = 0;
        r.exited = true;
        (r, None)
    });
    p.threads += 1;
    p.exited &= t.exited;
    p.voluntary = p.voluntary.saturating_add(t.voluntary);
    p.involuntary = p.involuntary.saturating_add(t.involuntary);
    if p.comm.is_empty() || t.tid == t.pid {
        p.comm = if t.process_comm.is_empty() {
            t.comm.clone()
        } else {
            t.process_comm.clone()
        };
        p.process_comm = p.comm.clone();
        p.attrs = t.attrs;
        p.cgroup = t.cgroup.and_then(|i| paths.get(i as usize).cloned());
        p.cgroup_name = t.cgroup.and_then(|i| names.get(i as usize).cloned());
    }
    if let Some(tt) = totals {
        ptot.get_or_insert_with(Tally::default).add(tt);
    }
}

/// `t` as its previous appearance `p` was: the same counts (and the same
/// histograms and why figures, shared), no preemptors.
fn idle_since(p: &ThreadSample, t: &ThreadSample) -> bool {
    let why = match (&p.why, &t.why) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b) && !a.has_pairs(),
        _ => false,
    };
    why && t.unchanged_from(p)
}

/// The empty interval of an idle thread depends only on which figures it
/// has: built once per kind of thread, not once for each of 50,000 idle
/// threads (a ~300-byte interval each was a tenth of the live view).
#[derive(Default)]
struct EmptyIntervals(Vec<(IntervalShape, ThreadInterval, Tally)>);

/// Which figures a thread has: migrations, cross-node migrations, the four
/// histograms (none, fine, octaves only), why figures (none, wakers
/// unknown, wakers counted); the counters' unmeasured slots.
type IntervalShape = [u16; 8];

impl EmptyIntervals {
    /// The interval of `t`, idle since `p` (`idle_since`), and its totals.
    fn of(&mut self, t: &ThreadSample, p: &ThreadSample) -> Option<(&ThreadInterval, &Tally)> {
        let kind = |h: &Option<Log2Hist>| h.as_ref().map_or(0, |h| 1 + u16::from(h.octaves_only));
        let shape = [
            u16::from(t.migrations.is_some()),
            u16::from(t.counters.is_known()),
            kind(&t.slice_hist),
            kind(&t.wait_hist),
            kind(&t.wakeup_wait_hist),
            kind(&t.preempt_wait_hist),
            why_kind(t.why.as_deref().map(|w| w.wakeups.is_some())),
            t.counters.unmeasured(),
        ];
        let i = match self.0.iter().position(|e| e.0 == shape) {
            Some(i) => i,
            None => {
                let iv = thread_interval(t, Some(p)).filter(quiet_interval)?;
                let totals = Tally::of(iv.clone());
                self.0.push((shape, iv, totals));
                self.0.len() - 1
            }
        };
        let (_, iv, totals) = &self.0[i];
        Some((iv, totals))
    }
}

/// Nothing counted in the interval.
fn quiet_interval(i: &ThreadInterval) -> bool {
    let empty = |h: &Option<Log2Hist>| h.as_ref().is_none_or(|h| h.total() == 0);
    i.voluntary == 0
        && i.involuntary == 0
        && i.oncpu_ns == 0
        && i.wait_ns == 0
        && i.migrations.unwrap_or(0) == 0
        && !i.counters.any()
        && i.anomalies == 0
        && empty(&i.slice_hist)
        && empty(&i.wait_hist)
        && empty(&i.wakeup_wait_hist)
        && empty(&i.preempt_wait_hist)
        && i.why.as_ref().is_none_or(WhyCounts::is_empty)
}

/// `row`, made from a quiet interval, is what a quiet interval of `t`
/// makes: the same thread with the same fields, and the same figures known
/// (a quiet row's figures are zeros, or None where the source has none).
fn reusable(row: &Row, t: &ThreadSample, paths: &[Arc<str>]) -> bool {
    let path = t.cgroup.and_then(|i| paths.get(i as usize));
    row.key
        == (RowKey::Thread {
            tid: t.tid,
            start_time_ns: t.start_time_ns,
        })
        && Arc::ptr_eq(&row.comm, &t.comm)
        && Arc::ptr_eq(&row.process_comm, &t.process_comm)
        && row.cpu == Some(t.cpu)
        && row.exited == t.exited
        && row.attrs == t.attrs
        && row.voluntary == t.voluntary
        && row.involuntary == t.involuntary
        && row.cgroup.as_deref() == path.map(|p| &**p)
        && row.migrations.is_some() == t.migrations.is_some()
        && row.counters.is_known() == t.counters.is_known()
        && row.counters.unmeasured() == t.counters.unmeasured()
        && same_kind(row.slice_hist(), t.slice_hist.as_ref())
        && same_kind(row.wait_hist(), t.wait_hist.as_ref())
        && same_kind(row.wakeup_wait_hist(), t.wakeup_wait_hist.as_ref())
        && same_kind(row.preempt_wait_hist(), t.preempt_wait_hist.as_ref())
        && why_kind(row.why.as_deref().map(|w| w.wakers_known()))
            == why_kind(t.why.as_deref().map(|w| w.wakeups.is_some()))
}

/// No why figures, why figures with wakers unknown, or with wakers counted
/// (`known`: whether they were).
fn why_kind(known: Option<bool>) -> u16 {
    known.map_or(0, |k| 1 + u16::from(k))
}

/// Both histograms absent, or both present and of the same resolution.
fn same_kind(a: Option<&Log2Hist>, b: Option<&Log2Hist>) -> bool {
    a.map(|h| h.octaves_only) == b.map(|h| h.octaves_only)
}

/// A row's histograms and whys from the first Sample to the current one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SinceStart {
    pub slice_hist: Option<Log2Hist>,
    pub wait_hist: Option<Log2Hist>,
    pub wakeup_wait_hist: Option<Log2Hist>,
    pub preempt_wait_hist: Option<Log2Hist>,
    /// causes and reasons summed (preemptors are kept per interval only:
    /// the list stays empty)
    pub why: Option<WhyCounts>,
}

/// Histograms and whys of `key` from `first` to `cur` (the detail pane's
/// "since start"): a thread that is not in `first` counts from its own start.
pub fn since_start(first: &Sample, cur: &Sample, key: RowKey) -> SinceStart {
    let mut total = Tally::default();
    let earlier = crate::model::rates::index_threads(first);
    for t in &cur.threads {
        let wanted = match key {
            RowKey::Thread { tid, start_time_ns } => {
                t.tid == tid && t.start_time_ns == start_time_ns
            }
            RowKey::Process { pid } => t.pid == pid,
            RowKey::Group { .. } | RowKey::Cgroup { .. } => {
                crate::model::groups::holds(key, cur, t)
            }
        };
        if !wanted {
            continue;
        }
        let before = earlier.get(&(t.tid, t.start_time_ns)).copied();
        let iv = crate::model::rates::thread_interval_or_all(t, before);
        total.add(&Tally::of(iv));
    }
    let mut why = total.why;
    if let Some(w) = why.as_mut() {
        w.preempted_by.clear();
        w.preempted_by_rest = 0;
        w.woken_by.clear();
        w.woken_by_rest = 0;
        w.woken_by_irq = Default::default();
        w.label();
    }
    SinceStart {
        slice_hist: total.slice_hist,
        wait_hist: total.wait_hist,
        wakeup_wait_hist: total.wakeup_wait_hist,
        preempt_wait_hist: total.preempt_wait_hist,
        why,
    }
}

#[cfg(test)]
#[path = "interval_tests.rs"]
mod tests;

#[cfg(test)]
mod interrupt_share_tests {
    use super::*;
    use crate::model::{CpuIrqSample, CpuSample};

    /// Two CPUs after `k` seconds: /proc/stat irq 10 ms/s, softirq 40 ms/s,
    /// steal 20 ms/s; the probes (when on) hardirq 30 and 10 ms/s, softirq
    /// 60 ms/s.
    fn sample(k: u64, probes: bool, cpus: usize) -> Sample {
        let ms = |v: u64| v * 1_000_000 * k;
        Sample {
            cpus: (0..cpus as u32)
                .map(|cpu| CpuSample {
                    cpu,
                    irq: Some(CpuIrqSample {
                        stat_irq_ns: ms(10),
                        stat_softirq_ns: ms(40),
                        stat_steal_ns: ms(20),
                        probe_irq_ns: probes.then(|| ms(if cpu == 0 { 30 } else { 10 })),
                        probe_softirq_ns: probes.then(|| ms(60)),
                    }),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn close(got: Option<[f64; 3]>, want: [f64; 3]) {
        let got = got.unwrap();
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-9, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn machine_shares_prefer_the_probes_and_need_every_cpu() {
        let shares = |a: &Sample, b: &Sample| machine_interrupt_shares(Some(a), b, 2.0);
        // probes off: /proc/stat's; on: theirs (steal only from /proc/stat)
        close(
            shares(&sample(1, false, 2), &sample(3, false, 2)),
            [1.0, 4.0, 2.0],
        );
        close(
            shares(&sample(1, true, 2), &sample(3, true, 2)),
            [2.0, 6.0, 2.0],
        );
        // a CPU without figures (an older recording's): unknown, not 0
        let mut part = sample(3, false, 2);
        part.cpus[1].irq = None;
        assert_eq!(shares(&sample(1, false, 2), &part), None);
        // a CPU new since the previous Sample, no CPUs, no previous Sample
        assert_eq!(shares(&sample(1, false, 1), &sample(3, false, 2)), None);
        assert_eq!(shares(&sample(1, false, 0), &sample(3, false, 0)), None);
        assert_eq!(
            machine_interrupt_shares(None, &sample(3, false, 2), 2.0),
            None
        );
    }
}
