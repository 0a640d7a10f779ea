//! Who woke each thread, as the probes count it, against workloads whose
//! wakers are known: a pipe ping-pong pair (each side wakes the other once
//! per write, and counts its writes), a nanosleep loop beside a spinner on
//! its CPU (woken by the timer interrupt, never by the spinner it
//! interrupted) and a chain (A waits on a futex that B releases after
//! reading a pipe that C writes). For every thread the wakers, the rest and
//! the pseudo-wakers sum exactly to the wakeups the probe counted, and no
//! pair was lost. Shared by the kernel matrix's guest checker and the
//! host's tests/bpf_wakers.rs (included there by path), so it needs nothing
//! from either.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use schedtop::collect::LiveSource;
use schedtop::model::why::{PseudoWaker, PSEUDO_WAKERS};
use schedtop::model::Sample;

pub type Outcome = Result<String, String>;

fn tid_now() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

fn pin(cpu: usize) {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set);
    }
}

/// The CPUs this process may use.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: as in pin.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

fn pipe() -> Result<[i32; 2], String> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills two fds.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err("pipe failed".into());
    }
    Ok(fds)
}

fn put(fd: i32) -> bool {
    // SAFETY: a one-byte write from a local.
    unsafe { libc::write(fd, [7u8].as_ptr().cast(), 1) == 1 }
}

fn get(fd: i32) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: a one-byte read into a local.
    unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) == 1 }
}

fn close(fds: &[i32]) {
    for &fd in fds {
        // SAFETY: our own fds.
        unsafe { libc::close(fd) };
    }
}

fn futex_wait(word: &AtomicU32, seen: u32) {
    // SAFETY: a private futex wait on a live atomic, with a timeout so a
    // lost wakeup cannot hang the check.
    unsafe {
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 200_000_000,
        };
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            seen,
            &ts as *const libc::timespec,
        );
    }
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: a private futex wake on a live atomic.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        );
    }
}

/// One thread's wakers over a run: by waker tid, the rest, the
/// pseudo-wakers, and the wakeups the probe counted meanwhile.
#[derive(Debug, Default)]
pub struct Woken {
    pub by: BTreeMap<u32, u64>,
    pub rest: u64,
    pub irq: [u64; PSEUDO_WAKERS],
    pub wakeups: u64,
}

impl Woken {
    pub fn listed(&self) -> u64 {
        self.by.values().sum::<u64>() + self.rest + self.irq.iter().sum::<u64>()
    }

    /// The thread that woke it most and its count.
    pub fn top(&self) -> Option<(u32, u64)> {
        self.by
            .iter()
            .max_by_key(|&(&t, &n)| (n, std::cmp::Reverse(t)))
            .map(|(&t, &n)| (t, n))
    }

    pub fn interrupts(&self) -> u64 {
        self.irq[..PseudoWaker::Idle as usize].iter().sum()
    }
}

/// A run of `bodies`, one thread each: every thread switches out once (so
/// the probe has its record), waits on its own start pipe (no wakeups while
/// the first Sample is taken), runs its body and exits. Samples are taken
/// until every thread was reported exited.
pub struct Run {
    pub tids: Vec<u32>,
    /// the Sample before the start, then every later one
    pub samples: Vec<Sample>,
    /// what the bodies returned (their own counts)
    pub counts: Vec<u64>,
}

type Body = Box<dyn FnOnce() -> u64 + Send>;

