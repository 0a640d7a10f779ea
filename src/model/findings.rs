//! Findings: what the interval says is wrong, in plain words. Each finding
//! names a kind of trouble, the thing it happened to (a thread, process,
//! cgroup, CPU, node or the whole box), how much of that thing's time it
//! explains (`impact`, 0..=1, so findings rank by what they cost), the
//! figures behind it, and one sentence a person can paste into an incident
//! channel. They are a pure function of one interval (two Samples and what
//! is derived from them): the live view, `schedtop why`, JSON, bundles and
//! the exporter can all compute the same list from the same interval. The
//! rules and their thresholds: finding_thresholds.rs, finding_capacity.rs,
//! finding_causes.rs, finding_placement.rs, finding_stolen.rs.
pub use super::finding_types::*;
use super::{Sample, Topology};

/// Every finding of the interval, ranked: warnings first, then by impact
/// (to the percent), ties by kind (a cause before its consequence), then
/// by subject id so the order is the same on every run.
pub fn findings(f: &IntervalFacts) -> Vec<Finding> {
    if f.dt() <= 0.0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let quota = super::finding_capacity::cpu_quota(f);
    out.extend(super::finding_capacity::cpu_saturation(f, &quota));
    let rt_cpus = super::finding_placement::rt_hog_cpus(f);
    out.extend(super::finding_causes::antagonists(f, &quota, &rt_cpus));
    out.extend(super::finding_placement::rt_hog(f, &quota));
    out.extend(super::finding_placement::wakeup_placement(f, &quota));
    out.extend(quota);
    out.extend(super::finding_capacity::too_many_threads(f));
    out.extend(super::finding_causes::blocking(f));
    out.extend(super::finding_causes::cross_node_churn(f));
    out.extend(super::finding_stolen::stolen_time(f));
    rank(&mut out);
    out
}

/// The findings of the interval from `prev` to `cur`, deriving its rows
/// and CPU figures here (for callers that hold only the Samples).
pub fn of_samples(topology: &Topology, prev: &Sample, cur: &Sample, scope: &Scope) -> Vec<Finding> {
    let derived = super::interval::derive(Some(prev), cur, 0.0);
    let cpus = super::cpus::derive(topology, Some(prev), cur);
    findings(&IntervalFacts {
        topology,
        prev,
        cur,
        derived: &derived,
        cpus: cpus.as_ref(),
        scope,
    })
}

pub fn rank(v: &mut [Finding]) {
    let pct = |x: f64| (x * 100.0).round() as i64;
    v.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then(pct(b.impact).cmp(&pct(a.impact)))
            .then(a.kind.cmp(&b.kind))
            .then(a.subject.id.to_string().cmp(&b.subject.id.to_string()))
    });
}

/// Any finding that is a warning.
pub fn any_warning(v: &[Finding]) -> bool {
    v.iter().any(|f| f.severity == Severity::Warning)
}

#[cfg(test)]
#[path = "finding_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "finding_placement_tests.rs"]
mod placement_tests;

#[cfg(test)]
#[path = "finding_stolen_tests.rs"]
mod stolen_tests;
