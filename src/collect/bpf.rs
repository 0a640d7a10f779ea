//! The BPF source: loads bpf/schedtop.bpf.c, attaches its probes and turns
//! one drain of its maps into a Sample.
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use anyhow::{Context, Result};
use libbpf_rs::{Link, MapCore, MapFlags};

use super::bpf_load::{load, Loaded};
pub use super::bpf_load::{BucketCode, Storage};
use super::bpf_maps::{each_thread_record, read_hash_map, read_pod};
use super::bpf_thread_sample::ThreadsOut;
use super::bpf_threads::{key_of, Offer, ThreadBook};
use super::cgroups::{CgroupCollector, CgroupTable};
use super::changed_threads::ChangedReader;
use super::exit_drainer::ExitDrainer;
use super::features::{Feature, Features};
use super::kept_threads::{fresh_by_key, Kept};
use super::perf::open_cpu_clock;
use super::system::{monotonic_ns, now_ns, read_cpu_busy_ns, read_system};
use crate::model::{
    CpuIrqSample, CpuSample, Losses, MigrationCount, RqSample, Sample, Threads, Topology,
};

use super::bpf_skel::types::{cpu_stats, drop_stats, thread_stats};
use super::bpf_skel::SchedtopSkel;

/// Run-queue length sampling frequency (the runqlen default; off the 250 Hz
/// tick so samples do not lock onto it).
pub const RQ_FREQ_HZ: u32 = 99;
/// Queue lengths below this are counted exactly (bpf/schedtop.h RQ_LINEAR).
pub const RQ_LINEAR: usize = 32;

pub struct BpfSource {
    skel: SchedtopSkel<'static>,
    storage: Storage,
    features: Features,
    topology: Topology,
    /// the run-queue sampler's events and links; empty when it is off
    _rq_events: Vec<(OwnedFd, Link)>,
    /// the interrupt-time probes (collect/irq_time.rs), attached while held
    _irq_links: Vec<Link>,
    rq_error: Option<String>,
    /// the task iterator's link: each drain opens one pass over all threads
    iter_link: Link,
    /// CLOCK_MONOTONIC of the previous drain: threads started after it
    /// began from zero during the interval
    last_drain_ns: u64,
    exits: ExitDrainer,
    book: ThreadBook,
    /// threads the last drain reported (the next one's capacity)
    last_threads: usize,
    pid_filter: Vec<u32>,
    cgroups: CgroupCollector,
    names: super::name_intern::NameInterner,
    wakers: super::waker_slots::WakerSlots,
    /// the dirty-set read path (6.2+ with task storage); None: every task
    /// is read at every drain
    changed: Option<ChangedReader>,
}

use super::why_drain::Pairs;

impl BpfSource {
    /// Load and attach. Errors say why BPF is not available.
    /// `run_delay_waits`: waits from the kernel's run_delay (cheaper),
    /// not timed from the wakeup.
    pub fn start(
        topology: Topology,
        pid_filter: Vec<u32>,
        runqueue_sampler: bool,
        run_delay_waits: bool,
    ) -> Result<Self> {
        Self::start_with(
            topology,
            pid_filter,
            runqueue_sampler,
            None,
            run_delay_waits,
        )
    }

