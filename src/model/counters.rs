//! Per-thread counters declared once. The probe keeps them in a slot array
//! (`counters[THREAD_COUNTERS]` in bpf/schedtop.h, slot numbers `CTR_*`);
//! user space carries the array generically — the drain, the recording, the
//! interval deltas, the sums to process and system — and every sink (table
//! column, detail pane, JSON, CSV, OpenMetrics, triggers) reads a counter
//! through its descriptor in `COUNTERS`. A new counter is a slot in the
//! header, the probe code that counts it, and one entry here
//! (docs/architecture.md, "A new per-thread counter").
use std::sync::{Arc, LazyLock};

/// Slots of the array (bpf/schedtop.h `THREAD_COUNTERS`).
pub const THREAD_COUNTERS: usize = 16;
/// Time interrupts took while the thread was on a CPU: hardirq, then
/// softirq by vector (the kernel's numbering, HI = 0 .. RCU = 9).
pub const CTR_STOLEN_HARDIRQ_NS: usize = 0;
pub const CTR_STOLEN_SOFTIRQ_NS: usize = 1;
pub const SOFTIRQ_VECTORS: usize = 10;
/// Migrations to a CPU of another NUMA node (the migrate probe).
pub const CTR_CROSS_NODE_MIGRATIONS: usize = 11;

/// What a counter counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterUnit {
    /// nanoseconds (OpenMetrics: seconds)
    Ns,
    /// events
    Count,
}

/// How a counter goes from threads to a process, a cgroup and the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregate {
    /// the threads' deltas added (saturating)
    Sum,
}

/// How a table column shows a counter's interval delta.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Display {
    /// per second of the interval
    PerSecond,
    /// a time as a share of the interval, in % (ns counters only)
    ShareOfInterval,
}

/// A counter's table column.
#[derive(Clone, Copy, Debug)]
pub struct CounterColumn {
    /// the metric key of the column (sorting, `metrics::by_key`)
    pub key: &'static str,
    pub title: &'static str,
    pub width: u16,
    /// higher goes first when the table does not fit
    pub drop_rank: u8,
    pub display: Display,
    /// a line of the help overlay
    pub help: Option<&'static str>,
    /// the metric (column) it follows in the table; None: right after
    /// its fields (`CounterDesc::after`)
    pub after: Option<&'static str>,
}

/// A family: consecutive slots, one per label value.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    /// the OpenMetrics label (and JSON `<key>_by_<label>`)
    pub label: &'static str,
    /// the JSON/CSV name of the per-label object
    pub by_label_key: &'static str,
    /// one per slot, from `first_slot` on
    pub values: &'static [&'static str],
}

/// One per-thread counter: a scalar (one slot) or a family.
#[derive(Debug)]
pub struct CounterDesc {
    /// the JSON/CSV name of the interval's delta (a family's: the total)
    pub key: &'static str,
    pub first_slot: usize,
    pub family: Option<Family>,
    pub unit: CounterUnit,
    pub aggregate: Aggregate,
    pub column: Option<CounterColumn>,
    /// the detail pane's label
    pub detail: &'static str,
    /// OpenMetrics: the name after the level's prefix, without unit or
    /// `_total`; always a counter (cumulative)
    pub om_stem: &'static str,
    /// `{whose}` stands for the level (figures.rs `Level::whose`)
    pub om_help: &'static str,
    /// triggers may name it (`thread:<key>_per_s`, `proc:…`)
    pub trigger: bool,
    /// the JSON/CSV field it follows (field order is an interface); None:
    /// after the last field
    pub after: Option<&'static str>,
}

impl CounterDesc {
    /// The slots it spans.
    pub fn slots(&self) -> std::ops::Range<usize> {
        let n = self.family.map_or(1, |f| f.values.len());
        self.first_slot..self.first_slot + n
    }

    /// Its interval total from a set of counters (None: unknown).
    pub fn total(&self, c: &Counters) -> Option<u64> {
        let s = c.known()?;
        Some(
            s[self.slots()]
                .iter()
                .fold(0u64, |a, &v| a.saturating_add(v)),
        )
    }

    /// A family's (label value, count) pairs (a scalar: its key and value).
    pub fn by_label(&self, c: &Counters) -> Option<Vec<(&'static str, u64)>> {
        let s = c.known()?;
        Some(match self.family {
            Some(f) => f
                .values
                .iter()
                .copied()
                .zip(s[self.slots()].iter().copied())
                .collect(),
            None => vec![(self.key, s[self.first_slot])],
        })
    }
}

const STOLEN_KINDS: &[&str] = &[
    "hardirq", "hi", "timer", "net_tx", "net_rx", "block", "irq_poll", "tasklet", "sched",
    "hrtimer", "rcu",
];

/// Every per-thread counter. Slots must not overlap (a test checks them
/// against bpf/schedtop.h). A counter is named apart (`pub const`) only
/// where model code reasons about it (the NUMA view, findings).
pub static COUNTERS: &[CounterDesc] = &[CROSS_NODE, STOLEN];

pub const CROSS_NODE: CounterDesc = CounterDesc {
    key: "cross_node_migrations",
    first_slot: CTR_CROSS_NODE_MIGRATIONS,
    family: None,
    unit: CounterUnit::Count,
    aggregate: Aggregate::Sum,
    column: Some(CounterColumn {
        key: "xnode",
        title: "XNODE/s",
        width: 7,
        drop_rank: 11,
        display: Display::PerSecond,
        help: Some("XNODE/s: migrations to a CPU of another NUMA node"),
        after: None,
    }),
    detail: "cross-node",
    om_stem: "cross_node_migrations",
    om_help: "Migrations of {whose} between NUMA nodes.",
    trigger: true,
    after: Some("migr"),
};

