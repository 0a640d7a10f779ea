//! Reading only the threads that changed (bpf/dirty.bpf.h): the probe
//! queues a thread in a dirty set when it updates the thread's record, and
//! a drain reads those sets instead of walking every task. The threads that
//! did not change are the previous Sample's, kept here, so every Sample
//! still lists every thread. A full pass over every task (the census) runs
//! at the first drain, after a dirty set overflowed, and every few seconds
//! (at most 0.25 % of the time): it finds what no switch-out announces —
//! threads renamed, re-niced or moved to another cgroup by someone else
//! while they slept, and threads that vanished without a traced exit.
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::{Context, Result};
use libbpf_rs::{Link, MapCore, MapFlags};

use super::bpf_maps::{each_thread_record, take_hash_map};
use super::bpf_skel::types::{cpu_stats, thread_stats};
use super::bpf_skel::SchedtopSkel;
use super::kept_threads::KeptThreads;
use crate::model::Threads;

/// Entries of each dirty set: distinct threads switching in one interval
/// beyond this fall back to a full pass (still exact, today's cost).
pub const DIRTY_ENTRIES: u32 = 65536;

/// A census at most this often and at least this rarely.
const CENSUS_MIN_NS: u64 = 5_000_000_000;
const CENSUS_MAX_NS: u64 = 60_000_000_000;
/// A census's wall time times this is the wait for the next: 0.1 % of a
/// core. A census reads every task's whole record (about 14 ms of CPU at
/// 10,000 threads in a perf profile; at 0.25 % it was a fifth of the live
/// view's cost). What only it finds (a sleeping thread renamed or re-niced
/// by another, an exit never traced) shows within about 14 s at 10,000
/// threads, within a minute from about 50,000.
const CENSUS_SPACING: u64 = 1000;

pub(super) struct ChangedReader {
    /// the dirty-set reader attached to dirty0 and dirty1
    links: [Link; 2],
    /// the live threads of the last Sample
    pub kept: KeptThreads,
    next_census_ns: u64,
    /// a read failed part-way: records it took were marked read in the
    /// kernel but never reached a Sample, so the next drain reads every task
    failed: bool,
    /// (cpu, tid, start time) of the threads the last full pass found on a
    /// CPU: the only way to know a thread that has run since before the
    /// probes attached on a CPU that has not switched since
    census_running: Vec<(u32, u32, u64)>,
    /// full passes so far, and those forced by a dirty set overflowing
    pub full_passes: u64,
    pub overflows: u64,
}

impl ChangedReader {
    pub fn attach(skel: &SchedtopSkel<'static>) -> Result<ChangedReader> {
        let attach = |map: &libbpf_rs::Map| {
            skel.progs
                .dump_dirty
                .attach_iter(map.as_fd())
                .context("attaching the dirty-set reader")
        };
        Ok(ChangedReader {
            links: [attach(&skel.maps.dirty0)?, attach(&skel.maps.dirty1)?],
            kept: KeptThreads::default(),
            next_census_ns: 0,
            failed: false,
            census_running: Vec::new(),
            full_passes: 0,
            overflows: 0,
        })
    }

    /// Whether this drain must read every task: first drain, census due, or
    /// an insert failed since the last drain (cleared here), or the last
    /// read failed part-way.
    pub fn full_pass_due(&mut self, skel: &mut SchedtopSkel<'static>, now_ns: u64) -> bool {
        let lost = skel.maps.bss_data.as_mut().is_some_and(|bss| {
            // SAFETY: the .bss is mmapped and only ever accessed as u32s
            let flag = unsafe { AtomicU32::from_ptr(&mut bss.dirty_lost) };
            flag.swap(0, Ordering::SeqCst) != 0
        });
        if lost {
            self.overflows += 1;
        }
        lost || self.failed || self.full_passes == 0 || now_ns >= self.next_census_ns
    }

    fn epoch<'a>(skel: &'a mut SchedtopSkel<'static>) -> Option<&'a AtomicU32> {
        let bss = skel.maps.bss_data.as_mut()?;
        // SAFETY: as above
        Some(unsafe { AtomicU32::from_ptr(&mut bss.dirty_epoch) })
    }

    /// Start the next epoch, the set of the one before emptied first (it was
    /// read at the last drain; no probe still holds that epoch a whole
    /// interval later). Returns the epoch whose set the probes filled until
    /// now. The store is SeqCst: a full barrier before the reads that follow.
    fn flip(
        skel: &mut SchedtopSkel<'static>,
        read_old: impl FnOnce(usize) -> Result<()>,
    ) -> Result<u32> {
        let e = Self::epoch(skel)
            .context("the BPF object has no .bss")?
            .load(Ordering::SeqCst);
        let old = (e.wrapping_add(1) & 1) as usize;
        read_old(old)?;
        let set = if old == 1 {
            &skel.maps.dirty1
        } else {
            &skel.maps.dirty0
        };
        take_hash_map(set).context("emptying a dirty set")?;
        if let Some(epoch) = Self::epoch(skel) {
            epoch.store(e.wrapping_add(1), Ordering::SeqCst);
        }
        Ok(e)
    }

