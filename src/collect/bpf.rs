//! The BPF source: loads bpf/schedtop.bpf.c, attaches its probes and turns
//! one drain of its maps into a Sample.
use std::io::Read;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags};

use super::perf::open_cpu_clock;
use super::system::{now_ns, read_cpu_busy_ns, read_system};
use crate::model::{
    Baseline, CpuSample, Log2Hist, Losses, MigrationCount, RqSample, Sample, ThreadAttrs,
    ThreadSample, Topology,
};

mod skel {
    #![allow(clippy::all, clippy::pedantic, non_camel_case_types, unused_imports)]
    include!(concat!(env!("OUT_DIR"), "/schedtop.skel.rs"));
}
use skel::types::{cpu_stats, drop_stats, thread_stats};
use skel::{SchedtopSkel, SchedtopSkelBuilder};

/// Run-queue length sampling frequency (the runqlen default; off the 250 Hz
/// tick so samples do not lock onto it).
pub const RQ_FREQ_HZ: u32 = 99;
/// Queue lengths below this are counted exactly (bpf/schedtop.h RQ_LINEAR).
pub const RQ_LINEAR: usize = 32;

pub struct BpfSource {
    skel: SchedtopSkel<'static>,
    topology: Topology,
    /// the run-queue sampler's events and links; empty when perf events are unavailable
    _rq_events: Vec<(OwnedFd, Link)>,
    rq_error: Option<String>,
    /// the task iterator's link: each drain opens one pass over all threads
    iter_link: Link,
    /// bytes the last pass of the iterator produced
    iter_bytes: std::cell::Cell<usize>,
    /// CLOCK_MONOTONIC of the previous drain: threads started after it
    /// began from zero during the interval
    last_drain_ns: u64,
    pid_filter: Vec<u32>,
}

/// Copy a plain-old-data struct out of map bytes.
fn read_pod<T: Copy + Default>(bytes: &[u8]) -> T {
    let mut v = T::default();
    let n = std::mem::size_of::<T>().min(bytes.len());
    // SAFETY: T is a repr(C) POD type generated from the BPF program's BTF;
    // we copy at most size_of::<T>() bytes into it.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), &mut v as *mut T as *mut u8, n) };
    v
}

fn comm_string(raw: &[i8]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every entry of a hash map, in batches of 1,024 per syscall.
///
/// Not libbpf-rs's batch iterator: it takes a short batch for the last one,
/// but a hash map's batch is also short when the next bucket does not fit
/// (kernel/bpf/hashtab.c), so it stopped early and left entries behind.
/// Here only ENOENT ends the walk.
fn read_hash_map(map: &libbpf_rs::MapMut<'_>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    use std::os::fd::AsFd;
    const BATCH: usize = 1024;
    let (ks, vs) = (map.key_size() as usize, map.value_size() as usize);
    let fd = map.as_fd().as_raw_fd();
    let opts = libbpf_sys::bpf_map_batch_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_map_batch_opts>() as _,
        ..Default::default()
    };
    let mut keys = vec![0u8; ks * BATCH];
    let mut values = vec![0u8; vs * BATCH];
    // the kernel's position in the map (for hash maps: a bucket index)
    let (mut in_batch, mut out_batch) = (0u64, 0u64);
    let mut first = true;
    let mut out = Vec::new();
    loop {
        let mut count = BATCH as u32;
        // SAFETY: the buffers hold BATCH keys and values of the map's sizes;
        // in/out batch are u64, larger than the 4-byte hash batch token.
        let ret = unsafe {
            libbpf_sys::bpf_map_lookup_batch(
                fd,
                if first {
                    std::ptr::null_mut()
                } else {
                    (&mut in_batch as *mut u64).cast()
                },
                (&mut out_batch as *mut u64).cast(),
                keys.as_mut_ptr().cast(),
                values.as_mut_ptr().cast(),
                &mut count,
                &opts,
            )
        };
        let err = if ret < 0 { -ret } else { 0 };
        if err == libc::EINTR {
            continue;
        }
        if err != 0 && err != libc::ENOENT {
            return Err(std::io::Error::from_raw_os_error(err)).context("reading a BPF map");
        }
        let n = (count as usize).min(BATCH);
        for i in 0..n {
            out.push((
                keys[i * ks..(i + 1) * ks].to_vec(),
                values[i * vs..(i + 1) * vs].to_vec(),
            ));
        }
        if err == libc::ENOENT {
            return Ok(out);
        }
        in_batch = out_batch;
        first = false;
    }
}

