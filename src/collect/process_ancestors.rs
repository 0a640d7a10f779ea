//! The processes above a filtered thread list. A filter (`-p`, `-u`,
//! `--cgroup`) keeps the threads it wants and drops the rest at collection,
//! parents included: the process tree (`t`) then had nothing to hang a
//! kept process from. Here each listed process's parent, its parent and so
//! on up to the first process are read from /proc/<pid>/stat (pid, comm,
//! ppid: one small read each) at the drain, identity only, so the tree can
//! draw them dimmed, as htop does, without counting them anywhere.
use std::collections::HashSet;
use std::path::Path;

use crate::model::{AncestorProcess, Name, ThreadSample};

/// At most this many ancestors read per drain (a machine has a few levels
/// of them per process; this bounds a hostile or runaway /proc).
const MAX_ANCESTORS: usize = 4096;

/// The processes above `threads`' processes that `threads` leaves out,
/// ordered by pid. Call it only for a filtered list: without a filter every
/// process is listed.
pub fn ancestors(threads: &[ThreadSample], proc: &Path) -> Vec<AncestorProcess> {
    ancestors_with(threads, |pid| read_stat(proc, pid))
}

/// `ancestors`, with each process's (comm, ppid) from `read` (tests).
pub fn ancestors_with(
    threads: &[ThreadSample],
    mut read: impl FnMut(u32) -> Option<(Name, u32)>,
) -> Vec<AncestorProcess> {
    let listed: HashSet<u32> = threads.iter().map(|t| t.pid).collect();
    let mut seen: HashSet<u32> = HashSet::new();
    let mut todo: Vec<u32> = threads
        .iter()
        .filter_map(|t| t.attrs.ppid)
        .filter(|pp| *pp != 0 && !listed.contains(pp))
        .collect();
    let mut out = Vec::new();
    while let Some(pid) = todo.pop() {
        if out.len() >= MAX_ANCESTORS {
            break;
        }
        if !seen.insert(pid) {
            continue;
        }
        // gone since (or hidden by hidepid): the chain stops here and the
        // process below it is a root of the tree
        let Some((comm, ppid)) = read(pid) else {
            continue;
        };
        if ppid != 0 && ppid != pid && !listed.contains(&ppid) {
            todo.push(ppid);
        }
        out.push(AncestorProcess { pid, ppid, comm });
    }
    out.sort_unstable_by_key(|a| a.pid);
    out
}

/// A process's name and parent from `<proc>/<pid>/stat`: "pid (comm) S
/// ppid ...". The name may hold spaces and parentheses: it ends at the
/// last `)`.
fn read_stat(proc: &Path, pid: u32) -> Option<(Name, u32)> {
    let text = crate::util::proc_text::read_lossy(&proc.join(pid.to_string()).join("stat"))?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<(Name, u32)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?;
    let mut rest = text.get(close + 1..)?.split_whitespace();
    let _state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some((Name::from(comm), ppid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ThreadAttrs;

    fn thread(tid: u32, pid: u32, ppid: Option<u32>) -> ThreadSample {
        ThreadSample {
            tid,
            pid,
            attrs: ThreadAttrs {
                ppid,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_hostile_name_ends_at_the_last_parenthesis() {
        let (comm, ppid) = parse_stat("42 (a) b (c)) S 7 42 42 0 -1").unwrap();
        assert_eq!((&*comm, ppid), ("a) b (c)", 7));
        assert!(parse_stat("42 (x").is_none());
        assert!(parse_stat("42 (x) S notanumber").is_none());
        assert!(parse_stat("").is_none());
    }

    #[test]
    fn the_chain_up_to_the_first_process_once_and_listed_ones_left_out() {
        // 1 -> 10 -> 20 -> 30 (listed, two threads); 10 -> 25 (listed);
        // 20 is read once though two listed processes hang below it
        let table = [(1, 0, "init"), (10, 1, "sh"), (20, 10, "sh"), (25, 10, "x")];
        let mut reads = Vec::new();
        let got = ancestors_with(
            &[
                thread(30, 30, Some(20)),
                thread(31, 30, Some(20)),
                thread(25, 25, Some(10)),
                thread(40, 40, None),
            ],
            |pid| {
                reads.push(pid);
                let &(_, pp, c) = table.iter().find(|e| e.0 == pid)?;
                Some((Name::from(c), pp))
            },
        );
        let ids: Vec<(u32, u32, &str)> = got.iter().map(|a| (a.pid, a.ppid, &*a.comm)).collect();
        assert_eq!(ids, [(1, 0, "init"), (10, 1, "sh"), (20, 10, "sh")]);
        reads.sort_unstable();
        assert_eq!(reads, [1, 10, 20]);
        // a parent loop (pid reuse) ends, and a process gone stops the chain
        let got = ancestors_with(&[thread(5, 5, Some(6))], |pid| match pid {
            6 => Some((Name::from("a"), 7)),
            7 => Some((Name::from("b"), 6)),
            _ => None,
        });
        assert_eq!(got.len(), 2);
        let got = ancestors_with(&[thread(5, 5, Some(6))], |_| None);
        assert!(got.is_empty());
    }
}
