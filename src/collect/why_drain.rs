//! The "why" counters out of the probe's records and maps: migration causes
//! and block reasons from each thread's record, and the interval's pairs
//! ((victim, preemptor) and (wakee, waker)), which the probe keeps in one
//! bounded map that is emptied here every drain.
use std::sync::{Arc, LazyLock};

use anyhow::Result;
use libbpf_rs::{MapCore, MapFlags};

use super::bpf_maps::{read_pod, take_hash_map};
use crate::model::fasthash::IdMap;
use crate::model::why::{bound_pairs, PairKind, WhySample, MIG_CAUSES};
use crate::model::MigrationCount;

use super::bpf_skel::types::{pair_key, thread_stats};

/// The interval's pair lists, by kind (`PairKind` order): subject tid ->
/// (other tid, count).
pub(super) type Pairs = [IdMap<u32, Vec<(u32, u64)>>; 2];

/// Every pair counted since the last drain; the map is left empty (read
/// and deleted together, a batch of buckets at a time).
pub(super) fn take_pairs<M: MapCore>(map: &M) -> Result<Pairs> {
    let mut out: Pairs = Default::default();
    for (k, v) in take_hash_map(map)? {
        let key: pair_key = read_pod(&k);
        let count: u64 = read_pod(&v);
        if let Some(into) = out.get_mut(key.kind as usize).filter(|_| count > 0) {
            into.entry(key.subject)
                .or_default()
                .push((key.other, count));
        }
    }
    Ok(out)
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
    for kind in PairKind::ALL {
        let (list, rest) = bound_pairs(pairs[kind as usize].remove(&s.tid).unwrap_or_default());
        let (l, r) = w.pairs_mut(kind);
        *l = list;
        *r = rest;
    }
    let zero = &ZERO[usize::from(wakers_counted)];
    if w == **zero {
        zero.clone()
    } else {
        Arc::new(w)
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
