//! What the live source can measure on this kernel, feature by feature, and
//! why a feature is off: `schedtop doctor` lists it, the header names what is
//! off, JSON carries it.
use serde::Serialize;

/// One thing schedtop measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// voluntary / involuntary switches per thread
    SwitchCounts,
    /// slice and run-queue wait histograms
    Histograms,
    /// per-thread and CPU→CPU migrations, cross-node moves
    Migrations,
    /// timer-sampled run-queue length per CPU
    RunQueue,
    /// final counts of threads that exited between two drains
    Exits,
    /// the raw-event flight recorder (`trace`, `--flight`)
    Tracer,
    /// time interrupts take from threads and CPUs (collect/irq_time.rs)
    IrqTime,
    /// who woke each thread, interrupt context apart (bpf/why.bpf.h)
    Wakers,
}

impl Feature {
    pub const ALL: [Feature; 8] = [
        Feature::SwitchCounts,
        Feature::Histograms,
        Feature::Migrations,
        Feature::RunQueue,
        Feature::Exits,
        Feature::Tracer,
        Feature::IrqTime,
        Feature::Wakers,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Feature::SwitchCounts => "switch counts",
            Feature::Histograms => "histograms",
            Feature::Migrations => "migrations",
            Feature::RunQueue => "run-queue sampler",
            Feature::Exits => "exits",
            Feature::Tracer => "tracer",
            Feature::IrqTime => "interrupt time",
            Feature::Wakers => "wakers",
        }
    }
}

/// A feature on or off, and how (on) or why not (off), in a few words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FeatureStatus {
    pub feature: Feature,
    pub on: bool,
    pub detail: String,
}

/// Every feature's status, in [`Feature::ALL`] order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Features(pub Vec<FeatureStatus>);

impl Features {
    pub fn set(&mut self, feature: Feature, on: bool, detail: impl Into<String>) {
        let detail = detail.into();
        match self.0.iter_mut().find(|f| f.feature == feature) {
            Some(f) => {
                f.on = on;
                f.detail = detail;
            }
            None => {
                self.0.push(FeatureStatus {
                    feature,
                    on,
                    detail,
                });
                self.0
                    .sort_by_key(|f| Feature::ALL.iter().position(|&a| a == f.feature));
            }
        }
    }

    pub fn get(&self, feature: Feature) -> Option<&FeatureStatus> {
        self.0.iter().find(|f| f.feature == feature)
    }

    pub fn is_on(&self, feature: Feature) -> bool {
        self.get(feature).is_some_and(|f| f.on)
    }

    /// The counter slots this run does not measure: those of every counter
    /// whose probes are not attached (unknown then, not 0).
    pub fn unmeasured_counters(&self) -> crate::model::counters::Mask {
        use crate::model::counters::{mask_of, Probes, COUNTERS};
        let attached = |p: Probes| {
            self.is_on(match p {
                Probes::Migrations => Feature::Migrations,
                Probes::IrqTime => Feature::IrqTime,
            })
        };
        COUNTERS
            .iter()
            .filter(|d| !attached(d.measured_by))
            .fold(0, |m, d| m | mask_of(d.slots()))
    }

    /// "off: run-queue sampler (why), tracer (why)", or None when all is on.
    pub fn off_summary(&self) -> Option<String> {
        let off: Vec<String> = self
            .0
            .iter()
            .filter(|f| !f.on && !off_by_choice(f.feature))
            .map(|f| format!("{} ({})", f.feature.name(), f.detail))
            .collect();
        (!off.is_empty()).then(|| format!("off: {}", off.join("; ")))
    }
}

/// Whether the probes count who woke each thread: only with
/// SCHEDTOP_WAKERS=1. One more program per wakeup: bench/probe_overhead.sh
/// measured the default at 1.206 with them against 1.165 without (1.155
/// before they existed), over the +0.01 a new probe may add. Counting the
/// waker in the wakee's own record instead of the pair map cut the program
/// from ~280 to ~180 ns a wakeup (kernel.bpf_stats_enabled, perf bench
/// sched pipe on one CPU); +0.01 of that ~8 us ping-pong round trip, which
/// has two wakeups, is ~40 ns a wakeup: off until cheaper.
pub(super) fn wakers_on() -> bool {
    std::env::var_os("SCHEDTOP_WAKERS").is_some_and(|v| v == "1")
}