impl BpfSource {
    /// Load and attach. Errors say why BPF is not available.
    pub fn start(topology: Topology, pid_filter: Vec<u32>, runqueue_sampler: bool) -> Result<Self> {
        let nr_cpus = libbpf_rs::num_possible_cpus().context("counting possible CPUs")? as u32;
        let nr_cpus = nr_cpus.max(topology.cpu_slots()).max(1);

        // The skeleton borrows its object storage for its whole life; the
        // source lives until the process ends, so the storage is leaked once.
        let storage: &'static mut MaybeUninit<libbpf_rs::OpenObject> =
            Box::leak(Box::new(MaybeUninit::uninit()));
        let builder = SchedtopSkelBuilder::default();
        let mut open = builder.open(storage).context("opening the BPF object")?;
        let attach_ns = super::system::monotonic_ns();
        if let Some(ro) = open.maps.rodata_data.as_mut() {
            ro.nr_cpus = nr_cpus;
            ro.attach_ns = attach_ns;
        }
        open.maps
            .migration_matrix
            .set_max_entries(nr_cpus * nr_cpus)
            .context("sizing the migration matrix")?;
        open.maps
            .cpu_node
            .set_max_entries(nr_cpus)
            .context("sizing the CPU→node map")?;
        let mut skel = open.load().context("loading the BPF programs")?;

        for c in &topology.cpus {
            skel.maps
                .cpu_node
                .update(&c.cpu.to_ne_bytes(), &c.node.to_ne_bytes(), MapFlags::ANY)
                .context("filling the CPU→node map")?;
        }

        // attach the tracepoints one by one: the perf_event program is attached per CPU below
        let attach_failed = "attaching the scheduler tracepoints";
        skel.links.handle_switch = Some(skel.progs.handle_switch.attach().context(attach_failed)?);
        skel.links.handle_migrate =
            Some(skel.progs.handle_migrate.attach().context(attach_failed)?);
        let iter_link = skel
            .progs
            .dump_threads
            .attach()
            .context("attaching the task iterator")?;

        let mut rq_events = Vec::new();
        let mut rq_error = None;
        if runqueue_sampler {
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

        Ok(BpfSource {
            skel,
            topology,
            _rq_events: rq_events,
            rq_error,
            iter_link,
            iter_bytes: std::cell::Cell::new(0),
            last_drain_ns: attach_ns,
            pid_filter,
        })
    }

    /// Why the run-queue sampler is off, if it is.
    pub fn runqueue_error(&self) -> Option<&str> {
        self.rq_error.as_deref()
    }

    /// (tid, pid, exited) of every thread the source holds state for now:
    /// the live threads' task storage (which the kernel frees with the task)
    /// and the exited threads not drained yet. Tests use it to check that
    /// thread churn leaves nothing behind.
    pub fn map_entries(&self) -> Result<Vec<(u32, u32, bool)>> {
        let mut out: Vec<_> = self
            .iterate_threads()?
            .into_iter()
            .filter(|s| s.seen != 0)
            .map(|s| (s.tid, s.pid, false))
            .collect();
        out.extend(
            self.read_exited()?
                .into_iter()
                .map(|(_, s)| (s.tid, s.pid, true)),
        );
        Ok(out)
    }

    /// One pass of the task iterator: a record per thread alive now.
    fn iterate_threads(&self) -> Result<Vec<thread_stats>> {
        let mut it = libbpf_rs::Iter::new(&self.iter_link).context("starting the task iterator")?;
        // sized like last time: no regrowing and copying with 10,000 threads
        let mut bytes = Vec::with_capacity(self.iter_bytes.get() + (64 << 10));
        it.read_to_end(&mut bytes)
            .context("reading the task iterator")?;
        self.iter_bytes.set(bytes.len());
        let size = std::mem::size_of::<thread_stats>();
        Ok(bytes.chunks_exact(size).map(read_pod).collect())
    }

    /// Final counts of threads that died since the last drain.
    fn read_exited(&self) -> Result<Vec<(Vec<u8>, thread_stats)>> {
        Ok(read_hash_map(&self.skel.maps.exited)?
            .into_iter()
            .map(|(k, v)| (k, read_pod::<thread_stats>(&v)))
            .collect())
    }

    /// Drain into a Sample: every live thread once, and every thread that
    /// exited since the last drain once more, with its final counts.
    pub fn drain(&mut self) -> Result<Sample> {
        let (time_ns, mono_ns) = now_ns();
        let per_cpu = self.per_cpu_stats()?;
        // exited first: a dying thread may still be listed by the iterator
        // (until it is reaped); its exited record is the final one
        let exited = self.read_exited()?;
        let live = self.iterate_threads()?;
        let dead: std::collections::HashSet<(u32, u64)> =
            exited.iter().map(|(_, s)| (s.tid, s.start_time)).collect();

        let born_after = self.last_drain_ns;
        let mut threads = Vec::with_capacity(live.len() + exited.len());
        let records = exited
            .iter()
            .map(|(_, s)| (s, true))
            .chain(live.iter().map(|s| (s, false)));
        for (s, is_exited) in records {
            if !is_exited && dead.contains(&(s.tid, s.start_time)) {
                continue;
            }
            if !self.pid_filter.is_empty() && !self.pid_filter.contains(&s.pid) {
                continue;
            }
            threads.push(ThreadSample {
                tid: s.tid,
                pid: s.pid,
                comm: comm_string(&s.comm),
                process_comm: comm_string(&s.process_comm),
                cpu: s.last_cpu,
                start_time_ns: s.start_time,
                voluntary: s.nvcsw,
                involuntary: s.nivcsw,
                oncpu_ns: s.oncpu_ns,
                wait_ns: s.wait_ns,
                migrations: Some(s.migrations),
                cross_node_migrations: Some(s.cross_node_migrations),
                slice_hist: Some(Log2Hist::from_counts(
                    s.slice_hist.iter().map(|&c| c as u64),
                )),
                wait_hist: Some(Log2Hist::from_counts(s.wait_hist.iter().map(|&c| c as u64))),
                // every thread alive at the previous drain is in that Sample;
                // one started since began from zero
                baseline: (s.start_time >= born_after).then(Baseline::default),
                exited: is_exited,
                // the exit path does not read it
                attrs: ThreadAttrs {
                    nice: (!is_exited).then_some(s.nice as i8),
                },
            });
        }
        for (key, _) in &exited {
            let _ = self.skel.maps.exited.delete(key);
        }
        self.last_drain_ns = mono_ns;

        let cpus = self.read_cpus(&per_cpu);
        let migrations = self.read_migrations()?;
        let mut system = read_system(Path::new("/proc"));
        system.losses = self.read_losses()?;
        Ok(Sample {
            time_ns,
            mono_ns,
            threads,
            cpus,
            migrations,
            system,
        })
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
        let mut out = Vec::new();
        for c in &self.topology.cpus {
            let Some(st) = per_cpu.get(c.cpu as usize) else {
                continue;
            };
            out.push(CpuSample {
                cpu: c.cpu,
                switches: st.switches,
                busy_ns: busy.get(&c.cpu).copied().unwrap_or(0),
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

    fn read_losses(&self) -> Result<Losses> {
        let zero = 0u32.to_ne_bytes();
        let d: drop_stats = self
            .skel
            .maps
            .drops
            .lookup(&zero, MapFlags::ANY)?
            .map(|v| read_pod(&v))
            .unwrap_or_default();
        Ok(Losses {
            thread_map_full: d.thread_map_full + d.storage_unavailable,
            migration_matrix_overflow: d.migration_matrix_overflow,
        })
    }
}
