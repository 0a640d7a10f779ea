//! The wakeup_placement finding on a 4-node guest, with a workload whose
//! answer the kernel's wakeup path fixes. A waker pinned alone to node 0's
//! first CPU spins and, every 10 ms, writes a byte to a pipe; the victim,
//! allowed on every CPU, reads it. A pipe write is a sync wakeup, and with
//! the waker the only task on its CPU wake_affine_idle() picks the waker's
//! CPU over the victim's (idle) previous one; select_idle_sibling() then
//! looks for an idle CPU in that CPU's LLC only, node 0, whose other CPU a
//! pinned spinner keeps busy. So the victim queues behind the waker while
//! three nodes sit idle. It is SCHED_BATCH, which never preempts at wakeup
//! (nor, on 5.10/6.1, with CFS's sleeper credit): it waits until the tick
//! ends the waker's slice. On a 2-CPU box sharing one LLC (the CI host)
//! the same wakeup finds the idle CPU, so this lives here.
//!
//! Checked against the kernel: the victim's run_delay
//! (/proc/<pid>/task/<tid>/schedstat) over the window against the probes'
//! wait, and the other CPUs' idle time in /proc/stat against the finding's
//! idle figure.
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schedtop::collect::LiveSource;
use schedtop::model::findings::{of_samples, FindingKind, Scope, Value};
use schedtop::model::why::MigCause;
use schedtop::model::Topology;

use crate::checks::Outcome;
use crate::kernel;

const VICTIM: &str = "place-victim";
const WINDOW: Duration = Duration::from_secs(4);

/// `placement-workload WAKER_CPU BUSY_CPU|-`: runs until killed (`-`: no
/// busy spinner, to watch the same wakeups on a box with one LLC).
pub fn workload_main(args: &[String]) -> ! {
    let cpu = |i: usize| -> usize {
        args.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            eprintln!("usage: placement-workload WAKER_CPU BUSY_CPU|-");
            std::process::exit(2)
        })
    };
    let waker_cpu = cpu(0);
    let busy_cpu = (args.get(1).map(String::as_str) != Some("-")).then(|| cpu(1));
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills two fds.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        eprintln!("placement-workload: pipe failed");
        std::process::exit(2);
    }
    let (rd, wr) = (fds[0], fds[1]);
    let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new()
            .name(name.into())
            .spawn(f)
            .expect("spawn a workload thread")
    };
    if let Some(busy_cpu) = busy_cpu {
        spawn(
            "place-busy",
            Box::new(move || {
                let _ = kernel::set_affinity(0, busy_cpu);
                loop {
                    std::hint::spin_loop();
                }
            }),
        );
    }
    spawn(
        VICTIM,
        Box::new(move || {
            // SAFETY: sched_param is plain data; SCHED_BATCH takes priority 0.
            unsafe {
                let p = libc::sched_param { sched_priority: 0 };
                libc::sched_setscheduler(0, libc::SCHED_BATCH, &p);
            }
            let mut b = [0u8; 1];
            // SAFETY: one-byte reads from our pipe.
            while unsafe { libc::read(rd, b.as_mut_ptr().cast(), 1) } == 1 {}
        }),
    );
    spawn(
        "place-waker",
        Box::new(move || {
            let _ = kernel::set_affinity(0, waker_cpu);
            let b = [1u8; 1];
            loop {
                // SAFETY: a one-byte write to our pipe.
                unsafe { libc::write(wr, b.as_ptr().cast(), 1) };
                let until = Instant::now() + Duration::from_millis(10);
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
            }
        }),
    );
    std::thread::sleep(Duration::from_millis(100));
    println!("ready");
    let _ = std::io::stdout().flush();
    loop {
        // SAFETY: pause has no preconditions; the parent kills us.
        unsafe { libc::pause() };
    }
}

