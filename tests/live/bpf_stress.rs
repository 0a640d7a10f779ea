//! Cumulative counters never go backwards, however hard the reader races the
//! probes: many threads on two CPUs switch as fast as they can while the
//! test drains back to back, and every thread's switch counts, histogram
//! totals and histogram slots must be at least what the previous drain said.
//! A torn copy read as zeroes (or half old, half new) would show as a drop.
//! Run for both places per-thread state can live (task storage, and the
//! tid-keyed map 5.10 uses).
use crate::common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::*;
use schedtop::collect::bpf::{BpfSource, Storage};
use schedtop::collect::topology::read_topology;
use schedtop::model::{Log2Hist, Sample};

/// The race, per mode: at least DRAINS drains over at least SWITCHES
/// switches of the workload (what exercises the read), within RUN. 30 s was
/// the first budget, then a fixed 10 s; the race now stops as soon as both
/// minimums are reached (and fails if RUN passes first).
const RUN: Duration = Duration::from_secs(10);
const DRAINS: u64 = 100;
const SWITCHES: u64 = 1_000_000;

/// (voluntary, involuntary, slice hist, wait hist, cross-node) of a thread.
type Counters = (u64, u64, Log2Hist, Log2Hist, u64);

fn counters(s: &Sample, pid: u32) -> HashMap<(u32, u64), Counters> {
    s.threads
        .iter()
        .filter(|t| t.pid == pid && !t.exited)
        .map(|t| {
            (
                (t.tid, t.start_time_ns),
                (
                    t.voluntary,
                    t.involuntary,
                    t.slice_hist.clone().unwrap(),
                    t.wait_hist.clone().unwrap(),
                    t.counters
                        .get(schedtop::model::counters::CTR_CROSS_NODE_MIGRATIONS)
                        .unwrap(),
                ),
            )
        })
        .collect()
}

/// The first way `now` went below `before`, if any.
fn went_back(before: &Counters, now: &Counters) -> Option<String> {
    if now.0 < before.0 || now.1 < before.1 || now.4 < before.4 {
        return Some(format!(
            "switches/cross-node {:?} -> {:?}",
            (before.0, before.1, before.4),
            (now.0, now.1, now.4)
        ));
    }
    for (what, b, n) in [("slice", &before.2, &now.2), ("wait", &before.3, &now.3)] {
        if n.total() < b.total() {
            return Some(format!("{what} total {} -> {}", b.total(), n.total()));
        }
        for slot in 0..b.counts.len().max(n.counts.len()) {
            if n.get(slot) < b.get(slot) {
                return Some(format!(
                    "{what} slot {slot} {} -> {}",
                    b.get(slot),
                    n.get(slot)
                ));
            }
        }
    }
    None
}

fn stress(storage: Storage) {
    let cpus = allowed_cpus();
    if cpus.len() < 2 && !cannot_run("the stress test needs two CPUs in the cpuset") {
        return;
    }
    let (a, b) = (cpus[0], cpus[1]);
    let topology = read_topology(std::path::Path::new("/sys")).unwrap();
    let pid = getpid();
    let mut src = match BpfSource::start_with(topology, vec![pid], false, Some(storage), false) {
        Ok(s) => s,
        Err(e) => {
            common::skip::bpf_unavailable(&format!("BPF cannot load here: {e:#}"));
            return;
        }
    };
    assert_eq!(src.storage(), storage);
    // 24 yielders per CPU (involuntary switches, back to back) and sleepers
    // beside them (voluntary switches and run-queue waits)
    let _work = [
        Workload::yielders(24, a),
        Workload::yielders(24, b),
        Workload::sleepers(8, a, Duration::from_micros(50)),
        Workload::sleepers(8, b, Duration::from_micros(50)),
    ];
    let first = src.drain().unwrap();
    let mut last = counters(&first, pid);
    let (mut drains, mut checked, mut seen) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < RUN && (drains < DRAINS || seen < SWITCHES) {
        let s = src.drain().unwrap();
        let now = counters(&s, pid);
        seen = now.values().map(|c| c.0 + c.1).sum();
        for (key, c) in &now {
            if let Some(before) = last.get(key) {
                checked += 1;
                if let Some(what) = went_back(before, c) {
                    panic!(
                        "{storage:?}: thread {} went backwards after {drains} drains: {what}",
                        key.0
                    );
                }
            }
        }
        last = now;
        drains += 1;
    }
    let end = src.drain().unwrap();
    let switches: u64 = counters(&end, pid).values().map(|c| c.0 + c.1).sum();
    let losses = end.system.losses;
    eprintln!(
        "{storage:?}: {drains} drains, {checked} thread reads compared, {switches} switches, \
         {} torn reads mended, {} exits untraced, in {:.1} s",
        losses.torn_reads,
        losses.exits_untraced,
        start.elapsed().as_secs_f64()
    );
    // the race was run: many drains, each over threads switching hard
    assert!(drains >= DRAINS, "only {drains} drains in {RUN:?}");
    assert!(switches >= SWITCHES, "only {switches} switches in {RUN:?}");
    // no thread of ours exited: nothing may be counted as vanished
    assert_eq!(losses.exits_untraced, 0);
}

#[test]
fn counters_never_go_backwards_with_task_storage() {
    let _g = serial();
    stress(Storage::TaskStorage);
}

#[test]
fn counters_never_go_backwards_with_the_tid_map() {
    let _g = serial();
    stress(Storage::TidHash);
}