    /// [`start`](Self::start), keeping per-thread state where `storage`
    /// says (None: the best the kernel offers). Tests run 5.10's way with
    /// `Some(Storage::TidHash)` on any kernel.
    pub fn start_with(
        topology: Topology,
        pid_filter: Vec<u32>,
        runqueue_sampler: bool,
        storage: Option<Storage>,
        run_delay_waits: bool,
    ) -> Result<Self> {
        let Loaded {
            skel,
            storage,
            mut features,
            rq_unavailable,
            attach_ns,
            dirty_sets,
            irq_time_off,
        } = load(&topology, storage, !run_delay_waits)?;

        // attach the tracepoints one by one: the perf_event program is attached per CPU below
        let attach_failed = "attaching the scheduler tracepoints";
        let mut skel = skel;
        skel.links.handle_switch = Some(skel.progs.handle_switch.attach().context(attach_failed)?);
        skel.links.handle_migrate =
            Some(skel.progs.handle_migrate.attach().context(attach_failed)?);
        if !run_delay_waits {
            skel.links.handle_wakeup =
                Some(skel.progs.handle_wakeup.attach().context(attach_failed)?);
            skel.links.handle_wakeup_new = Some(
                skel.progs
                    .handle_wakeup_new
                    .attach()
                    .context(attach_failed)?,
            );
        }
        let (irq_links, irq_time) = match irq_time_off {
            Some(why) => (Vec::new(), Err(why)),
            None => match super::irq_time::attach(&skel) {
                Ok((links, names)) => (links, Ok(names.join(", "))),
                Err(e) => (Vec::new(), Err(format!("{e:#}"))),
            },
        };
        let note = super::irq_time::proc_stat_irq_note();
        features.set(
            Feature::IrqTime,
            irq_time.is_ok(),
            match &irq_time {
                Ok(names) => format!("{} (hardirq: {names}); {note}", super::irq_time::HOW),
                Err(why) => format!("{why}; {note}"),
            },
        );
        if super::features::wakers_on() {
            // who woke whom: the waker's side of every wakeup, and the
            // softirq vector running on each CPU (why.bpf.h, irq_time.bpf.h),
            // unless the interrupt-time probes watch it already
            skel.links.handle_waking =
                Some(skel.progs.handle_waking.attach().context(attach_failed)?);
            if irq_links.is_empty() {
                skel.links.irq_soft_entry =
                    Some(skel.progs.irq_soft_entry.attach().context(attach_failed)?);
                skel.links.irq_soft_exit =
                    Some(skel.progs.irq_soft_exit.attach().context(attach_failed)?);
            }
            let found = super::features::preempt_count_from_rq();
            features.set(Feature::Wakers, true, super::features::wakers_detail(found));
        } else {
            features.set(
                Feature::Wakers,
                false,
                "off unless SCHEDTOP_WAKERS=1 (their cost is over the probe budget)",
            );
        }
        let iter_link = skel
            .progs
            .dump_threads
            .attach()
            .context("attaching the task iterator")?;
        let exits = ExitDrainer::start(&skel.maps.exited, &skel.maps.exits_saved)?;
        let changed = if dirty_sets {
            Some(ChangedReader::attach(&skel)?)
        } else {
            None
        };

        let mut rq_events = Vec::new();
        let mut rq_error =
            rq_unavailable.map(|why| format!("run-queue length unavailable ({why})"));
        if !runqueue_sampler && rq_error.is_none() {
            rq_error = Some("run-queue sampler not requested".into());
        }
        if rq_error.is_none() {
            for c in &topology.cpus {
                let attached = open_cpu_clock(c.cpu, RQ_FREQ_HZ as u64)
                    .map_err(anyhow::Error::from)
                    .and_then(|fd| {
                        let link = skel
                            .progs
                            .sample_runqueue
                            .attach_perf_event(fd.as_raw_fd())?;
                        Ok((fd, link))
                    });
                match attached {
                    Ok(ev) => rq_events.push(ev),
                    Err(e) => {
                        rq_error = Some(format!(
                            "run-queue length unavailable (perf event on CPU {}: {e})",
                            c.cpu
                        ));
                        rq_events.clear();
                        break;
                    }
                }
            }
        }
        match &rq_error {
            Some(e) => features.set(Feature::RunQueue, false, e.clone()),
            None => {
                let fields = features
                    .get(Feature::RunQueue)
                    .map(|f| f.detail.clone())
                    .unwrap_or_default();
                features.set(
                    Feature::RunQueue,
                    true,
                    format!("{RQ_FREQ_HZ} Hz cpu-clock perf event per CPU; {fields}"),
                )
            }
        }

        Ok(BpfSource {
            skel,
            storage,
            features,
            topology,
            _rq_events: rq_events,
            _irq_links: irq_links,
            rq_error,
            iter_link,
            last_drain_ns: attach_ns,
            last_threads: 0,
            exits,
            book: ThreadBook::default(),
            pid_filter,
            // the same mountinfo the loader chose the hierarchy by
            cgroups: CgroupCollector::discover(Path::new("/proc")),
            names: Default::default(),
            wakers: Default::default(),
            changed,
        })
    }