/// Per CPU: (idle + iowait, busy as schedtop counts it, all) jiffies
/// from /proc/stat.
fn cpu_times() -> Result<Vec<(u32, [u64; 3])>, String> {
    let s = std::fs::read_to_string("/proc/stat").map_err(|e| format!("/proc/stat: {e}"))?;
    let mut out = Vec::new();
    for l in s.lines() {
        let mut w = l.split_whitespace();
        let Some(cpu) = w
            .next()
            .and_then(|c| c.strip_prefix("cpu"))
            .and_then(|c| c.parse().ok())
        else {
            continue;
        };
        // user nice system idle iowait irq softirq steal (guest is in user)
        let v: Vec<u64> = w.take(8).filter_map(|x| x.parse().ok()).collect();
        if v.len() < 8 {
            return Err(format!("short /proc/stat line {l:?}"));
        }
        let busy = v[0] + v[1] + v[2] + v[5] + v[6];
        out.push((cpu, [v[3] + v[4], busy, v.iter().sum()]));
    }
    Ok(out)
}

/// The second field of schedstat: time spent waiting on a run queue (ns).
fn run_delay(pid: u32, tid: u32) -> Result<u64, String> {
    let p = format!("/proc/{pid}/task/{tid}/schedstat");
    let s = std::fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))?;
    s.split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("cannot parse {p}"))
}

/// The CPU thread `tid` last ran on: field 39 of its stat, counted after
/// the comm's closing parenthesis (a comm may hold spaces).
fn last_cpu(pid: u32, tid: u32) -> Result<u32, String> {
    let p = format!("/proc/{pid}/task/{tid}/stat");
    let s = std::fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))?;
    s.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(36))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("cannot parse {p}"))
}

/// The threads whose stat says running (R) with `cpu` as their last CPU:
/// what else sits on the waker's run queue when its wakeups stop pulling
/// the victim back (wake_affine wants the waker alone there).
fn runnable_on(cpu: u32) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        for tid in kernel::tids(pid).unwrap_or_default() {
            let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")) else {
                continue;
            };
            let Some((head, rest)) = s.rsplit_once(')') else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.first() == Some(&"R") && f.get(36).and_then(|c| c.parse().ok()) == Some(cpu) {
                let comm = head.split_once('(').map_or("", |x| x.1);
                out.push(format!("{tid} {comm}"));
            }
        }
    }
    out
}

/// Allow thread `tid` on `cpus`.
fn set_cpus(tid: u32, cpus: &[u32]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; sched_setaffinity only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(tid as libc::pid_t, std::mem::size_of_val(&set), &set) != 0 {
            let e = std::io::Error::last_os_error();
            return Err(format!("sched_setaffinity({tid}, {cpus:?}): {e}"));
        }
    }
    Ok(())
}

/// Where the knob is: debugfs since 5.13, a sysctl before.
const MIGRATION_COST: [&str; 2] = [
    "/sys/kernel/debug/sched/migration_cost_ns",
    "/proc/sys/kernel/sched_migration_cost_ns",
];

