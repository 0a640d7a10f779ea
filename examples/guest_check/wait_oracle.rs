//! The run-queue wait histogram against an independent tool inside the
//! guest, as tests/live/bpf_wait_oracle.rs does on the host with bpftrace (which
//! the initramfs cannot hold): `perf record` of the scheduler's tracepoints
//! around a workload, then `perf sched timehist --state`. timehist prints,
//! at each switch-out, the thread's "sch delay" (from its wakeup to the
//! switch-in) and "wait time" (from its previous switch-out to the
//! switch-in): the run-queue wait is the sch delay after a sleep and the
//! wait time after a switch-out that left the thread runnable (state R:
//! timehist's sch delay is 0 there).
//! `perf sched record` would also record sched_waking, and timehist then
//! starts the sch delay there, in the waker's try_to_wake_up, before the
//! wakeup reaches the target CPU: a wakeup of another CPU adds the IPI and
//! that CPU's exit from idle (4 us more on the median on the development
//! VM). schedtop and runqlat start at sched_wakeup, when the thread is
//! queued; the oracle records that event instead so both measure the same.
//! Same rule as the host: totals within 2 %, every octave from 32 us up that
//! holds >= 2 % of the waits within 15 %; below, the count under each octave
//! edge lies between the oracle's counts with its waits moved by the
//! rounding of its microsecond output and the two probes' clock skew.
//! The slice histogram (CPU time per slice) against the kernel's own
//! sched_stat_runtime events of the same recording: their runtimes summed
//! from one switch-out of a thread to the next are the CPU time of that
//! slice, to the nanosecond; every octave holding >= 2 % within 15 %.
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use schedtop::collect::LiveSource;
use schedtop::model::hist::{octave_of_us, HIST_OCTAVES};
use schedtop::model::rates::intervals;

use crate::checks::Outcome;
use crate::kernel;

/// Where scripts/kernel-matrix.sh puts Debian's perf (with its libraries).
const PERF: &str = "/usr/bin/perf";
const NAME: &str = "waitoracle";
const DATA: &str = "/tmp/sched.data";
/// Octave of 32 us: from there up the clocks' skew does not matter.
const SKEW_FREE: usize = 6;
/// The two probes read the clock at different points of one switch; under
/// TCG a probe takes microseconds, not nanoseconds (on the host 0.5 us).
const SKEW_US: u64 = 1;

/// (run-queue wait, slice) against perf.
pub fn against_perf(src: &mut LiveSource) -> (Outcome, Outcome) {
    match run(src) {
        Ok((waits, slices)) => (waits, slices),
        Err(e) => (Err(e.clone()), Err(e)),
    }
}

fn run(src: &mut LiveSource) -> Result<(Outcome, Outcome), String> {
    if !std::path::Path::new(PERF).exists() {
        return Err(format!("{PERF} is not in the guest"));
    }
    let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let a = src.sample().map_err(|e| format!("drain: {e:#}"))?;
    // perf enables its events before it starts the workload and stops them
    // after it ends: both see every wait of every workload thread
    let rec = Command::new(PERF)
        .args(["record", "-a", "-R", "-c", "1", "-o", DATA])
        .args(["-e", "sched:sched_switch", "-e", "sched:sched_wakeup"])
        .args([
            "-e",
            "sched:sched_wakeup_new",
            "-e",
            "sched:sched_stat_runtime",
            "--",
        ])
        .arg(&exe)
        .args(["wait-workload", "4"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("perf record: {e}"))?;
    if !rec.status.success() {
        return Err(format!(
            "perf record: {}",
            String::from_utf8_lossy(&rec.stderr).trim()
        ));
    }
    let b = src.sample().map_err(|e| format!("drain: {e:#}"))?;
    let th = Command::new(PERF)
        .args(["sched", "timehist", "--state", "-i", DATA])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("perf sched timehist: {e}"))?;
    let script = Command::new(PERF)
        .args(["script", "-F", "tid,event,trace", "-i", DATA])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("perf script: {e}"))?;
    let _ = std::fs::remove_file(DATA);
    for (what, out) in [("perf sched timehist", &th), ("perf script", &script)] {
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!("{what}: {}", err.trim()));
        }
    }
    let waits = perf_waits(&String::from_utf8_lossy(&th.stdout));
    let slices = perf_slices(&String::from_utf8_lossy(&script.stdout));
    let (mut wait_hist, mut slice_hist) = ([0u64; HIST_OCTAVES], [0u64; HIST_OCTAVES]);
    for (t, d) in intervals(Some(&a), &b) {
        let Some(d) = d.filter(|_| &*t.comm == NAME) else {
            continue;
        };
        for (h, into) in [
            (d.wait_hist, &mut wait_hist),
            (d.slice_hist, &mut slice_hist),
        ] {
            if let Some(h) = h {
                for (o, n) in into.iter_mut().enumerate() {
                    *n += h.octave(o);
                }
            }
        }
    }
    Ok((
        compare(&waits, &wait_hist, true),
        compare(&slices, &slice_hist, false),
    ))
}

