//! The BPF source: loads bpf/schedtop.bpf.c, attaches its probes and turns
//! one drain of its maps into a Sample.
use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{Link, MapCore, MapFlags};

use super::perf::open_cpu_clock;
use super::system::{now_ns, read_system};
use crate::model::{
    Baseline, CpuSample, Log2Hist, Losses, MigrationCount, RqSample, Sample, ThreadSample, Topology,
};

mod skel {
    #![allow(clippy::all, clippy::pedantic, non_camel_case_types, unused_imports)]
    include!(concat!(env!("OUT_DIR"), "/schedtop.skel.rs"));
}
use skel::types::{cpu_stats, drop_stats, thread_key, thread_stats};
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
    /// pid -> process name, for processes whose leader is not in the map
    process_names: HashMap<u32, String>,
    /// last on-CPU time reported per thread, so the slice-in-progress estimate never goes backwards
    last_oncpu: HashMap<(u32, u64), u64>,
    last_busy: Vec<u64>,
    drains: u64,
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
        if let Some(ro) = open.maps.rodata_data.as_mut() {
            ro.nr_cpus = nr_cpus;
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
        let links = [
            skel.progs.handle_wakeup.attach(),
            skel.progs.handle_wakeup_new.attach(),
            skel.progs.handle_switch.attach(),
            skel.progs.handle_migrate.attach(),
        ];
        let mut kept = Vec::new();
        for l in links {
            kept.push(l.context("attaching the scheduler tracepoints")?);
        }
        skel.links.handle_wakeup = Some(kept.remove(0));
        skel.links.handle_wakeup_new = Some(kept.remove(0));
        skel.links.handle_switch = Some(kept.remove(0));
        skel.links.handle_migrate = Some(kept.remove(0));

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
            process_names: HashMap::new(),
            last_oncpu: HashMap::new(),
            last_busy: Vec::new(),
            drains: 0,
            pid_filter,
        })
    }

    /// Why the run-queue sampler is off, if it is.
    pub fn runqueue_error(&self) -> Option<&str> {
        self.rq_error.as_deref()
    }

    /// (tid, pid, exited) of every entry the kernel map holds now: tests
    /// use it to check that thread churn leaves nothing behind.
    pub fn map_entries(&self) -> Result<Vec<(u32, u32, bool)>> {
        Ok(self
            .read_threads()?
            .into_iter()
            .map(|(_, s)| (s.tid, s.pid, s.exited != 0))
            .collect())
    }

    fn read_threads(&self) -> Result<Vec<(Vec<u8>, thread_stats)>> {
        let mut out = Vec::new();
        // One syscall per batch of entries instead of two per entry.
        match self
            .skel
            .maps
            .threads
            .lookup_batch(1024, MapFlags::ANY, MapFlags::ANY)
        {
            Ok(iter) => {
                for (k, v) in iter {
                    out.push((k, read_pod::<thread_stats>(&v)));
                }
            }
            Err(_) => {
                for k in self.skel.maps.threads.keys() {
                    if let Some(v) = self.skel.maps.threads.lookup(&k, MapFlags::ANY)? {
                        out.push((k, read_pod::<thread_stats>(&v)));
                    }
                }
            }
        }
        Ok(out)
    }

    fn process_name(&mut self, pid: u32, leaders: &HashMap<u32, String>) -> String {
        if let Some(n) = leaders.get(&pid) {
            return n.clone();
        }
        self.process_names
            .entry(pid)
            .or_insert_with(|| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .map(|s| s.trim_end_matches('\n').to_string())
                    .unwrap_or_default()
            })
            .clone()
    }

    /// Drain the maps into a Sample; entries of exited threads are reported
    /// here once and then deleted.
    pub fn drain(&mut self) -> Result<Sample> {
        let (time_ns, mono_ns) = now_ns();
        let entries = self.read_threads()?;
        self.drains += 1;
        // Every 10 drains, also retire entries of threads that are gone but
        // were never seen dying (e.g. died between load and attach).
        let sweep = self.drains.is_multiple_of(10);

        let leaders: HashMap<u32, String> = entries
            .iter()
            .filter(|(_, s)| s.tid == s.pid)
            .map(|(_, s)| (s.pid, comm_string(&s.comm)))
            .collect();

        // Which thread each CPU runs now, by the CPU's own account: a thread
        // is only credited a slice in progress if its CPU says it is current.
        let running: std::collections::HashSet<(u32, u32)> = self
            .per_cpu_stats()?
            .iter()
            .enumerate()
            .filter(|(_, c)| c.curr_is_idle == 0)
            .map(|(cpu, c)| (cpu as u32, c.curr_tid))
            .collect();

        let mut threads = Vec::with_capacity(entries.len());
        let mut to_delete = Vec::new();
        for (key, s) in &entries {
            let k: thread_key = read_pod(key);
            let mut exited = s.exited != 0;
            if !exited && sweep && !Path::new(&format!("/proc/{}", s.tid)).exists() {
                exited = true;
            }
            if exited {
                to_delete.push(key.clone());
            }
            if !self.pid_filter.is_empty() && !self.pid_filter.contains(&s.pid) {
                continue;
            }
            // add the slice in progress so a thread that never switches
            // still shows its CPU time; never report less than before
            let mut oncpu = s.oncpu_ns;
            if s.oncpu_since != 0 && !exited && running.contains(&(s.last_cpu, s.tid)) {
                oncpu += mono_ns.saturating_sub(s.oncpu_since);
            }
            let id = (s.tid, k.start_time);
            let last = self.last_oncpu.entry(id).or_insert(0);
            oncpu = oncpu.max(*last);
            *last = oncpu;
            if exited {
                self.last_oncpu.remove(&id);
            }
            let process_comm = self.process_name(s.pid, &leaders);
            let cross = s.cross_node_migrations;
            threads.push(ThreadSample {
                tid: s.tid,
                pid: s.pid,
                comm: comm_string(&s.comm),
                process_comm,
                cpu: s.last_cpu,
                start_time_ns: k.start_time,
                voluntary: s.nvcsw,
                involuntary: s.nivcsw,
                oncpu_ns: oncpu,
                wait_ns: s.wait_ns,
                migrations: Some(s.migrations),
                cross_node_migrations: Some(cross),
                slice_hist: Some(Log2Hist::from_counts(
                    s.slice_hist.iter().map(|&c| c as u64),
                )),
                wait_hist: Some(Log2Hist::from_counts(s.wait_hist.iter().map(|&c| c as u64))),
                baseline: Some(Baseline {
                    voluntary: s.base_nvcsw,
                    involuntary: s.base_nivcsw,
                    oncpu_ns: 0,
                    wait_ns: 0,
                }),
                exited,
            });
        }
        for key in &to_delete {
            // ENOENT is fine: a sweep may race with nothing else here
            let _ = self.skel.maps.threads.delete(key);
        }
        if self.process_names.len() > 4096 {
            self.process_names.clear();
        }

        let cpus = self.read_cpus(mono_ns)?;
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

    fn read_cpus(&mut self, mono_ns: u64) -> Result<Vec<CpuSample>> {
        let per_cpu = self.per_cpu_stats()?;
        let sampling = !self._rq_events.is_empty();
        if self.last_busy.len() < per_cpu.len() {
            self.last_busy.resize(per_cpu.len(), 0);
        }
        let mut out = Vec::new();
        for c in &self.topology.cpus {
            let Some(st) = per_cpu.get(c.cpu as usize) else {
                continue;
            };
            let mut busy = st.busy_ns;
            if st.curr_is_idle == 0 && st.curr_since != 0 {
                busy += mono_ns.saturating_sub(st.curr_since);
            }
            let last = &mut self.last_busy[c.cpu as usize];
            busy = busy.max(*last);
            *last = busy;
            out.push(CpuSample {
                cpu: c.cpu,
                switches: st.switches,
                busy_ns: busy,
                rq: sampling.then(|| RqSample {
                    samples: st.rq_samples,
                    sum: st.rq_sum,
                    hist: st.rq_hist.to_vec(),
                    freq_hz: RQ_FREQ_HZ,
                }),
            });
        }
        Ok(out)
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
            thread_map_full: d.thread_map_full,
            migration_matrix_overflow: d.migration_matrix_overflow,
        })
    }
}
