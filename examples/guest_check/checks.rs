//! The checks: schedtop's figures against the kernel's own counters and
//! against workloads whose behaviour is known. Counts must match exactly;
//! nothing here depends on timing (TCG guests are slow and uneven).
use std::collections::HashSet;
use std::time::Duration;

use schedtop::collect::LiveSource;
use schedtop::model::rates::{cpu_intervals, elapsed_s};
use schedtop::model::{Sample, SourceKind};

use crate::kernel;
use crate::workload::{Mix, Workload};

pub type Outcome = Result<String, String>;

fn sleep_s(s: f64) {
    std::thread::sleep(Duration::from_secs_f64(s));
}

fn sample(src: &mut LiveSource) -> Result<Sample, String> {
    src.sample().map_err(|e| format!("drain failed: {e:#}"))
}

fn need_bpf(src: &LiveSource) -> Result<(), String> {
    match src.host().source {
        SourceKind::Bpf => Ok(()),
        SourceKind::Procfs => Err("not measured: the BPF source did not load".into()),
    }
}

pub fn source(src: &LiveSource) -> Outcome {
    let h = src.host();
    let line = format!(
        "source={} kernel={} cpus={} nodes={}",
        h.source.as_str(),
        h.kernel,
        h.topology.cpus.len(),
        h.topology.nodes().len()
    );
    match (&h.source, &h.degraded_reason) {
        (SourceKind::Bpf, None) => Ok(line),
        (SourceKind::Bpf, Some(r)) => Ok(format!("{line} (degraded: {r})")),
        (SourceKind::Procfs, r) => Err(format!("{line}: {}", r.as_deref().unwrap_or("?"))),
    }
}

/// Spinners and sleepers on one CPU, frozen with SIGSTOP before the last
/// drain: per thread, voluntary/involuntary must equal /proc exactly, and
/// (born after the probes attached) the slice histogram must hold one entry
/// per switch-out the kernel counted. And the waits split by kind: each
/// switch-out accounts the wait before its slice, which began at a wakeup
/// after a voluntary switch-out (or the thread's start) and at a preemption
/// after an involuntary one; the last switch-out (the stop) is voluntary,
/// so per thread the wakeup waits equal the voluntary switches and the
/// preempted waits the involuntary ones, exactly. Returns (switch counts,
/// histograms, wait split).
pub fn switches_and_histograms(src: &mut LiveSource, cpu: usize) -> (Outcome, Outcome, Outcome) {
    match frozen_counts(src, cpu) {
        Ok(r) => r,
        Err(e) => (Err(e.clone()), Err(e.clone()), Err(e)),
    }
}

