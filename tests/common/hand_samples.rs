//! Two Samples written out by hand, whose interval's figures are worked out
//! below with pencil and paper: the oracle the dump, replay and why tests
//! compare schedtop's derived figures with (never schedtop's own `derive`).
//!
//! Sample A ends at mono 10.000 s, Sample B at mono 12.000 s: the interval
//! is 2.0 s by the monotonic clock. The wall clock says 2.5 s (it was
//! stepped forward by 0.5 s in between), which must not be used.
//!
//! | thread                 | in A                | in B                  | interval (2.0 s)                |
//! |------------------------|---------------------|-----------------------|---------------------------------|
//! | 100 "server" pid 100   | vol 1000, invol 50  | vol 1600, invol 90    | +600 → 300/s, +40 → 20/s        |
//! |                        | oncpu 3.0 s         | oncpu 4.5 s           | +1.5 s → 75 % CPU               |
//! |                        | wait 0.1 s          | wait 0.5 s            | wait_ns 400,000,000             |
//! |                        | migr 10, xnode 2    | migr 16, xnode 3      | 6 migrations, 1 cross-node      |
//! |                        | slice: 512µs 100,   | 512µs 130, 640µs 5,   | slice [[512,30],[640,5]]        |
//! |                        |        1024µs 20    | 1024µs 20             |                                 |
//! |                        | wait: 2µs 7         | 1µs 2, 2µs 10         | wait [[1,2],[2,3]]              |
//! |                        | causes [2,3,0,1,0]  | [4,4,0,1,0]           | wakeup 2, balance 1, other 6-3=3|
//! |                        | blocks futex 100,   | futex 400, sleep 350, | futex 300, sleep 150, other:    |
//! |                        |  sleep 200          |  other 10             |  10 counted + (600-460)=150     |
//! | 101 "worker" pid 100   | —                   | vol 25, invol 3,      | from its baseline (vol 5,       |
//! |  (new, baseline)       |                     | oncpu 0.201 s, migr 4 | invol 1, oncpu 0.001 s):        |
//! |                        |                     |                       | +20 → 10/s, +2 → 1/s, 10 % CPU, |
//! |                        |                     |                       | 4 migrations (all since start)  |
//! | 102 "gone" pid 102     | vol 40, sleep 30    | vol 48, sleep 39,     | +8 → 4/s; the probe counted 9   |
//! |                        |                     | exited                | sleeps: sleep 9, other 0 (more  |
//! |                        |                     |                       | than the kernel: never clipped) |
//! | 103 reused tid         | start 1, vol 70     | start 2, vol 3,       | a new thread, no baseline:      |
//! |                        |                     | no baseline           | no rates at all (null)          |
//!
//! Process 100 (threads 100 + 101): (600 + 20) / 2 = 310 voluntary/s,
//! (40 + 2) / 2 = 21 involuntary/s, (1.5 + 0.2) / 2.0 = 85 % CPU.
//!
//! CPUs: cpu0 switches 1000 → 1400 (200/s), busy 1.0 → 2.2 s (60 %); cpu1
//! switches 500 → 500 (0/s), busy 0 → 2.1 s (105 %, shown as 100).
//! Migration matrix: 0→1 5 → 8 (3), 1→0 new with 2 (2).
//! System: /proc/stat ctxt 10,000 → 10,900 (450/s); losses in B: 2 map
//! full + 1 migration matrix overflow = 3 lost updates (cumulative; the
//! two kinds a recording keeps).
use std::sync::Arc;

use schedtop::model::why::WhySample;
use schedtop::model::{
    Baseline, CpuSample, CpuTopology, HostInfo, Log2Hist, Losses, MigrationCount, Sample,
    SourceKind, SystemSample, ThreadSample, Topology,
};

pub const HOST: &str = "hand";
/// Sample B's wall clock: A's plus 2.5 s.
pub const A_TIME_NS: u64 = 1_795_000_000_000_000_000;
pub const B_TIME_NS: u64 = A_TIME_NS + 2_500_000_000;

pub fn host() -> HostInfo {
    HostInfo {
        hostname: HOST.into(),
        kernel: "6.18.0-hand".into(),
        topology: Topology {
            cpus: vec![
                CpuTopology {
                    cpu: 0,
                    node: 0,
                    llc: 0,
                },
                CpuTopology {
                    cpu: 1,
                    node: 1,
                    llc: 1,
                },
            ],
        },
        source: SourceKind::Bpf,
        degraded_reason: None,
        sched_ext: None,
        interval_ns: 1_000_000_000,
    }
}

/// A histogram with `count` at each `slot` (slot 4 is 1 µs, 8 is 2 µs, 40
/// is 512 µs, 41 is 640 µs, 44 is 1024 µs: see model::hist).
pub fn hist(slots: &[(usize, u64)]) -> Log2Hist {
    let mut c = vec![0u64; 48];
    for &(s, n) in slots {
        c[s] = n;
    }
    Log2Hist::from_counts(c)
}

