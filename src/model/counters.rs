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
    /// the probes that count it: when they are not attached its slots
    /// read as unknown, never as 0
    pub measured_by: Probes,
}

/// The probe sets a counter may depend on (the collector maps each to the
/// feature that attaches it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probes {
    /// sched_migrate_task
    Migrations,
    /// the interrupt and softirq entry/exit probes (off by default)
    IrqTime,
}

impl CounterDesc {
    /// The slots it spans.
    pub fn slots(&self) -> std::ops::Range<usize> {
        let n = self.family.map_or(1, |f| f.values.len());
        self.first_slot..self.first_slot + n
    }

    /// Its interval total from a set of counters (None: unknown, or a
    /// slot the source did not measure).
    pub fn total(&self, c: &Counters) -> Option<u64> {
        let s = self.measured_slots(c)?;
        Some(s.iter().fold(0u64, |a, &v| a.saturating_add(v)))
    }

    /// A family's (label value, count) pairs (a scalar: its key and value).
    pub fn by_label(&self, c: &Counters) -> Option<Vec<(&'static str, u64)>> {
        let s = self.measured_slots(c)?;
        Some(match self.family {
            Some(f) => f.values.iter().copied().zip(s.iter().copied()).collect(),
            None => vec![(self.key, s[0])],
        })
    }

    /// Whether `c` holds this counter (known, every slot measured).
    pub fn measured(&self, c: &Counters) -> bool {
        self.measured_slots(c).is_some()
    }

    fn measured_slots<'c>(&self, c: &'c Counters) -> Option<&'c [u64]> {
        let r = self.slots();
        (c.unmeasured() & mask_of(r.clone()) == 0).then_some(())?;
        Some(&c.known()?[r])
    }
}

/// The bits of `slots` in an unmeasured mask.
pub fn mask_of(slots: std::ops::Range<usize>) -> Mask {
    slots
        .filter(|&i| i < THREAD_COUNTERS)
        .fold(0, |m, i| m | 1 << i)
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
    measured_by: Probes::Migrations,
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
    measured_by: Probes::IrqTime,
};

/// The descriptor with this JSON key.
pub fn by_key(key: &str) -> Option<&'static CounterDesc> {
    COUNTERS.iter().find(|d| d.key == key)
}

type Slots = [u64; THREAD_COUNTERS];

/// One bit per slot: set where the source did not measure the slot (the
/// interrupt-time probes off: stolen time is unknown, not 0).
pub type Mask = u16;
const _: () = assert!(THREAD_COUNTERS <= Mask::BITS as usize);

#[derive(Clone, PartialEq, Eq)]
struct Known {
    slots: Slots,
    unmeasured: Mask,
}

/// A thread's counters (cumulative in a Sample, or one interval's deltas),
/// 8 bytes: None where the source has none (procfs, older recordings); a
/// shared all-zero array for the many threads that counted nothing; an
/// array of their own for the others. Slots the source did not measure
/// (`unmeasured`) read as unknown through `get` and the descriptors.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Counters(Option<Arc<Known>>);

static ZERO: LazyLock<Arc<Known>> = LazyLock::new(|| {
    Arc::new(Known {
        slots: [0; THREAD_COUNTERS],
        unmeasured: 0,
    })
});

