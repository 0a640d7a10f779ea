//! System-wide figures every source adds: /proc/stat, /proc/loadavg, host names.
use std::fs;
use std::path::Path;

use crate::model::SystemSample;

/// Read /proc/stat and /proc/loadavg under `proc_root`. Missing or odd
/// fields stay zero: these figures decorate the header, they are never
/// worth failing a Sample for.
pub fn read_system(proc_root: &Path) -> SystemSample {
    let mut s = SystemSample::default();
    if let Ok(stat) = fs::read_to_string(proc_root.join("stat")) {
        for line in stat.lines() {
            let mut it = line.split_whitespace();
            let key = it.next().unwrap_or("");
            let val = it.next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            match key {
                "ctxt" => s.context_switches = val,
                "procs_running" => s.procs_running = val as u32,
                "procs_blocked" => s.procs_blocked = val as u32,
                _ => {}
            }
        }
    }
    if let Ok(load) = fs::read_to_string(proc_root.join("loadavg")) {
        for (i, v) in load.split_whitespace().take(3).enumerate() {
            s.load[i] = v.parse().unwrap_or(0.0);
        }
    }
    s
}

/// Per-CPU busy time from /proc/stat (user, nice, system, irq, softirq;
/// not idle, iowait or steal), cumulative ns. The kernel counts it in
/// USER_HZ ticks, so it is exact to 1/USER_HZ s.
pub fn read_cpu_busy_ns(proc_root: &Path) -> std::collections::HashMap<u32, u64> {
    // SAFETY: sysconf has no preconditions.
    let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ns_per_tick = 1_000_000_000 / if tck > 0 { tck as u64 } else { 100 };
    let mut out = std::collections::HashMap::new();
    let Ok(stat) = fs::read_to_string(proc_root.join("stat")) else {
        return out;
    };
    for line in stat.lines() {
        let mut it = line.split_whitespace();
        let Some(cpu) = it
            .next()
            .and_then(|k| k.strip_prefix("cpu"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let f: Vec<u64> = it.map(|v| v.parse().unwrap_or(0)).collect();
        let get = |i: usize| f.get(i).copied().unwrap_or(0);
        // user nice system idle iowait irq softirq steal
        let busy = get(0) + get(1) + get(2) + get(5) + get(6);
        out.insert(cpu, busy.saturating_mul(ns_per_tick));
    }
    out
}

/// Per-CPU irq, softirq and steal time from /proc/stat, cumulative ns
/// (what the columns mean on this kernel: collect/irq_time.rs).
pub fn read_cpu_irq_ns(proc_root: &Path) -> std::collections::HashMap<u32, [u64; 3]> {
    // SAFETY: sysconf has no preconditions.
    let tck = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let ns_per_tick = 1_000_000_000 / if tck > 0 { tck as u64 } else { 100 };
    let mut out = std::collections::HashMap::new();
    let Ok(stat) = fs::read_to_string(proc_root.join("stat")) else {
        return out;
    };
    for line in stat.lines() {
        let mut it = line.split_whitespace();
        let Some(cpu) = it
            .next()
            .and_then(|k| k.strip_prefix("cpu"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // user nice system idle iowait irq softirq steal
        let f: Vec<u64> = it.take(8).map(|v| v.parse().unwrap_or(0)).collect();
        let get = |i: usize| f.get(i).copied().unwrap_or(0).saturating_mul(ns_per_tick);
        out.insert(cpu, [get(5), get(6), get(7)]);
    }
    out
}

pub use crate::util::clock::{monotonic_ns, now_ns};

pub fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

pub fn kernel_release() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fixture_proc() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("stat"),
            "cpu  1 2 3\ncpu0 10 1 5 900 7 2 1 30 0 0\ncpu1 0 0 0 10 0 0 0 0 0 0\n\
ctxt 12345\nprocs_running 3\nprocs_blocked 1\n",
        )
        .unwrap();
        fs::write(dir.path().join("loadavg"), "0.50 1.25 2.00 3/400 999\n").unwrap();
        let s = read_system(dir.path());
        assert_eq!(s.context_switches, 12345);
        assert_eq!((s.procs_running, s.procs_blocked), (3, 1));
        assert_eq!(s.load, [0.5, 1.25, 2.0]);
        // a missing root gives zeros, not an error
        assert_eq!(read_system(&dir.path().join("nope")).context_switches, 0);
        // busy = user + nice + system + irq + softirq (not idle, iowait, steal)
        let busy = read_cpu_busy_ns(dir.path());
        // SAFETY: sysconf has no preconditions.
        let tick = 1_000_000_000 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
        assert_eq!(busy[&0], 19 * tick);
        assert_eq!(busy[&1], 0);
        assert_eq!(busy.len(), 2, "the all-CPU line is not a CPU");
        // irq, softirq, steal: the 6th to 8th numbers
        let irq = read_cpu_irq_ns(dir.path());
        assert_eq!(irq[&0], [2 * tick, tick, 30 * tick]);
        assert_eq!(irq[&1], [0, 0, 0]);
        assert_eq!(irq.len(), 2);
    }
}
