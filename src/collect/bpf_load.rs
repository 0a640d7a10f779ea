//! Loading bpf/schedtop.bpf.c on the running kernel: where per-thread state
//! can live, and which kernel fields the run-queue sampler can read, are
//! chosen here before (and checked right after) load.
use std::mem::MaybeUninit;

use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, ProgramInput};

use super::bpf_skel::{SchedtopSkel, SchedtopSkelBuilder};
use super::features::{Feature, Features};
use super::system::monotonic_ns;
use crate::model::Topology;

/// Where the probes keep per-thread state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// task-local storage: a pointer hop from the task (5.11+)
    TaskStorage,
    /// a preallocated hash map keyed by tid (5.10: no task storage for
    /// tracing programs; creating that map fails with EINVAL)
    TidHash,
}

pub struct Loaded {
    pub skel: SchedtopSkel<'static>,
    pub storage: Storage,
    pub features: Features,
    /// why the run-queue sampler cannot give a true length here
    pub rq_unavailable: Option<String>,
    /// CLOCK_MONOTONIC at load
    pub attach_ns: u64,
    /// the probe queues changed threads in dirty sets (bpf/dirty.bpf.h)
    /// and drains read only those
    pub dirty_sets: bool,
    /// why the interrupt-time probes are not in the object (None: loaded,
    /// to attach)
    pub irq_time_off: Option<String>,
}

// bits returned by the probe_features program (bpf/schedtop.h FEAT_*)
const FEAT_CFS_RQ_RQ: u32 = 1 << 0;
const FEAT_H_NR_RUNNABLE: u32 = 1 << 1;
const FEAT_H_NR_DELAYED: u32 = 1 << 2;
const FEAT_SCHED_DELAYED: u32 = 1 << 3;
const FEAT_STATE_FIELD: u32 = 1 << 4;

/// Entries of `exited` (bpf/schedtop.bpf.c): emptied twice a second.
const EXITED_ENTRIES: u32 = 32768;

/// The dirty-set reader looks a thread up by tid with the
/// `bpf_task_from_pid` kfunc (6.2+), then at its task storage.
fn task_from_pid_supported() -> bool {
    // SAFETY: libbpf loads (and we free) the kernel's own BTF; the name
    // is a NUL-terminated literal.
    unsafe {
        let btf = libbpf_sys::btf__load_vmlinux_btf();
        if btf.is_null() {
            return false;
        }
        let found = libbpf_sys::btf__find_by_name_kind(
            btf,
            c"bpf_task_from_pid".as_ptr(),
            libbpf_sys::BTF_KIND_FUNC,
        ) > 0;
        libbpf_sys::btf__free(btf);
        found
    }
}

/// Whether drains may read only the changed threads: task storage, the
/// kfunc, and not turned off (SCHEDTOP_READ_EVERY_TASK=1: every task at
/// every drain, the way before; benchmarks compare the two).
fn dirty_sets_wanted(storage: Storage) -> bool {
    storage == Storage::TaskStorage
        && std::env::var_os("SCHEDTOP_READ_EVERY_TASK").is_none_or(|v| v != "1")
        && task_from_pid_supported()
}

fn task_storage_supported() -> bool {
    // SAFETY: probes the kernel by creating (and closing) a small map.
    unsafe {
        libbpf_sys::libbpf_probe_bpf_map_type(
            libbpf_sys::BPF_MAP_TYPE_TASK_STORAGE,
            std::ptr::null(),
        ) == 1
    }
}

/// Room in the tid-keyed map: the kernel's own limit on threads, within
/// what preallocating costs (~1.6 KB an entry: 65,536 entries are ~100 MB).
fn tid_map_entries() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/threads-max")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(32768)
        .clamp(4096, 65536)
}

