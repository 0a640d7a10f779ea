//! The pair map under drains many times a second while pairs are counted
//! at a high rate: no pair may be lost or counted twice. Every thread here
//! starts after the probes attached and exits before the last drain, so
//! its counters start at zero and its exit record holds its final ones:
//! over its life, the (wakee, waker) pairs with the pseudo-wakers sum
//! exactly to the wakeups it counted, and the (victim, preemptor) pairs to
//! its involuntary switches (the kernel's nivcsw), with nothing dropped.
//! A stand-alone binary: it turns the wakers on through the environment.
mod common;

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::*;
use schedtop::model::Sample;

/// Writers per wakee: more than the record's four waker slots, so most of
/// the wakee's wakers go through the pair map.
const WRITERS: usize = 8;

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: both descriptors are fresh and owned here only.
    unsafe {
        use std::os::fd::FromRawFd;
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    }
}

/// A reader on one CPU beside a spinner (which the woken reader preempts),
/// and WRITERS writers on another CPU, which wake the reader and preempt
/// each other. Stopped (and every thread joined) when dropped: the writers
/// see `stop`, then closing the pipe ends the reader.
struct Load {
    stop: Arc<AtomicBool>,
    write_end: Option<OwnedFd>,
    handles: Vec<JoinHandle<()>>,
    tids: Vec<u32>,
}

impl Load {
    fn start(reader_cpu: usize, writer_cpu: usize) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let (read_end, write_end) = pipe();
        let (tx, rx) = mpsc::channel();
        let mut handles = Vec::new();
        let t = tx.clone();
        handles.push(std::thread::spawn(move || {
            pin_to(reader_cpu);
            t.send((0, gettid())).unwrap();
            let mut buf = [0u8; 4096];
            // until every writer is gone (EOF), so no writer blocks forever
            // SAFETY: reads into a buffer of its length.
            while unsafe { libc::read(read_end.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) }
                > 0
            {}
        }));
        let (t, s) = (tx.clone(), stop.clone());
        handles.push(std::thread::spawn(move || {
            pin_to(reader_cpu);
            // nice 19: the woken reader preempts it nearly every time
            // SAFETY: setpriority on the calling thread (who 0).
            unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
            t.send((1, gettid())).unwrap();
            while !s.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        }));
        let fd = write_end.as_raw_fd();
        for i in 0..WRITERS {
            let (t, s) = (tx.clone(), stop.clone());
            handles.push(std::thread::spawn(move || {
                pin_to(writer_cpu);
                t.send((2 + i, gettid())).unwrap();
                while !s.load(Ordering::Relaxed) {
                    // a pause, so the reader empties the pipe and sleeps
                    // before most writes: each of those is a wakeup
                    let t = Instant::now();
                    while t.elapsed() < Duration::from_micros(20) {
                        std::hint::spin_loop();
                    }
                    // SAFETY: one byte from a live buffer to a pipe that
                    // stays open until this thread is joined.
                    unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) };
                }
            }));
        }
        // the reader first, then the spinner, then the writers
        let mut tids: Vec<(usize, u32)> = (0..handles.len()).map(|_| rx.recv().unwrap()).collect();
        tids.sort();
        let tids = tids.into_iter().map(|t| t.1).collect();
        Load {
            stop,
            write_end: Some(write_end),
            handles,
            tids,
        }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // the writers first (they use the write end), then EOF for the reader
        for h in self.handles.drain(2..) {
            let _ = h.join();
        }
        drop(self.write_end.take());
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

/// One thread's pairs summed over every Sample, and its final counters.
#[derive(Debug, Default)]
struct Life {
    woken_listed: u64,
    wakeups: u64,
    preempt_listed: u64,
    involuntary: u64,
    exited: bool,
}

fn life(samples: &[Sample], tid: u32) -> Life {
    let mut l = Life::default();
    for s in samples {
        let Some(t) = s.thread(tid) else { continue };
        let why = t.why.as_deref().expect("the probes report why figures");
        l.woken_listed += why.woken_by.iter().map(|p| p.1).sum::<u64>() + why.woken_by_rest;
        l.preempt_listed +=
            why.preempted_by.iter().map(|p| p.1).sum::<u64>() + why.preempted_by_rest;
        l.wakeups = why.wakeups.expect("SCHEDTOP_WAKERS=1: wakeups are counted");
        l.involuntary = t.involuntary;
        l.exited |= t.exited;
    }
    l
}

#[test]
fn pairs_sum_exactly_while_drained_many_times_a_second() {
    std::env::set_var("SCHEDTOP_WAKERS", "1");
    let _g = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        skip::skip("the pair drain check needs 2 CPUs");
        return;
    }
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let first = src.sample().unwrap();
    let load = Load::start(cpus[0], cpus[1]);
    let tids = load.tids.clone();
    let mut samples = vec![first];
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(4) {
        samples.push(src.sample().unwrap());
    }
    let drains = samples.len() - 1;
    drop(load);
    // the exit records, and the pairs counted up to the exits
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(50));
        samples.push(src.sample().unwrap());
    }
    let losses = |s: &Sample| {
        (
            s.system.losses.wake_pairs_full,
            s.system.losses.preempt_pairs_full,
        )
    };
    let (w0, p0) = losses(&samples[0]);
    let (w1, p1) = losses(samples.last().unwrap());

    let mut bad = Vec::new();
    let (mut wakeups, mut involuntary) = (0, 0);
    for &tid in &tids {
        let l = life(&samples, tid);
        wakeups += l.wakeups;
        involuntary += l.involuntary;
        if !l.exited || l.woken_listed != l.wakeups || l.preempt_listed != l.involuntary {
            bad.push(format!("{tid}: {l:?}"));
        }
    }
    let reader = life(&samples, tids[0]);
    eprintln!(
        "{drains} drains in 4 s ({:.0}/s); the reader woken {} times by {WRITERS} writers; \
         {wakeups} wakeups and {involuntary} involuntary switch-outs in all; \
         pairs dropped: {} wake, {} preempt; threads off: {}",
        drains as f64 / 4.0,
        reader.wakeups,
        w1 - w0,
        p1 - p0,
        bad.len()
    );
    assert!(
        reader.wakeups > 500 && involuntary > 500,
        "too little load to say anything: {reader:?}, {involuntary} involuntary"
    );
    assert!(bad.is_empty(), "pairs off:\n{}", bad.join("\n"));
    assert_eq!((w1 - w0, p1 - p0), (0, 0), "pairs dropped (wake, preempt)");
}
