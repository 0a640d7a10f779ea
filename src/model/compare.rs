//! Two windows compared entity by entity: the data `schedtop diff` prints
//! and a comparison view can read. Each window is one interval (its first
//! Sample and `finding_window::window_end`), derived as any interval is, so
//! every figure is a rate over its own window: a 10 s and a 60 s window
//! compare honestly. Pids and tids differ between runs, so processes match
//! by command (the process's comm: Samples record no command line) and
//! ordinal among processes of that comm (by pid, i.e. roughly start
//! order), threads within a matched pair by name and ordinal (by tid),
//! cgroups by path, CPUs by number; `Pin`s pair two processes by hand.
//! What matches nothing is kept as only-before / only-after.
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use super::compare_figures::{Better, Figure, Figures, FIGURES};
use super::interval::{derive, Row};
use super::rates::{busy_pct, cpu_intervals, ThreadInterval};
use super::{CgroupRow, HostInfo, Log2Hist, Sample};

/// One side of a comparison: a window as its first Sample and the Sample
/// that spans the whole window from it.
#[derive(Clone, Debug)]
pub struct Window {
    pub host: HostInfo,
    pub first: Sample,
    pub end: Sample,
    /// taken from this machine now, not read from a recording
    pub live: bool,
    /// the recording's path, or "-" for live
    pub label: String,
}

impl Window {
    pub fn seconds(&self) -> f64 {
        self.end.mono_ns.saturating_sub(self.first.mono_ns) as f64 / 1e9
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Process,
    Thread,
    Cgroup,
    Cpu,
}

impl Level {
    pub fn key(self) -> &'static str {
        match self {
            Level::Process => "process",
            Level::Thread => "thread",
            Level::Cgroup => "cgroup",
            Level::Cpu => "cpu",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    Both,
    OnlyBefore,
    OnlyAfter,
}

impl Match {
    pub fn key(self) -> &'static str {
        match self {
            Match::Both => "both",
            Match::OnlyBefore => "only_before",
            Match::OnlyAfter => "only_after",
        }
    }
}

/// What an entity was matched by (names hostile: escape before display).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// the `ordinal`-th process (0-based, by pid) of that comm on its side
    Process {
        comm: String,
        ordinal: u32,
    },
    /// a pair given by hand (`--match pid:B=pid:A`); comm is BEFORE's
    Pinned {
        comm: String,
        before_pid: u32,
        after_pid: u32,
    },
    /// the `ordinal`-th thread (by tid) named `comm` of its process
    Thread {
        process: Box<Key>,
        comm: String,
        ordinal: u32,
    },
    Cgroup {
        path: String,
    },
    Cpu {
        cpu: u32,
    },
}

/// One entity on both sides (or one).
#[derive(Clone, Debug)]
pub struct Compared {
    pub level: Level,
    pub key: Key,
    pub matched: Match,
    pub before: Option<Figures>,
    pub after: Option<Figures>,
}

impl Compared {
    /// after − before, where both are known.
    pub fn change(&self, f: &Figure) -> Option<f64> {
        Some((f.get)(self.after.as_ref()?)? - (f.get)(self.before.as_ref()?)?)
    }

    /// How much `f` changed relative to its size, 0..=1 (an entity on one
    /// side only counts as changed from nothing).
    pub fn relative(&self, f: &Figure) -> f64 {
        let side = |s: &Option<Figures>| s.as_ref().and_then(|x| (f.get)(x));
        let (b, a) = (side(&self.before), side(&self.after));
        if b.is_none() && a.is_none() || self.matched == Match::Both && (b.is_none() || a.is_none())
        {
            return 0.0;
        }
        let (b, a) = (b.unwrap_or(0.0), a.unwrap_or(0.0));
        let d = (a - b).abs();
        if d < f.floor {
            return 0.0;
        }
        d / a.abs().max(b.abs()).max(f.floor)
    }

    /// The CPU it uses, in % of one CPU (at least 1): what makes its
    /// changes matter. A busy process's halved wait outranks an idle
    /// daemon's, though both are -50 %.
    pub fn activity(&self) -> f64 {
        [&self.before, &self.after]
            .iter()
            .filter_map(|s| s.as_ref()?.cpu_pct)
            .fold(1.0, f64::max)
    }