/// Probes that are off unless asked for (their cost): not a degraded
/// source when nobody asked (`schedtop doctor` still lists them off).
fn off_by_choice(f: Feature) -> bool {
    match f {
        Feature::IrqTime => !super::irq_time::wanted(),
        Feature::Wakers => !wakers_on(),
        _ => false,
    }
}

/// Where this CPU's preempt count lies, in bytes from this CPU's run queue
/// (the per-CPU `runqueues`), which the probe can reach from any task; None
/// where neither the BTF nor kallsyms says, with where it was found. The
/// count tells a wakeup from hardirq or softirq context; the probe cannot
/// name the per-CPU variable itself on every kernel (kallsyms lists no
/// per-CPU data without CONFIG_KALLSYMS_ALL, as on this project's test
/// hosts). Both are in the BTF's `.data..percpu` section, whose
/// offsets are the same on every CPU: `__preempt_count` (x86 before 6.2 and
/// from 6.15) or `pcpu_hot.preempt_count` (6.2 .. 6.14). Debian's 5.10
/// BTF has no variables at all (no DATASEC): there `/proc/kallsyms` says,
/// as that kernel is built with CONFIG_KALLSYMS_ALL (measured on
/// 5.10.0-43-cloud-amd64: `__preempt_count` at 0x1fb80, `runqueues` at
/// 0x33440, both per-CPU offsets).
/// Looked up once (the loader and the doctor line both ask).
pub fn preempt_count_from_rq() -> Option<(i64, &'static str)> {
    static FOUND: std::sync::OnceLock<Option<(i64, &'static str)>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        if let Some(d) = preempt_count_from_btf() {
            return Some((d, "BTF"));
        }
        let f = std::fs::File::open("/proc/kallsyms").ok()?;
        preempt_count_from_kallsyms(std::io::BufReader::new(f)).map(|d| (d, "kallsyms"))
    })
}

/// The wakers' feature line: how wakeups from interrupt context are told
/// from the thread they interrupted, or that some cannot be.
pub fn wakers_detail(found: Option<(i64, &str)>) -> String {
    match found {
        Some((_, how)) => format!(
            "per (wakee, waker) pair; interrupt context from the preempt count (found by {how})"
        ),
        None => "per (wakee, waker) pair; no preempt count in BTF or kallsyms: a wakeup \
                 from a hardirq taken in user mode cannot be told apart and is charged to \
                 the interrupted thread (hardirqs taken in kernel mode and softirqs are told)"
            .into(),
    }
}

