//! Findings: what the interval says is wrong, in plain words. Each finding
//! names a kind of trouble, the thing it happened to (a thread, process,
//! cgroup, CPU, node or the whole box), how much of that thing's time it
//! explains (`impact`, 0..=1, so findings rank by what they cost), the
//! figures behind it, and one sentence a person can paste into an incident
//! channel. They are a pure function of one interval (two Samples and what
//! is derived from them): the live view, `schedtop why`, JSON, bundles and
//! the exporter can all compute the same list from the same interval. The
//! rules and their thresholds: finding_thresholds.rs, finding_capacity.rs,
//! finding_causes.rs.
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::cpus::CpuView;
use super::interval::{Derived, Row};
use super::{Sample, Topology};

/// The kinds of trouble, in the order that breaks ties between equal
/// impacts: a cause before its consequence (the quota before the threads
/// that run into it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FindingKind {
    CpuQuota,
    CpuSaturation,
    TooManyThreads,
    Antagonist,
    Blocking,
    CrossNodeChurn,
}

impl FindingKind {
    pub const ALL: [FindingKind; 6] = [
        FindingKind::CpuQuota,
        FindingKind::CpuSaturation,
        FindingKind::TooManyThreads,
        FindingKind::Antagonist,
        FindingKind::Blocking,
        FindingKind::CrossNodeChurn,
    ];

    /// The name scripts match on (a contract: never renamed).
    pub fn key(self) -> &'static str {
        match self {
            FindingKind::CpuQuota => "cpu_quota",
            FindingKind::CpuSaturation => "cpu_saturation",
            FindingKind::TooManyThreads => "too_many_threads",
            FindingKind::Antagonist => "antagonist",
            FindingKind::Blocking => "blocking",
            FindingKind::CrossNodeChurn => "cross_node_churn",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// something costs time: `schedtop why` exits 1
    Warning,
    /// worth knowing, not trouble by itself
    Info,
}

impl Severity {
    pub fn key(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubjectType {
    Thread,
    Process,
    Cgroup,
    Cpu,
    Node,
    System,
}

impl SubjectType {
    pub fn key(self) -> &'static str {
        match self {
            SubjectType::Thread => "thread",
            SubjectType::Process => "process",
            SubjectType::Cgroup => "cgroup",
            SubjectType::Cpu => "cpu",
            SubjectType::Node => "node",
            SubjectType::System => "system",
        }
    }
}

/// A figure's value: a number, a count, or a short text (a name, a list).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Num(f64),
    Int(u64),
    Text(String),
    None,
}

impl Value {
    /// A number rounded to `digits` decimals (figures meant to be read).
    pub fn round(x: f64, digits: i32) -> Value {
        let m = 10f64.powi(digits);
        Value::Num(if x.is_finite() { (x * m).round() / m } else { 0.0 })
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Num(x) => write!(f, "{x}"),
            Value::Int(n) => write!(f, "{n}"),
            Value::Text(s) => f.write_str(s),
            Value::None => f.write_str("-"),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Num(x) if x.is_finite() => s.serialize_f64(*x),
            Value::Num(_) | Value::None => s.serialize_none(),
            Value::Int(n) => s.serialize_u64(*n),
            Value::Text(t) => s.serialize_str(t),
        }
    }
}

/// What a finding is about.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Subject {
    #[serde(rename = "type", serialize_with = "subject_type")]
    pub kind: SubjectType,
    /// tid, pid, cgroup path, CPU or node number (None: the system)
    pub id: Value,
    /// what a user recognises: comm, the cgroup's short name (hostile:
    /// escape before display)
    pub name: String,
}

fn subject_type<S: Serializer>(t: &SubjectType, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t.key())
}

/// The figures behind a finding, in the order they are best read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence(pub Vec<(&'static str, Value)>);

impl Evidence {
    pub fn push(&mut self, figure: &'static str, v: Value) {
        self.0.push((figure, v));
    }

    pub fn get(&self, figure: &str) -> Option<&Value> {
        self.0.iter().find(|(f, _)| *f == figure).map(|(_, v)| v)
    }
}

impl Serialize for Evidence {
    /// A JSON object with the figures in their order.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    #[serde(serialize_with = "kind_key")]
    pub kind: FindingKind,
    #[serde(serialize_with = "severity_key")]
    pub severity: Severity,
    pub subject: Subject,
    /// share (0..=1) of the subject's time or run-queue wait the finding
    /// explains (each rule says which: README "Findings")
    pub impact: f64,
    pub evidence: Evidence,
    /// one plain sentence (hostile names inside: escape before display)
    pub text: String,
}

fn kind_key<S: Serializer>(k: &FindingKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.key())
}

fn severity_key<S: Serializer>(k: &Severity, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.key())
}

/// Which threads the findings are about (`schedtop why -p`, `--cgroup`).
/// The box's own figures (run queues, pressure) are always the whole
/// box's; the waits a rule counts are the scope's threads'.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    /// only these processes (empty: all)
    pub pids: Vec<u32>,
    /// only threads in this cgroup or below it (None: all)
    pub cgroup: Option<String>,
}

/// `path` is `root` or below it.
pub fn under(path: &str, root: &str) -> bool {
    let root = root.trim_end_matches('/');
    root.is_empty()
        || path == root
        || (path.starts_with(root) && path.as_bytes().get(root.len()) == Some(&b'/'))
}

impl Scope {
    pub fn thread(&self, r: &Row) -> bool {
        (self.pids.is_empty() || self.pids.contains(&r.pid))
            && self
                .cgroup
                .as_deref()
                .is_none_or(|c| r.cgroup.as_deref().is_some_and(|p| under(p, c)))
    }
}

/// One interval, as the rules read it.
pub struct IntervalFacts<'a> {
    pub topology: &'a Topology,
    pub prev: &'a Sample,
    pub cur: &'a Sample,
    pub derived: &'a Derived,
    /// None where the interval has no length (then nothing is found)
    pub cpus: Option<&'a CpuView>,
    pub scope: &'a Scope,
}

impl IntervalFacts<'_> {
    pub fn dt(&self) -> f64 {
        self.derived.system.interval_s
    }

    /// The scope's thread rows that have figures for the interval.
    pub fn threads(&self) -> impl Iterator<Item = &Row> {
        self.derived
            .threads
            .iter()
            .filter(|r| r.oncpu_ns.is_some() && self.scope.thread(r))
    }

    /// A process's name from its row (its leader's), if listed.
    pub fn process_name(&self, pid: u32) -> Option<&str> {
        self.derived
            .processes
            .iter()
            .find(|p| p.pid == pid)
            .map(|p| &*p.comm)
    }
}

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
    out.extend(quota);
    out.extend(super::finding_capacity::too_many_threads(f));
    out.extend(super::finding_causes::antagonists(f));
    out.extend(super::finding_causes::blocking(f));
    out.extend(super::finding_causes::cross_node_churn(f));
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