pub const STOLEN: CounterDesc = CounterDesc {
    key: "stolen_ns",
    first_slot: CTR_STOLEN_HARDIRQ_NS,
    family: Some(Family {
        label: "kind",
        by_label_key: "stolen_by_kind_ns",
        values: STOLEN_KINDS,
    }),
    unit: CounterUnit::Ns,
    aggregate: Aggregate::Sum,
    column: Some(CounterColumn {
        key: "stolen",
        title: "STOLEN%",
        width: 7,
        drop_rank: 16,
        display: Display::ShareOfInterval,
        help: Some("STOLEN%: interrupts and softirqs that ran while the thread was on a CPU"),
        // beside CPU%: the share of it interrupts took
        after: Some("cpu_pct"),
    }),
    detail: "stolen",
    om_stem: "stolen",
    om_help: "Time interrupts (hardirq) and softirqs (by vector) took while {whose} was on a CPU.",
    trigger: true,
    after: None,
};

/// The descriptor with this JSON key.
pub fn by_key(key: &str) -> Option<&'static CounterDesc> {
    COUNTERS.iter().find(|d| d.key == key)
}

type Slots = [u64; THREAD_COUNTERS];

/// A thread's counters (cumulative in a Sample, or one interval's deltas),
/// 8 bytes: None where the source has none (procfs, older recordings); the
/// shared all-zero array for the many threads that counted nothing; an
/// array of their own for the others.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Counters(Option<Arc<Slots>>);

static ZERO: LazyLock<Arc<Slots>> = LazyLock::new(|| Arc::new([0; THREAD_COUNTERS]));

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => f.write_str("Counters(unknown)"),
            Some(s) => {
                let set: Vec<(usize, u64)> = s
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|&(_, v)| v != 0)
                    .collect();
                write!(f, "Counters{set:?}")
            }
        }
    }
}

impl Counters {
    /// The source has no counters.
    pub const UNKNOWN: Counters = Counters(None);

    /// Known, all zero (shared: no allocation).
    pub fn zero() -> Counters {
        Counters(Some(ZERO.clone()))
    }

    /// Known, these values (all zero: shared).
    pub fn from_slots(s: &Slots) -> Counters {
        if s.iter().all(|&v| v == 0) {
            Counters::zero()
        } else {
            Counters(Some(Arc::new(*s)))
        }
    }

    /// Known, these (slot, value) pairs set, the others zero (fixtures).
    pub fn of(pairs: &[(usize, u64)]) -> Counters {
        let mut c = Counters::zero();
        for &(s, v) in pairs {
            c.set(s, v);
        }
        c
    }

    /// The slots, if the source has counters.
    pub fn known(&self) -> Option<&Slots> {
        self.0.as_deref()
    }

    pub fn is_known(&self) -> bool {
        self.0.is_some()
    }

    /// One slot's value (None: unknown, or no such slot).
    pub fn get(&self, slot: usize) -> Option<u64> {
        self.known().and_then(|s| s.get(slot).copied())
    }

    /// Known with at least one slot non-zero (it holds an array of its own).
    pub fn any(&self) -> bool {
        self.known().is_some_and(|s| s.iter().any(|&v| v != 0))
    }

    /// Set one slot (making the counters known); a slot past the array is
    /// ignored (a newer writer's).
    pub fn set(&mut self, slot: usize, v: u64) {
        if slot >= THREAD_COUNTERS {
            return;
        }
        let a = self.0.get_or_insert_with(|| ZERO.clone());
        if a[slot] != v {
            Arc::make_mut(a)[slot] = v;
        }
    }

    /// The interval from `before` (None: the thread's first, from zero) to
    /// `self`, per slot; a slot that went down is an anomaly (counted in
    /// `anomalies`) and adds nothing. Unknown if `self` is.
    pub fn since(&self, before: Option<&Counters>, anomalies: &mut u32) -> Counters {
        let Some(now) = self.known() else {
            return Counters::UNKNOWN;
        };
        let Some(b) = before.and_then(Counters::known) else {
            return self.clone();
        };
        if std::ptr::eq(now, b) {
            return Counters::zero();
        }
        let mut d = [0; THREAD_COUNTERS];
        for ((d, &n), &b) in d.iter_mut().zip(now).zip(b) {
            if n < b {
                *anomalies += 1;
            }
            *d = n.saturating_sub(b);
        }
        Counters::from_slots(&d)
    }

    /// Add `o` (an aggregate: saturating sums; known if either is).
    pub fn add(&mut self, o: &Counters) {
        let Some(os) = o.known() else { return };
        match &mut self.0 {
            None => self.0 = o.0.clone(),
            Some(a) => {
                if os.iter().all(|&v| v == 0) {
                    return;
                }
                let a = Arc::make_mut(a);
                for (x, &y) in a.iter_mut().zip(os) {
                    *x = x.saturating_add(y);
                }
            }
        }
    }
}

/// As a list of the slots' values (null: unknown).
impl serde::Serialize for Counters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.known().map(|a| &a[..]).serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Counters {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: Option<Vec<u64>> = serde::Deserialize::deserialize(d)?;
        Ok(v.map_or(Counters::UNKNOWN, |v| {
            let mut c = Counters::zero();
            for (i, x) in v.into_iter().enumerate() {
                c.set(i, x);
            }
            c
        }))
    }
}

#[cfg(test)]
#[path = "counters_tests.rs"]
mod tests;
