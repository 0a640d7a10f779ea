//! The "why" counters out of the probe's records and maps: migration causes
//! and block reasons from each thread's record, and the interval's pairs
//! ((victim, preemptor) and (wakee, waker)), which the probe keeps in one
//! bounded map under a generation number (bpf/why.bpf.h `pair_gen`): each
//! drain starts a new generation and takes the older ones once no probe
//! can still be adding to them.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags};

use super::bpf_maps::{read_hash_map, read_pod};
use super::bpf_skel::SchedtopSkel;
use crate::model::fasthash::IdMap;
use crate::model::why::{bound_pairs, PairKind, WhySample, MIG_CAUSES};
use crate::model::MigrationCount;

use super::bpf_skel::types::{pair_key, thread_stats};

/// The interval's pair lists, by kind (`PairKind` order): subject tid ->
/// (other tid, count).
pub(super) type Pairs = [IdMap<u32, Vec<(u32, u64)>>; 2];

/// Every pair counted before this call, each exactly once: the probes move
/// to a new generation, and once none can still add to an older one, those
/// keys are read and deleted (the ones of the new generation stay for the
/// next drain).
pub(super) fn take_pairs(skel: &mut SchedtopSkel<'static>) -> Result<Pairs> {
    let now = {
        let bss = skel
            .maps
            .bss_data
            .as_mut()
            .context("the BPF object has no .bss")?;
        // SAFETY: the .bss is mmapped and pair_gen is only ever accessed
        // as a u32; SeqCst: the store is ordered before the wait below
        let gen = unsafe { AtomicU32::from_ptr(&mut bss.pair_gen) };
        gen.fetch_add(1, Ordering::SeqCst).wrapping_add(1)
    };
    grace_period();
    let map = &skel.maps.pair_counts;
    let mut out: Pairs = Default::default();
    let mut old_keys = Vec::new();
    for (k, v) in read_hash_map(map)? {
        let key: pair_key = read_pod(&k);
        if key.gen == now {
            continue;
        }
        old_keys.extend_from_slice(&k);
        let count: u64 = read_pod(&v);
        if let Some(into) = out.get_mut(key.kind as usize).filter(|_| count > 0) {
            into.entry(key.subject)
                .or_default()
                .push((key.other, count));
        }
    }
    // a pair may come in two generations (one written late into the
    // older): one entry each
    for list in out.iter_mut().flat_map(|m| m.values_mut()) {
        if list.len() > 1 {
            list.sort_unstable_by_key(|p| p.0);
            list.dedup_by(|b, a| {
                let same = a.0 == b.0;
                if same {
                    a.1 += b.1;
                }
                same
            });
        }
    }
    let ks = map.key_size() as usize;
    for chunk in old_keys.chunks(ks * 1024) {
        map.delete_batch(
            chunk,
            (chunk.len() / ks) as u32,
            MapFlags::ANY,
            MapFlags::ANY,
        )
        .context("deleting the drained pairs")?;
    }
    Ok(out)
}

/// Wait until every BPF program that was running when this was called has
/// returned. membarrier(MEMBARRIER_CMD_GLOBAL) is synchronize_rcu()
/// (kernel/sched/membarrier.c, 4.3+): 8-21 ms measured on a 2-CPU 6.18 VM.
/// Kernels with nohz_full CPUs refuse it (EINVAL), as may a seccomp
/// filter: then a pause far longer than a probe runs (microseconds, with
/// interrupts off), short of a virtual CPU its hypervisor stalls longer.
fn grace_period() {
    const MEMBARRIER_CMD_GLOBAL: libc::c_long = 1;
    // SAFETY: membarrier takes integers only and touches no memory of ours.
    let r = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) };
    if r != 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A thread's "why" figures; takes its preemptors out of `pairs`. All
/// zero (every thread that has not switched since the probes attached) is
/// one shared allocation rather than 160 bytes per thread (8 MB at 50,000).
/// `wakers_counted`: the probe counts wakeups and wakers (else it leaves
/// them 0, which would read as "never woken": they are unknown).
pub(super) fn why_of(s: &thread_stats, pairs: &mut Pairs, wakers_counted: bool) -> Arc<WhySample> {
    // one all-zero copy with wakers unknown, one with none counted
    static ZERO: LazyLock<[Arc<WhySample>; 2]> = LazyLock::new(|| {
        [
            Arc::default(),
            Arc::new(WhySample {
                wakeups: Some(0),
                ..WhySample::default()
            }),
        ]
    });
    let mut w = WhySample {
        migrations_by_cause: s.mig_cause,
        blocked_on: s.blocked_on,
        wakeups: wakers_counted.then_some(s.wakeups),
        ..WhySample::default()
    };
    give_pairs(&mut w, s.tid, pairs);
    let zero = &ZERO[usize::from(wakers_counted)];
    if w == **zero {
        zero.clone()
    } else {
        Arc::new(w)
    }
}

/// Thread `tid`'s pairs out of `pairs` into `w` (none: its lists empty).
pub(super) fn give_pairs(w: &mut WhySample, tid: u32, pairs: &mut Pairs) {
    for kind in PairKind::ALL {
        let (list, rest) = bound_pairs(pairs[kind as usize].remove(&tid).unwrap_or_default());
        let (l, r) = w.pairs_mut(kind);
        *l = list;
        *r = rest;
    }
}

/// The by-cause migration matrix covers machines up to this many CPUs
/// (5 x 256 x 256 counters = 2.6 MB); beyond, it is off.
const CAUSE_MATRIX_MAX_CPUS: u32 = 256;

pub(super) fn cause_matrix_cpus(nr_cpus: u32) -> u32 {
    if nr_cpus <= CAUSE_MATRIX_MAX_CPUS {
        nr_cpus
    } else {
        0
    }
}

pub(super) fn cause_matrix_entries(nr_cpus: u32) -> u32 {
    let n = cause_matrix_cpus(nr_cpus);
    (MIG_CAUSES as u32 * n * n).max(1)
}

/// The by-cause matrix as 5 lists of nonzero (from, to, count) cells;
/// empty when it is off.
pub(super) fn read_cause_matrix<M: MapCore>(map: &M) -> Result<Vec<Vec<MigrationCount>>> {
    // sized 5 n^2 by cause_matrix_entries, or 1 when off
    let n = ((map.max_entries() / MIG_CAUSES as u32) as f64)
        .sqrt()
        .round() as u32;
    if n == 0 {
        return Ok(Vec::new());
    }
    let mut out = vec![Vec::new(); MIG_CAUSES];
    let cells = n * n;
    for (k, v) in map.lookup_batch(4096, MapFlags::ANY, MapFlags::ANY)? {
        let idx: u32 = read_pod(&k);
        let count: u64 = read_pod(&v);
        let cause = (idx / cells) as usize;
        if count > 0 && cause < MIG_CAUSES {
            out[cause].push(MigrationCount {
                from_cpu: idx % cells / n,
                to_cpu: idx % n,
                count,
            });
        }
    }
    for list in &mut out {
        list.sort_by_key(|m| (m.from_cpu, m.to_cpu));
    }
    Ok(out)
}
