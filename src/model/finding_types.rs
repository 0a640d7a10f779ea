//! What a finding is made of (kind, severity, subject, evidence, the
//! interval the rules read, the scope), and its JSON form, which is a
//! contract: `schedtop why --json` and every later sink write these names.
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
    RtHog,
    Antagonist,
    WakeupPlacement,
    Blocking,
    CrossNodeChurn,
    StolenTime,
}

impl FindingKind {
    pub const ALL: [FindingKind; 9] = [
        FindingKind::CpuQuota,
        FindingKind::CpuSaturation,
        FindingKind::TooManyThreads,
        FindingKind::RtHog,
        FindingKind::Antagonist,
        FindingKind::WakeupPlacement,
        FindingKind::Blocking,
        FindingKind::CrossNodeChurn,
        FindingKind::StolenTime,
    ];

    /// The name scripts match on (a contract: never renamed).
    pub fn key(self) -> &'static str {
        match self {
            FindingKind::CpuQuota => "cpu_quota",
            FindingKind::CpuSaturation => "cpu_saturation",
            FindingKind::TooManyThreads => "too_many_threads",
            FindingKind::RtHog => "rt_hog",
            FindingKind::Antagonist => "antagonist",
            FindingKind::WakeupPlacement => "wakeup_placement",
            FindingKind::Blocking => "blocking",
            FindingKind::CrossNodeChurn => "cross_node_churn",
            FindingKind::StolenTime => "stolen_time",
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
        Value::Num(if x.is_finite() {
            (x * m).round() / m
        } else {
            0.0
        })
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
    /// explains (each rule says which: docs/findings.md)
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
            .map(|r| &**r)
            .filter(|r| r.oncpu_ns.is_some() && self.scope.thread(r))
    }

    /// `threads()` without the quiet rows (nothing counted: no time on or
    /// waiting for a CPU, no switch, migration, hist entry or why count).
    /// Every rule that needs something counted reads these: at 100,000
    /// idle threads the passes over every row were ~15 % of the live view.
    pub fn busy_threads(&self) -> impl Iterator<Item = &Row> {
        self.busy_rows()
            .filter(|r| r.oncpu_ns.is_some() && self.scope.thread(r))
    }

    /// Every thread row, in scope or not, that is not quiet. A row without
    /// its flag (a hand-made `Derived`) counts as busy.
    pub fn busy_rows(&self) -> impl Iterator<Item = &Row> {
        let quiet = &self.derived.quiet;
        self.derived
            .threads
            .iter()
            .enumerate()
            .filter(move |(i, _)| quiet.get(*i) != Some(&true))
            .map(|(_, r)| &**r)
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