pub fn run(src: &mut LiveSource, bodies: Vec<Body>, stop: &AtomicBool) -> Result<Run, String> {
    let (tx, rx) = mpsc::channel();
    let mut starts = Vec::new();
    let mut handles = Vec::new();
    for (i, body) in bodies.into_iter().enumerate() {
        let [rd, wr] = pipe()?;
        starts.push((rd, wr));
        let tx = tx.clone();
        handles.push(std::thread::spawn(move || {
            tx.send((i, tid_now())).unwrap();
            std::thread::sleep(Duration::from_millis(2));
            get(rd);
            body()
        }));
    }
    let mut tids: Vec<(usize, u32)> = (0..handles.len()).map(|_| rx.recv().unwrap()).collect();
    tids.sort_unstable();
    let tids: Vec<u32> = tids.into_iter().map(|(_, t)| t).collect();
    let result = (|| {
        // every thread listed, and parked on its start pipe
        let mut first = None;
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(30));
            let s = src.sample().map_err(|e| format!("drain failed: {e:#}"))?;
            if tids
                .iter()
                .all(|&t| s.thread(t).is_some_and(|t| t.voluntary > 0))
            {
                first = Some(s);
                break;
            }
        }
        first.ok_or_else(|| format!("threads {tids:?} never listed"))
    })();
    let mut samples = Vec::new();
    match result {
        Ok(s) => samples.push(s),
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            for &(_, wr) in &starts {
                put(wr);
            }
            for h in handles {
                let _ = h.join();
            }
            return Err(e);
        }
    }
    for &(_, wr) in &starts {
        put(wr);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut err = None;
    loop {
        std::thread::sleep(Duration::from_millis(250));
        match src.sample() {
            Ok(s) => samples.push(s),
            Err(e) => err = Some(format!("drain failed: {e:#}")),
        }
        let exited = |t: u32| {
            samples
                .iter()
                .any(|s| s.thread(t).is_some_and(|t| t.exited))
        };
        if err.is_some() || tids.iter().all(|&t| exited(t)) {
            break;
        }
        if Instant::now() > deadline {
            err = Some("the workload did not end in 60 s".into());
            stop.store(true, Ordering::Relaxed);
        }
    }
    let counts = handles.into_iter().map(|h| h.join().unwrap_or(0)).collect();
    for (rd, wr) in starts {
        close(&[rd, wr]);
    }
    match err {
        Some(e) => Err(e),
        None => Ok(Run {
            tids,
            samples,
            counts,
        }),
    }
}

impl Run {
    /// Thread `tid`'s wakers summed over the run, and its wakeups from the
    /// first Sample to its last.
    pub fn woken(&self, tid: u32) -> Woken {
        let mut w = Woken::default();
        let mut first = None;
        let mut last = 0;
        for (k, s) in self.samples.iter().enumerate() {
            let Some(why) = s.thread(tid).and_then(|t| t.why.as_deref()) else {
                continue;
            };
            // unknown where the wakers were not counted: nothing to add
            let Some(wakeups) = why.wakeups else { continue };
            first.get_or_insert(wakeups);
            last = wakeups;
            if k == 0 {
                continue;
            }
            for &(by, n) in &why.woken_by {
                match PseudoWaker::of(by) {
                    Some(p) => w.irq[p as usize] += n,
                    None => *w.by.entry(by).or_default() += n,
                }
            }
            w.rest += why.woken_by_rest;
        }
        w.wakeups = last - first.unwrap_or(0);
        w
    }

    /// The kernel's count of the thread's voluntary switches (nvcsw) over
    /// the run: each ends in one wakeup, but the last (its exit).
    pub fn blocks(&self, tid: u32) -> u64 {
        let mut v = self
            .samples
            .iter()
            .filter_map(|s| s.thread(tid).map(|t| t.voluntary));
        let first = v.next().unwrap_or(0);
        v.next_back().unwrap_or(first) - first
    }

    /// Pairs the probe could not store during the run.
    pub fn lost(&self) -> u64 {
        let l = |s: &Sample| s.system.losses.wake_pairs_full;
        self.samples.last().map_or(0, l) - self.samples.first().map_or(0, l)
    }

    /// Every thread's wakers sum to its wakeups; none lost. These threads
    /// have at most four wakers each, all counted in their own records
    /// (bpf/why.bpf.h): no pair-map drain can lose one. A record read
    /// while a wakeup is under way may show the waker's count before the
    /// total (never the other way round): the first read may so hold one
    /// that the lists from there on miss; the last is the exit record,
    /// with none under way. So at most one missing, never an extra one.
    pub fn sums(&self) -> Result<(), String> {
        let mut bad = Vec::new();
        for &t in &self.tids {
            let w = self.woken(t);
            let missing = w.wakeups.checked_sub(w.listed());
            if missing.is_none_or(|m| m > 1) {
                bad.push(format!("{t}: listed {} of {}", w.listed(), w.wakeups));
            }
        }
        if self.lost() > 0 {
            bad.push(format!("{} pairs lost", self.lost()));
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad.join("; "))
        }
    }
}

