//! Shared helpers for the integration tests: real workloads and the
//! kernel's own counters to check schedtop against.
#![allow(dead_code)]

pub mod hand_samples;
pub mod om_parser;
pub mod perfetto;
pub mod skip;
pub mod spin_sleep;
pub mod tmux;
pub mod ui_kit;
pub mod window_clock;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use schedtop::collect::{LiveOptions, LiveSource};

/// BPF tests pin threads to CPUs and sum CPU time: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A BPF source, or None (test skipped) where BPF truly cannot load. CI sets
/// SCHEDTOP_REQUIRE_BPF=1, which turns that skip into a failure
/// (`skip::bpf_unavailable`).
pub fn bpf_source(pids: Vec<u32>) -> Option<LiveSource> {
    bpf_source_with(pids, false)
}

/// `bpf_source`, with waits from the kernel's run_delay when asked.
pub fn bpf_source_with(pids: Vec<u32>, run_delay_waits: bool) -> Option<LiveSource> {
    let opts = LiveOptions {
        interval_ns: 1_000_000_000,
        pid_filter: pids,
        force_procfs: false,
        require_bpf: true,
        run_delay_waits,
        threads: Default::default(),
    };
    match LiveSource::open(&opts) {
        Ok(s) => Some(s),
        Err(e) => {
            skip::bpf_unavailable(&format!("BPF cannot load here: {e:#}"));
            None
        }
    }
}

pub fn gettid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

pub fn getpid() -> u32 {
    std::process::id()
}

/// Pin the calling thread to one CPU.
pub fn pin_to(cpu: usize) {
    set_affinity(0, cpu);
}

/// Move thread `tid` (0 = caller) to one CPU.
pub fn set_affinity(tid: u32, cpu: usize) {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let rc = libc::sched_setaffinity(tid as libc::pid_t, std::mem::size_of_val(&set), &set);
        assert_eq!(rc, 0, "sched_setaffinity({tid}, {cpu}) failed");
    }
}

pub fn ncpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPUs this process may run on (its cpuset), ascending: pinning to a
/// CPU outside it fails.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let rc = libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set);
        assert_eq!(rc, 0, "sched_getaffinity failed");
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// A test that cannot run here: a failure under SCHEDTOP_REQUIRE_ALL=1 (CI),
/// a visible skip otherwise. Returns false so callers can `return`.
pub fn cannot_run(why: &str) -> bool {
    skip::skip(why);
    false
}

/// The kernel's (voluntary, nonvoluntary) counts of a thread of this process.
pub fn proc_switches(tid: u32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).unwrap();
    let get = |key: &str| -> u64 {
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    (
        get("voluntary_ctxt_switches:"),
        get("nonvoluntary_ctxt_switches:"),
    )
}

/// Threads of this process that run a loop until dropped.
pub struct Workload {
    stop: Arc<AtomicBool>,
    handles: Vec<JoinHandle<()>>,
    pub tids: Vec<u32>,
}

impl Workload {
    pub fn spawn(n: usize, body: impl Fn(&AtomicBool) + Send + Sync + Clone + 'static) -> Workload {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let handles = (0..n)
            .map(|_| {
                let stop = stop.clone();
                let tx = tx.clone();
                let body = body.clone();
                std::thread::spawn(move || {
                    tx.send(gettid()).unwrap();
                    body(&stop);
                })
            })
            .collect();
        let tids = (0..n).map(|_| rx.recv().unwrap()).collect();
        Workload {
            stop,
            handles,
            tids,
        }
    }

    /// `n` threads spinning on `cpu`.
    pub fn spinners(n: usize, cpu: usize) -> Workload {
        Workload::spawn(n, move |stop| {
            pin_to(cpu);
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    }

    /// `n` threads on `cpu` calling sched_yield() in a loop: with others
    /// runnable there, every call is a context switch.
    pub fn yielders(n: usize, cpu: usize) -> Workload {
        Workload::spawn(n, move |stop| {
            pin_to(cpu);
            while !stop.load(Ordering::Relaxed) {
                // SAFETY: sched_yield has no preconditions.
                unsafe { libc::sched_yield() };
            }
        })
    }

    /// `n` threads spinning wherever they are put (for affinity moves).
    pub fn free_spinners(n: usize) -> Workload {
        Workload::spawn(n, |stop| {
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    }

    /// `n` threads that sleep `period` in a loop on `cpu`.
    pub fn sleepers(n: usize, cpu: usize, period: Duration) -> Workload {
        Workload::spawn(n, move |stop| {
            pin_to(cpu);
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(period);
            }
        })
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// The incident bundle directories in `dir`, sorted by name.
pub fn incident_bundles(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("schedtop-incident-"))
        })
        .collect();
    v.sort();
    v
}

/// The kernel's tracepoint formats, which bpftrace reads from tracefs:
/// mounted at /sys/kernel/tracing where it is not yet (these machines do
/// not mount it at boot; a stock Debian mounts it through systemd). Left
/// mounted, as systemd would leave it. False (the test cannot run) when it
/// cannot be mounted.
pub fn ensure_tracefs() -> bool {
    let dir = "/sys/kernel/tracing";
    let ready = || std::path::Path::new(dir).join("events/sched").is_dir();
    if ready() {
        return true;
    }
    let out = std::process::Command::new("mount")
        .args(["-t", "tracefs", "tracefs", dir])
        .output();
    match out {
        Ok(_) if ready() => true,
        Ok(o) => cannot_run(&format!(
            "tracefs is not mounted and mounting it at {dir} failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => cannot_run(&format!("tracefs is not mounted; running mount: {e}")),
    }
}

/// Whether `child` ended within `d`, polled every 20 ms: bpftrace ends as
/// soon as its maps are printed after SIGINT, where a fixed second's sleep
/// before looking cost a second a run.
pub fn ended_within(child: &mut std::process::Child, d: Duration) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed() < d {
        if child.try_wait().ok().flatten().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}
