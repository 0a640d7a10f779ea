//! Who took the CPU and who woke a thread: a Sample's pair lists ((preemptor
//! or waker tid, count)) resolved to threads and processes (comm and pid
//! from the same Sample), the top few per thread and, summed by the
//! preempting or waking process, per process. One resolver serves every
//! kind of pair list; the wakers' pseudo-wakers (interrupts, idle) are
//! counted apart.
use std::collections::BTreeMap;
use std::sync::Arc;

use super::fasthash::{IdFilter, IdMap, IdSet};
use super::row::{Row, RowKey};
use super::why::{PairKind, Preemptor, PseudoWaker, WhyCounts, TOP_PREEMPTORS};
use super::Sample;

/// Largest first (ties by tid, then pid), the first `TOP_PREEMPTORS`; the
/// rest is added to `rest`.
fn top(mut list: Vec<Preemptor>, rest: &mut u64) -> Vec<Preemptor> {
    list.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(a.tid.cmp(&b.tid))
            .then(a.pid.cmp(&b.pid))
    });
    for p in list.iter().skip(TOP_PREEMPTORS) {
        *rest = rest.saturating_add(p.count);
    }
    list.truncate(TOP_PREEMPTORS);
    list
}

/// The resolved list of `kind` of a row and its rest.
fn list_of(w: &mut WhyCounts, kind: PairKind) -> (&mut Vec<Preemptor>, &mut u64) {
    match kind {
        PairKind::Preempt => (&mut w.preempted_by, &mut w.preempted_by_rest),
        PairKind::Wake => (&mut w.woken_by, &mut w.woken_by_rest),
    }
}

/// Fill the pair lists (`preempted_by`, `woken_by` and `woken_by_irq`) of
/// the rows that have "why" figures: `threads` are the rows of
/// `cur.threads`, one each, in its order.
pub fn preemptors(cur: &Sample, threads: &mut [Arc<Row>], processes: &mut [Arc<Row>]) {
    for kind in PairKind::ALL {
        resolve(cur, threads, processes, kind);
    }
}