fn why(causes: [u64; 5], blocks: [u64; 9]) -> Option<Arc<WhySample>> {
    Some(Arc::new(WhySample {
        migrations_by_cause: causes,
        blocked_on: blocks,
        ..WhySample::default()
    }))
}

fn thread(tid: u32, pid: u32, comm: &str, process: &str) -> ThreadSample {
    ThreadSample {
        tid,
        pid,
        comm: comm.into(),
        process_comm: process.into(),
        start_time_ns: 1_000 + u64::from(tid),
        ..Default::default()
    }
}

fn cpu(cpu: u32, switches: u64, busy_ns: u64) -> CpuSample {
    CpuSample {
        irq: None,
        cpu,
        switches,
        busy_ns,
        rq: None,
    }
}

fn mig(from_cpu: u32, to_cpu: u32, count: u64) -> MigrationCount {
    MigrationCount {
        from_cpu,
        to_cpu,
        count,
    }
}

pub fn sample_a() -> Sample {
    let server = ThreadSample {
        cpu: 0,
        voluntary: 1000,
        involuntary: 50,
        oncpu_ns: 3_000_000_000,
        wait_ns: 100_000_000,
        migrations: Some(10),
        counters: schedtop::model::counters::Counters::of(&[(
            schedtop::model::counters::CTR_CROSS_NODE_MIGRATIONS,
            2,
        )]),
        slice_hist: Some(hist(&[(40, 100), (44, 20)])),
        wait_hist: Some(hist(&[(8, 7)])),
        why: why([2, 3, 0, 1, 0], [100, 200, 0, 0, 0, 0, 0, 0, 0]),
        ..thread(100, 100, "server", "server")
    };
    let gone = ThreadSample {
        cpu: 1,
        voluntary: 40,
        migrations: Some(0),
        why: why([0; 5], [0, 30, 0, 0, 0, 0, 0, 0, 0]),
        ..thread(102, 102, "gone", "gone")
    };
    let old = ThreadSample {
        voluntary: 70,
        start_time_ns: 1,
        ..thread(103, 103, "old", "old")
    };
    Sample {
        time_ns: A_TIME_NS,
        mono_ns: 10_000_000_000,
        threads: vec![server, gone, old].into(),
        cpus: vec![cpu(0, 1000, 1_000_000_000), cpu(1, 500, 0)],
        migrations: vec![mig(0, 1, 5)],
        system: SystemSample {
            context_switches: 10_000,
            procs_running: 2,
            procs_blocked: 0,
            load: [0.25, 0.5, 1.0],
            ..Default::default()
        },
        ..Default::default()
    }
}

pub fn sample_b() -> Sample {
    let server = ThreadSample {
        cpu: 1,
        voluntary: 1600,
        involuntary: 90,
        oncpu_ns: 4_500_000_000,
        wait_ns: 500_000_000,
        migrations: Some(16),
        counters: schedtop::model::counters::Counters::of(&[(
            schedtop::model::counters::CTR_CROSS_NODE_MIGRATIONS,
            3,
        )]),
        slice_hist: Some(hist(&[(40, 130), (41, 5), (44, 20)])),
        wait_hist: Some(hist(&[(4, 2), (8, 10)])),
        why: why([4, 4, 0, 1, 0], [400, 350, 0, 0, 0, 0, 0, 0, 10]),
        ..thread(100, 100, "server", "server")
    };
    let worker = ThreadSample {
        cpu: 0,
        voluntary: 25,
        involuntary: 3,
        oncpu_ns: 201_000_000,
        migrations: Some(4),
        baseline: Some(Box::new(Baseline {
            voluntary: 5,
            involuntary: 1,
            oncpu_ns: 1_000_000,
            wait_ns: 0,
        })),
        ..thread(101, 100, "worker", "server")
    };
    let gone = ThreadSample {
        cpu: 1,
        voluntary: 48,
        migrations: Some(0),
        why: why([0; 5], [0, 39, 0, 0, 0, 0, 0, 0, 0]),
        exited: true,
        ..thread(102, 102, "gone", "gone")
    };
    let reused = ThreadSample {
        voluntary: 3,
        start_time_ns: 2,
        ..thread(103, 103, "new", "new")
    };
    Sample {
        time_ns: B_TIME_NS,
        mono_ns: 12_000_000_000,
        threads: vec![server, worker, gone, reused].into(),
        cpus: vec![cpu(0, 1400, 2_200_000_000), cpu(1, 500, 2_100_000_000)],
        migrations: vec![mig(0, 1, 8), mig(1, 0, 2)],
        system: SystemSample {
            context_switches: 10_900,
            procs_running: 3,
            procs_blocked: 1,
            load: [0.5, 0.25, 0.125],
            losses: Losses {
                thread_map_full: 2,
                migration_matrix_overflow: 1,
                ..Default::default()
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A recording of A then B in `dir`.
pub fn recording(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("hand.schedtop");
    let mut w = schedtop::record::Writer::open(&path, &host(), Default::default()).unwrap();
    for s in [sample_a(), sample_b()] {
        w.write_sample(&s).unwrap();
    }
    w.finish().unwrap();
    path
}