/// A pipe ping-pong pair on two CPUs: each side's top waker is the other,
/// with as many wakeups as the other's writes (within 3 %: a write finds
/// the reader not asleep yet when the reader was preempted between its
/// own write and its read, which a busy 2-CPU VM did to 2.3 % of them),
/// and as many as the reader blocked by the kernel's count (nvcsw): at
/// least that many but 2 (the start and the exit), and at most 1 % more
/// (see `wakeups_match_blocks`).
pub fn ping_pong(src: &mut LiveSource) -> Outcome {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return Err("needs 2 CPUs".into());
    }
    let (a_to_b, b_to_a) = (pipe()?, pipe()?);
    let stop = Arc::new(AtomicBool::new(false));
    const ROUNDS: u64 = 20_000;
    let (ca, cb) = (cpus[0], cpus[1]);
    let (s1, s2) = (stop.clone(), stop.clone());
    let bodies: Vec<Body> = vec![
        Box::new(move || {
            pin(ca);
            let mut writes = 0;
            while writes < ROUNDS && !s1.load(Ordering::Relaxed) {
                if !put(a_to_b[1]) {
                    break;
                }
                writes += 1;
                if !get(b_to_a[0]) {
                    break;
                }
            }
            writes
        }),
        Box::new(move || {
            pin(cb);
            let mut writes = 0;
            while writes < ROUNDS && !s2.load(Ordering::Relaxed) {
                if !get(a_to_b[0]) || !put(b_to_a[1]) {
                    break;
                }
                writes += 1;
            }
            writes
        }),
    ];
    let r = run(src, bodies, &stop);
    close(&[a_to_b[0], a_to_b[1], b_to_a[0], b_to_a[1]]);
    let r = r?;
    let (a, b) = (r.tids[0], r.tids[1]);
    let (wa, wb) = (r.woken(a), r.woken(b));
    let (writes_a, writes_b) = (r.counts[0], r.counts[1]);
    let (blocks_a, blocks_b) = (r.blocks(a), r.blocks(b));
    let line = format!(
        "A {a} woken {} times ({blocks_a} blocks), top {:?} (B wrote {writes_b}); B {b} woken {} times ({blocks_b} blocks), top {:?} (A wrote {writes_a}); irq A {:?} B {:?}",
        wa.wakeups, wa.top(), wb.wakeups, wb.top(), wa.irq, wb.irq
    );
    r.sums().map_err(|e| format!("{line}; sums: {e}"))?;
    let near3 = |a: u64, b: u64| a.abs_diff(b) * 100 <= b.max(1) * 3;
    let ok = writes_a == ROUNDS
        && writes_b == ROUNDS
        && wa.top().is_some_and(|(t, n)| t == b && near3(n, writes_b))
        && wb.top().is_some_and(|(t, n)| t == a && near3(n, writes_a))
        && wakeups_match_blocks(wa.wakeups, blocks_a)
        && wakeups_match_blocks(wb.wakeups, blocks_b);
    if ok {
        Ok(line)
    } else {
        Err(line)
    }
}

/// Every block ends in a wakeup (but the exit; the start may fall either
/// side of the first Sample: 2 either way). The kernel also counts a
/// wakeup without a block: `try_to_wake_up` fires `sched_waking` for a
/// reader that has set its sleeping state but not yet switched out, and
/// then only puts it back to running (no nvcsw). How often that window is
/// hit depends on timing: within 2 on a host, but under QEMU's TCG, where
/// a vCPU is a host thread descheduled at any instruction, 15-25 of
/// ~19,750 on 5.10 — so the excess is bounded relatively, by 1 %.
fn wakeups_match_blocks(wakeups: u64, blocks: u64) -> bool {
    wakeups + 2 >= blocks && wakeups <= blocks + 2 + blocks / 100
}

