//! Run-queue waits split by how they began, on workloads whose every wait
//! is known to be of one kind: spinners pinned together never block (each
//! wait starts at a preemption), a pipe ping-pong pair on two CPUs always
//! blocks (each wait starts at a wakeup). Checked against the kernel's own
//! switch counters of the same threads.
use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use schedtop::model::rates::{intervals, ThreadInterval};
use schedtop::model::Sample;

fn interval_of(a: &Sample, b: &Sample, tid: u32) -> ThreadInterval {
    intervals(Some(a), b)
        .into_iter()
        .find(|(t, _)| t.tid == tid)
        .and_then(|(_, d)| d)
        .unwrap_or_else(|| panic!("thread {tid} missing from the interval"))
}

fn totals(d: &ThreadInterval) -> (u64, u64, u64) {
    let n = |h: &Option<schedtop::model::Log2Hist>| h.as_ref().map_or(0, |h| h.total());
    (
        n(&d.wakeup_wait_hist),
        n(&d.preempt_wait_hist),
        n(&d.wait_hist),
    )
}

#[test]
fn two_spinners_pinned_to_one_cpu_wait_only_after_preemption() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let cpu = *allowed_cpus().last().unwrap();
    let spin = Workload::spinners(2, cpu);
    std::thread::sleep(Duration::from_millis(300));
    let a = src.sample().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let b = src.sample().unwrap();
    for &tid in &spin.tids {
        let d = interval_of(&a, &b, tid);
        let (wake, pre, all) = totals(&d);
        assert_eq!(wake, 0, "spinner {tid}: {wake} waits after a wakeup");
        assert_eq!(
            all,
            wake + pre,
            "spinner {tid}: the combined wait is the sum"
        );
        // one preempted wait per involuntary switch-out (the wait before a
        // slice is counted at the slice's end: one may straddle each edge)
        assert!(
            d.involuntary > 50,
            "spinner {tid}: {} involuntary",
            d.involuntary
        );
        assert!(
            pre.abs_diff(d.involuntary) <= 2 + d.involuntary / 50,
            "spinner {tid}: {pre} preempted waits, {} involuntary switches",
            d.involuntary
        );
    }
}

/// Two threads on two CPUs passing a byte back and forth through pipes.
struct PingPong {
    stop: Arc<AtomicBool>,
    handles: Vec<std::thread::JoinHandle<()>>,
    tids: Vec<u32>,
}

fn pipe() -> (i32, i32) {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors pipe() writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

fn put(fd: i32, b: u8) {
    // SAFETY: one byte from a live local.
    assert_eq!(unsafe { libc::write(fd, (&b as *const u8).cast(), 1) }, 1);
}

fn get(fd: i32) -> u8 {
    let mut b = 0u8;
    // SAFETY: one byte into a live local.
    assert_eq!(unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) }, 1);
    b
}

impl PingPong {
    fn start(cpu_a: usize, cpu_b: usize) -> PingPong {
        let stop = Arc::new(AtomicBool::new(false));
        let (ab_r, ab_w) = pipe();
        let (ba_r, ba_w) = pipe();
        let (tx, rx) = std::sync::mpsc::channel();
        let (s, t) = (stop.clone(), tx.clone());
        let a = std::thread::spawn(move || {
            pin_to(cpu_a);
            t.send(gettid()).unwrap();
            loop {
                let quit = s.load(Ordering::Relaxed);
                put(ab_w, quit as u8);
                if quit {
                    break;
                }
                get(ba_r);
            }
        });
        let b = std::thread::spawn(move || {
            pin_to(cpu_b);
            tx.send(gettid()).unwrap();
            while get(ab_r) == 0 {
                put(ba_w, 0);
            }
        });
        let tids = vec![rx.recv().unwrap(), rx.recv().unwrap()];
        PingPong {
            stop,
            handles: vec![a, b],
            tids,
        }
    }
}

impl Drop for PingPong {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[test]
fn a_pipe_ping_pong_pair_on_two_cpus_waits_only_after_wakeups() {
    let _g = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        cannot_run("needs two CPUs");
        return;
    }
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let pp = PingPong::start(cpus[0], cpus[cpus.len() - 1]);
    std::thread::sleep(Duration::from_millis(300));
    let a = src.sample().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let b = src.sample().unwrap();
    for &tid in &pp.tids {
        let d = interval_of(&a, &b, tid);
        let (wake, pre, all) = totals(&d);
        assert_eq!(
            all,
            wake + pre,
            "thread {tid}: the combined wait is the sum"
        );
        assert!(d.voluntary > 500, "thread {tid}: {} voluntary", d.voluntary);
        // every block is followed by a wakeup and a wait: one wakeup wait
        // per voluntary switch-out (one may straddle each interval edge)
        assert!(
            wake.abs_diff(d.voluntary) <= 2 + d.voluntary / 100,
            "thread {tid}: {wake} wakeup waits, {} voluntary switches",
            d.voluntary
        );
        // a preempted wait needs a switch-out that left the thread
        // runnable: only another task taking the CPU (the machine's own
        // load) makes one. The wait is counted at the thread's next
        // switch-out, so one begun by an involuntary switch-out before this
        // interval can land in it (CI saw 2 waits for 1 switch)
        assert!(
            pre <= d.involuntary + 1,
            "thread {tid}: {pre} preempted waits but {} involuntary switches",
            d.involuntary
        );
        assert!(
            pre * 20 <= wake,
            "thread {tid}: {pre} preempted waits beside {wake} after wakeups"
        );
    }
}