    /// Before a full pass: start a new epoch so that whatever changes while
    /// or after the pass reads a thread is queued for the next drain.
    pub fn before_full_pass(
        &mut self,
        skel: &mut SchedtopSkel<'static>,
        start_ns: u64,
    ) -> Result<()> {
        Self::flip(skel, |_| Ok(()))?;
        self.kept.full_pass_ns = start_ns;
        Ok(())
    }

    /// After a full pass that took `took_ns`: the Sample's threads (and
    /// their cgroup ids) are kept; `running` are the records it read on a CPU.
    pub fn after_full_pass(
        &mut self,
        threads: &Threads,
        cgroup_ids: Vec<u64>,
        running: Vec<(u32, u32, u64)>,
        now_ns: u64,
        took_ns: u64,
    ) {
        self.kept.keep(threads, cgroup_ids, true);
        self.census_running = running;
        self.failed = false;
        self.full_passes += 1;
        let wait = took_ns
            .saturating_mul(CENSUS_SPACING)
            .clamp(CENSUS_MIN_NS, CENSUS_MAX_NS);
        self.next_census_ns = now_ns + wait;
    }

    /// Read the changed threads, each record handed to `f` as it streams
    /// in (never a list of them: 10,000 new threads a second are 15 MB of
    /// records): stragglers of the last epoch's set, then (after the flip,
    /// with the threads on a CPU now added) this epoch's. A thread read
    /// twice comes twice; the later copy is the newer.
    pub fn read(
        &mut self,
        skel: &mut SchedtopSkel<'static>,
        per_cpu: &[cpu_stats],
        mut f: impl FnMut(&KeptThreads, &thread_stats),
    ) -> Result<()> {
        let (links, kept) = (&self.links, &self.kept);
        let running = Self::running_now(per_cpu, &self.census_running);
        let read = Self::read_sets(links, skel, &running, |s| f(kept, s));
        self.failed |= read.is_err();
        read
    }

    /// (tid, start time) of the threads on a CPU now: the one each CPU's
    /// switch probe put there last, or, on a CPU that has not switched since
    /// the probes attached, the one the last full pass found there.
    fn running_now(per_cpu: &[cpu_stats], census: &[(u32, u32, u64)]) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = per_cpu
            .iter()
            .filter(|c| c.cur_tid != 0)
            .map(|c| (c.cur_tid as u32, c.cur_start))
            .collect();
        out.extend(
            census
                .iter()
                .filter(|&&(cpu, _, _)| per_cpu.get(cpu as usize).is_some_and(|c| c.switches == 0))
                .map(|&(_, tid, start)| (tid, start)),
        );
        out
    }

    fn read_sets(
        links: &[Link; 2],
        skel: &mut SchedtopSkel<'static>,
        running: &[(u32, u64)],
        mut f: impl FnMut(&thread_stats),
    ) -> Result<()> {
        let e = Self::flip(skel, |old| each_thread_record(&links[old], &mut f))?;
        let cur = (e & 1) as usize;
        let set = if cur == 1 {
            &skel.maps.dirty1
        } else {
            &skel.maps.dirty0
        };
        for &(tid, start) in running {
            // Never over an entry the probe made: the per-CPU pair was
            // copied while that CPU may have been writing it, and a start
            // time from the thread before would hide this one from the
            // reader. An error (there already; the set full) changes nothing.
            let _ = set.update(&tid.to_ne_bytes(), &start.to_ne_bytes(), MapFlags::NO_EXIST);
        }
        each_thread_record(&links[cur], f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(switches: u64, cur_tid: u64, cur_start: u64) -> cpu_stats {
        cpu_stats {
            switches,
            cur_tid,
            cur_start,
            ..Default::default()
        }
    }

    #[test]
    fn a_cpu_that_never_switched_runs_what_the_census_found_there() {
        // CPU 0 switched (its probe knows tid 7), CPU 1 never did since
        // attach, CPU 2 runs its idle task
        let per_cpu = [cpu(5, 7, 70), cpu(0, 0, 0), cpu(3, 0, 0)];
        // the census saw 9 on CPU 1, and 4 on CPU 0 before it switched
        let census = [(1, 9, 90), (0, 4, 40)];
        assert_eq!(
            ChangedReader::running_now(&per_cpu, &census),
            [(7, 70), (9, 90)]
        );
        // once CPU 1 switches, its probe's thread replaces the census's
        let per_cpu = [cpu(5, 7, 70), cpu(1, 8, 80), cpu(3, 0, 0)];
        assert_eq!(
            ChangedReader::running_now(&per_cpu, &census),
            [(7, 70), (8, 80)]
        );
        // a census entry for a CPU the map does not have is ignored
        assert_eq!(
            ChangedReader::running_now(&per_cpu[..1], &census),
            [(7, 70)]
        );
    }
}
