//! Stolen time is a measurement or unknown, never a 0 standing in for
//! "not measured": the real binary on a spinner of this process, with the
//! /proc source and with the interrupt-time probes off (stolen_ns null,
//! STOLEN% `-`), and with them on (a number: a thread spinning on a CPU
//! that has its scheduler tick is interrupted by it, so more than 0, and a
//! small part of its CPU time). The other per-thread counter, cross-node
//! migrations, stays a number throughout (a BPF source measures it).
use crate::common;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A schedtop process group, killed when dropped however the test ends.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: kill of the process group this test made.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// How the source runs.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Procfs,
    ProbesOff,
    ProbesOn,
}

/// schedtop `args` on this process, started: `finish` reads what it says.
fn start(mode: Mode, args: &[&str]) -> (Mode, Group) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedtop"));
    cmd.args(args)
        .args(["-i", "1", "-p", &common::getpid().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    match mode {
        Mode::Procfs => cmd.arg("--procfs").env_remove("SCHEDTOP_IRQ_TIME"),
        Mode::ProbesOff => cmd.arg("--require-bpf").env_remove("SCHEDTOP_IRQ_TIME"),
        Mode::ProbesOn => cmd.arg("--require-bpf").env("SCHEDTOP_IRQ_TIME", "1"),
    };
    (mode, Group(cmd.spawn().unwrap()))
}

/// The stdout of a started schedtop (a failure or a hang fails the test,
/// with what it said on stderr).
fn finish((mode, mut g): (Mode, Group)) -> String {
    let deadline = Instant::now() + Duration::from_secs(40);
    // both pipes are read after the exit: the few lines asked for fit in
    // a pipe's buffer
    while g.0.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "schedtop {mode:?} did not finish"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (mut out, mut err) = (String::new(), String::new());
    g.0.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    g.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(g.0.wait().unwrap().success(), "schedtop {mode:?}: {err}");
    out
}

/// A batch run of three intervals, started.
fn start_json(mode: Mode) -> (Mode, Group) {
    start(mode, &["--batch", "-n", "3"])
}

/// The spinner's row of the last batch interval.
fn spinner_json(run: (Mode, Group), tid: u32) -> serde_json::Value {
    let mode = run.0;
    let out = finish(run);
    let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    last["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tid"] == tid)
        .unwrap_or_else(|| panic!("{mode:?}: tid {tid} not in {last}"))
        .clone()
}

/// A snapshot of the threads view, started.
fn start_cell(mode: Mode) -> (Mode, Group) {
    start(
        mode,
        &[
            "snapshot",
            "--duration",
            "2s",
            "--format",
            "txt",
            "--size",
            "220x12",
        ],
    )
}

/// The STOLEN% cell of the spinner's row in a snapshot of the threads view.
fn spinner_cell(run: (Mode, Group), tid: u32) -> String {
    let mode = run.0;
    let out = finish(run);
    let mut lines = out.lines();
    let head = lines
        .find(|l| l.contains("STOLEN%"))
        .unwrap_or_else(|| panic!("{mode:?}: no STOLEN% column in\n{out}"));
    // right-aligned: the cell ends where the title does
    let end = head.find("STOLEN%").unwrap() + "STOLEN%".len();
    let row = lines
        .find(|l| l.split_whitespace().next() == Some(&tid.to_string()))
        .unwrap_or_else(|| panic!("{mode:?}: no row for {tid} in\n{out}"));
    let start = end - "STOLEN%".len();
    row.get(start..end)
        .unwrap_or_else(|| panic!("{mode:?}: short row {row:?}"))
        .trim()
        .to_string()
}

#[test]
fn stolen_time_is_unknown_where_not_measured_and_a_number_where_it_is() {
    let _serial = common::serial();
    if common::bpf_source(vec![common::getpid()]).is_none() {
        return;
    }
    let cpu = common::allowed_cpus()[0];
    let spin = common::Workload::spinners(1, cpu);
    let tid = spin.tids[0];

    // the six runs side by side: each process has its own probes (or
    // none), and none of them checks a time (one after the other they
    // took 31 s, most of it three-second windows waited in turn)
    let modes = [Mode::Procfs, Mode::ProbesOff, Mode::ProbesOn];
    let mut json = modes.map(start_json).into_iter();
    let mut cells = modes.map(start_cell).into_iter();
    let mut off = serde_json::Value::Null;
    for mode in [Mode::Procfs, Mode::ProbesOff] {
        let t = spinner_json(json.next().unwrap(), tid);
        assert!(t["stolen_ns"].is_null(), "{mode:?}: {t}");
        assert!(t["stolen_by_kind_ns"].is_null(), "{mode:?}: {t}");
        assert_eq!(spinner_cell(cells.next().unwrap(), tid), "-", "{mode:?}");
        off = t;
    }
    // BPF measures cross-node migrations whatever the interrupt probes do
    assert_eq!(off["cross_node_migrations"].as_u64(), Some(0), "{off}");

    let t = spinner_json(json.next().unwrap(), tid);
    let stolen = t["stolen_ns"].as_u64().unwrap_or_else(|| panic!("on: {t}"));
    let oncpu = t["oncpu_ns"].as_u64().unwrap();
    eprintln!("probes on: spinner stolen {stolen} ns of {oncpu} ns on CPU");
    // a shared machine may give it little of the second, never none
    assert!(oncpu > 20_000_000, "the spinner ran: {t}");
    // the kernel counts interrupt time in the interrupted thread's CPU
    // time (no CONFIG_IRQ_TIME_ACCOUNTING), so it cannot lose more
    assert!(stolen > 0 && stolen <= oncpu, "{t}");
    let by_kind: u64 = t["stolen_by_kind_ns"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by_kind, stolen, "{t}");
    let cell = spinner_cell(cells.next().unwrap(), tid);
    let pct: f64 = cell
        .parse()
        .unwrap_or_else(|_| panic!("on: STOLEN% {cell:?}"));
    assert!((0.0..=100.0).contains(&pct), "on: STOLEN% {pct}");
    drop(spin);
}