/// The balancer on this guest pulls the queued victim to an idle far CPU
/// within a tick or two, and its next wakeups stay there whenever another
/// task (a delayed dequeue on 6.12 counts) shares the waker's run queue:
/// the misplacement this finding is about rarely lasts a window. A task
/// that ran within `migration_cost_ns` is "cache hot" and the balancer
/// leaves it until its attempts fail a few times (and its interval grows),
/// so for the check the cost is raised to a second, and put back after.
struct MigrationCost(&'static str, String);

impl MigrationCost {
    fn raise() -> Result<MigrationCost, String> {
        let path = MIGRATION_COST
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .ok_or(format!("no migration cost knob ({MIGRATION_COST:?})"))?;
        let old = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        std::fs::write(path, "1000000000").map_err(|e| format!("{path}: {e}"))?;
        Ok(MigrationCost(path, old.trim().to_string()))
    }
}

impl Drop for MigrationCost {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0, &self.1);
    }
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn wakeup_placement(src: &mut LiveSource) -> Outcome {
    let topo: Topology = src.host().topology.clone();
    let nodes = topo.nodes();
    if nodes.len() < 4 {
        return Err(format!(
            "{} nodes: this check wants the 4-node guest",
            nodes.len()
        ));
    }
    let node0: Vec<u32> = topo
        .cpus
        .iter()
        .filter(|c| c.node == nodes[0])
        .map(|c| c.cpu)
        .collect();
    let [waker_cpu, busy_cpu, ..] = node0[..] else {
        return Err(format!("node {} has CPUs {node0:?}: two wanted", nodes[0]));
    };
    let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let mut child = Child(
        Command::new(exe)
            .args(["placement-workload", &waker_cpu.to_string()])
            .arg(busy_cpu.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the workload: {e}"))?,
    );
    let pid = child.0.id();
    let mut line = String::new();
    let out = child.0.stdout.take().ok_or("no workload stdout")?;
    BufReader::new(out)
        .read_line(&mut line)
        .map_err(|e| format!("workload: {e}"))?;
    if line.trim() != "ready" {
        return Err(format!("workload did not start: {line:?}"));
    }
    let victim = kernel::tids(pid)?
        .into_iter()
        .find(|&t| {
            std::fs::read_to_string(format!("/proc/{pid}/task/{t}/comm"))
                .is_ok_and(|c| c.trim() == VICTIM)
        })
        .ok_or("no victim thread")?;
    let _hot = MigrationCost::raise()?;
    std::thread::sleep(Duration::from_secs(1));
    // under TCG the victim is now and then left on a far node for a whole
    // window (see the misses' moves): up to five windows, each reported
    let mut misses = Vec::new();
    let all: Vec<u32> = topo.cpus.iter().map(|c| c.cpu).collect();
    for round in 1..=5 {
        // start each window with the victim on the waker's CPU: from there
        // only the balancer takes it away, never its wakeups. A sleeping
        // task keeps its CPU when its mask changes (the kernel moves only a
        // queued or running one), so it is pinned until a wakeup has put it
        // there, then every CPU is allowed again
        set_cpus(victim, &[waker_cpu])?;
        let pinned_at = Instant::now();
        while last_cpu(pid, victim)? != waker_cpu && pinned_at.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(50));
        let before = last_cpu(pid, victim)?;
        set_cpus(victim, &all)?;
        if before != waker_cpu {
            misses.push(format!(
                "round {round}: pinned to CPU {waker_cpu}, still on {before} after 2 s"
            ));
            continue;
        }
        match window(src, &topo, &node0, pid, victim) {
            Ok(line) => return Ok(format!("window {round}: {line}; misses: {misses:?}")),
            Err(e) => misses.push(e),
        }
    }
    drop(child);
    Err(format!("{misses:?}"))
}