    /// Why the run-queue sampler is off, if it is.
    pub fn runqueue_error(&self) -> Option<&str> {
        self.rq_error.as_deref()
    }

    /// Whether drains read only the threads that changed (dirty sets), and
    /// how many full passes over every task they made so far (first drain,
    /// censuses, dirty sets overflowed).
    pub fn changed_only(&self) -> Option<(u64, u64)> {
        self.changed.as_ref().map(|c| (c.full_passes, c.overflows))
    }

    /// Where the probes keep per-thread state.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// What this source measures on this kernel, and how.
    pub fn features(&self) -> &Features {
        &self.features
    }

    /// (tid, pid, exited) of every thread the source holds state for now:
    /// the live threads' state (task storage, which the kernel frees with
    /// the task, or the tid-keyed map) and the exited threads not drained
    /// yet. Tests use it to check that thread churn leaves nothing behind.
    pub fn map_entries(&self) -> Result<Vec<(u32, u32, bool)>> {
        let mut out: Vec<_> = match self.storage {
            Storage::TaskStorage => {
                let mut v = Vec::new();
                each_thread_record(&self.iter_link, |s| {
                    if s.seen != 0 {
                        v.push((s.tid, s.pid, false));
                    }
                })?;
                v
            }
            Storage::TidHash => read_hash_map(&self.skel.maps.thread_hash)?
                .into_iter()
                .map(|(_, v)| read_pod::<thread_stats>(&v))
                .map(|s| (s.tid, s.pid, false))
                .collect(),
        };
        out.extend(
            self.exits
                .peek()?
                .into_iter()
                .map(|(_, v)| read_pod::<thread_stats>(&v))
                .map(|s| (s.tid, s.pid, true)),
        );
        Ok(out)
    }

    /// The tid-keyed map keeps the state of a thread whose final switch was
    /// never traced: delete entries of threads that are gone (not listed by
    /// the iterator that started at `iter_start_ns`, and older than it).
    fn sweep_tid_map(&mut self, iter_start_ns: u64) -> Result<()> {
        let live = self.book.last_live();
        for (k, v) in read_hash_map(&self.skel.maps.thread_hash)? {
            let s: thread_stats = read_pod(&v);
            let tid: u32 = read_pod(&k);
            if s.start_time < iter_start_ns && s.exited == 0 && !live.contains(&(tid, s.start_time))
            {
                let _ = self.skel.maps.thread_hash.delete(&k);
            }
        }
        Ok(())
    }

    /// Drain into a Sample: every live thread once, and every thread that
    /// exited since the last drain once more, with its final counts.
    pub fn drain(&mut self) -> Result<Sample> {
        let (time_ns, mono_ns) = now_ns();
        let per_cpu = self.per_cpu_stats()?;
        // exited first: a dying thread may still be listed by the iterator
        // (until it is reaped); its exited record is the final one
        let (exited, exits_dropped) = self.exits.take()?;
        let mut exited: Vec<thread_stats> = exited.iter().map(|(_, v)| read_pod(v)).collect();
        let mut pairs = super::why_drain::take_pairs(&mut self.skel)?;
        let full = match self.changed.as_mut() {
            Some(ch) => ch.full_pass_due(&mut self.skel, mono_ns),
            None => true,
        };
        let (threads, cgroups) = if full {
            self.read_every_thread(&mut exited, &mut pairs)?
        } else {
            self.read_changed_threads(&mut exited, &mut pairs, &per_cpu)?
        };
        self.last_threads = threads.len();
        self.last_drain_ns = mono_ns;

        let cpus = self.read_cpus(&per_cpu);
        let migrations = self.read_migrations()?;
        let mut system = read_system(Path::new("/proc"));
        system.losses = self.read_losses(exits_dropped)?;
        system.migrations_by_cause =
            super::why_drain::read_cause_matrix(&self.skel.maps.migration_cause_matrix)?;
        let mut sample = Sample {
            time_ns,
            mono_ns,
            threads,
            cpus,
            migrations,
            system,
            cgroups: Vec::new(),
            outside: Vec::new(),
            ancestors: Vec::new(),
        };
        if !self.pid_filter.is_empty() {
            sample.outside =
                super::outside_threads::name_outside(&sample.threads, Path::new("/proc"));
        }
        self.cgroups.finish(cgroups, &mut sample);
        Ok(sample)
    }

