//! Known workloads, run as child processes of the checker (the checker
//! re-executes itself) so that they can be frozen with SIGSTOP while the
//! checker keeps draining.
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::kernel;

/// What a child runs: spinners and sleepers, all pinned to `cpu` if given.
#[derive(Clone, Copy, Debug)]
pub struct Mix {
    pub spinners: usize,
    pub sleepers: usize,
    pub cpu: Option<usize>,
    pub sleep_us: u64,
}

/// A running child workload; killed (SIGKILL) and reaped when dropped.
pub struct Workload {
    child: Child,
    pub pid: u32,
}

impl Workload {
    pub fn start(mix: Mix) -> Result<Workload, String> {
        let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
        let cpu = mix.cpu.map_or("-".to_string(), |c| c.to_string());
        let child = Command::new(exe)
            .args([
                "workload",
                &mix.spinners.to_string(),
                &mix.sleepers.to_string(),
            ])
            .args([cpu, mix.sleep_us.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting the workload: {e}"))?;
        let pid = child.id();
        let mut w = Workload { child, pid };
        // every thread has started (and pinned itself) once it says so
        let mut line = String::new();
        let out = w.child.stdout.take().ok_or("no workload stdout")?;
        BufReader::new(out)
            .read_line(&mut line)
            .map_err(|e| format!("workload: {e}"))?;
        if line.trim() != "ready" {
            return Err(format!("workload did not start: {line:?}"));
        }
        Ok(w)
    }

    pub fn tids(&self) -> Result<Vec<u32>, String> {
        kernel::tids(self.pid)
    }

    /// SIGSTOP, then wait until every thread is stopped and its counts no
    /// longer move: a thread shows `T` just before its last switch-out.
    pub fn freeze(&self) -> Result<(), String> {
        // SAFETY: kill has no memory preconditions; pid is our live child.
        if unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGSTOP) } != 0 {
            return Err(format!("SIGSTOP: {}", std::io::Error::last_os_error()));
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = None;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(300));
            let tids = self.tids()?;
            let stopped = tids
                .iter()
                .all(|&t| kernel::state(self.pid, t).is_ok_and(|s| s == 'T'));
            let counts: Result<Vec<_>, _> = tids
                .iter()
                .map(|&t| kernel::switches(self.pid, t))
                .collect();
            let counts = Some(counts?);
            if stopped && counts == last {
                return Ok(());
            }
            last = if stopped { counts } else { None };
        }
        Err("the workload did not stop within 60 s".into())
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pin(cpu: Option<usize>) {
    if let Some(c) = cpu {
        if let Err(e) = kernel::set_affinity(0, c) {
            eprintln!("workload: {e}");
            std::process::exit(2);
        }
    }
}

/// The child's body: `workload SPINNERS SLEEPERS CPU|- SLEEP_US`. Runs until
/// killed.
pub fn child_main(args: &[String]) -> ! {
    let num = |i: usize| -> u64 {
        args.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            eprintln!("usage: workload SPINNERS SLEEPERS CPU|- SLEEP_US");
            std::process::exit(2)
        })
    };
    let (spinners, sleepers, sleep_us) = (num(0), num(1), num(3));
    let cpu: Option<usize> = args.get(2).and_then(|s| s.parse().ok());
    let (tx, rx) = std::sync::mpsc::channel();
    for i in 0..spinners + sleepers {
        let tx = tx.clone();
        let sleeper = i >= spinners;
        let name = if sleeper { "wl-sleep" } else { "wl-spin" };
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                pin(cpu);
                tx.send(()).unwrap();
                if sleeper {
                    loop {
                        std::thread::sleep(Duration::from_micros(sleep_us));
                    }
                }
                loop {
                    std::hint::spin_loop();
                }
            })
            .expect("spawn a workload thread");
    }
    for _ in 0..spinners + sleepers {
        rx.recv().unwrap();
    }
    println!("ready");
    let _ = std::io::stdout().flush();
    loop {
        // SAFETY: pause has no preconditions; the parent kills us.
        unsafe { libc::pause() };
    }
}

/// `numa-workload SECS`: threads hopping between NUMA nodes with
/// sched_setaffinity for SECS seconds, for the NUMA view's picture. One
/// walks a ring over all nodes, one bounces between the first and the
/// third node, one between the second and the fourth, at different paces.
pub fn numa_main(args: &[String]) {
    let secs: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(30);
    let topo = match schedtop::collect::topology::read_topology(std::path::Path::new("/sys")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("numa-workload: {e:#}");
            std::process::exit(2);
        }
    };
    let nodes = topo.nodes();
    let cpus_of = |n: u32| -> Vec<usize> {
        topo.cpus
            .iter()
            .filter(|c| c.node == n)
            .map(|c| c.cpu as usize)
            .collect()
    };
    let node_cpus: Vec<Vec<usize>> = nodes.iter().map(|&n| cpus_of(n)).collect();
    let k = node_cpus.len();
    let ring: Vec<usize> = (0..k).collect();
    let plans: Vec<(&str, Vec<usize>, u64)> = vec![
        ("hop-ring", ring, 40),
        ("hop-0-2", vec![0, 2 % k], 25),
        ("hop-1-3", vec![1 % k, 3 % k], 100),
    ];
    let end = Instant::now() + Duration::from_secs(secs);
    let handles: Vec<_> = plans
        .into_iter()
        .map(|(name, path, pause_ms)| {
            let node_cpus = node_cpus.clone();
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    let mut step = 0usize;
                    while Instant::now() < end {
                        let cpus = &node_cpus[path[step % path.len()]];
                        let _ = kernel::set_affinity(0, cpus[step % cpus.len()]);
                        // busy for a while on that node, then move on
                        let until = Instant::now() + Duration::from_millis(pause_ms);
                        while Instant::now() < until {
                            std::hint::spin_loop();
                        }
                        step += 1;
                    }
                })
                .expect("spawn a hopping thread")
        })
        .collect();
    for h in handles {
        let _ = h.join();
    }
}