    /// The sort order: the largest relative change of any figure, times
    /// `activity`.
    pub fn weight(&self) -> f64 {
        FIGURES.iter().map(|f| self.relative(f)).fold(0.0, f64::max) * self.activity()
    }
}

/// A process pair given by hand: `pid:123=pid:456`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pin {
    pub before_pid: u32,
    pub after_pid: u32,
}

/// Parse `pid:B=pid:A` (the error is one line).
pub fn parse_pin(s: &str) -> Result<Pin, String> {
    let bad = || format!("bad --match {s:?}: expected pid:BEFORE=pid:AFTER, e.g. pid:123=pid:456");
    let (b, a) = s.split_once('=').ok_or_else(bad)?;
    let pid = |p: &str| -> Option<u32> { p.trim().strip_prefix("pid:")?.parse().ok() };
    Ok(Pin {
        before_pid: pid(b).ok_or_else(bad)?,
        after_pid: pid(a).ok_or_else(bad)?,
    })
}

/// Both windows' entities, matched; processes (each followed by its
/// threads), then cgroups, then CPUs. Errors: a pin naming a process its
/// window does not hold.
pub fn compare(before: &Window, after: &Window, pins: &[Pin]) -> Result<Vec<Compared>, String> {
    let b = Derived::of(before);
    let a = Derived::of(after);
    let mut out = Vec::new();
    for (key, pb, pa) in match_processes(&b.processes, &a.processes, pins)? {
        let tb = pb.map_or(&[][..], |p| b.threads_of(p.id));
        let ta = pa.map_or(&[][..], |p| a.threads_of(p.id));
        out.push(entity(
            Level::Process,
            key.clone(),
            pb.map(row_figures),
            pa.map(row_figures),
        ));
        for (tk, rb, ra) in by_name_and_ordinal(tb, ta, |r| (r.comm.to_string(), r.id)) {
            let key = Key::Thread {
                process: Box::new(key.clone()),
                comm: tk.0,
                ordinal: tk.1,
            };
            out.push(entity(
                Level::Thread,
                key,
                rb.map(row_figures),
                ra.map(row_figures),
            ));
        }
    }
    let paths = |c: &[CgroupRow]| -> BTreeMap<String, Figures> {
        c.iter()
            .map(|r| (r.path.clone(), cgroup_figures(r)))
            .collect()
    };
    for (path, fb, fa) in outer_join(paths(&b.cgroups), paths(&a.cgroups)) {
        out.push(entity(Level::Cgroup, Key::Cgroup { path }, fb, fa));
    }
    for (cpu, fb, fa) in outer_join(b.cpus, a.cpus) {
        out.push(entity(Level::Cpu, Key::Cpu { cpu }, fb, fa));
    }
    Ok(out)
}

fn entity(level: Level, key: Key, before: Option<Figures>, after: Option<Figures>) -> Compared {
    let matched = match (&before, &after) {
        (Some(_), None) => Match::OnlyBefore,
        (None, Some(_)) => Match::OnlyAfter,
        _ => Match::Both,
    };
    Compared {
        level,
        key,
        matched,
        before,
        after,
    }
}

/// A window's rows, as the tables have them.
struct Derived {
    processes: Vec<Row>,
    /// thread rows, grouped by pid (ascending tid within)
    threads: HashMap<u32, Vec<Row>>,
    cgroups: Vec<CgroupRow>,
    cpus: BTreeMap<u32, Figures>,
}

impl Derived {
    fn of(w: &Window) -> Derived {
        let d = derive(Some(&w.first), &w.end, w.seconds());
        let dt = d.system.interval_s;
        let mut threads: HashMap<u32, Vec<Row>> = HashMap::new();
        for t in d.threads {
            threads
                .entry(t.pid)
                .or_default()
                .push(Arc::unwrap_or_clone(t));
        }
        for list in threads.values_mut() {
            list.sort_by_key(|t| t.id);
        }
        let cpus = cpu_intervals(Some(&w.first), &w.end, dt)
            .into_iter()
            .map(|c| {
                let f = Figures {
                    id: c.cpu,
                    cpu_pct: Some(busy_pct(c.busy_ns, dt)),
                    switches_per_s: Some(ThreadInterval::per_s(c.switches, dt)),
                    rq_len_avg: c.rq.as_ref().map(|r| r.avg),
                    ..Figures::default()
                };
                (c.cpu, f)
            })
            .collect();
        Derived {
            processes: d.processes.into_iter().map(Arc::unwrap_or_clone).collect(),
            threads,
            cgroups: d.cgroups,
            cpus,
        }
    }

