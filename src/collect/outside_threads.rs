//! Names for the threads that a Sample's preemptor lists mention but its
//! thread list leaves out (a pid filter leaves out the rest of the
//! machine), read from /proc at the drain, so that "who took my CPU" names
//! the program and not only a tid. A thread gone by then stays a bare tid.
use std::path::Path;

use crate::model::fasthash::IdMap;
use crate::model::{Name, OutsideThread, ThreadSample};

/// At most this many outside threads named per drain (the ones with the
/// most preemptions first): two small /proc reads each.
const MAX_NAMED: usize = 256;

/// The outside threads of `threads`' preemptor lists, by tid, named from
/// `proc`. Call it only for a filtered thread list: without a filter every
/// preemptor is in the list.
pub fn name_outside(threads: &[ThreadSample], proc: &Path) -> Vec<OutsideThread> {
    let mut count: IdMap<u32, u64> = IdMap::default();
    for w in threads.iter().filter_map(|t| t.why.as_deref()) {
        for &(tid, n) in &w.preempted_by {
            let c = count.entry(tid).or_default();
            *c = c.saturating_add(n);
        }
    }
    if count.is_empty() {
        return Vec::new();
    }
    for t in threads.iter().filter(|t| !t.exited) {
        count.remove(&t.tid);
    }
    let mut wanted: Vec<(u32, u64)> = count.into_iter().collect();
    wanted.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    wanted.truncate(MAX_NAMED);
    let mut out: Vec<OutsideThread> = wanted
        .into_iter()
        .filter_map(|(tid, _)| read_outside(proc, tid))
        .collect();
    out.sort_unstable_by_key(|o| o.tid);
    out
}

fn read_outside(proc: &Path, tid: u32) -> Option<OutsideThread> {
    // /proc/<tid> works for any thread, listed in /proc or not
    let status = crate::util::proc_text::read_lossy(&proc.join(tid.to_string()).join("status"))?;
    let pid: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()?;
    let comm = read_comm(proc, tid)?;
    let process_comm = if pid == tid {
        comm.clone()
    } else {
        read_comm(proc, pid).unwrap_or_else(|| comm.clone())
    };
    Some(OutsideThread {
        tid,
        pid,
        comm,
        process_comm,
    })
}

/// The raw name (`comm` is not escaped, unlike status's Name line).
fn read_comm(proc: &Path, tid: u32) -> Option<Name> {
    let raw = std::fs::read(proc.join(tid.to_string()).join("comm")).ok()?;
    let raw = raw.strip_suffix(b"\n").unwrap_or(&raw);
    Some(String::from_utf8_lossy(raw).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::why::WhySample;
    use std::sync::Arc;

    fn preempted(tid: u32, by: Vec<(u32, u64)>) -> ThreadSample {
        ThreadSample {
            tid,
            pid: tid,
            why: Some(Arc::new(WhySample {
                preempted_by: by,
                ..WhySample::default()
            })),
            ..ThreadSample::default()
        }
    }

    #[test]
    fn only_preemptors_outside_the_list_are_read_and_named() {
        let proc = tempfile::tempdir().unwrap();
        let task = |tid: u32, tgid: u32, comm: &str| {
            let d = proc.path().join(tid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(
                d.join("status"),
                format!("Name:\tx\nTgid:\t{tgid}\nPid:\t{tid}\n"),
            )
            .unwrap();
            std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        };
        task(50, 50, "sh");
        task(51, 50, "worker\u{1b}[2J");
        // the kernel writes a name raw into status: not always UTF-8
        std::fs::write(
            proc.path().join("51/status"),
            b"Name:\tworker\xff\xfe\nTgid:\t50\nPid:\t51\n",
        )
        .unwrap();
        // 2 is in the list; 51 and 50 are outside; 60 is gone
        let threads = vec![
            preempted(1, vec![(2, 9), (51, 3), (60, 1)]),
            preempted(2, vec![(50, 4)]),
        ];
        let got = name_outside(&threads, proc.path());
        let names: Vec<_> = got
            .iter()
            .map(|o| (o.tid, o.pid, &*o.comm, &*o.process_comm))
            .collect();
        assert_eq!(
            names,
            [(50, 50, "sh", "sh"), (51, 50, "worker\u{1b}[2J", "sh")]
        );
    }
}
