//! The real probes against real workloads, checked against the kernel's own
//! counters. Runs as root on a BTF kernel; see common::bpf_source for skips.
use crate::common;

use std::time::Duration;

use common::*;
use schedtop::model::rates::{intervals, migration_deltas};
use schedtop::model::Sample;

fn sleep_s(s: f64) {
    std::thread::sleep(Duration::from_secs_f64(s));
}

/// The highest CPU this process may use (a restricted cpuset may not
/// hold CPU 0 or the machine's last CPU).
fn last_cpu() -> usize {
    *allowed_cpus().last().expect("some CPU is allowed")
}

fn thread_of(s: &Sample, tid: u32) -> &schedtop::model::ThreadSample {
    s.thread(tid)
        .unwrap_or_else(|| panic!("thread {tid} missing from the Sample"))
}

#[test]
fn spinners_are_preempted_and_sleepers_block() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let cpu = last_cpu();
    let spin = Workload::spinners(3, cpu);
    let sleep = Workload::sleepers(1, cpu, Duration::from_millis(2));
    let a = src.sample().unwrap();
    sleep_s(1.5);
    let b = src.sample().unwrap();
    let iv = intervals(Some(&a), &b);
    for &tid in &spin.tids {
        let d = iv
            .iter()
            .find(|(t, _)| t.tid == tid)
            .unwrap()
            .1
            .clone()
            .unwrap();
        assert!(
            d.involuntary > 50 && d.involuntary > 10 * d.voluntary,
            "spinner {tid}: {} involuntary, {} voluntary",
            d.involuntary,
            d.voluntary
        );
    }
    let tid = sleep.tids[0];
    let d = iv
        .iter()
        .find(|(t, _)| t.tid == tid)
        .unwrap()
        .1
        .clone()
        .unwrap();
    assert!(
        d.voluntary > 100 && d.voluntary > 10 * d.involuntary,
        "sleeper {tid}: {} voluntary, {} involuntary",
        d.voluntary,
        d.involuntary
    );
}

#[test]
fn switch_counts_agree_with_proc_status() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let cpu = last_cpu();
    let spin = Workload::spinners(2, cpu);
    let sleep = Workload::sleepers(2, cpu, Duration::from_micros(500));
    sleep_s(0.3);
    let tids: Vec<u32> = spin.tids.iter().chain(&sleep.tids).copied().collect();
    let proc_a: Vec<_> = tids.iter().map(|&t| proc_switches(t)).collect();
    let a = src.sample().unwrap();
    sleep_s(2.0);
    let proc_b: Vec<_> = tids.iter().map(|&t| proc_switches(t)).collect();
    let b = src.sample().unwrap();
    for (i, &tid) in tids.iter().enumerate() {
        let (ta, tb) = (thread_of(&a, tid), thread_of(&b, tid));
        let ours = (tb.voluntary - ta.voluntary, tb.involuntary - ta.involuntary);
        let kernel = (proc_b[i].0 - proc_a[i].0, proc_b[i].1 - proc_a[i].1);
        for (what, o, k) in [
            ("voluntary", ours.0, kernel.0),
            ("involuntary", ours.1, kernel.1),
        ] {
            let tolerance = ((k as f64 * 0.01).ceil() as u64).max(2);
            assert!(
                o.abs_diff(k) <= tolerance,
                "thread {tid} {what}: schedtop {o}, /proc {k}"
            );
        }
        assert!(
            ours.0 + ours.1 > 50,
            "thread {tid} barely switched: {ours:?}"
        );
    }
}

#[test]
fn slice_histogram_counts_every_switch_and_cpu_time_adds_up() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let cpu = last_cpu();
    // started after the probes attached: every slice has a known start
    let spin = Workload::spinners(4, cpu);
    sleep_s(0.3);
    let a = src.sample().unwrap();
    sleep_s(2.0);
    let b = src.sample().unwrap();
    let wall = (b.mono_ns - a.mono_ns) as f64;
    let mut oncpu_sum = 0u64;
    for &tid in &spin.tids {
        let t = thread_of(&b, tid);
        assert!(t.voluntary + t.involuntary > 50);
        oncpu_sum += t.oncpu_ns - thread_of(&a, tid).oncpu_ns;
    }
    // the spinners own the CPU but for kernel threads and our sampler's bits
    let share = oncpu_sum as f64 / wall;
    assert!(
        (0.90..=1.02).contains(&share),
        "spinners on one CPU got {:.3} of its wall time",
        share
    );
    // and the CPU's busy time says the same
    let busy = |s: &Sample| s.cpus.iter().find(|c| c.cpu == cpu as u32).unwrap().busy_ns;
    let busy_share = (busy(&b) - busy(&a)) as f64 / wall;
    assert!(
        (0.95..=1.02).contains(&busy_share),
        "CPU {cpu} busy {busy_share:.3}"
    );
}

