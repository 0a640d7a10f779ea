//! The run-queue wait histogram against an independent oracle on the same
//! workload and window: bpftrace running runqlat's logic (stamp at
//! sched_wakeup / sched_wakeup_new or at a switch-out that leaves the task
//! runnable, delta at the switch-in, bpftrace hist() of microseconds).
//! Issue rule: totals within 2 %, every octave holding >= 2 % of the events
//! within 15 %. Below 32 us the two probes' clocks disagree: programs on one
//! tracepoint run one after the other and read the clock a few hundred ns
//! apart, which moves waits of a few us across an octave edge (a [4, 8) us
//! octave read 968 vs 1,161 in one run). Two copies of the oracle itself,
//! attached side by side on this workload and window, disagree there as
//! much: [4, 8) us 1,049 vs 2,116 and 1,205 vs 396 in two of four runs
//! (totals equal to the event, every octave from 32 us up within 0.6 %), so
//! no pair of probes can meet a 15 % rule in those octaves. There the count
//! below each octave edge must lie between the oracle's counts below the
//! edge -0.5 us and +0.5 us (bpftrace histograms of the same waits shifted by
//! 0.5 us), within 2 % of all waits. The same for the slice
//! histogram against a CPU-time oracle: the difference of the task's
//! se.sum_exec_runtime between two of its switch-outs, in bpftrace.
use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use schedtop::model::hist::{octave_of_us, HIST_OCTAVES};
use schedtop::model::rates::intervals;

const NAME: &str = "waitoracle";

const RUNQLAT: &str = r#"
tracepoint:sched:sched_wakeup, tracepoint:sched:sched_wakeup_new
/args->comm == "waitoracle"/
{ @q[args->pid] = nsecs; }
tracepoint:sched:sched_switch
{
  $now = nsecs;
  if (args->prev_comm == "waitoracle") {
    $rt = curtask->se.sum_exec_runtime;
    $l = @rt[args->prev_pid];
    if ($l) { @slice = hist(($rt - $l) / 1000); }
    @rt[args->prev_pid] = $rt;
  }
  if (args->prev_comm == "waitoracle" && curtask->__state == 0) { @q[args->prev_pid] = $now; }
  if (args->next_comm == "waitoracle") {
    $t = @q[args->next_pid];
    if ($t) {
      $d = $now - $t;
      @us = hist($d / 1000);
      // the same waits with every edge 0.5 us earlier / later
      @early = hist(($d + 500) / 1000);
      @late = hist($d < 500 ? 0 : ($d - 500) / 1000);
    }
    delete(@q[args->next_pid]);
  }
}
END { clear(@q); clear(@rt); }
"#;

/// bpftrace's hist() lines (`[0]`, `[1]`, `[2, 4)`, `[1K, 2K)`) of map
/// `name` as octaves.
fn parse_hist(text: &str, name: &str) -> Vec<u64> {
    let mut oct = vec![0u64; HIST_OCTAVES];
    let head = format!("@{name}:");
    let Some(start) = text.find(&head) else {
        return oct;
    };
    let section = &text[start + head.len()..];
    let end = section.find("\n@").unwrap_or(section.len());
    for line in section[..end].lines() {
        let Some(rest) = line.strip_prefix('[') else {
            continue;
        };
        let Some((bucket, tail)) = rest.split_once([']', ')']) else {
            continue;
        };
        let low = bucket.split(',').next().unwrap().trim();
        let (num, mul) = match low.chars().last() {
            Some('K') => (&low[..low.len() - 1], 1u64 << 10),
            Some('M') => (&low[..low.len() - 1], 1 << 20),
            Some('G') => (&low[..low.len() - 1], 1 << 30),
            _ => (low, 1),
        };
        let low: u64 = num.parse::<u64>().unwrap() * mul;
        let count: u64 = tail.split_whitespace().next().unwrap().parse().unwrap();
        oct[octave_of_us(low)] += count;
    }
    oct
}

/// Threads named NAME: spin a random 0-200 us, sleep a random 0-2 ms; and
/// two spinners pinned to one CPU (preempted waits).
fn workload(stop: &Arc<AtomicBool>, cpu: usize) -> Vec<std::thread::JoinHandle<()>> {
    let mut hs = Vec::new();
    for i in 0..8u64 {
        let stop = stop.clone();
        hs.push(std::thread::spawn(move || {
            set_name();
            common::spin_sleep::spin_then_sleep(i, &stop);
        }));
    }
    for _ in 0..2 {
        let stop = stop.clone();
        hs.push(std::thread::spawn(move || {
            set_name();
            pin_to(cpu);
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }));
    }
    hs
}

