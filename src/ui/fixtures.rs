//! Made-up but plausible Samples for tests, snapshots and screenshots: a
//! 4-CPU, 2-node host running a database, a video encoder that preempts
//! itself, a spinner, a thread that just started (no rate yet), one that
//! exited, and optionally one with a hostile name.
use crate::model::{
    CpuSample, CpuTopology, HostInfo, Log2Hist, Losses, Sample, SourceKind, SystemSample,
    ThreadAttrs, ThreadSample, Topology,
};
use std::sync::Arc;

use super::app::{AppState, Mode};
use crate::model::hist::{slot_high_ns, slot_low_ns, slot_of_ns, HIST_SLOTS, SUB_BUCKETS};

/// Wall clock of the first Sample: 2026-11-21 23:15:00 UTC.
pub const T0_NS: u64 = 1_795_302_900_000_000_000;
pub const STEPS: usize = 24;
pub(crate) const MONO0_NS: u64 = 5_000_000_000_000;

/// One thread's behaviour per second.
struct Spec {
    tid: u32,
    pid: u32,
    comm: &'static str,
    process: &'static str,
    cpu: u32,
    vol: u64,
    invol: u64,
    oncpu_ms: u64,
    /// histogram slot most slices / waits fall in
    slice_slot: usize,
    wait_slot: usize,
    migr: u64,
}

const fn spec(
    (tid, pid): (u32, u32),
    (comm, process): (&'static str, &'static str),
    cpu: u32,
    rates: (u64, u64, u64),
    slots: (usize, usize),
    migr: u64,
) -> Spec {
    Spec {
        tid,
        pid,
        comm,
        process,
        cpu,
        vol: rates.0,
        invol: rates.1,
        oncpu_ms: rates.2,
        slice_slot: slots.0,
        wait_slot: slots.1,
        migr,
    }
}

const SPECS: &[Spec] = &[
    spec((1, 1), ("systemd", "systemd"), 0, (2, 0, 1), (7, 3), 0),
    spec(
        (77, 77),
        ("kworker/1:2", "kworker/1:2"),
        1,
        (310, 2, 9),
        (5, 2),
        0,
    ),
    spec(
        (812, 812),
        ("postgres", "postgres"),
        2,
        (40, 1, 12),
        (8, 4),
        1,
    ),
    spec(
        (813, 812),
        ("walwriter", "postgres"),
        3,
        (120, 3, 30),
        (8, 5),
        4,
    ),
    spec(
        (814, 812),
        ("autovacuum", "postgres"),
        2,
        (5, 0, 2),
        (9, 4),
        0,
    ),
    spec(
        (2210, 2210),
        ("ffmpeg", "ffmpeg"),
        0,
        (30, 5, 40),
        (10, 6),
        2,
    ),
    spec(
        (2211, 2210),
        ("ffmpeg:enc0", "ffmpeg"),
        1,
        (80, 950, 480),
        (11, 8),
        20,
    ),
    spec(
        (2212, 2210),
        ("ffmpeg:enc1", "ffmpeg"),
        1,
        (75, 910, 470),
        (11, 8),
        18,
    ),
    spec(
        (2213, 2210),
        ("ffmpeg:enc2", "ffmpeg"),
        3,
        (70, 640, 520),
        (11, 8),
        25,
    ),
    spec(
        (2214, 2210),
        ("ffmpeg:enc3", "ffmpeg"),
        3,
        (66, 600, 515),
        (11, 8),
        24,
    ),
    spec((3001, 3001), ("spin", "spin"), 2, (0, 250, 990), (13, 5), 0),
];

/// Load over time, tenths: the encoder's rates follow it (sparklines).
const WAVE: [u64; 12] = [10, 12, 15, 9, 7, 11, 14, 16, 13, 8, 6, 10];

fn topology() -> Topology {
    Topology {
        cpus: (0..4)
            .map(|cpu| CpuTopology {
                cpu,
                node: cpu / 2,
                llc: cpu / 2 * 2,
            })
            .collect(),
    }
}

