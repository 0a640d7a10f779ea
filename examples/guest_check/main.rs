//! Checks schedtop against the kernel it runs on, inside a test guest
//! booted by scripts/kernel-matrix.sh: each check prints one line,
//! `PASS name: figures` or `FAIL name: figures`, and the exit status is
//! the number of failures (capped). Built static like schedtop itself.
//!
//! Usage: guest_check [--schedtop PATH] [--only NAME]   (as root, in the guest;
//! --only runs the checks whose name contains NAME, e.g. on the host)
//! Its own workloads: guest_check workload ... / numa-workload SECS /
//! wait-workload SECS / churn-workload N SECS / placement-workload CPU CPU
mod cgroup_v2;
mod checks;
mod churn;
mod kernel;
#[path = "../../tests/common/perfetto.rs"]
#[allow(dead_code)]
mod perfetto;
mod placement;
#[path = "../../tests/common/spin_sleep.rs"]
mod spin_sleep;
mod trace;
mod wait_oracle;
mod wakers;
mod why;
mod workload;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use schedtop::collect::{LiveOptions, LiveSource};

use checks::Outcome;

struct Report {
    pass: u32,
    fail: u32,
    since: Instant,
    only: Option<String>,
}

impl Report {
    fn record(&mut self, name: &str, outcome: Outcome) {
        // wall time in a TCG guest: for the CI budget, not for any verdict
        let secs = self.since.elapsed().as_secs_f64();
        self.since = Instant::now();
        let (word, text) = match outcome {
            Ok(t) => {
                self.pass += 1;
                ("PASS", t)
            }
            Err(t) => {
                self.fail += 1;
                ("FAIL", t)
            }
        };
        println!("{word} {name}: {text} [{secs:.1} s]");
    }

    /// A check that panics is a failure with the panic's message, and the
    /// other checks still run.
    fn run(&mut self, name: &str, f: impl FnOnce() -> Outcome) {
        if self
            .only
            .as_ref()
            .is_some_and(|o| !name.contains(o.as_str()))
        {
            return;
        }
        let outcome = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("panicked: {msg}"))
        });
        self.record(name, outcome);
    }
}

fn main() {
    // the waker checks need the wakers, off by default (their cost); set
    // before any thread starts
    std::env::set_var("SCHEDTOP_WAKERS", "1");
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("workload") => workload::child_main(&args[1..]),
        Some("numa-workload") => return workload::numa_main(&args[1..]),
        Some("wait-workload") => return wait_oracle::workload_main(&args[1..]),
        Some("churn-workload") => return churn::workload_main(&args[1..]),
        Some("placement-workload") => placement::workload_main(&args[1..]),
        _ => {}
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let schedtop = value("--schedtop").unwrap_or_else(|| "/schedtop".into());
    let mut report = Report {
        pass: 0,
        fail: 0,
        since: Instant::now(),
        only: value("--only"),
    };
    let opts = LiveOptions {
        interval_ns: 1_000_000_000,
        pid_filter: vec![],
        force_procfs: false,
        require_bpf: false,
        run_delay_waits: false,
        threads: Default::default(),
    };
    let mut src = match LiveSource::open(&opts) {
        Ok(s) => s,
        Err(e) => {
            report.record("source", Err(format!("cannot open any source: {e:#}")));
            std::process::exit(1);
        }
    };
    let last_cpu = src
        .host()
        .topology
        .cpus
        .last()
        .map_or(0, |c| c.cpu as usize);
    report.record("source", checks::source(&src));
    if report.only.is_none() {
        let (counts, hists, split) = checks::switches_and_histograms(&mut src, last_cpu);
        report.record("switch counts", counts);
        report.record("slice histogram", hists);
        report.record("wait split", split);
    }
    for k in [1, 3] {
        report.run(&format!("run-queue length K={k}"), || {
            checks::runqueue(&mut src, last_cpu, k)
        });
    }
    // the 4-node guest's checks (scripts/kernel-matrix.sh boots it with
    // --only 4-node); the 2-node guests have no idle far node to show
    if src.host().topology.nodes().len() >= 4 {
        report.run("4-node cross-node churn", || {
            churn::cross_node_churn(&mut src)
        });
        report.run("4-node wakeup placement", || {
            placement::wakeup_placement(&mut src)
        });
    }
    report.run("migrations", || checks::migrations(&mut src));
    report.run("thread exits", || checks::exits(&mut src));
    report.run("cgroup v2", || cgroup_v2::cgroup_v2(&mut src));
    report.run("migration causes", || why::load_balance(&mut src));
    report.run("block reasons", || why::block_reasons(&mut src));
    report.run("wakers ping-pong", || wakers::ping_pong(&mut src));
    report.run("wakers nanosleep", || wakers::nanosleep_timer(&mut src));
    report.run("wakers chain", || {
        wakers::chain(&mut src).map(|(line, _)| line)
    });
    let mut slices = None;
    report.run("run-queue wait vs perf", || {
        let (waits, s) = wait_oracle::against_perf(&mut src);
        slices = Some(s);
        waits
    });
    report.run("slice vs perf", || {
        slices.unwrap_or_else(|| Err("the recording with perf did not run".into()))
    });
    drop(src); // the tracer attaches its own probes
    report.run("tracer", || trace::trace(&schedtop));
    println!("RESULT {} passed, {} failed", report.pass, report.fail);
    std::process::exit(report.fail.min(100) as i32);
}