/// A nanosleep loop beside a spinner pinned to the same CPU: woken by the
/// timer interrupt (hardirq, or the timer softirq), never by the spinner,
/// which is what the CPU was running when the timer fired. The timer
/// mostly interrupts the spinner in user mode, which only the preempt count
/// tells apart; every matrix kernel offers it (6.1 and 6.12 in their BTF,
/// 5.10 through kallsyms: `schedtop doctor`'s wakers line says which), so
/// the same is asserted on each. A kernel without it charged 298 of 300
/// of these wakeups to the spinner.
pub fn nanosleep_timer(src: &mut LiveSource) -> Outcome {
    let cpu = *allowed_cpus().last().unwrap_or(&0);
    let stop = Arc::new(AtomicBool::new(false));
    let (s1, s2) = (stop.clone(), stop.clone());
    const SLEEPS: u64 = 300;
    let bodies: Vec<Body> = vec![
        Box::new(move || {
            pin(cpu);
            let mut n = 0;
            while n < SLEEPS && !s1.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(2));
                n += 1;
            }
            s1.store(true, Ordering::Relaxed);
            n
        }),
        Box::new(move || {
            pin(cpu);
            let mut spins = 0u64;
            while !s2.load(Ordering::Relaxed) {
                spins = spins.wrapping_add(1);
                std::hint::spin_loop();
            }
            spins
        }),
    ];
    let r = run(src, bodies, &stop)?;
    let (sleeper, spinner) = (r.tids[0], r.tids[1]);
    let w = r.woken(sleeper);
    let by_spinner = w.by.get(&spinner).copied().unwrap_or(0);
    let line = format!(
        "sleeper woken {} times: interrupts {} ({:?}), idle {}, threads {:?}; by the spinner {by_spinner}",
        w.wakeups,
        w.interrupts(),
        w.irq,
        w.irq[PseudoWaker::Idle as usize],
        w.by
    );
    r.sums().map_err(|e| format!("{line}; sums: {e}"))?;
    // besides: the start byte (this thread) and the move to its CPU (the
    // migration stopper); a sleep whose timer fired before the thread was
    // off its CPU may not need a wakeup (seen: 2 of 300)
    let ok = r.counts[0] == SLEEPS
        && by_spinner == 0
        && w.interrupts() * 100 >= SLEEPS * 95
        && w.interrupts() <= SLEEPS;
    if ok {
        Ok(line)
    } else {
        Err(line)
    }
}

/// The chain's threads, in the order A, B, C.
pub const CHAIN: [&str; 3] = ["chain-a", "chain-b", "chain-c"];

/// A waits on a futex that B releases after each read from a pipe that C
/// writes every 2 ms: A's top waker is B, B's is C. The Run is returned for
/// the views to show.
pub fn chain(src: &mut LiveSource) -> Result<(String, Run), String> {
    let p = pipe()?;
    let stop = Arc::new(AtomicBool::new(false));
    let word = Arc::new(AtomicU32::new(0));
    const STEPS: u32 = 400;
    let (s1, s2, s3) = (stop.clone(), stop.clone(), stop.clone());
    let (w1, w2) = (word.clone(), word.clone());
    let name = |n: &str| {
        let c = std::ffi::CString::new(n).unwrap();
        // SAFETY: naming the calling thread with a short C string.
        unsafe { libc::pthread_setname_np(libc::pthread_self(), c.as_ptr()) };
    };
    let bodies: Vec<Body> = vec![
        Box::new(move || {
            name(CHAIN[0]);
            let mut seen = 0;
            while seen < STEPS && !s1.load(Ordering::Relaxed) {
                futex_wait(&w1, seen);
                seen = w1.load(Ordering::Acquire);
            }
            seen.into()
        }),
        Box::new(move || {
            name(CHAIN[1]);
            let mut n = 0u32;
            while n < STEPS && !s2.load(Ordering::Relaxed) && get(p[0]) {
                n += 1;
                w2.store(n, Ordering::Release);
                futex_wake(&w2);
            }
            n.into()
        }),
        Box::new(move || {
            name(CHAIN[2]);
            let mut n = 0;
            while n < STEPS && !s3.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(2));
                if !put(p[1]) {
                    break;
                }
                n += 1;
            }
            n.into()
        }),
    ];
    let r = run(src, bodies, &stop);
    close(&p);
    let r = r?;
    let (a, b, c) = (r.tids[0], r.tids[1], r.tids[2]);
    let (wa, wb) = (r.woken(a), r.woken(b));
    let line = format!(
        "A {a} woken {} times, top {:?}; B {b} woken {} times, top {:?}; C {c}",
        wa.wakeups,
        wa.top(),
        wb.wakeups,
        wb.top()
    );
    r.sums().map_err(|e| format!("{line}; sums: {e}"))?;
    // A may find the word moved before it waits (no wakeup then): most of
    // its wakeups, not all, are B's
    let ok = wa
        .top()
        .is_some_and(|(t, n)| t == b && n * 10 >= wa.wakeups * 8)
        && wb
            .top()
            // a write that lands while B still reads the one before wakes
            // no one (a slow TCG guest saw 391 of 400): most, never more
            .is_some_and(|(t, n)| {
                t == c && n * 100 >= u64::from(STEPS) * 95 && n <= u64::from(STEPS) + 2
            });
    if ok {
        Ok((line, r))
    } else {
        Err(line)
    }
}
