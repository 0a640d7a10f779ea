//! The kernel's own view of a thread, read from /proc: what schedtop's
//! figures are checked against.
use std::fs;

fn read(path: &str) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))
}

/// (voluntary_ctxt_switches, nonvoluntary_ctxt_switches): the kernel's
/// `nvcsw` and `nivcsw`.
pub fn switches(pid: u32, tid: u32) -> Result<(u64, u64), String> {
    let s = read(&format!("/proc/{pid}/task/{tid}/status"))?;
    let get = |key: &str| -> Result<u64, String> {
        s.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("no {key} in /proc/{pid}/task/{tid}/status"))
    };
    Ok((
        get("voluntary_ctxt_switches:")?,
        get("nonvoluntary_ctxt_switches:")?,
    ))
}

/// The scheduler state letter of /proc/PID/task/TID/stat (R, S, T, ...).
pub fn state(pid: u32, tid: u32) -> Result<char, String> {
    let s = read(&format!("/proc/{pid}/task/{tid}/stat"))?;
    // the name in parentheses may hold anything: the state follows the last ')'
    s.rfind(')')
        .and_then(|i| s[i + 1..].trim_start().chars().next())
        .ok_or_else(|| format!("cannot parse /proc/{pid}/task/{tid}/stat"))
}

/// `se.nr_migrations`: the kernel's count of the thread's CPU changes
/// (bumped in set_task_cpu, next to the sched_migrate_task tracepoint).
pub fn nr_migrations(pid: u32, tid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/task/{tid}/sched");
    let s = read(&path)?;
    s.lines()
        .find(|l| l.starts_with("se.nr_migrations"))
        .and_then(|l| l.rsplit(':').next())
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no se.nr_migrations in {path}"))
}

/// Thread ids of a process.
pub fn tids(pid: u32) -> Result<Vec<u32>, String> {
    let dir = format!("/proc/{pid}/task");
    let mut v: Vec<u32> = fs::read_dir(&dir)
        .map_err(|e| format!("{dir}: {e}"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    v.sort_unstable();
    Ok(v)
}

pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

/// Pin thread `tid` (0: the caller) to one CPU.
pub fn set_affinity(tid: u32, cpu: usize) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(tid as libc::pid_t, std::mem::size_of_val(&set), &set) != 0 {
            return Err(format!(
                "sched_setaffinity({tid}, CPU {cpu}): {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}