fn open_and_load(
    nr_cpus: u32,
    storage: Storage,
    attach_ns: u64,
    wait_from_wakeup: bool,
    dirty_sets: bool,
    irq_time: bool,
) -> Result<SchedtopSkel<'static>> {
    // The skeleton borrows its object storage for its whole life; the
    // source lives until the process ends, so the storage is leaked once.
    let object: &'static mut MaybeUninit<libbpf_rs::OpenObject> =
        Box::leak(Box::new(MaybeUninit::uninit()));
    let mut open = SchedtopSkelBuilder::default()
        .open(object)
        .context("opening the BPF object")?;
    if let Some(ro) = open.maps.rodata_data.as_mut() {
        ro.nr_cpus = nr_cpus;
        ro.attach_ns = attach_ns;
        ro.use_task_storage = (storage == Storage::TaskStorage) as u32;
        ro.wait_from_wakeup = wait_from_wakeup as u32;
        ro.dirty_sets = dirty_sets as u32;
        // bench/probe_overhead.sh only: the same programs attached with
        // empty bodies, the floor its probe cost figures sit on
        ro.count_wakers = super::features::wakers_on() as u32;
        ro.preempt_count_from_rq = super::features::preempt_count_from_rq().map_or(0, |(d, _)| d);
        ro.bench_empty_probes =
            std::env::var_os("SCHEDTOP_BENCH_EMPTY_PROBES").is_some_and(|v| v == "1") as u32;
        // which hierarchy's cgroup the iterator reports: the one with the
        // cpu controller (its quota throttles the thread)
        let layout = super::cgroupfs::CgroupLayout::discover(
            std::path::Path::new("/proc"),
            std::path::Path::new("/"),
        );
        ro.cgroup_v1_cpu = layout.cpu_v1.is_some() as u32;
        super::why_syscalls::fill(&mut ro.syscall_reason);
        ro.cause_matrix_cpus = super::why_drain::cause_matrix_cpus(nr_cpus);
    }
    super::irq_time::prepare(&mut open, irq_time, super::features::wakers_on());
    open.maps
        .migration_matrix
        .set_max_entries(nr_cpus * nr_cpus)
        .context("sizing the migration matrix")?;
    open.maps
        .migration_cause_matrix
        .set_max_entries(super::why_drain::cause_matrix_entries(nr_cpus))
        .context("sizing the by-cause migration matrix")?;
    open.maps
        .cpu_node
        .set_max_entries(nr_cpus)
        .context("sizing the CPU→node map")?;
    open.maps
        .exited
        .set_max_entries(EXITED_ENTRIES)
        .context("sizing the exited map")?;
    if dirty_sets {
        // SCHEDTOP_DIRTY_ENTRIES: smaller sets, so tests can overflow them
        let entries = std::env::var("SCHEDTOP_DIRTY_ENTRIES")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
            .map_or(super::changed_threads::DIRTY_ENTRIES, |n| {
                n.clamp(1, super::changed_threads::DIRTY_ENTRIES)
            });
        for set in [&mut open.maps.dirty0, &mut open.maps.dirty1] {
            set.set_max_entries(entries).context("sizing a dirty set")?;
        }
    } else {
        // its kfuncs may not exist here (before 6.2)
        open.progs.dump_dirty.set_autoload(false);
    }
    if storage == Storage::TidHash {
        // the programs' references to it are dead code (use_task_storage = 0)
        open.maps
            .thread_store
            .set_autocreate(false)
            .context("leaving out the task storage map")?;
        open.maps
            .thread_hash
            .set_max_entries(tid_map_entries())
            .context("sizing the thread map")?;
    }
    open.load().context("loading the BPF programs")
}

/// Run the object's probe_features program: the kernel fields its CO-RE
/// relocations found.
fn probe_features(skel: &SchedtopSkel<'_>) -> Result<u32> {
    let mut args = [0u8; 8];
    let input = ProgramInput {
        context_in: Some(&mut args),
        ..Default::default()
    };
    let out = skel
        .progs
        .probe_features
        .test_run(input)
        .context("running the feature probe")?;
    Ok(out.return_value)
}

/// Why the run-queue sampler cannot report a true queue length, if so.
fn rq_unavailable(bits: u32) -> Option<String> {
    if bits & FEAT_CFS_RQ_RQ == 0 {
        return Some("the kernel has no cfs_rq->rq (CONFIG_FAIR_GROUP_SCHED off)".into());
    }
    if bits & FEAT_SCHED_DELAYED != 0 && bits & (FEAT_H_NR_RUNNABLE | FEAT_H_NR_DELAYED) == 0 {
        return Some(
            "delayed dequeue without h_nr_delayed or h_nr_runnable: blocked tasks would count as queued"
                .into(),
        );
    }
    None
}