fn set_name() {
    let name = std::ffi::CString::new(NAME).unwrap();
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of up to 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
}

#[test]
fn wait_and_slice_histograms_agree_with_bpftrace() {
    let _g = serial();
    if Command::new("bpftrace").arg("--version").output().is_err() {
        cannot_run("bpftrace is not installed (scripts/deps.sh --test)");
        return;
    }
    // bpftrace reads the tracepoints' formats there
    if !ensure_tracefs() {
        return;
    }
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let mut bt = Command::new("bpftrace")
        .args(["-e", RUNQLAT])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut out = BufReader::new(bt.stdout.take().unwrap());
    let mut line = String::new();
    // "Attaching N probes..." once it is in place
    while line.is_empty() || !line.starts_with("Attaching") {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            bt.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("bpftrace ended before attaching: {err}");
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let a = src.sample().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let hs = workload(&stop, *allowed_cpus().last().unwrap());
    std::thread::sleep(Duration::from_secs(4));
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().unwrap();
    }
    let b = src.sample().unwrap();
    // bpftrace prints its maps and ends at SIGINT. Once in a long run one
    // was seen to sit on a SIGINT for minutes (the test hung until it was
    // sent another), so it is asked again each second, and killed after 30.
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let asked = std::time::Instant::now();
    loop {
        // SAFETY: signals the bpftrace child we started (its own group).
        unsafe { libc::kill(-(bt.id() as i32), libc::SIGINT) };
        if common::ended_within(&mut bt, Duration::from_secs(1)) {
            break;
        }
        if asked.elapsed() > Duration::from_secs(30) {
            // SAFETY: as above.
            unsafe { libc::kill(-(bt.id() as i32), libc::SIGKILL) };
            let _ = bt.wait();
            panic!("bpftrace did not end within 30 s of SIGINT");
        }
    }
    let text = reader.join().unwrap();
    let mut ours = (vec![0u64; HIST_OCTAVES], vec![0u64; HIST_OCTAVES]);
    for (t, d) in intervals(Some(&a), &b) {
        let Some(d) = d.filter(|_| &*t.comm == NAME) else {
            continue;
        };
        for (h, into) in [(&d.wait_hist, &mut ours.0), (&d.slice_hist, &mut ours.1)] {
            if let Some(h) = h {
                for (o, n) in into.iter_mut().enumerate() {
                    *n += h.octave(o);
                }
            }
        }
    }
    let shifted = (parse_hist(&text, "early"), parse_hist(&text, "late"));
    compare(
        "run-queue wait",
        &parse_hist(&text, "us"),
        &ours.0,
        Some(shifted),
    );
    compare(
        "slice (CPU time)",
        &parse_hist(&text, "slice"),
        &ours.1,
        None,
    );
}

/// Octave index of 32 us: from there up the clocks' skew does not matter.
const SKEW_FREE: usize = 6;

fn compare(what: &str, oracle: &[u64], ours: &[u64], shifted: Option<(Vec<u64>, Vec<u64>)>) {
    let (tot_o, tot_s): (u64, u64) = (oracle.iter().sum(), ours.iter().sum());
    let table: String = (0..HIST_OCTAVES)
        .filter(|&o| oracle[o] + ours[o] > 0)
        .map(|o| {
            format!(
                "octave {o:2}: bpftrace {:7} schedtop {:7}\n",
                oracle[o], ours[o]
            )
        })
        .collect();
    eprintln!("{what}:\n{table}total: bpftrace {tot_o} schedtop {tot_s}");
    assert!(
        tot_o > 2000,
        "{what}: too few events seen by the oracle:\n{table}"
    );
    assert!(
        tot_s.abs_diff(tot_o) * 50 <= tot_o,
        "{what}: totals differ by more than 2 %:\n{table}"
    );
    let first_strict = if let Some((early, late)) = &shifted {
        let below = |h: &[u64], o: usize| h[..o].iter().sum::<u64>();
        for edge in 1..=SKEW_FREE {
            let (lo, hi, got) = (below(early, edge), below(late, edge), below(ours, edge));
            assert!(
                got + tot_o / 50 >= lo && got <= hi + tot_o / 50,
                "{what}: {got} waits below octave {edge}'s edge, the oracle \
                 {lo} to {hi} within 0.5 us of it:\n{table}"
            );
        }
        SKEW_FREE
    } else {
        0
    };
    for o in first_strict..HIST_OCTAVES {
        if oracle[o] * 50 >= tot_o {
            assert!(
                ours[o].abs_diff(oracle[o]) * 100 <= oracle[o] * 15,
                "{what}: octave {o} differs by more than 15 %:\n{table}"
            );
        }
    }
}