fn frozen_counts(src: &mut LiveSource, cpu: usize) -> Result<(Outcome, Outcome, Outcome), String> {
    let mix = Mix {
        spinners: 2,
        sleepers: 2,
        cpu: Some(cpu),
        sleep_us: 1000,
    };
    let w = Workload::start(mix)?;
    sleep_s(2.0);
    sample(src)?; // a drain while it runs
    sleep_s(1.0);
    w.freeze()?;
    let tids = w.tids()?;
    let proc_before: Vec<_> = tids
        .iter()
        .map(|&t| kernel::switches(w.pid, t))
        .collect::<Result<_, _>>()?;
    let s = sample(src)?;
    let proc_after: Vec<_> = tids
        .iter()
        .map(|&t| kernel::switches(w.pid, t))
        .collect::<Result<_, _>>()?;
    if proc_before != proc_after {
        return Err("the frozen workload still switched".into());
    }
    let (mut bad_counts, mut bad_hist) = (Vec::new(), Vec::new());
    let (mut vol, mut inv, mut hist_sum) = (0, 0, 0);
    let (mut bad_split, mut wake_sum, mut pre_sum) = (Vec::new(), 0, 0);
    for (&tid, &(v, i)) in tids.iter().zip(&proc_after) {
        let Some(t) = s.thread(tid) else {
            bad_counts.push(format!("{tid} missing"));
            continue;
        };
        vol += v;
        inv += i;
        if (t.voluntary, t.involuntary) != (v, i) {
            bad_counts.push(format!(
                "{tid}: schedtop {}/{} /proc {v}/{i}",
                t.voluntary, t.involuntary
            ));
        }
        let n = |h: &Option<schedtop::model::Log2Hist>| h.as_ref().map(|h| h.total());
        match (n(&t.wakeup_wait_hist), n(&t.preempt_wait_hist)) {
            // one wait may change sides: a switch the kernel counts as
            // voluntary can leave the thread runnable (a signal arrived as
            // it went to sleep), and its wait is then a preempted one
            (Some(w), Some(p)) if w + p == v + i && p.abs_diff(i) <= 1 => {
                wake_sum += w;
                pre_sum += p;
            }
            (w, p) => bad_split.push(format!(
                "{tid}: waits after wakeup {w:?} / preemption {p:?}, switches {v}/{i}"
            )),
        }
        match &t.slice_hist {
            Some(h) if h.total() == v + i => hist_sum += h.total(),
            Some(h) => bad_hist.push(format!(
                "{tid}: histogram {} switch-outs {}",
                h.total(),
                v + i
            )),
            None => bad_hist.push(format!(
                "{tid}: no histogram (source {})",
                src.host().source.as_str()
            )),
        }
    }
    let figures = format!(
        "{} threads, voluntary {vol}, involuntary {inv} (/proc), schedtop's source {}",
        tids.len(),
        src.host().source.as_str()
    );
    let counts = if bad_counts.is_empty() && vol > 0 && inv > 0 {
        Ok(format!("{figures}, all equal"))
    } else {
        Err(format!("{figures}; {}", bad_counts.join("; ")))
    };
    let hists = if let Err(e) = need_bpf(src) {
        Err(e)
    } else if bad_hist.is_empty() {
        Ok(format!(
            "slice histogram totals {hist_sum} = switch-outs {}",
            vol + inv
        ))
    } else {
        Err(bad_hist.join("; "))
    };
    let split = if let Err(e) = need_bpf(src) {
        Err(e)
    } else if bad_split.is_empty() {
        Ok(format!(
            "waits after a wakeup {wake_sum} = voluntary {vol}, after a preemption {pre_sum} = involuntary {inv}"
        ))
    } else {
        Err(bad_split.join("; "))
    };
    Ok((counts, hists, split))
}

/// K spinners and a sleeper pinned to `cpu`: K-1 tasks wait there.
pub fn runqueue(src: &mut LiveSource, cpu: usize, k: usize) -> Outcome {
    need_bpf(src)?;
    let mix = Mix {
        spinners: k,
        sleepers: 1,
        cpu: Some(cpu),
        // asleep most of the time (a delayed-dequeue candidate that must
        // not count), rarely waiting itself: slow TCG wakeups would add
        // its own waits to the queue
        sleep_us: 10_000,
    };
    let _w = Workload::start(mix)?;
    sleep_s(1.5);
    let a = sample(src)?;
    sleep_s(4.0);
    let b = sample(src)?;
    let dt = elapsed_s(&a, &b);
    let rq = cpu_intervals(Some(&a), &b, dt)
        .into_iter()
        .find(|c| c.cpu == cpu as u32)
        .and_then(|c| c.rq)
        .ok_or("no run-queue figures (sampler off)")?;
    let want = (k - 1) as f64;
    let line = format!(
        "CPU {cpu}, {k} spinners + 1 sleeper: avg {:.2} (want {want}), max {}, {} samples in {dt:.1} s",
        rq.avg, rq.max, rq.samples
    );
    if (rq.avg - want).abs() <= 0.5 && rq.samples >= 50 {
        Ok(line)
    } else {
        Err(line)
    }
}