/// One kind's lists. A thread outside the thread list (a pid filter) is
/// named from `cur.outside`; one the source could not name (gone before
/// the drain) is listed with its tid, pid 0 and no name.
fn resolve(cur: &Sample, threads: &mut [Arc<Row>], processes: &mut [Arc<Row>], kind: PairKind) {
    // only the threads with pairs and those they name are looked at
    // (50,000 idle threads cost one pass, no map entries)
    let preempted: Vec<_> = cur
        .threads
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let (list, _) = t.why.as_ref()?.pairs(kind);
            (!list.is_empty()).then_some((i, t, list))
        })
        .collect();
    let wanted: IdSet<u32> = preempted
        .iter()
        .flat_map(|(_, _, pairs)| pairs.iter().map(|&(tid, _)| tid))
        .filter(|&tid| PseudoWaker::of(tid).is_none())
        .collect();
    if wanted.is_empty() && preempted.is_empty() {
        return;
    }
    // tid -> (pid, comm); a tid reused within the Sample keeps the live one
    // (the filter spares most threads a look in the set: it was 5 % of the
    // live view at 50,000 threads)
    let mut who: IdMap<u32, (u32, &str)> = IdMap::default();
    let may_want = IdFilter::of(wanted.iter().copied());
    for t in cur.threads.iter().filter(|t| may_want.may_hold(t.tid)) {
        if wanted.contains(&t.tid) && (!t.exited || !who.contains_key(&t.tid)) {
            who.insert(t.tid, (t.pid, &*t.comm));
        }
    }
    // outside the thread list (a pid filter): as the source named them
    let mut outside_names = Vec::new();
    for o in &cur.outside {
        if wanted.contains(&o.tid) && !who.contains_key(&o.tid) {
            who.insert(o.tid, (o.pid, &*o.comm));
            outside_names.push((o.pid, &*o.process_comm));
        }
    }
    // the preempting processes' names: the leader's, else any thread's,
    // else as the source named them outside the list
    let pids: IdSet<u32> = who.values().map(|&(pid, _)| pid).collect();
    let may_name = IdFilter::of(pids.iter().copied());
    let mut proc_name: IdMap<u32, &str> = IdMap::default();
    for t in cur.threads.iter().filter(|t| may_name.may_hold(t.pid)) {
        let leader = t.tid == t.pid;
        if pids.contains(&t.pid) && (leader || !proc_name.contains_key(&t.pid)) {
            let name = if t.process_comm.is_empty() {
                &t.comm
            } else {
                &t.process_comm
            };
            proc_name.insert(t.pid, &**name);
        }
    }
    for (pid, name) in outside_names {
        proc_name.entry(pid).or_insert(name);
    }
    // victim pid -> preempting pid -> (count, its process name)
    // (threads not in the Sample, e.g. outside a pid filter, have no known
    // process: their preemptions count in the process's rest)
    // (the pseudo-wakers are counts of the row already: model/why.rs)
    let mut by_process: BTreeMap<u32, (BTreeMap<u32, u64>, u64)> = BTreeMap::new();
    for &(_, t, pairs) in &preempted {
        let (into, unknown) = by_process.entry(t.pid).or_default();
        for &(tid, n) in pairs.iter() {
            if PseudoWaker::of(tid).is_some() {
                continue;
            }
            match who.get(&tid) {
                Some(&(pid, _)) => {
                    let c = into.entry(pid).or_default();
                    *c = c.saturating_add(n);
                }
                None => *unknown = unknown.saturating_add(n),
            }
        }
    }
    // only the preempted threads' rows: the others may share one empty
    // why, which make_mut would copy (a row with pairs was built for this
    // interval: its own, not shared with the one before)
    for &(i, t, pairs) in &preempted {
        let Some(row) = threads.get_mut(i).map(Arc::make_mut) else {
            continue;
        };
        let this = RowKey::Thread {
            tid: t.tid,
            start_time_ns: t.start_time_ns,
        };
        debug_assert!(row.key == this, "rows in the Sample's order");
        if row.key != this {
            continue;
        }
        let Some(w) = row.why.as_mut().map(Arc::make_mut) else {
            continue;
        };
        let list = pairs
            .iter()
            .filter(|p| PseudoWaker::of(p.0).is_none())
            .map(|&(t, count)| {
                let (pid, comm) = who.get(&t).copied().unwrap_or((0, ""));
                Preemptor {
                    tid: t,
                    pid,
                    comm: comm.to_string(),
                    count,
                }
            })
            .collect();
        let (into, rest) = list_of(w, kind);
        *into = top(list, rest);
        w.label();
    }
    for row in processes.iter_mut() {
        let Some((from, unknown)) = by_process.get(&row.pid) else {
            continue;
        };
        let row = Arc::make_mut(row);
        let Some(w) = row.why.as_mut().map(Arc::make_mut) else {
            continue;
        };
        let (_, rest) = list_of(w, kind);
        *rest = rest.saturating_add(*unknown);
        let list = from
            .iter()
            .map(|(&pid, &count)| Preemptor {
                tid: 0,
                pid,
                comm: proc_name.get(&pid).map_or("", |c| c).to_string(),
                count,
            })
            .collect();
        let (into, rest) = list_of(w, kind);
        *into = top(list, rest);
        w.label();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::why::WhySample;
    use crate::model::{OutsideThread, ThreadSample};

    fn thread(tid: u32, involuntary: u64, preempted_by: Vec<(u32, u64)>) -> ThreadSample {
        ThreadSample {
            tid,
            pid: 10,
            comm: "worker".into(),
            process_comm: "service".into(),
            start_time_ns: u64::from(tid),
            involuntary,
            why: Some(Arc::new(WhySample {
                preempted_by,
                ..WhySample::default()
            })),
            ..ThreadSample::default()
        }
    }

    #[test]
    fn a_preemptor_outside_the_thread_list_is_named_from_outside() {
        let before = Sample {
            threads: vec![thread(10, 0, vec![]), thread(11, 0, vec![])].into(),
            ..Sample::default()
        };
        let outside = |tid, pid, comm: &str, process: &str| OutsideThread {
            tid,
            pid,
            comm: comm.into(),
            process_comm: process.into(),
        };
        // 99 (of process 98) preempted 10 five times and 11 twice; 77 is
        // gone: tid only
        let now = Sample {
            mono_ns: 1_000_000_000,
            threads: vec![
                thread(10, 6, vec![(99, 5), (77, 1)]),
                thread(11, 2, vec![(99, 2)]),
            ]
            .into(),
            outside: vec![outside(99, 98, "yes", "sh")],
            ..Sample::default()
        };
        let d = super::super::interval::derive(Some(&before), &now, 1.0);
        let by = |i: usize| d.threads[i].why.as_ref().unwrap().preempted_by.clone();
        let p = |tid, pid, comm: &str, count| Preemptor {
            tid,
            pid,
            comm: comm.into(),
            count,
        };
        assert_eq!(by(0), [p(99, 98, "yes", 5), p(77, 0, "", 1)]);
        assert_eq!(by(1), [p(99, 98, "yes", 2)]);
        let process = d.processes.iter().find(|r| r.pid == 10).unwrap();
        let w = process.why.as_ref().unwrap();
        // by process: 98 (its leader's name) 7 times; 77's one is unknown
        assert_eq!(w.preempted_by, [p(0, 98, "sh", 7)]);
        assert_eq!(w.preempted_by_rest, 1);
    }

    #[test]
    fn preemptors_in_the_list_are_named_by_thread_and_by_process() {
        let named = |tid, pid, comm: &str, process: &str, exited| ThreadSample {
            tid,
            pid,
            comm: comm.into(),
            process_comm: process.into(),
            start_time_ns: u64::from(tid) + u64::from(exited),
            exited,
            ..ThreadSample::default()
        };
        let threads = vec![
            // 5 shares 4101's filter bit but is not a preemptor
            named(5, 5, "five", "five", false),
            named(4101, 4100, "io", "db", false),
            named(4100, 4100, "db-main", "db", false),
            // tid 30 reused: the exited one's name is not the preemptor's
            named(30, 30, "old", "old", true),
            named(30, 30, "new", "new", false),
            // process 40's leader is not in the list
            named(41, 40, "w", "cache", false),
            thread(10, 9, vec![(4101, 4), (30, 3), (41, 2)]),
        ];
        let before = Sample {
            threads: threads.clone().into(),
            ..Sample::default()
        };
        let mut now = before.clone();
        now.mono_ns = 1_000_000_000;
        let d = super::super::interval::derive(Some(&before), &now, 1.0);
        let row = d.threads.iter().find(|r| r.id == 10).unwrap();
        let got: Vec<_> = (row.why.as_ref().unwrap().preempted_by.iter())
            .map(|p| (p.tid, p.pid, p.comm.as_str(), p.count))
            .collect();
        assert_eq!(
            got,
            [(4101, 4100, "io", 4), (30, 30, "new", 3), (41, 40, "w", 2)]
        );
        let process = d.processes.iter().find(|r| r.pid == 10).unwrap();
        let got: Vec<_> = (process.why.as_ref().unwrap().preempted_by.iter())
            .map(|p| (p.pid, p.comm.as_str(), p.count))
            .collect();
        assert_eq!(got, [(4100, "db", 4), (30, "new", 3), (40, "cache", 2)]);
    }
}