    fn threads_of(&self, pid: u32) -> &[Row] {
        self.threads.get(&pid).map_or(&[], Vec::as_slice)
    }
}

fn quantile(h: Option<&Log2Hist>, q: f64) -> Option<u64> {
    h?.quantile_us(q)
}

fn row_figures(r: &Row) -> Figures {
    Figures {
        id: r.id,
        comm: Some(r.comm.to_string()),
        threads: r.threads,
        voluntary_per_s: r.vcsw_s.get(),
        involuntary_per_s: r.nvcsw_s.get(),
        migrations_per_s: r.migr_s.get(),
        cross_node_migrations_per_s: r.counter_per_s(&crate::model::counters::CROSS_NODE),
        cpu_pct: r.cpu_pct.get(),
        switches_per_s: r.switches_s(),
        rq_len_avg: None,
        throttled_ms_per_s: None,
        psi_some_pct: None,
        wait_p50_us: quantile(r.wait_hist(), 0.5),
        wait_p99_us: quantile(r.wait_hist(), 0.99),
        slice_p99_us: quantile(r.slice_hist(), 0.99),
        wait_hist: r.wait_hist().cloned(),
        slice_hist: r.slice_hist().cloned(),
        wakeup_wait_hist: r.wakeup_wait_hist().cloned(),
        preempt_wait_hist: r.preempt_wait_hist().cloned(),
    }
}

fn cgroup_figures(r: &CgroupRow) -> Figures {
    Figures {
        id: 0,
        comm: None,
        threads: r.threads,
        voluntary_per_s: r.vcsw_s,
        involuntary_per_s: r.nvcsw_s,
        migrations_per_s: r.migr_s,
        cross_node_migrations_per_s: None,
        cpu_pct: r.cpu_pct,
        switches_per_s: r.vcsw_s.zip(r.nvcsw_s).map(|(v, n)| v + n),
        rq_len_avg: None,
        throttled_ms_per_s: r.throttled_ms_per_s,
        psi_some_pct: r.psi_some_pct,
        wait_p50_us: quantile(r.wait_hist.as_ref(), 0.5).or(r.p50_wait_us),
        wait_p99_us: quantile(r.wait_hist.as_ref(), 0.99).or(r.p99_wait_us),
        slice_p99_us: quantile(r.slice_hist.as_ref(), 0.99).or(r.p99_slice_us),
        wait_hist: r.wait_hist.clone(),
        slice_hist: r.slice_hist.clone(),
        wakeup_wait_hist: None,
        preempt_wait_hist: None,
    }
}

type Paired<'a> = (Key, Option<&'a Row>, Option<&'a Row>);
type Named<'a> = ((String, u32), Option<&'a Row>, Option<&'a Row>);

/// Processes paired: the pins first, then the rest by comm and ordinal.
fn match_processes<'a>(
    b: &'a [Row],
    a: &'a [Row],
    pins: &[Pin],
) -> Result<Vec<Paired<'a>>, String> {
    let mut out = Vec::new();
    let mut taken_b = Vec::new();
    let mut taken_a = Vec::new();
    for p in pins {
        let rb = b
            .iter()
            .find(|r| r.id == p.before_pid)
            .ok_or_else(|| format!("--match: no process {} in BEFORE's window", p.before_pid))?;
        let ra = a
            .iter()
            .find(|r| r.id == p.after_pid)
            .ok_or_else(|| format!("--match: no process {} in AFTER's window", p.after_pid))?;
        if taken_b.contains(&p.before_pid) || taken_a.contains(&p.after_pid) {
            return Err(format!(
                "--match: pid {} or {} is pinned twice",
                p.before_pid, p.after_pid
            ));
        }
        taken_b.push(p.before_pid);
        taken_a.push(p.after_pid);
        let key = Key::Pinned {
            comm: rb.comm.to_string(),
            before_pid: p.before_pid,
            after_pid: p.after_pid,
        };
        out.push((key, Some(rb), Some(ra)));
    }
    let free_b: Vec<&Row> = b.iter().filter(|r| !taken_b.contains(&r.id)).collect();
    let free_a: Vec<&Row> = a.iter().filter(|r| !taken_a.contains(&r.id)).collect();
    let by_comm = |rows: Vec<&'a Row>| -> BTreeMap<String, Vec<&'a Row>> {
        let mut m: BTreeMap<String, Vec<&'a Row>> = BTreeMap::new();
        for r in rows {
            m.entry(r.process_comm.to_string()).or_default().push(r);
        }
        for v in m.values_mut() {
            v.sort_by_key(|r| r.id);
        }
        m
    };
    for (comm, vb, va) in outer_join(by_comm(free_b), by_comm(free_a)) {
        let (vb, va) = (vb.unwrap_or_default(), va.unwrap_or_default());
        for i in 0..vb.len().max(va.len()) {
            let key = Key::Process {
                comm: comm.clone(),
                ordinal: i as u32,
            };
            out.push((key, vb.get(i).copied(), va.get(i).copied()));
        }
    }
    Ok(out)
}

