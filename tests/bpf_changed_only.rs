//! Reading only the threads that changed (6.2+, bpf/dirty.bpf.h), where it
//! could go wrong: a thread that runs without ever switching out, and dirty
//! sets too small for the threads that switch. Oracles: the kernel's own
//! per-thread counters in /proc.
mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::Duration;

/// The kernel's sum_exec_runtime of a thread of this process.
fn proc_oncpu_ns(tid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .unwrap()
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap()
}

fn changed_only(source: &schedtop::collect::LiveSource) -> Option<(u64, u64)> {
    source.bpf().expect("a BPF source").changed_only()
}

#[test]
fn a_thread_on_its_cpu_shows_its_cpu_time_at_every_drain() {
    let _serial = common::serial();
    let cpu = common::allowed_cpus().last().copied().unwrap_or(0);
    let spinner = common::Workload::spinners(1, cpu);
    let tid = spinner.tids[0];
    // Real-time, so no fair-class thread preempts it: on its CPU nothing
    // switches from before the probes attach (the fair server's share
    // aside), the case only the full pass's "on a CPU" tells the reader.
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: plain syscall on a tid of this process, param outlives it
    let rt = unsafe { libc::sched_setscheduler(tid as i32, libc::SCHED_FIFO, &param) };
    assert_eq!(rt, 0, "SCHED_FIFO: {}", std::io::Error::last_os_error());
    let Some(mut source) = common::bpf_source(vec![common::getpid()]) else {
        return;
    };
    if changed_only(&source).is_none() {
        assert!(common::cannot_run("drains read every task on this kernel"));
        return;
    }
    source.sample().expect("first drain");
    let mut last = 0;
    for n in 0..5 {
        std::thread::sleep(Duration::from_millis(500));
        let before = proc_oncpu_ns(tid);
        let s = source.sample().expect("drain");
        let after = proc_oncpu_ns(tid);
        let t = s.thread(tid).expect("the spinner is listed");
        // read live at the drain, whether or not it switched out since
        assert!(
            (before..=after).contains(&t.oncpu_ns),
            "drain {n}: schedtop {} ns, the kernel {before}..{after}",
            t.oncpu_ns
        );
        assert!(
            t.oncpu_ns > last + 200_000_000,
            "drain {n}: {} after {last}",
            t.oncpu_ns
        );
        last = t.oncpu_ns;
    }
}

#[test]
fn overflowing_dirty_sets_fall_back_to_a_full_pass_and_counts_stay_exact() {
    const SWITCHERS: usize = 16;
    let _serial = common::serial();
    // four entries a set: sixteen threads switching overflow it every time
    std::env::set_var("SCHEDTOP_DIRTY_ENTRIES", "4");
    let source = common::bpf_source(vec![common::getpid()]);
    std::env::remove_var("SCHEDTOP_DIRTY_ENTRIES");
    let Some(mut source) = source else {
        return;
    };
    if changed_only(&source).is_none() {
        assert!(common::cannot_run("drains read every task on this kernel"));
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(Barrier::new(SWITCHERS + 1));
    let (tx, rx) = mpsc::channel();
    let threads: Vec<_> = (0..SWITCHERS)
        .map(|_| {
            let (tx, stop, done) = (tx.clone(), stop.clone(), done.clone());
            std::thread::spawn(move || {
                tx.send(common::gettid()).unwrap();
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(2));
                }
                done.wait();
            })
        })
        .collect();
    let tids: Vec<u32> = rx.iter().take(SWITCHERS).collect();
    for _ in 0..4 {
        std::thread::sleep(Duration::from_millis(300));
        source.sample().expect("drain");
    }
    stop.store(true, Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(200));
    let last = source.sample().expect("last drain");
    let wrong: Vec<String> = tids
        .iter()
        .filter_map(|&tid| {
            let theirs = common::proc_switches(tid);
            match last.thread(tid) {
                Some(t) if (t.voluntary, t.involuntary) == theirs => None,
                Some(t) => Some(format!(
                    "{tid}: ({}, {}) vs /proc {theirs:?}",
                    t.voluntary, t.involuntary
                )),
                None => Some(format!("{tid}: not listed")),
            }
        })
        .collect();
    let (full, overflows) = changed_only(&source).unwrap();
    done.wait();
    for t in threads {
        t.join().unwrap();
    }
    assert!(wrong.is_empty(), "{wrong:?}");
    assert!(overflows >= 3, "{overflows} overflows, {full} full passes");
    // every overflow made the next drain a full pass (the first drain is
    // one anyway, and may follow an overflow of its own)
    assert!(
        full >= overflows,
        "{full} full passes for {overflows} overflows"
    );
}