#[test]
fn affinity_moves_show_as_migrations_with_source_and_destination() {
    let _g = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 && !cannot_run("needs 2 CPUs in the cpuset") {
        return;
    }
    let (c0, c1) = (cpus[0], cpus[1]);
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let w = Workload::free_spinners(1);
    let tid = w.tids[0];
    set_affinity(tid, c0);
    sleep_s(0.2);
    let a = src.sample().unwrap();
    let moves = 10u64;
    for i in 0..moves {
        set_affinity(tid, if i % 2 == 0 { c1 } else { c0 });
        sleep_s(0.05);
    }
    let b = src.sample().unwrap();
    let (ta, tb) = (thread_of(&a, tid), thread_of(&b, tid));
    assert_eq!(
        tb.migrations.unwrap() - ta.migrations.unwrap(),
        moves,
        "thread {tid} was moved {moves} times"
    );
    // half went 0->1, half 1->0; the system matrix holds at least those
    let m = migration_deltas(Some(&a), &b);
    let cell = |f, t| m.iter().find(|x| x.0 == f && x.1 == t).map_or(0, |x| x.2);
    let (f0, f1) = (c0 as u32, c1 as u32);
    assert!(cell(f0, f1) >= moves / 2, "{c0}->{c1}: {}", cell(f0, f1));
    assert!(cell(f1, f0) >= moves / 2, "{c1}->{c0}: {}", cell(f1, f0));
    assert_eq!(tb.cpu, f0, "the last move put it on CPU {c0}");
}

#[test]
fn thread_churn_leaves_no_map_entries() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let me = getpid();
    let before: usize = src
        .bpf()
        .unwrap()
        .map_entries()
        .unwrap()
        .iter()
        .filter(|e| e.1 == me)
        .count();
    let mut churned = std::collections::HashSet::new();
    for _ in 0..20 {
        let hs: Vec<_> = (0..100)
            .map(|_| {
                std::thread::spawn(|| {
                    std::thread::sleep(Duration::from_micros(200));
                    gettid()
                })
            })
            .collect();
        for h in hs {
            churned.insert(h.join().unwrap());
        }
    }
    assert_eq!(churned.len(), 2000);
    // the first drain reports the dead threads once, with their final counts
    let s1 = src.sample().unwrap();
    let reported: Vec<_> = s1
        .threads
        .iter()
        .filter(|t| churned.contains(&t.tid))
        .collect();
    // exact: every thread's final switch fires sched_switch with TASK_DEAD
    assert_eq!(
        reported.len(),
        2000,
        "{} of 2000 exited threads were reported",
        reported.len()
    );
    assert!(reported.iter().all(|t| t.exited && t.voluntary >= 1));
    // and then they are gone from the kernel's map and from later Samples
    let s2 = src.sample().unwrap();
    assert_eq!(
        s2.threads
            .iter()
            .filter(|t| churned.contains(&t.tid))
            .count(),
        0
    );
    let after = src.bpf().unwrap().map_entries().unwrap();
    let ours = after.iter().filter(|e| e.1 == me).count();
    let leftover = after.iter().filter(|e| churned.contains(&e.0)).count();
    assert_eq!(leftover, 0, "entries of exited threads left in the map");
    assert!(
        ours <= before + 2,
        "map entries of this process: {before} -> {ours}"
    );
    // nothing lost: the exited map held every exit, and no thread of the
    // whole system vanished without its final switch traced
    let l = s2.system.losses;
    assert_eq!((l.thread_map_full, l.exits_untraced), (0, 0), "{l:?}");
}

#[test]
fn pinned_spinners_give_a_run_queue_of_k_minus_one() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let cpu = last_cpu();
    for k in [1usize, 3, 5] {
        let spin = Workload::spinners(k, cpu);
        // a sleeper on the same CPU: blocked (maybe delayed-dequeued) tasks must not count
        let _sleep = Workload::sleepers(1, cpu, Duration::from_millis(3));
        sleep_s(0.3);
        let a = src.sample().unwrap();
        sleep_s(1.5);
        let b = src.sample().unwrap();
        let dt = schedtop::model::rates::elapsed_s(&a, &b);
        let cpus = schedtop::model::rates::cpu_intervals(Some(&a), &b, dt);
        let rq = cpus
            .iter()
            .find(|c| c.cpu == cpu as u32)
            .unwrap()
            .rq
            .clone()
            .expect("run-queue sampler attached");
        let want = (k - 1) as f64;
        eprintln!(
            "k={k} rq_len_avg={:.3} max={} samples={}",
            rq.avg, rq.max, rq.samples
        );
        assert!(
            (rq.avg - want).abs() <= 0.35,
            "{k} spinners on CPU {cpu}: rq_len_avg {:.2}, want about {want}",
            rq.avg
        );
        // timer samples really taken (rq.samples also counts the idle
        // time filled in as empty queue): a busy CPU fires all of them
        let taken = |s: &Sample| {
            let c = s.cpus.iter().find(|c| c.cpu == cpu as u32).unwrap();
            c.rq.as_ref().unwrap().samples
        };
        let fired = taken(&b) - taken(&a);
        assert!(fired >= 100, "{fired} timer samples in {dt:.1}s");
        drop(spin);
    }
}