fn rq_fields(bits: u32) -> &'static str {
    if bits & FEAT_H_NR_RUNNABLE != 0 {
        "nr_running - (h_nr_queued - h_nr_runnable)"
    } else if bits & FEAT_H_NR_DELAYED != 0 {
        "nr_running - h_nr_delayed"
    } else {
        "nr_running"
    }
}

/// Load with per-thread state where the kernel allows (`storage` None), or
/// in the place given; with the interrupt-time probes where they load
/// (`irq_time_off` says why not).
pub fn load(
    topology: &Topology,
    storage: Option<Storage>,
    wait_from_wakeup: bool,
) -> Result<Loaded> {
    let why_not = (!super::irq_time::wanted())
        .then(|| "off unless SCHEDTOP_IRQ_TIME=1 (on 6.1+ they cost lost exits)".into());
    if why_not.is_none() {
        match load_with(topology, storage, wait_from_wakeup, true) {
            Ok(l) => return Ok(l),
            Err(e) => {
                let mut l = load_with(topology, storage, wait_from_wakeup, false)?;
                l.irq_time_off = Some(format!("the probes did not load: {e:#}"));
                return Ok(l);
            }
        }
    }
    let mut l = load_with(topology, storage, wait_from_wakeup, false)?;
    l.irq_time_off = why_not;
    Ok(l)
}

fn load_with(
    topology: &Topology,
    storage: Option<Storage>,
    wait_from_wakeup: bool,
    irq_time: bool,
) -> Result<Loaded> {
    let nr_cpus = libbpf_rs::num_possible_cpus().context("counting possible CPUs")? as u32;
    let nr_cpus = nr_cpus.max(topology.cpu_slots()).max(1);
    let attach_ns = monotonic_ns();
    // SCHEDTOP_BPF_STORAGE=tid-map takes 5.10's way on any kernel (tests)
    let forced_tid_map = storage == Some(Storage::TidHash)
        || std::env::var_os("SCHEDTOP_BPF_STORAGE").is_some_and(|v| v == "tid-map");
    let with_storage = |dirty| {
        open_and_load(
            nr_cpus,
            Storage::TaskStorage,
            attach_ns,
            wait_from_wakeup,
            dirty,
            irq_time,
        )
    };
    let mut dirty_sets = false;
    let (skel, storage, storage_note) = if task_storage_supported() && !forced_tid_map {
        let dirty = dirty_sets_wanted(Storage::TaskStorage);
        // the dirty-set reader refused: every task at every drain instead
        let attempt = match with_storage(dirty) {
            Ok(skel) => Ok((skel, dirty)),
            Err(_) if dirty => with_storage(false).map(|skel| (skel, false)),
            Err(e) => Err(e),
        };
        match attempt {
            Ok((skel, dirty)) => {
                dirty_sets = dirty;
                (skel, Storage::TaskStorage, "task storage".to_string())
            }
            // some other refusal of task storage: the fallback may still load
            Err(e) => match open_and_load(
                nr_cpus,
                Storage::TidHash,
                attach_ns,
                wait_from_wakeup,
                false,
                irq_time,
            ) {
                Ok(skel) => (
                    skel,
                    Storage::TidHash,
                    format!("tid-keyed map (task storage failed: {e:#})"),
                ),
                Err(_) => return Err(e),
            },
        }
    } else {
        (
            open_and_load(
                nr_cpus,
                Storage::TidHash,
                attach_ns,
                wait_from_wakeup,
                false,
                irq_time,
            )?,
            Storage::TidHash,
            if forced_tid_map {
                "tid-keyed map (chosen by the caller)".to_string()
            } else {
                "tid-keyed map (no task storage for tracing programs before 5.11)".to_string()
            },
        )
    };
    // The migrate probe counts a move as cross-node by this map: left
    // empty, every CPU reads node 0 and no move ever crosses.
    for c in &topology.cpus {
        skel.maps
            .cpu_node
            .update(&c.cpu.to_ne_bytes(), &c.node.to_ne_bytes(), MapFlags::ANY)
            .context("filling the CPU→node map")?;
    }
    let (bits, rq_unavailable) = match probe_features(&skel) {
        Ok(bits) => (bits, rq_unavailable(bits)),
        Err(e) => (
            0,
            Some(format!("cannot check the kernel's run-queue fields: {e:#}")),
        ),
    };
    let mut features = Features::default();
    let state = if bits & FEAT_STATE_FIELD != 0 {
        "__state"
    } else {
        "state"
    };
    features.set(
        Feature::SwitchCounts,
        true,
        format!(
            "sched_switch, nvcsw/nivcsw; per-thread state in {storage_note}; task_struct.{state}; \
             drains read {}",
            if dirty_sets {
                "the threads that changed (dirty sets), every task at a census every 5-60 s"
            } else {
                "every task"
            }
        ),
    );
    features.set(
        Feature::Histograms,
        true,
        if wait_from_wakeup {
            "CPU time per slice (the kernel's accounting); run-queue waits timed from \
             sched_wakeup or a preemption to the switch-in, split by kind"
        } else {
            "CPU time per slice; run-queue waits from sched_info.run_delay \
             (--run-delay-waits: 0 when a wakeup preempted the CPU's current task)"
        },
    );
    features.set(
        Feature::Migrations,
        true,
        format!(
            "se.nr_migrations and sched_migrate_task; {} NUMA node(s)",
            topology.nodes().len()
        ),
    );
    features.set(
        Feature::Exits,
        true,
        format!(
            "final counts via a {}-entry map, emptied at each drain and between drains \
             once 4,096 exits went in",
            skel.maps.exited.max_entries()
        ),
    );
    if rq_unavailable.is_none() {
        features.set(Feature::RunQueue, true, rq_fields(bits));
    }
    Ok(Loaded {
        skel,
        storage,
        features,
        rq_unavailable,
        attach_ns,
        dirty_sets,
        irq_time_off: (!irq_time).then(String::new),
    })
}

