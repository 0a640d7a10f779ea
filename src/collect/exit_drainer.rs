//! Moves exited threads' final counts out of the BPF `exited` map between
//! drains, so a long interval (`-i 3600`) cannot overflow it: the map is
//! preallocated (it is filled from sched_switch, where allocating can fail)
//! and holds a fixed number of exits; what is moved waits here for the next
//! drain. Both buffers are bounded: exits beyond them are counted, not kept.
//!
//! Twice a second the probe's count of saved exits is read (one lookup);
//! the map is walked only when enough exits went in since the last walk:
//! walking an empty map's buckets every half second measurably slowed a
//! switch-heavy benchmark.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapHandle};

use super::bpf_maps::read_hash_map;

/// How often the map is emptied into user space.
const EVERY: Duration = Duration::from_millis(500);
/// Records kept in user space between two drains, beyond the map's own.
const MAX_PENDING: usize = 131_072;
/// Exits saved since the last walk that make a walk worth it (an eighth of
/// the map: it cannot fill up between two looks).
const WALK_AFTER: u64 = 4096;

type Records = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Default)]
struct Pending {
    records: Records,
    /// exits dropped because `records` was full
    overflow: u64,
}

pub(super) struct ExitDrainer {
    map: MapHandle,
    /// the probe's count of exits saved (bpf exits_saved)
    count: MapHandle,
    /// that count at the last walk
    walked: Arc<AtomicU64>,
    pending: Arc<Mutex<Pending>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Read every entry of `map` into `pending` and delete it there, under the
/// lock so a record is never both in the map and in `pending`.
fn move_out(map: &MapHandle, pending: &Mutex<Pending>, cap: usize) -> Result<()> {
    let mut p = pending.lock().unwrap_or_else(|e| e.into_inner());
    let entries = read_hash_map(map)?;
    for (key, value) in entries {
        let _ = map.delete(&key);
        if p.records.len() < cap {
            p.records.push((key, value));
        } else {
            p.overflow += 1;
        }
    }
    Ok(())
}

/// The probe's count of exits saved so far.
fn saved(count: &MapHandle) -> u64 {
    count
        .lookup(&0u32.to_ne_bytes(), libbpf_rs::MapFlags::ANY)
        .ok()
        .flatten()
        .map_or(0, |v| super::bpf_maps::read_pod::<u64>(&v))
}

impl ExitDrainer {
    pub(super) fn start(
        map: &libbpf_rs::MapMut<'_>,
        count: &libbpf_rs::MapMut<'_>,
    ) -> Result<ExitDrainer> {
        let dup = "duplicating a BPF map's fd";
        let own = MapHandle::try_from(map).context(dup)?;
        let theirs = MapHandle::try_from(&own).context(dup)?;
        let own_count = MapHandle::try_from(count).context(dup)?;
        let their_count = MapHandle::try_from(&own_count).context(dup)?;
        let pending = Arc::new(Mutex::new(Pending::default()));
        let walked = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (pending, stop, walked) = (pending.clone(), stop.clone(), walked.clone());
            std::thread::Builder::new()
                .name("exit-drainer".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::park_timeout(EVERY);
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let now = saved(&their_count);
                        if now.wrapping_sub(walked.load(Ordering::Relaxed)) < WALK_AFTER {
                            continue;
                        }
                        // a failed read leaves the entries for the next try
                        if move_out(&theirs, &pending, MAX_PENDING).is_ok() {
                            walked.store(now, Ordering::Relaxed);
                        }
                    }
                })
                .context("starting the exit drainer")?
        };
        Ok(ExitDrainer {
            map: own,
            count: own_count,
            walked,
            pending,
            stop,
            thread: Some(thread),
        })
    }

    /// Every exit recorded since the last call, and how many were dropped
    /// because user space's buffer was full.
    pub(super) fn take(&self) -> Result<(Records, u64)> {
        let now = saved(&self.count);
        move_out(&self.map, &self.pending, usize::MAX)?;
        self.walked.store(now, Ordering::Relaxed);
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        Ok((std::mem::take(&mut p.records), p.overflow))
    }

    /// Entries still in the kernel's map and in the buffer, without taking
    /// them (tests count them).
    pub(super) fn peek(&self) -> Result<Records> {
        let p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = p.records.clone();
        out.extend(read_hash_map(&self.map)?);
        Ok(out)
    }
}

impl Drop for ExitDrainer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
