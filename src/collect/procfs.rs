//! Fallback source when BPF cannot load: per-thread counters from
//! /proc/<pid>/task/<tid>/{stat,status,schedstat}. No histograms and no
//! migrations: /proc does not keep them. The /proc root is a parameter so
//! tests can read fixture trees.
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Result;
use procfs::process::{all_processes_with_root, Process};

use super::cgroups::{CgroupCollector, CgroupTable};
use super::system::{now_ns, read_system};
use crate::model::{Sample, ThreadAttrs, ThreadSample};

pub struct ProcfsReader {
    root: PathBuf,
    ticks_per_s: u64,
    /// threads seen by the previous read, by (tid, start time)
    seen: HashSet<(u32, u64)>,
    /// boot-relative time of the previous read, ns (None before the first)
    last_read_boot_ns: Option<u64>,
    pid_filter: Vec<u32>,
    cgroups: Box<CgroupCollector>,
}

impl ProcfsReader {
    pub fn new(root: impl Into<PathBuf>, pid_filter: Vec<u32>) -> Self {
        // SAFETY: sysconf has no preconditions.
        let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let root: PathBuf = root.into();
        ProcfsReader {
            ticks_per_s: if tck > 0 { tck as u64 } else { 100 },
            seen: HashSet::new(),
            cgroups: Box::new(CgroupCollector::discover(&root)),
            root,
            last_read_boot_ns: None,
            pid_filter,
        }
    }

    /// One pass over every thread. Threads that vanish mid-read are skipped.
    pub fn read(&mut self) -> Result<Sample> {
        let boot_now = boottime_ns();
        let (time_ns, mono_ns) = now_ns();
        let mut threads = Vec::new();
        let mut cgroups = CgroupTable::default();
        let procs = all_processes_with_root(&self.root)
            .map_err(|e| anyhow::anyhow!("cannot list {}: {e}", self.root.display()))?;
        for proc in procs.flatten() {
            if !self.pid_filter.is_empty() && !self.pid_filter.contains(&(proc.pid as u32)) {
                continue;
            }
            self.read_process(&proc, &mut threads, &mut cgroups);
        }
        let seen_now: HashSet<(u32, u64)> = threads
            .iter()
            .map(|t: &ThreadSample| (t.tid, t.start_time_ns))
            .collect();
        self.seen = seen_now;
        self.last_read_boot_ns = Some(boot_now);
        let mut sample = Sample {
            time_ns,
            mono_ns,
            threads: threads.into(),
            system: read_system(&self.root),
            ..Default::default()
        };
        self.cgroups.finish(cgroups, &mut sample);
        Ok(sample)
    }

    fn read_process(&self, proc: &Process, out: &mut Vec<ThreadSample>, cgroups: &mut CgroupTable) {
        let Ok(pstat) = proc.stat() else { return };
        let Ok(tasks) = proc.tasks() else { return };
        for task in tasks.flatten() {
            let (Ok(stat), Some(status)) = (task.stat(), self.task_status(&task)) else {
                continue;
            };
            let sched = task.schedstat().ok();
            let start_time_ns = ticks_to_ns(stat.starttime, self.ticks_per_s);
            let tid = task.tid as u32;
            // A thread we did not see before that started after our last
            // read began from zero: its whole history is this interval.
            let new_since_last = self.last_read_boot_ns.is_some_and(|t| start_time_ns > t)
                && !self.seen.contains(&(tid, start_time_ns));
            out.push(ThreadSample {
                tid,
                pid: task.pid as u32,
                comm: stat.comm.as_str().into(),
                process_comm: pstat.comm.as_str().into(),
                cpu: stat.processor.unwrap_or(0).max(0) as u32,
                start_time_ns,
                voluntary: status.voluntary_ctxt_switches.unwrap_or(0),
                involuntary: status.nonvoluntary_ctxt_switches.unwrap_or(0),
                oncpu_ns: sched.as_ref().map_or(0, |s| s.sum_exec_runtime),
                wait_ns: sched.as_ref().map_or(0, |s| s.run_delay),
                migrations: None,
                counters: Default::default(),
                slice_hist: None,
                wait_hist: None,
                wakeup_wait_hist: None,
                preempt_wait_hist: None,
                baseline: new_since_last.then(Box::default),
                exited: false,
                attrs: ThreadAttrs {
                    nice: i8::try_from(stat.nice).ok(),
                    // /proc/<tid>/stat fields 41 and 40
                    policy: stat.policy.and_then(|p| u8::try_from(p).ok()),
                    rt_priority: stat.rt_priority.and_then(|p| u8::try_from(p).ok()),
                    cpus_allowed: status.cpus_allowed_list.as_ref().map(|l| {
                        l.iter().fold(0u32, |a, &(lo, hi)| {
                            a.saturating_add(hi.saturating_sub(lo) + 1)
                        })
                    }),
                    // a thread's is its process's parent (CLONE_THREAD
                    // shares real_parent)
                    ppid: u32::try_from(stat.ppid).ok(),
                },
                why: None,
                cgroup: self.cgroups.intern_proc(cgroups, task.pid as u32, tid),
            });
        }
    }
}

impl ProcfsReader {
    /// /proc/<pid>/task/<tid>/status, its Name line made UTF-8: a thread
    /// names itself with any 15 bytes, and the kernel writes them raw there
    /// (procfs's own reader then fails, and the thread went unlisted).
    fn task_status(&self, task: &procfs::process::Task) -> Option<procfs::process::Status> {
        use procfs::FromBufRead;
        let path = self
            .root
            .join(format!("{}/task/{}/status", task.pid, task.tid));
        let text = crate::util::proc_text::read_lossy(&path)?;
        procfs::process::Status::from_buf_read(text.as_bytes()).ok()
    }
}

fn boottime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Is `root` a readable proc tree?
pub fn usable(root: &Path) -> bool {
    root.join("stat").exists()
}

/// Clock ticks (`starttime` in /proc/PID/stat) to ns. `ticks * 1e9`
/// overflows u64 once ticks pass 1.8e10: 5.8 years of uptime at 100 Hz.
pub fn ticks_to_ns(ticks: u64, per_s: u64) -> u64 {
    let ns = u128::from(ticks) * 1_000_000_000 / u128::from(per_s.max(1));
    u64::try_from(ns).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_times_after_years_of_uptime_do_not_overflow() {
        // 6 years at 100 Hz: ticks * 1e9 is past u64::MAX
        let ticks = 6 * 365 * 86_400 * 100u64;
        assert!(ticks.checked_mul(1_000_000_000).is_none());
        assert_eq!(ticks_to_ns(ticks, 100), 6 * 365 * 86_400 * 1_000_000_000);
        assert_eq!(ticks_to_ns(u64::MAX, 1), u64::MAX);
        assert_eq!(ticks_to_ns(250, 100), 2_500_000_000);
    }
}
