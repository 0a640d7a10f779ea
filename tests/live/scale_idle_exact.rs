//! Counts stay exact for threads that sleep for long: 20,000 idle
//! threads and 20 that wake every 50 ms, watched by the BPF source at 1 s
//! for WATCH_SECS. Then the wakers stop (so nothing moves) and every one of
//! the 20,020 threads' voluntary / involuntary counts must equal /proc's,
//! exactly. Guards any scheme that reads only the threads that changed:
//! an idle thread's counts must still be right when it is finally read,
//! and a thread idle since before the source started must be listed.
use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

const IDLE: usize = 20_000;
const WAKERS: usize = 20;
/// How long the source watches. 20 drains suffice: the first is a full
/// pass and the next census waits 1000 times a census's length (at least
/// 5 s), so most drains read only the changed threads and take the idle
/// ones from what a full pass kept, the path under test (and `full <
/// drains / 2` still has room to fail); a minute repeated the same drains.
const WATCH_SECS: u64 = 20;

/// What an idle thread gets: the read end of a pipe nobody writes to, and
/// where to put its tid.
struct IdleArg {
    fd: libc::c_int,
    tid: std::sync::atomic::AtomicU32,
}

/// Asleep in read(2) until the write end closes. Plain pthreads with small
/// stacks: two mappings a thread (stack and guard), where std's threads add
/// a signal stack and its guard, and 20,000 of those pass the default
/// vm.max_map_count.
extern "C" fn idle(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: arg points to an IdleArg that outlives every idle thread
    // (joined before it is dropped).
    let a = unsafe { &*(arg as *const IdleArg) };
    a.tid.store(common::gettid(), Ordering::SeqCst);
    let mut b = 0u8;
    // SAFETY: reading one byte into a local.
    unsafe { libc::read(a.fd, (&mut b as *mut u8).cast(), 1) };
    std::ptr::null_mut()
}

/// IDLE pthreads asleep until `close(write_end)`; joined on drop.
struct IdleThreads {
    threads: Vec<libc::pthread_t>,
    /// filled before the first thread starts and never resized: the
    /// threads hold pointers into it
    args: Vec<IdleArg>,
    write_end: libc::c_int,
}

impl IdleThreads {
    fn start(n: usize) -> IdleThreads {
        let mut fds = [0; 2];
        // SAFETY: fds has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let mut me = IdleThreads {
            threads: Vec::with_capacity(n),
            args: (0..n)
                .map(|_| IdleArg {
                    fd: fds[0],
                    tid: std::sync::atomic::AtomicU32::new(0),
                })
                .collect(),
            write_end: fds[1],
        };
        // SAFETY: attr is initialised before use and destroyed after.
        let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::pthread_attr_init(&mut attr);
            libc::pthread_attr_setstacksize(&mut attr, 64 * 1024);
        }
        for i in 0..n {
            let mut t: libc::pthread_t = 0;
            let p = &me.args[i] as *const IdleArg as *mut libc::c_void;
            // SAFETY: idle only reads its IdleArg, kept alive in me.args.
            let rc = unsafe { libc::pthread_create(&mut t, &attr, idle, p) };
            assert_eq!(rc, 0, "pthread_create {i} of {n}: error {rc}");
            me.threads.push(t);
        }
        unsafe { libc::pthread_attr_destroy(&mut attr) };
        me
    }

    fn tids(&self) -> Vec<u32> {
        loop {
            let t: Vec<u32> = self
                .args
                .iter()
                .map(|a| a.tid.load(Ordering::SeqCst))
                .collect();
            if t.iter().all(|&x| x != 0) {
                return t;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for IdleThreads {
    fn drop(&mut self) {
        // EOF wakes every reader
        // SAFETY: closing our own pipe end, then joining our own threads.
        unsafe { libc::close(self.write_end) };
        for &t in &self.threads {
            unsafe { libc::pthread_join(t, std::ptr::null_mut()) };
        }
    }
}

#[test]
fn twenty_thousand_idle_threads_keep_exact_counts() {
    let _serial = common::serial();
    let idle_threads = IdleThreads::start(IDLE);
    let stop = Arc::new(AtomicBool::new(false));
    // the wakers, once stopped, stay alive (asleep) until the counts are read
    let done = Arc::new(Barrier::new(WAKERS + 1));
    let (tx, rx) = mpsc::channel();
    let mut wakers = Vec::new();
    for _ in 0..WAKERS {
        let (tx, stop, done) = (tx.clone(), stop.clone(), done.clone());
        wakers.push(std::thread::spawn(move || {
            tx.send(common::gettid()).unwrap();
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            done.wait();
        }));
    }
    drop(tx);
    let mut tids = idle_threads.tids();
    tids.extend(rx.iter().take(WAKERS));
    assert_eq!(tids.len(), IDLE + WAKERS);

    let Some(mut source) = common::bpf_source(vec![common::getpid()]) else {
        stop.store(true, Ordering::Relaxed);
        done.wait();
        return;
    };
    let start = Instant::now();
    let mut drains = 0;
    while start.elapsed() < Duration::from_secs(WATCH_SECS) {
        std::thread::sleep(Duration::from_secs(1));
        let s = source.sample().expect("drain");
        drains += 1;
        assert!(
            s.threads.len() > IDLE + WAKERS,
            "drain {drains}: {} threads listed",
            s.threads.len()
        );
    }
    // on 6.2+ (this machine) drains read only the threads that changed,
    // with a full pass now and then: the path this test guards
    let every_task = std::env::var_os("SCHEDTOP_READ_EVERY_TASK").is_some_and(|v| v == "1");
    let bpf = source.bpf().expect("a BPF source");
    match bpf.changed_only() {
        Some((full, overflows)) => {
            eprintln!(
                "{full} full passes ({overflows} after a dirty set overflowed) in {drains} drains"
            );
            assert!(full < drains / 2, "{full} full passes in {drains} drains");
        }
        None => assert!(
            every_task || bpf.storage() != schedtop::collect::bpf::Storage::TaskStorage,
            "task storage but every task read at every drain"
        ),
    }
    // the wakers stop; everything holds still
    stop.store(true, Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(300));
    let last = source.sample().expect("last drain");
    let mut wrong = Vec::new();
    for &tid in &tids {
        let theirs = common::proc_switches(tid);
        match last.thread(tid) {
            Some(t) if (t.voluntary, t.involuntary) == theirs => {}
            Some(t) => wrong.push(format!(
                "{tid}: ({}, {}) vs /proc {theirs:?}",
                t.voluntary, t.involuntary
            )),
            None => wrong.push(format!("{tid}: not listed")),
        }
    }
    let wakes: u64 = tids[IDLE..]
        .iter()
        .map(|&t| last.thread(t).map_or(0, |t| t.voluntary))
        .sum();
    eprintln!(
        "{drains} drains over {:.0} s; {} threads checked, {} wrong; the wakers' voluntary switches: {wakes}",
        start.elapsed().as_secs_f64(),
        tids.len(),
        wrong.len()
    );
    drop(idle_threads);
    done.wait();
    for h in wakers {
        h.join().unwrap();
    }
    assert!(
        wrong.is_empty(),
        "{} of {}: {:?}",
        wrong.len(),
        tids.len(),
        &wrong[..wrong.len().min(10)]
    );
    // the wakers really woke: ~20 a second each all along (half of it at least)
    assert!(
        wakes > WAKERS as u64 * WATCH_SECS * 10,
        "wakers' switches {wakes}"
    );
}
