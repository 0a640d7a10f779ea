//! `schedtop trace` in the guest: the Perfetto file it writes must hold
//! sched_switch events of a workload known to switch.
use std::process::Command;

use crate::checks::Outcome;
use crate::perfetto;
use crate::workload::{Mix, Workload};

pub fn trace(schedtop: &str) -> Outcome {
    let mix = Mix {
        spinners: 1,
        sleepers: 2,
        cpu: None,
        sleep_us: 1000,
    };
    let w = Workload::start(mix)?;
    let tids = w.tids()?;
    let file = "/tmp/guest-check.pftrace";
    let _ = std::fs::remove_file(file);
    let out = Command::new(schedtop)
        .args(["trace", "-d", "3", "-o", file])
        .output()
        .map_err(|e| format!("running {schedtop} trace: {e}"))?;
    drop(w);
    let said = String::from_utf8_lossy(&out.stderr)
        .trim()
        .replace('\n', " | ");
    if !out.status.success() {
        return Err(format!("schedtop trace failed ({}): {said}", out.status));
    }
    let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
    if bytes.is_empty() {
        return Err(format!("{file} is empty; schedtop said: {said}"));
    }
    let size = bytes.len();
    // the decoder (shared with the tests) keeps borrowed slices: leak the
    // file, once, in a process that ends soon
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    let decoded = std::panic::catch_unwind(|| perfetto::decode(bytes))
        .map_err(|_| format!("{file} ({size} bytes) is not a valid Perfetto trace"))?;
    let switches: Vec<_> = decoded
        .events
        .iter()
        .filter(|e| e.3 == perfetto::SCHED_SWITCH)
        .collect();
    // SchedSwitchFtraceEvent: prev_pid is field 2
    let ours = switches
        .iter()
        .filter(|e| perfetto::uint(&e.4, 2).is_some_and(|p| tids.contains(&(p as u32))))
        .count();
    let line = format!(
        "{size} bytes, {} events, {} sched_switch ({ours} of the workload's threads)",
        decoded.events.len(),
        switches.len()
    );
    if ours > 0 {
        Ok(line)
    } else {
        Err(line)
    }
}
