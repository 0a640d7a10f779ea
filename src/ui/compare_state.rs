//! The comparison mode's data (ui/compare_ui.rs has its keys and rows):
//! the matched entities of `schedtop diff` and what BEFORE's window adds to
//! the state (its CPU figures and findings; the state itself holds
//! AFTER's), the summary line, the tables' sort and selections.
use crate::model::compare::{highlights, Compared, Level, Window};
use crate::model::cpus::{self, CpuView};
use crate::model::findings::{findings, Finding, IntervalFacts, Scope};
use crate::model::interval::derive;

use super::state_types::View;

/// What the screen shows of one side.
#[derive(Clone, Debug)]
pub struct Side {
    /// the recording's path, or "-"
    pub label: String,
    /// watched on this machine now rather than read from a recording
    pub live: bool,
    pub seconds: f64,
    pub cpu: Option<CpuView>,
    /// its window's findings, ranked (model/findings.rs)
    pub findings: Vec<Finding>,
}

impl Side {
    fn of(w: &Window) -> Side {
        let secs = w.seconds();
        let cpu = cpus::derive(&w.host.topology, Some(&w.first), &w.end);
        let d = derive(Some(&w.first), &w.end, secs);
        let findings = findings(&IntervalFacts {
            topology: &w.host.topology,
            prev: &w.first,
            cur: &w.end,
            derived: &d,
            cpus: cpu.as_ref(),
            scope: &Scope::default(),
        });
        Side {
            label: w.label.clone(),
            live: w.live,
            seconds: secs,
            cpu,
            findings,
        }
    }
}

/// A highlight of the summary line, as text: who, which figure, the change.
#[derive(Clone, Debug, PartialEq)]
pub struct Noted {
    pub who: String,
    pub figure: &'static str,
    pub change: f64,
    pub relative: f64,
    /// processes of the same command with the same figure among the
    /// highlights, counted in this one (the largest change)
    pub count: usize,
}

/// The summary's entries: at most 3, processes of one command whose same
/// figure changed (identical replicas, a worker pool) counted in one, and
/// a cgroup's change counted in its ancestor's or descendant's.
fn collapse(list: &[crate::model::compare::Highlight<'_>]) -> Vec<Noted> {
    let mut out: Vec<(String, Noted)> = Vec::new();
    for h in list {
        let stem = match &h.entity.key {
            crate::model::compare::Key::Process { comm, .. } => comm.clone(),
            _ => name(h.entity),
        };
        let stem = format!("{}\0{stem}", h.entity.level.key());
        // a cgroup's change shows again in its ancestors: one entry
        let nested = |s: &str| {
            h.entity.level == Level::Cgroup
                && s.starts_with("cgroup\0")
                && (stem.starts_with(s) || s.starts_with(&stem))
        };
        if let Some((_, n)) = out
            .iter_mut()
            .find(|(s, n)| (*s == stem || nested(s)) && n.figure == h.figure.name)
        {
            n.count += 1;
            continue;
        }
        if out.len() == 3 {
            continue;
        }
        out.push((
            stem,
            Noted {
                who: name(h.entity),
                figure: h.figure.name,
                change: h.change,
                relative: h.entity.relative(h.figure),
                count: 1,
            },
        ));
    }
    out.into_iter().map(|(_, n)| n).collect()
}

#[derive(Clone, Debug)]
pub struct CompareUi {
    pub before: Side,
    pub after: Side,
    /// every matched entity (model/compare.rs's order)
    pub all: Vec<Compared>,
    /// the summary line: the largest improvements and regressions
    pub better: Vec<Noted>,
    pub worse: Vec<Noted>,
    /// the figure sorted by (None: the largest change of any figure)
    pub sort: Option<&'static str>,
    pub inverted: bool,
    /// selection and first visible row per table (processes, threads,
    /// cgroups)
    pub selected: [usize; 3],
    pub offset: [usize; 3],
}

pub fn slot(level: Level) -> usize {
    match level {
        Level::Process => 0,
        Level::Thread => 1,
        _ => 2,
    }
}

impl CompareUi {
    pub fn new(before: &Window, after: &Window, all: Vec<Compared>) -> CompareUi {
        let (b, w) = highlights(&all, 24);
        let (better, worse) = (collapse(&b), collapse(&w));
        CompareUi {
            before: Side::of(before),
            after: Side::of(after),
            all,
            better,
            worse,
            sort: None,
            inverted: false,
            selected: [0; 3],
            offset: [0; 3],
        }
    }
}

/// An entity's name as the tables show it (raw: escape before display).
pub fn name(c: &Compared) -> String {
    use crate::model::compare::Key;
    fn nth(comm: &str, ordinal: u32) -> String {
        if ordinal == 0 {
            comm.to_string()
        } else {
            format!("{comm} #{}", ordinal + 1)
        }
    }
    match &c.key {
        Key::Process { comm, ordinal } => nth(comm, *ordinal),
        Key::Pinned {
            comm,
            before_pid,
            after_pid,
        } => format!("{comm} ({before_pid}={after_pid})"),
        Key::Thread {
            process,
            comm,
            ordinal,
        } => {
            let p = match process.as_ref() {
                Key::Process { comm, ordinal } => nth(comm, *ordinal),
                Key::Pinned { comm, .. } => comm.clone(),
                _ => String::new(),
            };
            format!("{p}/{}", nth(comm, *ordinal))
        }
        Key::Cgroup { path } => path.clone(),
        Key::Cpu { cpu } => format!("cpu{cpu}"),
    }
}

/// The level a view's table compares (None: not a table).
pub fn level_of(view: View) -> Option<Level> {
    match view {
        View::Processes => Some(Level::Process),
        View::Threads => Some(Level::Thread),
        View::Cgroups => Some(Level::Cgroup),
        _ => None,
    }
}