pub fn host(source: SourceKind) -> HostInfo {
    HostInfo {
        hostname: "db-prod-7".into(),
        kernel: "6.18.0-schedtop".into(),
        topology: topology(),
        source,
        degraded_reason: match source {
            SourceKind::Bpf => None,
            SourceKind::Procfs => Some(
                "not root: /proc counters only; run as root for histograms and migrations".into(),
            ),
        },
        sched_ext: None,
        interval_ns: 1_000_000_000,
    }
}

/// `n` events spread around octave `slot`: see `spread_at`.
pub(crate) fn spread(slot: usize, n: u64) -> Log2Hist {
    spread_at(slot * SUB_BUCKETS + 1, n)
}

/// `n` events spread around sub-bucket `slot` (30% two below, 50% at, 20%
/// two above).
fn spread_at(slot: usize, n: u64) -> Log2Hist {
    let mut h = Log2Hist::new();
    let below = n * 3 / 10;
    let above = n / 5;
    h.add_at(slot.saturating_sub(2), below);
    h.add_at(slot, n - below - above);
    h.add_at(slot + 2, above);
    h
}

/// The sub-bucket `spread_at` centres `slices` slices on so that they add
/// up to `ran_ns` of CPU time: the spread's lower bounds add up to no more
/// than that, its upper bounds to no less (model/physics.rs checks it).
fn slice_slot(ran_ns: u64, slices: u64) -> usize {
    let slices = slices.max(1);
    let avg = ran_ns / slices;
    let bounds = |s: usize| {
        let (lo, hi) = (slot_low_ns, |s| slot_high_ns(s).unwrap_or(u64::MAX / 8));
        let low = (3 * lo(s.saturating_sub(2)) + 5 * lo(s) + 2 * lo(s + 2)) / 10;
        let high = (3 * hi(s.saturating_sub(2)) + 5 * hi(s) + 2 * hi(s + 2)) / 10;
        (low, high)
    };
    let mut s = slot_of_ns(avg).clamp(8, HIST_SLOTS - 3);
    for _ in 0..8 {
        let (low, high) = bounds(s);
        if low > avg && s > 8 {
            s -= 1;
        } else if high < avg && s < HIST_SLOTS - 3 {
            s += 1;
        } else {
            break;
        }
    }
    s
}

fn thread_at(s: &Spec, step: usize, source: SourceKind) -> ThreadSample {
    let bpf = source == SourceKind::Bpf;
    // cumulative: the sum of the per-second amounts so far
    let mut vol = 1000 + u64::from(s.tid % 7) * 100;
    let mut invol = 50;
    let mut oncpu_ns = 10_000_000_000;
    let mut wait_ns = 700_000_000;
    let mut migr = 30;
    let mut last_invol = 0;
    let mut last_vol = 0;
    let mut slice = spread(s.slice_slot, 2000);
    // a wait follows every switch-out: after a voluntary one it begins at
    // the wakeup, after an involuntary one at the preemption (and lasts
    // longer: the CPU is busy)
    let mut wakeup = spread(s.wait_slot, 1500);
    let mut preempt = spread(s.wait_slot + 1, 500);
    for i in 0..=step {
        let k = if s.pid == 2210 {
            WAVE[i % WAVE.len()]
        } else {
            10
        };
        let (v, n) = (s.vol * k / 10, s.invol * k / 10);
        vol += v;
        invol += n;
        last_invol = n;
        last_vol = v;
        let ran_ns = (s.oncpu_ms * 1_000_000).min(1_000_000_000) * k.min(10) / 10;
        oncpu_ns += ran_ns;
        wait_ns += (v + 2 * n) * (1u64 << s.wait_slot) * 1000 / 2;
        migr += s.migr * k / 10;
        slice.merge(&spread_at(slice_slot(ran_ns, v + n), v + n));
        wakeup.merge(&spread(s.wait_slot, v));
        preempt.merge(&spread(s.wait_slot + 1, n));
    }
    let mut wait = wakeup.clone();
    wait.merge(&preempt);
    ThreadSample {
        tid: s.tid,
        pid: s.pid,
        comm: s.comm.into(),
        process_comm: s.process.into(),
        cpu: s.cpu,
        start_time_ns: u64::from(s.tid) * 1_000_000,
        voluntary: vol,
        involuntary: invol,
        oncpu_ns,
        wait_ns,
        migrations: bpf.then_some(migr),
        counters: if bpf {
            crate::model::counters::Counters::of(&[(
                crate::model::counters::CTR_CROSS_NODE_MIGRATIONS,
                migr / 4,
            )])
        } else {
            crate::model::counters::Counters::UNKNOWN
        },
        slice_hist: bpf.then_some(slice),
        wait_hist: bpf.then_some(wait),
        wakeup_wait_hist: bpf.then_some(wakeup),
        preempt_wait_hist: bpf.then_some(preempt),
        baseline: None,
        exited: false,
        // -5, 0 or 5: a mix, as renice leaves a machine
        attrs: ThreadAttrs {
            nice: Some((s.tid % 3) as i8 * 5 - 5),
            policy: Some(0),
            rt_priority: Some(0),
            cpus_allowed: None,
            ppid: None,
        },
        cgroup: None,
        why: bpf.then(|| Arc::new(why_of(s.tid, migr, (vol, last_vol), last_invol))),
    }
}

