//! The figures `schedtop diff` compares (model/compare.rs), each with its
//! batch-JSON name, which way is better where that is unambiguous, and the
//! size below which a difference is noise.
use super::Log2Hist;

/// Which way a figure is better, where that is unambiguous.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    /// more or less is not by itself better (CPU use, switches: four
    /// spinners spread from one CPU over two are preempted twice as
    /// often, as they run twice as long)
    Neither,
}

/// An entity's figures over one window (None: unknown there).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// pid, tid or CPU number on this side
    pub id: u32,
    /// its name on this side (a pinned pair's may differ)
    pub comm: Option<String>,
    pub threads: u32,
    pub voluntary_per_s: Option<f64>,
    pub involuntary_per_s: Option<f64>,
    pub migrations_per_s: Option<f64>,
    pub cross_node_migrations_per_s: Option<f64>,
    pub cpu_pct: Option<f64>,
    pub switches_per_s: Option<f64>,
    pub rq_len_avg: Option<f64>,
    /// cgroups: throttled time per second, and % of the window some task
    /// waited for a CPU (the kernel's PSI `total`)
    pub throttled_ms_per_s: Option<f64>,
    pub psi_some_pct: Option<f64>,
    /// from the window's merged histograms, not averages of percentiles
    pub wait_p50_us: Option<u64>,
    pub wait_p99_us: Option<u64>,
    pub slice_p99_us: Option<u64>,
    pub wait_hist: Option<Log2Hist>,
    pub slice_hist: Option<Log2Hist>,
    /// the waits split by how they began (a wakeup, a preemption): the
    /// comparison screen's histogram overlay
    pub wakeup_wait_hist: Option<Log2Hist>,
    pub preempt_wait_hist: Option<Log2Hist>,
}

/// A compared figure: its batch-JSON name, how it is read, which way is
/// better, and below what size a difference is noise (for ranking).
#[derive(Debug)]
pub struct Figure {
    pub name: &'static str,
    pub get: fn(&Figures) -> Option<f64>,
    pub better: Better,
    pub floor: f64,
}

fn us(v: Option<u64>) -> Option<f64> {
    v.map(|v| v as f64)
}

/// Every compared figure, in output order.
pub const FIGURES: [Figure; 12] = [
    Figure {
        name: "voluntary_per_s",
        get: |f| f.voluntary_per_s,
        better: Better::Neither,
        floor: 1.0,
    },
    Figure {
        name: "involuntary_per_s",
        get: |f| f.involuntary_per_s,
        // more CPU time for a spinner is more slices ended by preemption
        better: Better::Neither,
        floor: 1.0,
    },
    Figure {
        name: "migrations_per_s",
        get: |f| f.migrations_per_s,
        better: Better::Neither,
        floor: 1.0,
    },
    Figure {
        name: "cross_node_migrations_per_s",
        get: |f| f.cross_node_migrations_per_s,
        better: Better::Lower,
        floor: 1.0,
    },
    Figure {
        name: "cpu_pct",
        get: |f| f.cpu_pct,
        better: Better::Neither,
        floor: 1.0,
    },
    Figure {
        name: "switches_per_s",
        get: |f| f.switches_per_s,
        better: Better::Neither,
        floor: 1.0,
    },
    Figure {
        name: "rq_len_avg",
        get: |f| f.rq_len_avg,
        better: Better::Lower,
        floor: 0.1,
    },
    Figure {
        name: "throttled_ms_per_s",
        get: |f| f.throttled_ms_per_s,
        better: Better::Lower,
        floor: 1.0,
    },
    Figure {
        name: "psi_some_pct",
        get: |f| f.psi_some_pct,
        better: Better::Lower,
        floor: 1.0,
    },
    Figure {
        name: "wait_p50_us",
        get: |f| us(f.wait_p50_us),
        better: Better::Lower,
        floor: 10.0,
    },
    Figure {
        name: "wait_p99_us",
        get: |f| us(f.wait_p99_us),
        better: Better::Lower,
        floor: 10.0,
    },
    Figure {
        name: "slice_p99_us",
        get: |f| us(f.slice_p99_us),
        better: Better::Neither,
        floor: 10.0,
    },
];