/// Rows paired by a name and their ordinal among rows of that name
/// (rows given in the order that sets the ordinal).
fn by_name_and_ordinal<'a>(
    b: &'a [Row],
    a: &'a [Row],
    name: fn(&Row) -> (String, u32),
) -> Vec<Named<'a>> {
    let group = |rows: &'a [Row]| -> BTreeMap<String, Vec<&'a Row>> {
        let mut m: BTreeMap<String, Vec<&'a Row>> = BTreeMap::new();
        let mut sorted: Vec<&Row> = rows.iter().collect();
        sorted.sort_by_key(|r| name(r).1);
        for r in sorted {
            m.entry(name(r).0).or_default().push(r);
        }
        m
    };
    let mut out = Vec::new();
    for (n, vb, va) in outer_join(group(b), group(a)) {
        let (vb, va) = (vb.unwrap_or_default(), va.unwrap_or_default());
        for i in 0..vb.len().max(va.len()) {
            out.push((
                (n.clone(), i as u32),
                vb.get(i).copied(),
                va.get(i).copied(),
            ));
        }
    }
    out
}

/// Every key of either map with its value on each side, in key order.
fn outer_join<K: Ord, V>(
    b: BTreeMap<K, V>,
    mut a: BTreeMap<K, V>,
) -> Vec<(K, Option<V>, Option<V>)> {
    let mut out: Vec<(K, Option<V>, Option<V>)> = Vec::new();
    for (k, vb) in b {
        let va = a.remove(&k);
        out.push((k, Some(vb), va));
    }
    out.extend(a.into_iter().map(|(k, va)| (k, None, Some(va))));
    // keys of AFTER only were appended: back into one order
    out.sort_by(|x, y| x.0.cmp(&y.0));
    out
}

/// A figure that changed most, for the summary line.
#[derive(Clone, Debug)]
pub struct Highlight<'a> {
    pub entity: &'a Compared,
    pub figure: &'static Figure,
    pub change: f64,
}

/// The largest changes of figures where lower is better, among processes
/// and cgroups on both sides: (improvements, regressions), `n` each,
/// largest relative change times `activity` first; changes under 10 % or
/// under a figure's noise floor are left out.
pub fn highlights(all: &[Compared], n: usize) -> (Vec<Highlight<'_>>, Vec<Highlight<'_>>) {
    let mut found: Vec<(f64, Highlight<'_>)> = Vec::new();
    for c in all
        .iter()
        .filter(|c| c.matched == Match::Both && matches!(c.level, Level::Process | Level::Cgroup))
    {
        for f in FIGURES.iter().filter(|f| f.better == Better::Lower) {
            let rel = c.relative(f);
            let Some(change) = c.change(f) else { continue };
            if rel >= 0.1 {
                found.push((
                    rel * c.activity(),
                    Highlight {
                        entity: c,
                        figure: f,
                        change,
                    },
                ));
            }
        }
    }
    found.sort_by(|x, y| y.0.total_cmp(&x.0));
    let pick = |better: bool| -> Vec<Highlight<'_>> {
        found
            .iter()
            .filter(|(_, h)| (h.change < 0.0) == better)
            .take(n)
            .map(|(_, h)| h.clone())
            .collect()
    };
    (pick(true), pick(false))
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