    /// Every task, by the task iterator.
    fn read_every_thread(
        &mut self,
        exited: &mut [thread_stats],
        pairs: &mut Pairs,
    ) -> Result<(Threads, CgroupTable)> {
        let iter_start_ns = monotonic_ns();
        if let Some(ch) = self.changed.as_mut() {
            ch.before_full_pass(&mut self.skel, iter_start_ns)?;
        }
        let iter_link = &self.iter_link;
        let storage = self.storage;
        self.wakers.full_pass_begins();
        let unmeasured = self.features.unmeasured_counters();
        let mut out = ThreadsOut::new(
            self.last_drain_ns,
            &self.pid_filter,
            self.last_threads + 64,
            &mut self.names,
            &mut self.wakers,
        );
        out.unmeasured = unmeasured;
        out.wakers_counted = self.features.is_on(Feature::Wakers);
        let (book, cgroups) = (&mut self.book, &mut self.cgroups);
        let mut pass = book.begin(exited);
        for s in exited.iter() {
            out.push(s, true, false, cgroups, pairs);
        }
        let mut running = Vec::new();
        let listed = each_thread_record(iter_link, |s| {
            if s.on_cpu != 0 {
                running.push((s.last_cpu, s.tid, s.start_time));
            }
            match book.offer(&mut pass, s) {
                Offer::Skip => {}
                Offer::Report { late_new } => out.push(s, false, late_new, cgroups, pairs),
                Offer::Mended(m) => out.push(&m, false, false, cgroups, pairs),
            }
        });
        if let Err(e) = listed {
            // a pass cut short says nothing about the threads it missed
            book.abandon(pass);
            return Err(e);
        }
        book.finish(pass);
        out.wakers.full_pass_ended();
        let ThreadsOut {
            threads,
            cgroups: table,
            cgroup_ids,
            ..
        } = out;
        if storage == Storage::TidHash {
            self.sweep_tid_map(iter_start_ns)?;
        }
        let threads = Threads::from(threads);
        if let Some(ch) = self.changed.as_mut() {
            let now = monotonic_ns();
            let took = now.saturating_sub(iter_start_ns);
            ch.after_full_pass(&threads, cgroup_ids, running, now, took);
        }
        Ok((threads, table))
    }

    /// Only the threads the probe queued since the last drain (and those on
    /// a CPU now); the rest as the last Sample had them.
    fn read_changed_threads(
        &mut self,
        exited: &mut [thread_stats],
        pairs: &mut Pairs,
        per_cpu: &[cpu_stats],
    ) -> Result<(Threads, CgroupTable)> {
        let Some(ch) = self.changed.as_mut() else {
            return self.read_every_thread(exited, pairs);
        };
        let unmeasured = self.features.unmeasured_counters();
        let mut out = ThreadsOut::new(
            self.last_drain_ns,
            &self.pid_filter,
            self.last_threads + 64,
            &mut self.names,
            &mut self.wakers,
        );
        out.unmeasured = unmeasured;
        out.wakers_counted = self.features.is_on(Feature::Wakers);
        let (book, cgroups) = (&mut self.book, &mut self.cgroups);
        let mut pass = book.begin(exited);
        for s in exited.iter() {
            out.push(s, true, false, cgroups, pairs);
        }
        let n_exited = out.threads.len();
        let read = ch.read(&mut self.skel, per_cpu, |kept, s| {
            let first = kept.first_seen(&key_of(s));
            match book.offer(&mut pass, s) {
                Offer::Skip => {}
                Offer::Report { late_new } => out.push(s, false, late_new || first, cgroups, pairs),
                Offer::Mended(m) => out.push(&m, false, first, cgroups, pairs),
            }
        });
        if let Err(e) = read {
            // the next drain reads every task (ChangedReader::read)
            book.abandon(pass);
            return Err(e);
        }
        // a thread read twice: the later copy wins
        let fresh = fresh_by_key(
            out.threads
                .split_off(n_exited)
                .into_iter()
                .zip(out.cgroup_ids.split_off(n_exited))
                .map(|(sample, cgroup_id)| Kept { sample, cgroup_id }),
        );
        let table = &mut out.cgroups;
        let moved = ch.kept.assemble(
            fresh,
            pairs,
            pass.dead(),
            |id| cgroups.intern_id(table, id),
            &mut out.threads,
            &mut out.cgroup_ids,
        );
        book.finish_changed(pass);
        let threads = Threads::from(out.threads);
        ch.kept.keep(&threads, out.cgroup_ids, moved);
        Ok((threads, out.cgroups))
    }