/// Causes and reasons that add up to the thread's own counts: a third of its
/// moves wakeup placement, the rest load balance; it blocks on one of three
/// things by its tid.
/// Its last second's preemptions: half by the spinner (the spinner's by
/// ffmpeg:enc0), a quarter by a kworker, the rest by others. Its last
/// second's wakeups (one per voluntary switch): 60 % by the thread that
/// also preempts it, a fifth by hardirqs, the rest by others.
fn why_of(
    tid: u32,
    migr: u64,
    (vol, last_vol): (u64, u64),
    invol: u64,
) -> crate::model::why::WhySample {
    let by_thread = last_vol * 6 / 10;
    let by_irq = last_vol / 5;
    let mut blocked_on = [0; crate::model::why::BLOCK_REASONS];
    let main = [0, 2, 3][tid as usize % 3];
    blocked_on[main] = vol - vol / 4;
    blocked_on[1] = vol / 4;
    crate::model::why::WhySample {
        migrations_by_cause: [migr / 3, migr - migr / 3, 0, 0, 0],
        blocked_on,
        preempted_by: [
            (if tid == 3001 { 2211 } else { 3001 }, invol / 2),
            (77, invol / 4),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect(),
        preempted_by_rest: invol - invol / 2 - invol / 4,
        woken_by: [
            (if tid == 3001 { 2211 } else { 3001 }, by_thread),
            (crate::model::why::PSEUDO_WAKER_BASE, by_irq),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect(),
        woken_by_rest: last_vol - by_thread - by_irq,
        wakeups: Some(vol),
    }
}

/// `STEPS` Samples one second apart. The last one adds a thread that just
/// started without a known baseline (no rate yet) and marks one as exited.
pub fn samples(source: SourceKind) -> Vec<Sample> {
    (0..STEPS)
        .map(|step| {
            let mut threads: Vec<ThreadSample> =
                SPECS.iter().map(|s| thread_at(s, step, source)).collect();
            // a worker that exits in the last interval
            let mut worker = thread_at(
                &spec(
                    (815, 812),
                    ("pg-worker", "postgres"),
                    0,
                    (20, 2, 5),
                    (7, 4),
                    1,
                ),
                step,
                source,
            );
            worker.exited = step + 1 == STEPS;
            threads.push(worker);
            if step + 1 == STEPS {
                let mut new = thread_at(
                    &spec(
                        (2215, 2210),
                        ("ffmpeg:enc4", "ffmpeg"),
                        0,
                        (9, 9, 9),
                        (9, 9),
                        1,
                    ),
                    0,
                    source,
                );
                new.start_time_ns = 9_999_000_000;
                threads.push(new);
            }
            sample_at(step, threads)
        })
        .collect()
}

fn sample_at(step: usize, threads: Vec<ThreadSample>) -> Sample {
    let mut s = sample_without_cgroups(step, threads);
    cgroups::attach(&mut s, step, &WAVE);
    s
}

fn sample_without_cgroups(step: usize, threads: Vec<ThreadSample>) -> Sample {
    // the thread that just started counted its earlier switches elsewhere
    let switches: u64 = threads
        .iter()
        .filter(|t| t.tid != 2215)
        .map(|t| t.voluntary + t.involuntary)
        .sum();
    let ran_ns: u64 = threads
        .iter()
        .filter(|t| t.tid != 2215)
        .map(|t| t.oncpu_ns)
        .sum();
    Sample {
        time_ns: T0_NS + step as u64 * 1_000_000_000,
        mono_ns: MONO0_NS + step as u64 * 1_000_000_000,
        cpus: (0..4)
            .map(|cpu| CpuSample {
                irq: None,
                cpu,
                // the CPUs' switches are the system's
                switches: (switches + 800 * step as u64) / 4,
                // the threads' CPU time spread over the 4 CPUs, plus
                // 20 ms/s of the kernel's own
                busy_ns: ran_ns / 4 + step as u64 * 20_000_000,
                rq: None,
            })
            .collect(),
        migrations: Vec::new(),
        system: SystemSample {
            migrations_by_cause: Vec::new(),
            // the threads' switches plus the idle task's
            context_switches: switches + 800 * step as u64,
            procs_running: 6,
            procs_blocked: 1,
            load: [3.42, 2.10, 1.05],
            losses: Losses::default(),
            // the root cgroup's pressure (fixtures/cgroups.rs)
            cpu_pressure: Some(Box::new(crate::model::Pressure {
                some_avg10: 24.1,
                ..Default::default()
            })),
        },
        threads: threads.into(),
        cgroups: Vec::new(),
        outside: Vec::new(),
        ancestors: Vec::new(),
    }
}

/// Thread and process names chosen to attack the terminal: a screen clear,
/// a bell, an OSC title change, a C1 CSI and a bidi override.
pub const HOSTILE_COMM: &str = "evil\x1b[2J\x07";
pub const HOSTILE_PROCESS: &str = "\x1b]0;pwned\x07";

/// The BPF Samples plus a process with hostile names, and lost updates.
pub fn hostile_samples() -> Vec<Sample> {
    let mut all = samples(SourceKind::Bpf);
    for (step, s) in all.iter_mut().enumerate() {
        let mut t = thread_at(
            &spec((6666, 6666), ("x", "x"), 1, (500, 400, 300), (6, 9), 3),
            step,
            SourceKind::Bpf,
        );
        t.comm = HOSTILE_COMM.into();
        t.process_comm = HOSTILE_PROCESS.into();
        let mut u = t.clone();
        u.tid = 6667;
        u.start_time_ns += 1;
        u.comm = "rtl\u{202e}gnp.exe\u{9b}31m".into();
        let mut threads = std::mem::take(&mut s.threads).into_vec();
        threads.push(t);
        threads.push(u);
        // the system saw their switches and CPU time too
        *s = sample_at(step, threads);
        s.system.losses.thread_map_full = 17 * step as u64;
    }
    all
}

/// An app that has seen `samples` at `width` x `height`.
pub fn app_with(host: HostInfo, samples: Vec<Sample>, width: u16, height: u16) -> AppState {
    let mut app = AppState::new(host, Mode::Live);
    super::layout::apply(&mut app, super::action::Action::Resize(width, height));
    for s in samples {
        app.push_sample(s);
    }
    super::layout::refresh(&mut app);
    app
}

/// The usual fixture: BPF or procfs Samples.
pub fn app(source: SourceKind, width: u16, height: u16) -> AppState {
    app_with(host(source), samples(source), width, height)
}

mod cgroups;
mod compare;
mod numa;
mod quota;
mod tree;
mod workers;
pub use compare::*;
pub use numa::*;
pub use quota::*;
pub use tree::*;
pub use workers::*;