/// The same distance from kallsyms lines (`ADDR TYPE NAME [module]`):
/// `__preempt_count` − `runqueues`. Both are in the same per-CPU section,
/// so their distance is the one on every CPU, whether kallsyms shows
/// per-CPU offsets (x86-64 up to 6.14) or addresses. None when either is
/// missing or hidden (kptr_restrict shows zeros).
pub fn preempt_count_from_kallsyms(text: impl std::io::BufRead) -> Option<i64> {
    let (mut rq, mut count) = (None, None);
    for line in text.lines() {
        let line = line.ok()?;
        let mut f = line.split_ascii_whitespace();
        let (Some(addr), Some(_), Some(name), None) = (f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let slot = match name {
            "runqueues" => &mut rq,
            "__preempt_count" => &mut count,
            _ => continue,
        };
        *slot = u64::from_str_radix(addr, 16).ok().filter(|&a| a != 0);
        if rq.is_some() && count.is_some() {
            break;
        }
    }
    // wrapping: addresses in the top half of the space
    let d = count?.wrapping_sub(rq?) as i64;
    (d != 0).then_some(d)
}

fn preempt_count_from_btf() -> Option<i64> {
    use libbpf_rs::btf::types::{Composite, DataSec, MemberAttr};
    use libbpf_rs::btf::{Btf, BtfType};
    let btf = Btf::from_vmlinux().ok()?;
    let sec = btf.type_by_name::<DataSec<'_>>(".data..percpu")?;
    let (mut rq, mut count) = (None, None);
    for v in sec.iter() {
        let Some(var) = btf.type_by_id::<BtfType<'_>>(v.ty) else {
            continue;
        };
        let at = i64::from(v.offset);
        match var.name().and_then(|n| n.to_str()) {
            Some("runqueues") => rq = Some(at),
            Some("__preempt_count") => count = Some(at),
            Some("pcpu_hot") => {
                // preempt_count sits in an anonymous struct in a union
                let mut ty = var.next_type().map(|t| t.skip_mods_and_typedefs());
                let mut field = None;
                for _ in 0..3 {
                    let Some(c) = ty.and_then(|t| Composite::try_from(t).ok()) else {
                        break;
                    };
                    let bits = |m: &libbpf_rs::btf::types::CompositeMember<'_>| match m.attr {
                        MemberAttr::Normal { offset } => i64::from(offset),
                        MemberAttr::BitField { offset, .. } => i64::from(offset),
                    };
                    if let Some(m) = c
                        .iter()
                        .find(|m| m.name.is_some_and(|n| n == "preempt_count"))
                    {
                        field = Some(bits(&m) / 8);
                        break;
                    }
                    // into the first anonymous member that is a struct
                    // or union
                    ty = c
                        .iter()
                        .filter(|m| m.name.is_none_or(|n| n.is_empty()))
                        .find_map(|m| {
                            let t = btf
                                .type_by_id::<BtfType<'_>>(m.ty)?
                                .skip_mods_and_typedefs();
                            Composite::try_from(t).ok()?;
                            Some(t)
                        });
                }
                count = field.map(|f| at + f);
            }
            _ => {}
        }
    }
    Some(count? - rq?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preempt_count_distance_from_kallsyms_lines() {
        // lines as Debian's 5.10 guest lists them (per-CPU offsets, type A)
        let text = "0000000000000000 A __per_cpu_start\n\
                    000000000001fb80 A __preempt_count\n\
                    0000000000033440 A runqueues\n\
                    ffffffffc0a01000 t runqueues\t[some_module]\n";
        assert_eq!(
            preempt_count_from_kallsyms(text.as_bytes()),
            Some(0x1fb80 - 0x33440)
        );
        // addresses in the top half, count after the run queue
        let text = "ffffffff83033440 D runqueues\nffffffff8303f000 D __preempt_count\n";
        assert_eq!(
            preempt_count_from_kallsyms(text.as_bytes()),
            Some(0x3f000 - 0x33440)
        );
        // hidden by kptr_restrict, or missing
        let hidden = "0000000000000000 A __preempt_count\n0000000000000000 A runqueues\n";
        assert_eq!(preempt_count_from_kallsyms(hidden.as_bytes()), None);
        assert_eq!(
            preempt_count_from_kallsyms("zz A runqueues\n".as_bytes()),
            None
        );
        assert_eq!(preempt_count_from_kallsyms(&b""[..]), None);
    }

    #[test]
    fn summary_names_only_what_is_off_in_a_fixed_order() {
        let mut f = Features::default();
        f.set(Feature::Tracer, false, "ring buffer maps need 5.8");
        f.set(Feature::SwitchCounts, true, "task storage");
        f.set(Feature::RunQueue, false, "no cfs_rq->rq");
        assert_eq!(
            f.0.iter().map(|s| s.feature).collect::<Vec<_>>(),
            [Feature::SwitchCounts, Feature::RunQueue, Feature::Tracer]
        );
        assert_eq!(
            f.off_summary().unwrap(),
            "off: run-queue sampler (no cfs_rq->rq); tracer (ring buffer maps need 5.8)"
        );
        f.set(Feature::RunQueue, true, "99 Hz");
        f.set(Feature::Tracer, true, "loads");
        assert_eq!(f.off_summary(), None);
        assert!(f.is_on(Feature::RunQueue));
        assert!(!f.is_on(Feature::Exits));
    }

    #[test]
    fn counters_of_probes_not_attached_are_unmeasured() {
        use crate::model::counters::{mask_of, CROSS_NODE, STOLEN};
        let mut f = Features::default();
        f.set(Feature::Migrations, true, "tracepoint");
        f.set(Feature::IrqTime, false, "off by default");
        assert_eq!(f.unmeasured_counters(), mask_of(STOLEN.slots()));
        f.set(Feature::IrqTime, true, "on");
        assert_eq!(f.unmeasured_counters(), 0);
        f.set(Feature::Migrations, false, "no tracepoint");
        assert_eq!(f.unmeasured_counters(), mask_of(CROSS_NODE.slots()));
    }
}
