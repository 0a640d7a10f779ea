//! The scheduling policy, RT priority and allowed CPUs end to end: sleeping
//! threads set their own policy with sched_setscheduler(2) and their
//! affinity with sched_setaffinity(2); the kernel's answers
//! (sched_getscheduler, sched_getparam, sched_getaffinity) are what the
//! procfs and BPF sources must report, and what reaches the POLICY/RTPRI
//! columns and the JSON. The threads sleep: a FIFO thread that sleeps
//! takes nothing from anyone.
use crate::common;

use std::sync::mpsc;

use schedtop::collect::procfs::ProcfsReader;
use schedtop::export::json::interval_record;
use schedtop::model::{Sample, ThreadSample};
use schedtop::ui::action::Action;
use schedtop::ui::render::{buffer_text, render_to_buffer};
use schedtop::ui::{AppState, Mode};

/// (policy, priority, pinned to one CPU) of each thread.
const SET: [(i32, i32, bool); 3] = [
    (libc::SCHED_FIFO, 42, true),
    (libc::SCHED_BATCH, 0, false),
    (libc::SCHED_IDLE, 0, false),
];

struct Threads {
    tids: Vec<u32>,
    stop: Vec<mpsc::Sender<()>>,
    joins: Vec<std::thread::JoinHandle<()>>,
}

impl Threads {
    fn start() -> Threads {
        let (mut tids, mut stop, mut joins) = (Vec::new(), Vec::new(), Vec::new());
        for (policy, prio, pin) in SET {
            let (tid_tx, tid_rx) = mpsc::channel();
            let (stop_tx, stop_rx) = mpsc::channel::<()>();
            joins.push(std::thread::spawn(move || {
                let tid = common::gettid();
                let p = libc::sched_param {
                    sched_priority: prio,
                };
                // SAFETY: our own thread id and a valid sched_param
                let r = unsafe { libc::sched_setscheduler(tid as i32, policy, &p) };
                let ok = r == 0;
                if ok && pin {
                    common::pin_to(common::allowed_cpus()[0]);
                }
                tid_tx.send(ok.then_some(tid)).unwrap();
                let _ = stop_rx.recv();
            }));
            tids.push(tid_rx.recv().unwrap());
            stop.push(stop_tx);
        }
        let tids = tids.into_iter().collect::<Option<Vec<u32>>>();
        let t = Threads {
            tids: tids.clone().unwrap_or_default(),
            stop,
            joins,
        };
        assert!(tids.is_some(), "sched_setscheduler refused (not root?)");
        t
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.stop.clear();
        for j in self.joins.drain(..) {
            let _ = j.join();
        }
    }
}

/// The kernel's (policy, RT priority, allowed CPUs) of a thread.
fn kernel(tid: u32) -> (u8, u8, u32) {
    // SAFETY: plain syscalls on a live thread of ours, into owned buffers
    unsafe {
        let policy = libc::sched_getscheduler(tid as i32);
        let mut p: libc::sched_param = std::mem::zeroed();
        assert_eq!(libc::sched_getparam(tid as i32, &mut p), 0);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(tid as i32, size, &mut set), 0);
        (
            policy as u8,
            p.sched_priority as u8,
            libc::CPU_COUNT(&set) as u32,
        )
    }
}

fn thread(s: &Sample, tid: u32) -> &ThreadSample {
    s.threads
        .iter()
        .find(|t| t.tid == tid)
        .unwrap_or_else(|| panic!("thread {tid} not in the Sample"))
}

fn check(s: &Sample, t: &Threads) {
    for (&tid, (policy, prio, pin)) in t.tids.iter().zip(SET) {
        let (kp, kprio, kcpus) = kernel(tid);
        assert_eq!((i32::from(kp), i32::from(kprio)), (policy, prio));
        assert_eq!(kcpus == 1, pin || common::allowed_cpus().len() == 1);
        let a = thread(s, tid).attrs;
        assert_eq!(
            (a.policy, a.rt_priority, a.cpus_allowed),
            (Some(kp), Some(kprio), Some(kcpus)),
            "tid {tid}"
        );
    }
}

#[test]
fn procfs_reports_the_kernels_policy_priority_and_affinity() {
    let _serial = common::serial();
    let t = Threads::start();
    let mut r = ProcfsReader::new("/proc", vec![common::getpid()]);
    check(&r.read().unwrap(), &t);
}

#[test]
fn bpf_reports_the_kernels_policy_priority_and_affinity() {
    let _serial = common::serial();
    let t = Threads::start();
    let Some(mut src) = common::bpf_source(vec![common::getpid()]) else {
        return;
    };
    check(&src.sample().unwrap(), &t);
}

#[test]
fn policy_reaches_the_columns_and_the_json() {
    let _serial = common::serial();
    let t = Threads::start();
    let opts = schedtop::collect::LiveOptions {
        interval_ns: 1_000_000_000,
        pid_filter: vec![common::getpid()],
        force_procfs: true,
        require_bpf: false,
        run_delay_waits: false,
        threads: Default::default(),
    };
    let mut src = schedtop::collect::LiveSource::open(&opts).unwrap();
    let a = src.sample().unwrap();
    let mut b = src.sample().unwrap();
    b.time_ns = a.time_ns + 1_000_000_000;
    b.mono_ns = a.mono_ns + 1_000_000_000;
    let host = src.host().clone();

    let mut app = AppState::new(host.clone(), Mode::Live);
    schedtop::ui::layout::apply(&mut app, Action::Resize(240, 40));
    app.push_sample(a.clone());
    app.push_sample(b.clone());
    let text = buffer_text(&render_to_buffer(&app, 240, 40));
    let head = text.lines().find(|l| l.contains("TID")).unwrap();
    let words: Vec<&str> = head.split_whitespace().collect();
    let col = |name: &str| {
        words
            .iter()
            .position(|w| *w == name)
            .unwrap_or_else(|| panic!("no {name} column: {head}"))
    };
    let (pc, rc) = (col("POLICY"), col("RTPRI"));
    let want = [("FIFO", "42"), ("BATCH", "0"), ("IDLE", "0")];
    for (&tid, (policy, prio)) in t.tids.iter().zip(want) {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&tid.to_string()))
            .unwrap_or_else(|| panic!("thread {tid} not listed:\n{text}"));
        let cells: Vec<&str> = line.split_whitespace().collect();
        // the name column has no spaces here (the test's thread names)
        assert_eq!((cells[pc], cells[rc]), (policy, prio), "{line}");
    }

    let v = serde_json::to_value(interval_record(&host, Some(&a), &b)).unwrap();
    let threads = v["threads"].as_array().expect("threads in the JSON");
    for (&tid, (policy, prio)) in t.tids.iter().zip(want) {
        let j = threads
            .iter()
            .find(|j| j["tid"] == tid)
            .unwrap_or_else(|| panic!("thread {tid} not in the JSON"));
        assert_eq!(j["policy"], policy, "{j}");
        assert_eq!(j["rt_priority"].to_string(), prio, "{j}");
    }
}