    fn per_cpu_stats(&self) -> Result<Vec<cpu_stats>> {
        let zero = 0u32.to_ne_bytes();
        Ok(self
            .skel
            .maps
            .cpus
            .lookup_percpu(&zero, MapFlags::ANY)?
            .unwrap_or_default()
            .iter()
            .map(|raw| read_pod(raw))
            .collect())
    }

    fn read_cpus(&self, per_cpu: &[cpu_stats]) -> Vec<CpuSample> {
        let sampling = !self._rq_events.is_empty();
        // busy time is the kernel's own per-CPU accounting: no clock read
        // on the switch path
        let busy = read_cpu_busy_ns(Path::new("/proc"));
        let irq = super::system::read_cpu_irq_ns(Path::new("/proc"));
        let probes = !self._irq_links.is_empty();
        let mut out = Vec::new();
        for c in &self.topology.cpus {
            let Some(st) = per_cpu.get(c.cpu as usize) else {
                continue;
            };
            out.push(CpuSample {
                cpu: c.cpu,
                switches: st.switches,
                busy_ns: busy.get(&c.cpu).copied().unwrap_or(0),
                irq: irq.get(&c.cpu).map(|&[i, s, steal]| CpuIrqSample {
                    stat_irq_ns: i,
                    stat_softirq_ns: s,
                    stat_steal_ns: steal,
                    probe_irq_ns: probes.then_some(st.irq_ns),
                    probe_softirq_ns: probes.then(|| st.softirq_ns.iter().sum()),
                }),
                rq: sampling.then(|| RqSample {
                    samples: st.rq_samples,
                    sum: st.rq_sum,
                    hist: st.rq_hist.to_vec(),
                    freq_hz: RQ_FREQ_HZ,
                }),
            });
        }
        out
    }

    fn read_migrations(&self) -> Result<Vec<MigrationCount>> {
        let n = self.skel.maps.migration_matrix.max_entries();
        let side = (n as f64).sqrt().round() as u32;
        let mut out = Vec::new();
        let batch =
            self.skel
                .maps
                .migration_matrix
                .lookup_batch(4096, MapFlags::ANY, MapFlags::ANY);
        let mut add = |k: &[u8], v: &[u8]| {
            let idx: u32 = read_pod(k);
            let count: u64 = read_pod(v);
            if count > 0 && side > 0 {
                out.push(MigrationCount {
                    from_cpu: idx / side,
                    to_cpu: idx % side,
                    count,
                });
            }
        };
        match batch {
            Ok(iter) => iter.for_each(|(k, v)| add(&k, &v)),
            Err(_) => {
                for idx in 0..n {
                    let k = idx.to_ne_bytes();
                    if let Some(v) = self.skel.maps.migration_matrix.lookup(&k, MapFlags::ANY)? {
                        add(&k, &v);
                    }
                }
            }
        }
        out.sort_by_key(|m| (m.from_cpu, m.to_cpu));
        Ok(out)
    }

    fn read_losses(&self, exits_dropped: u64) -> Result<Losses> {
        let zero = 0u32.to_ne_bytes();
        let d: drop_stats = self
            .skel
            .maps
            .drops
            .lookup(&zero, MapFlags::ANY)?
            .map(|v| read_pod(&v))
            .unwrap_or_default();
        Ok(Losses {
            thread_map_full: d.thread_map_full + d.storage_unavailable + exits_dropped,
            migration_matrix_overflow: d.migration_matrix_overflow,
            torn_reads: self.book.torn_reads,
            exits_untraced: self.book.exits_untraced,
            preempt_pairs_full: d.preempt_pairs_full,
            wake_pairs_full: d.wake_pairs_full,
        })
    }
}