fn window(src: &mut LiveSource, topo: &Topology, node0: &[u32], pid: u32, victim: u32) -> Outcome {
    let sample = |src: &mut LiveSource| src.sample().map_err(|e| format!("drain: {e:#}"));
    let a = sample(src)?;
    let (delay_a, stat_a, at_a) = (run_delay(pid, victim)?, cpu_times()?, Instant::now());
    std::thread::sleep(WINDOW);
    let b = sample(src)?;
    let (delay_b, stat_b, at_b) = (run_delay(pid, victim)?, cpu_times()?, Instant::now());
    let found = of_samples(topo, &a, &b, &Scope::default());
    let kinds: Vec<String> = found
        .iter()
        .map(|f| format!("{} {}", f.kind.key(), f.subject.name))
        .collect();
    // the kernel's figures for the window
    let kernel_wait_ms = delay_b.saturating_sub(delay_a) as f64 / 1e6;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let elapsed = at_b.duration_since(at_a).as_secs_f64() * hz;
    // per CPU: its idle jiffies' share of all its jiffies (the kernel's
    // idle accounting), and 1 - busy / elapsed (schedtop's figure: a tick
    // TCG never delivered counts as idle there)
    let idle: Vec<(u32, f64, f64)> = stat_b
        .iter()
        .filter_map(|&(cpu, [i1, b1, t1])| {
            let &(_, [i0, b0, t0]) = stat_a.iter().find(|s| s.0 == cpu)?;
            let by_idle = (i1 - i0) as f64 / (t1 - t0).max(1) as f64;
            let not_busy = 1.0 - ((b1 - b0) as f64 / elapsed).min(1.0);
            Some((cpu, by_idle, not_busy))
        })
        .collect();
    let far_idle: f64 = idle
        .iter()
        .filter(|(c, ..)| !node0.contains(c))
        .map(|(_, i, _)| i)
        .sum();
    let idle_besides = |own: Option<u32>| -> f64 {
        idle.iter()
            .filter(|(c, ..)| Some(*c) != own)
            .map(|(.., i)| i)
            .sum()
    };
    let (wait_ms, moves) = match (a.thread(victim), b.thread(victim)) {
        (Some(x), Some(y)) => (
            y.wait_ns.saturating_sub(x.wait_ns) as f64 / 1e6,
            MigCause::ALL.map(|c| format!("{} {}", c.key(), crate::why::cause(x, y, c))),
        ),
        _ => {
            return Err(format!(
                "victim {victim} not in both Samples; verdict {kinds:?}"
            ))
        }
    };
    let idle_text: Vec<String> = idle
        .iter()
        .map(|(c, i, n)| format!("{c}:{i:.2}/{n:.2}"))
        .collect();
    let head = format!(
        "victim waited {wait_ms:.0} ms (run_delay {kernel_wait_ms:.0} ms) in {:.1} s; CPU idle by /proc/stat (idle / not busy) {}; verdict {kinds:?}",
        WINDOW.as_secs_f64(),
        idle_text.join(" ")
    );
    let Some(f) = found
        .iter()
        .find(|f| f.kind == FindingKind::WakeupPlacement && f.subject.id == Value::Int(pid.into()))
    else {
        return Err(format!(
            "no wakeup_placement finding on pid {pid}: {head}; victim's moves {moves:?}, last on CPU {}; runnable on CPU {}: {:?}",
            b.thread(victim).map_or(u32::MAX, |t| t.cpu),
            node0[0],
            runnable_on(node0[0])
        ));
    };
    let num = |k: &str| match f.evidence.get(k) {
        Some(Value::Num(x)) => *x,
        Some(Value::Int(n)) => *n as f64,
        _ => f64::NAN,
    };
    let (woken_s, p99, idle_fig) = (
        num("wakeup_wait_s"),
        num("p99_wakeup_wait_ms"),
        num("idle_allowed_cpus"),
    );
    let on = f.evidence.get("last_ran_on_cpus").map(|v| v.to_string());
    let mut bad = Vec::new();
    // the probes' wait and the kernel's agree (ms waits: within 10 %)
    if (wait_ms - kernel_wait_ms).abs() > 0.1 * kernel_wait_ms.max(1.0) {
        bad.push("wait vs run_delay");
    }
    // the finding's share of it never exceeds the whole
    if woken_s.is_nan() || woken_s * 1e3 > wait_ms * 1.05 + 1.0 {
        bad.push("wakeup wait above the whole wait");
    }
    // the victim may use all CPUs: the finding counts every other one's
    // idle share, /proc/stat's of the CPUs besides the one it was last on;
    // and by the kernel's idle accounting the far nodes did sit idle
    let own: Option<u32> = on.as_deref().and_then(|c| c.parse().ok());
    let want_idle = idle_besides(own);
    if (idle_fig - want_idle).abs() > 0.3 || far_idle < 0.8 * (topo.cpus.len() - node0.len()) as f64
    {
        bad.push("idle CPUs vs /proc/stat");
    }
    // `last_ran_on_cpus` is where the victim last ran: an idle far CPU's
    // balancer pulls it off the waker's queue now and then (its load
    // balance moves), and the next wakeup brings it back (wakeup moves)
    let line = format!(
        "{head}; victim's moves: {}; finding: last ran on CPU {}, wakeup wait {woken_s} s, p99 {p99} ms, idle allowed CPUs {idle_fig} (/proc/stat: {want_idle:.2}, the far nodes {far_idle:.2}); {bad:?}",
        moves.join(", "),
        on.unwrap_or_default()
    );
    if bad.is_empty() {
        Ok(line)
    } else {
        Err(line)
    }
}