/// CPU time per slice (us) of the workload's threads: the kernel's
/// sched_stat_runtime deltas (update_curr, also run at the switch-out
/// before sched_switch fires) summed up to each of their switch-outs.
fn perf_slices(text: &str) -> Vec<u64> {
    let field = |line: &str, key: &str| -> Option<String> {
        let at = line.find(key)? + key.len();
        Some(line[at..].split_whitespace().next()?.to_string())
    };
    let mut ran: std::collections::HashMap<String, u64> = Default::default();
    let mut slices = Vec::new();
    for line in text.lines() {
        if line.contains("sched:sched_stat_runtime:") {
            if field(line, "comm=").as_deref() != Some(NAME) {
                continue;
            }
            let (Some(pid), Some(ns)) = (field(line, " pid="), field(line, " runtime=")) else {
                continue;
            };
            *ran.entry(pid).or_default() += ns.parse::<u64>().unwrap_or(0);
        } else if line.contains("sched:sched_switch:")
            && field(line, "prev_comm=").as_deref() == Some(NAME)
        {
            if let Some(pid) = field(line, "prev_pid=") {
                slices.push(ran.remove(&pid).unwrap_or(0) / 1000);
            }
        }
    }
    slices
}

/// The run-queue waits (us, as timehist rounds them) of the workload's
/// threads, one per switch-in.
fn perf_waits(text: &str) -> Vec<u64> {
    let mut prev_state: std::collections::HashMap<String, String> = Default::default();
    let mut waits = Vec::new();
    for line in text.lines() {
        // time [cpu] name[tid/pid] wait sch-delay run state
        let f: Vec<&str> = line.split_whitespace().collect();
        let Some(task) = f.get(2).filter(|t| t.starts_with(&format!("{NAME}["))) else {
            continue;
        };
        let (Some(state), Some(wait), Some(delay)) = (
            f.last(),
            f.len()
                .checked_sub(4)
                .and_then(|i| f[i].parse::<f64>().ok()),
            f.len()
                .checked_sub(3)
                .and_then(|i| f[i].parse::<f64>().ok()),
        ) else {
            continue;
        };
        let preempted = prev_state.get(*task).is_some_and(|s| s.starts_with('R'));
        let ms = if preempted { wait } else { delay };
        waits.push((ms * 1000.0).round() as u64);
        prev_state.insert(task.to_string(), state.to_string());
    }
    waits
}

/// perf's values (us) against schedtop's octaves; `skew`: the values are
/// clock differences of two probes, the first octaves get the edge rule.
fn compare(waits: &[u64], ours: &[u64; HIST_OCTAVES], skew: bool) -> Outcome {
    let hist = |shift: i64| {
        let mut h = [0u64; HIST_OCTAVES];
        for &w in waits {
            h[octave_of_us(w.saturating_add_signed(shift))] += 1;
        }
        h
    };
    let oracle = hist(0);
    let (tot_o, tot_s) = (waits.len() as u64, ours.iter().sum::<u64>());
    let table: String = (0..HIST_OCTAVES)
        .filter(|&o| oracle[o] + ours[o] > 0)
        .map(|o| format!("[{o}] perf {} schedtop {}; ", oracle[o], ours[o]))
        .collect();
    let figures = format!("{table}total perf {tot_o} schedtop {tot_s}");
    if tot_o < 300 {
        return Err(format!("too few waits seen by perf: {figures}"));
    }
    if tot_s.abs_diff(tot_o) * 50 > tot_o {
        return Err(format!("totals differ by more than 2 %: {figures}"));
    }
    // a wait printed as p us was in [p - 0.5, p + 0.5) us, then the skew
    let (early, late) = (hist(SKEW_US as i64 + 1), hist(-(SKEW_US as i64) - 1));
    let below = |h: &[u64], o: usize| h[..o].iter().sum::<u64>();
    let strict_from = if skew { SKEW_FREE } else { 0 };
    for edge in 1..=strict_from {
        let (lo, hi, got) = (below(&early, edge), below(&late, edge), below(ours, edge));
        if got + tot_o / 50 < lo || got > hi + tot_o / 50 {
            return Err(format!(
                "{got} waits below octave {edge}'s edge, perf {lo} to {hi}: {figures}"
            ));
        }
    }
    for o in strict_from..HIST_OCTAVES {
        if oracle[o] * 50 >= tot_o && ours[o].abs_diff(oracle[o]) * 100 > oracle[o] * 15 {
            return Err(format!("octave {o} differs by more than 15 %: {figures}"));
        }
    }
    Ok(figures)
}

/// `wait-workload SECS`: threads named NAME that spin a random 0-200 us and
/// sleep a random 0-2 ms (wakeup waits), and two spinners pinned to the
/// last CPU (preempted waits), for SECS seconds; then they exit.
pub fn workload_main(args: &[String]) {
    let secs: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(4);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let stop = Arc::new(AtomicBool::new(false));
    let mut hs = Vec::new();
    for i in 0..10u64 {
        let stop = stop.clone();
        let pinned = i >= 8;
        hs.push(
            std::thread::Builder::new()
                .name(NAME.into())
                .spawn(move || {
                    if pinned {
                        let _ = kernel::set_affinity(0, cpus - 1);
                        while !stop.load(Ordering::Relaxed) {
                            std::hint::spin_loop();
                        }
                        return;
                    }
                    crate::spin_sleep::spin_then_sleep(i, &stop);
                })
                .expect("spawn a workload thread"),
        );
    }
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        let _ = h.join();
    }
}