/// The kernel's count of a thread's arrivals on a CPU (sched_info.pcount,
/// the third field of /proc/<tid>/schedstat).
fn proc_arrivals(tid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).unwrap();
    s.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// Wait until thread `tid` is blocked (state S) and off its CPU: its
/// arrival count stays put.
fn wait_blocked(tid: u32) {
    let state = || {
        let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
        let after = &s[s.rfind(')').unwrap() + 2..];
        after.chars().next().unwrap()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let before = proc_arrivals(tid);
        if state() == 'S' {
            sleep_s(0.02);
            if state() == 'S' && proc_arrivals(tid) == before {
                return;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "thread {tid} never blocked"
        );
        sleep_s(0.005);
    }
}

#[test]
fn slice_histogram_counts_what_the_kernel_counted_as_arrivals() {
    use std::sync::mpsc;
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let cpu = last_cpu();
    // a thread that sleeps `n` times when told, then blocks again
    let (go, go_rx) = mpsc::channel::<u32>();
    let (done_tx, done) = mpsc::channel::<u32>();
    let worker = std::thread::spawn(move || {
        pin_to(cpu);
        done_tx.send(gettid()).unwrap();
        while let Ok(n) = go_rx.recv() {
            for _ in 0..n {
                std::thread::sleep(Duration::from_micros(300));
            }
            done_tx.send(n).unwrap();
        }
    });
    let tid = done.recv().unwrap();
    let _busy = Workload::spinners(1, cpu); // some preemptions too
    for round in 0..3 {
        wait_blocked(tid);
        let (a, arr_a) = (src.sample().unwrap(), proc_arrivals(tid));
        let sleeps = 300;
        go.send(sleeps).unwrap();
        done.recv().unwrap();
        wait_blocked(tid);
        let (b, arr_b) = (src.sample().unwrap(), proc_arrivals(tid));
        let (ta, tb) = (thread_of(&a, tid), thread_of(&b, tid));
        let slices =
            tb.slice_hist.as_ref().unwrap().total() - ta.slice_hist.as_ref().unwrap().total();
        // blocked at both ends: every arrival in between ended in a
        // switch-out; pcount is a counter of its own, not nvcsw/nivcsw
        assert_eq!(
            slices,
            arr_b - arr_a,
            "round {round}: slice histogram grew {slices}, the kernel counted {} arrivals",
            arr_b - arr_a
        );
        let switches = (tb.voluntary + tb.involuntary) - (ta.voluntary + ta.involuntary);
        assert_eq!(slices, switches, "round {round}");
        // and the workload is known: about one switch-out per sleep. (A
        // sleep whose timer fires before the thread reaches schedule() --
        // the vCPU held up by the host, an interrupt -- returns without
        // blocking: 298 and 299 switch-outs for 300 sleeps were seen on
        // this VM.)
        assert!(
            switches >= sleeps as u64 * 9 / 10,
            "round {round}: {switches} switch-outs for {sleeps} sleeps"
        );
        assert!(
            tb.voluntary - ta.voluntary >= sleeps as u64 * 9 / 10,
            "round {round}: {} voluntary switches for {sleeps} sleeps",
            tb.voluntary - ta.voluntary
        );
    }
    drop(go);
    worker.join().unwrap();
}

/// More exits between two drains than the kernel's exited map holds (32,768):
/// a long interval (`-i 60` on a busy build box) must not lose them.
#[test]
fn more_exits_than_the_map_holds_between_two_drains_are_all_reported() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    let _ = src.sample().unwrap();
    let n = 40_000;
    let mut made = 0;
    while made < n {
        let hs: Vec<_> = (0..200)
            .map(|_| std::thread::spawn(|| std::hint::black_box(1)))
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        made += 200;
    }
    // give the last final switches time to land (they precede the join
    // only by the exiting thread's last few instructions)
    sleep_s(0.2);
    let s = src.sample().unwrap();
    let exits = s.threads.iter().filter(|t| t.exited).count();
    let l = s.system.losses;
    assert_eq!((l.thread_map_full, l.exits_untraced), (0, 0), "{l:?}");
    assert_eq!(exits, n, "exits reported in one drain");
}
