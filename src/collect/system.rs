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

/// (wall clock ns since the epoch, CLOCK_MONOTONIC ns): the monotonic clock
/// is the one bpf_ktime_get_ns() uses.
pub fn now_ns() -> (u64, u64) {
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (wall, monotonic_ns())
}

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fixture_proc() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("stat"),
            "cpu  1 2 3\nctxt 12345\nprocs_running 3\nprocs_blocked 1\n",
        )
        .unwrap();
        fs::write(dir.path().join("loadavg"), "0.50 1.25 2.00 3/400 999\n").unwrap();
        let s = read_system(dir.path());
        assert_eq!(s.context_switches, 12345);
        assert_eq!((s.procs_running, s.procs_blocked), (3, 1));
        assert_eq!(s.load, [0.5, 1.25, 2.0]);
        // a missing root gives zeros, not an error
        assert_eq!(read_system(&dir.path().join("nope")).context_switches, 0);
    }
}