/// The probe's own bucketing code, loaded (not attached) and run through
/// BPF_PROG_TEST_RUN, so tests check the C that runs in the kernel rather
/// than a copy of it.
pub struct BucketCode {
    skel: SchedtopSkel<'static>,
}

impl BucketCode {
    pub fn load() -> Result<BucketCode> {
        let storage = if task_storage_supported() {
            Storage::TaskStorage
        } else {
            Storage::TidHash
        };
        Ok(BucketCode {
            skel: open_and_load(1, storage, 0, true, false, false)?,
        })
    }

    fn run(prog: &libbpf_rs::ProgramMut<'_>, arg: u64) -> Result<u32> {
        let mut args = arg.to_ne_bytes();
        let input = ProgramInput {
            context_in: Some(&mut args),
            ..Default::default()
        };
        Ok(prog
            .test_run(input)
            .context("BPF_PROG_TEST_RUN")?
            .return_value)
    }

    /// bpf/hist_slot.h fine_slot(ns)
    pub fn fine_slot(&self, ns: u64) -> Result<u32> {
        Self::run(&self.skel.progs.test_fine_slot, ns)
    }

    /// bpf/schedtop.bpf.c rq_slot(len)
    pub fn rq_slot(&self, len: u32) -> Result<u32> {
        Self::run(&self.skel.progs.test_rq_slot, len as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_queue_length_is_unavailable_rather_than_wrong() {
        // no group scheduling: the sampler cannot reach the rq at all
        assert!(rq_unavailable(0).is_some());
        // before delayed dequeue (5.10, 6.1): nr_running is the answer
        assert_eq!(rq_unavailable(FEAT_CFS_RQ_RQ), None);
        // delayed dequeue and a field that counts it: 6.12.y/6.13, 6.14+
        let dd = FEAT_CFS_RQ_RQ | FEAT_SCHED_DELAYED;
        assert_eq!(rq_unavailable(dd | FEAT_H_NR_DELAYED), None);
        assert_eq!(rq_unavailable(dd | FEAT_H_NR_RUNNABLE), None);
        assert_eq!(
            rq_fields(dd | FEAT_H_NR_DELAYED),
            "nr_running - h_nr_delayed"
        );
        // delayed dequeue with nothing to subtract: blocked tasks would count
        assert!(rq_unavailable(dd).unwrap().contains("delayed dequeue"));
    }
}