/// The shared all-zero counters with `unmeasured` slots: one per mask
/// (a source has one or two), so idle threads allocate nothing.
fn shared_zero(unmeasured: Mask) -> Arc<Known> {
    if unmeasured == 0 {
        return ZERO.clone();
    }
    static ZEROS: std::sync::Mutex<Vec<Arc<Known>>> = std::sync::Mutex::new(Vec::new());
    let mut z = ZEROS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(a) = z.iter().find(|a| a.unmeasured == unmeasured) {
        return a.clone();
    }
    let a = Arc::new(Known {
        slots: [0; THREAD_COUNTERS],
        unmeasured,
    });
    z.push(a.clone());
    a
}

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => f.write_str("Counters(unknown)"),
            Some(k) => {
                let set: Vec<(usize, u64)> = k
                    .slots
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|&(_, v)| v != 0)
                    .collect();
                write!(f, "Counters{set:?}")?;
                if k.unmeasured != 0 {
                    write!(f, "(unmeasured {:#x})", k.unmeasured)?;
                }
                Ok(())
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
        Counters::with_unmeasured(s, 0)
    }

    /// Known, these values, the `unmeasured` slots unknown (and held as 0).
    pub fn with_unmeasured(s: &Slots, unmeasured: Mask) -> Counters {
        let mut slots = *s;
        for (i, v) in slots.iter_mut().enumerate() {
            if unmeasured & 1 << i != 0 {
                *v = 0;
            }
        }
        if slots.iter().all(|&v| v == 0) {
            Counters(Some(shared_zero(unmeasured)))
        } else {
            Counters(Some(Arc::new(Known { slots, unmeasured })))
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

    /// The slots, if the source has counters (an unmeasured slot holds 0:
    /// read figures through `get` or a descriptor).
    pub fn known(&self) -> Option<&Slots> {
        self.0.as_deref().map(|k| &k.slots)
    }

    pub fn is_known(&self) -> bool {
        self.0.is_some()
    }

    /// The slots the source did not measure (0 when unknown altogether).
    pub fn unmeasured(&self) -> Mask {
        self.0.as_deref().map_or(0, |k| k.unmeasured)
    }

    /// Mark `mask`'s slots unmeasured (making the counters known).
    pub fn set_unmeasured(&mut self, mask: Mask) {
        let s = self.known().copied().unwrap_or([0; THREAD_COUNTERS]);
        let now = self.unmeasured();
        if !self.is_known() || now != mask {
            *self = Counters::with_unmeasured(&s, mask);
        }
    }

    /// One slot's value (None: unknown, unmeasured, or no such slot).
    pub fn get(&self, slot: usize) -> Option<u64> {
        let k = self.0.as_deref()?;
        if slot < THREAD_COUNTERS && k.unmeasured & 1 << slot != 0 {
            return None;
        }
        k.slots.get(slot).copied()
    }

    /// Known with at least one slot non-zero (it holds an array of its own).
    pub fn any(&self) -> bool {
        self.known().is_some_and(|s| s.iter().any(|&v| v != 0))
    }

    /// Set one slot (making the counters known and the slot measured); a
    /// slot past the array is ignored (a newer writer's).
    pub fn set(&mut self, slot: usize, v: u64) {
        if slot >= THREAD_COUNTERS {
            return;
        }
        let a = self.0.get_or_insert_with(|| ZERO.clone());
        let bit: Mask = 1 << slot;
        if a.slots[slot] != v || a.unmeasured & bit != 0 {
            let k = Arc::make_mut(a);
            k.slots[slot] = v;
            k.unmeasured &= !bit;
        }
    }

    /// The interval from `before` (None: the thread's first, from zero) to
    /// `self`, per slot; a slot that went down is an anomaly (counted in
    /// `anomalies`) and adds nothing. Unknown if `self` is; a slot
    /// unmeasured at either end is unmeasured.
    pub fn since(&self, before: Option<&Counters>, anomalies: &mut u32) -> Counters {
        let Some(now) = self.0.as_deref() else {
            return Counters::UNKNOWN;
        };
        let Some(b) = before.and_then(|b| b.0.as_deref()) else {
            return self.clone();
        };
        let unmeasured = now.unmeasured | b.unmeasured;
        if std::ptr::eq(now, b) {
            return Counters(Some(shared_zero(unmeasured)));
        }
        let mut d = [0; THREAD_COUNTERS];
        for (i, ((d, &n), &b)) in d.iter_mut().zip(&now.slots).zip(&b.slots).enumerate() {
            if n < b && unmeasured & 1 << i == 0 {
                *anomalies += 1;
            }
            *d = n.saturating_sub(b);
        }
        Counters::with_unmeasured(&d, unmeasured)
    }

    /// Add `o` (an aggregate: saturating sums; known if either is; a slot
    /// unmeasured in either is unmeasured).
    pub fn add(&mut self, o: &Counters) {
        let Some(ok) = o.0.as_deref() else { return };
        match &mut self.0 {
            None => self.0 = o.0.clone(),
            Some(a) => {
                let unmeasured = a.unmeasured | ok.unmeasured;
                if ok.slots.iter().all(|&v| v == 0) && unmeasured == a.unmeasured {
                    return;
                }
                let k = Arc::make_mut(a);
                for (x, &y) in k.slots.iter_mut().zip(&ok.slots) {
                    *x = x.saturating_add(y);
                }
                k.unmeasured = unmeasured;
            }
        }
    }
}

/// As a list of the slots' values (null: unknown; a null slot: unmeasured).
impl serde::Serialize for Counters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.known()
            .map(|a| (0..a.len()).map(|i| self.get(i)).collect::<Vec<_>>())
            .serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Counters {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: Option<Vec<Option<u64>>> = serde::Deserialize::deserialize(d)?;
        Ok(v.map_or(Counters::UNKNOWN, |v| {
            let mut c = Counters::zero();
            let mut unmeasured: Mask = 0;
            for (i, x) in v.into_iter().enumerate() {
                match x {
                    Some(x) => c.set(i, x),
                    None if i < THREAD_COUNTERS => unmeasured |= 1 << i,
                    None => {}
                }
            }
            c.set_unmeasured(unmeasured);
            c
        }))
    }
}

#[cfg(test)]
#[path = "counters_tests.rs"]
mod tests;
