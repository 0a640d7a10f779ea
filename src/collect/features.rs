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
}

impl Feature {
    pub const ALL: [Feature; 7] = [
        Feature::SwitchCounts,
        Feature::Histograms,
        Feature::Migrations,
        Feature::RunQueue,
        Feature::Exits,
        Feature::Tracer,
        Feature::IrqTime,
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

    /// "off: run-queue sampler (why), tracer (why)", or None when all is on.
    pub fn off_summary(&self) -> Option<String> {
        let off: Vec<String> = self
            .0
            .iter()
            .filter(|f| !f.on)
            .map(|f| format!("{} ({})", f.feature.name(), f.detail))
            .collect();
        (!off.is_empty()).then(|| format!("off: {}", off.join("; ")))
    }
}

/// Where this CPU's preempt count lies, in bytes from this CPU's run queue
/// (the per-CPU `runqueues`), which the probe can reach from any task; None
/// where the kernel's BTF does not say. The count tells a wakeup from
/// hardirq or softirq context; the probe cannot name the per-CPU variable
/// itself, as kallsyms lists no per-CPU data without CONFIG_KALLSYMS_ALL
/// (Debian's kernels). Both are in the BTF's `.data..percpu` section, whose
/// offsets are the same on every CPU: `__preempt_count` (x86 before 6.2 and
/// from 6.15) or `pcpu_hot.preempt_count` (6.2 .. 6.14).
pub fn preempt_count_from_rq() -> Option<i64> {
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
}