/// A spinning thread moved between a CPU of the first node and one of
/// another node: schedtop's migrations must equal the kernel's
/// se.nr_migrations delta, and cross-node migrations must show.
pub fn migrations(src: &mut LiveSource) -> Outcome {
    need_bpf(src)?;
    let topo = src.host().topology.clone();
    let nodes = topo.nodes();
    if nodes.len() < 2 {
        return Err(format!("needs 2 NUMA nodes, the guest has {}", nodes.len()));
    }
    let cpu_of = |n: u32| {
        topo.cpus
            .iter()
            .find(|c| c.node == n)
            .map(|c| c.cpu as usize)
    };
    let (a_cpu, b_cpu) = (cpu_of(nodes[0]).unwrap(), cpu_of(nodes[1]).unwrap());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let flag = stop.clone();
    let h = std::thread::spawn(move || {
        tx.send(kernel::gettid()).unwrap();
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    });
    let result = (|| {
        let tid = rx.recv().map_err(|e| e.to_string())?;
        let pid = std::process::id();
        kernel::set_affinity(tid, a_cpu)?;
        sleep_s(0.5);
        let k0 = kernel::nr_migrations(pid, tid)?;
        let s0 = sample(src)?;
        let moves = 20;
        for i in 0..moves {
            kernel::set_affinity(tid, if i % 2 == 0 { b_cpu } else { a_cpu })?;
            sleep_s(0.1);
        }
        // pinned now: no more migrations can happen before both reads
        let k1 = kernel::nr_migrations(pid, tid)?;
        let s1 = sample(src)?;
        let t0 = s0
            .thread(tid)
            .ok_or("thread missing from the first Sample")?;
        let t1 = s1
            .thread(tid)
            .ok_or("thread missing from the last Sample")?;
        let ours = t1
            .migrations
            .unwrap_or(0)
            .saturating_sub(t0.migrations.unwrap_or(0));
        let x = schedtop::model::counters::CTR_CROSS_NODE_MIGRATIONS;
        let xnode =
            (t1.counters.get(x).unwrap_or(0)).saturating_sub(t0.counters.get(x).unwrap_or(0));
        let affinity = crate::why::cause(t0, t1, schedtop::model::why::MigCause::Affinity);
        let line = format!(
            "{moves} moves CPU {a_cpu} (node {}) <-> CPU {b_cpu} (node {}): schedtop {ours} migrations, {xnode} cross-node, {affinity} by affinity; kernel se.nr_migrations +{}",
            nodes[0],
            nodes[1],
            k1 - k0
        );
        if ours == k1 - k0 && k1 - k0 >= moves && xnode > 0 && affinity == ours {
            Ok(line)
        } else {
            Err(line)
        }
    })();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = h.join();
    result
}

/// 2,000 short threads: each reported exactly once as exited, none lost,
/// none left behind.
pub fn exits(src: &mut LiveSource) -> Outcome {
    need_bpf(src)?;
    let s0 = sample(src)?;
    let mut tids = HashSet::new();
    for _ in 0..20 {
        let hs: Vec<_> = (0..100)
            .map(|_| {
                std::thread::spawn(|| {
                    std::thread::sleep(Duration::from_micros(200));
                    kernel::gettid()
                })
            })
            .collect();
        for h in hs {
            tids.insert(h.join().map_err(|_| "a short thread panicked")?);
        }
    }
    let s1 = sample(src)?;
    let s2 = sample(src)?;
    let reported: Vec<_> = s1
        .threads
        .iter()
        .filter(|t| tids.contains(&t.tid))
        .collect();
    let exited = reported
        .iter()
        .filter(|t| t.exited && t.voluntary >= 1)
        .count();
    let again = s2.threads.iter().filter(|t| tids.contains(&t.tid)).count();
    // losses that would lose an exit: the exit map full, a thread gone
    // without its final switch traced (as tests/live/bpf_live.rs asks). A torn
    // copy of a live thread's listing is mended from its last good one and
    // loses no exit; it is shown, not failed on (one vCPU can stall in the
    // middle of the probe's update while another lists the threads)
    let (l0, l2) = (&s0.system.losses, &s2.system.losses);
    let lost = (l2.thread_map_full - l0.thread_map_full) + (l2.exits_untraced - l0.exits_untraced);
    let torn = l2.torn_reads - l0.torn_reads;
    let line = format!(
        "{} threads: {} reported exited with their counts, {again} reported again, {lost} exits lost (map full {}, untraced {}), {torn} torn reads mended",
        tids.len(),
        exited,
        l2.thread_map_full - l0.thread_map_full,
        l2.exits_untraced - l0.exits_untraced,
    );
    if tids.len() == 2000 && exited == 2000 && reported.len() == 2000 && again == 0 && lost == 0 {
        Ok(line)
    } else {
        Err(line)
    }
}
