//! Moves exited threads' final counts out of the BPF `exited` map twice a
//! second, so a long interval (`-i 3600`) cannot overflow it: the map is
//! preallocated (it is filled from sched_switch, where allocating can fail)
//! and holds a fixed number of exits; what is moved waits here for the next
//! drain. Both buffers are bounded: exits beyond them are counted, not kept.
use std::sync::atomic::{AtomicBool, Ordering};
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

type Records = Vec<(Vec<u8>, Vec<u8>)>;

#[derive(Default)]
struct Pending {
    records: Records,
    /// exits dropped because `records` was full
    overflow: u64,
}

pub(super) struct ExitDrainer {
    map: MapHandle,
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

impl ExitDrainer {
    pub(super) fn start(map: &libbpf_rs::MapMut<'_>) -> Result<ExitDrainer> {
        let own = MapHandle::try_from(map).context("duplicating the exited map's fd")?;
        let theirs = MapHandle::try_from(&own).context("duplicating the exited map's fd")?;
        let pending = Arc::new(Mutex::new(Pending::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (pending, stop) = (pending.clone(), stop.clone());
            std::thread::Builder::new()
                .name("exit-drainer".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::park_timeout(EVERY);
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        // a failed read leaves the entries for the next try
                        let _ = move_out(&theirs, &pending, MAX_PENDING);
                    }
                })
                .context("starting the exit drainer")?
        };
        Ok(ExitDrainer {
            map: own,
            pending,
            stop,
            thread: Some(thread),
        })
    }

    /// Every exit recorded since the last call, and how many were dropped
    /// because user space's buffer was full.
    pub(super) fn take(&self) -> Result<(Records, u64)> {
        move_out(&self.map, &self.pending, usize::MAX)?;
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
