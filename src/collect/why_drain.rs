//! The "why" counters out of the probe's records and maps: migration causes
//! and block reasons from each thread's record, and the interval's
//! (victim, preemptor) pairs, which the probe keeps in a bounded map that is
//! emptied here every drain.
use anyhow::Result;
use libbpf_rs::MapCore;

use super::bpf_maps::{read_hash_map, read_pod};
use crate::model::fasthash::IdMap;
use crate::model::why::{bound_preemptors, WhySample};

use super::bpf_skel::types::{preempt_key, thread_stats};

/// victim tid -> (preemptor tid, count) since the last drain; the map is
/// left empty (a pair counted between the read and the delete is lost:
/// the window is one syscall wide).
pub(super) fn take_pairs<M: MapCore>(map: &M) -> Result<IdMap<u32, Vec<(u32, u64)>>> {
    let mut out: IdMap<u32, Vec<(u32, u64)>> = IdMap::default();
    for (k, v) in read_hash_map(map)? {
        let _ = map.delete(&k);
        let key: preempt_key = read_pod(&k);
        let count: u64 = read_pod(&v);
        if count > 0 {
            out.entry(key.victim)
                .or_default()
                .push((key.preemptor, count));
        }
    }
    Ok(out)
}

/// A thread's "why" figures; takes its preemptors out of `pairs`.
pub(super) fn why_of(s: &thread_stats, pairs: &mut IdMap<u32, Vec<(u32, u64)>>) -> WhySample {
    let (preempted_by, rest) = bound_preemptors(pairs.remove(&s.tid).unwrap_or_default());
    WhySample {
        migrations_by_cause: s.mig_cause,
        blocked_on: s.blocked_on,
        preempted_by,
        preempted_by_rest: rest,
    }
}
