//! The real binary in a real terminal (tmux): a pinned workload shows up
//! with involuntary switches, keys work, a hostile thread name stays inert,
//! and the terminal is restored after `q`, SIGTERM and SIGHUP.
//!
//! Needs tmux. Without it the tests skip, unless SCHEDTOP_REQUIRE_ALL=1
//! (CI), where they fail.
use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::tmux::{have_tmux, Tmux, BIN};

const HOSTILE: &str = "e2e\x1b[2Jevil";
/// as the table shows it: the escape made visible (the COMM column may cut
/// the rest of the name at this width)
const HOSTILE_SHOWN: &str = "e2e^[[2J";

/// Threads that stay until dropped: two spinners sharing CPU 0 (so they
/// preempt each other) and a sleeper with a hostile name.
struct Workload {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Workload {
    fn start() -> Workload {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for i in 0..2 {
            let stop = stop.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("e2espin{i}"))
                    .spawn(move || {
                        pin_to_cpu0();
                        let mut x = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            x = std::hint::black_box(x.wrapping_add(1));
                        }
                    })
                    .unwrap(),
            );
        }
        let s = stop.clone();
        threads.push(
            std::thread::Builder::new()
                .name(HOSTILE.into())
                .spawn(move || {
                    while !s.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                })
                .unwrap(),
        );
        Workload { stop, threads }
    }
}

impl Drop for Workload {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Pin the calling thread to the first CPU it may run on (CPU 0 may be
/// outside a restricted cpuset).
fn pin_to_cpu0() {
    // SAFETY: cpu_set_t is plain data; get/setaffinity on the calling
    // thread (0) with its size.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(libc::sched_getaffinity(0, size, &mut allowed), 0);
        let first = (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &allowed))
            .expect("an allowed CPU");
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(first, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, size, &set),
            0,
            "sched_setaffinity"
        );
    }
}

/// "950", "3.5", "12.3k", "1.2M" -> a number; "-" -> None.
fn parse_rate(s: &str) -> Option<f64> {
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        _ => (s, 1.0),
    };
    num.parse::<f64>().ok().map(|v| v * mult)
}

/// The NVCSW/s cell of the row whose text contains `name` (numbers are
/// right-aligned under their title).
fn nvcsw_of(screen: &str, name: &str) -> Option<f64> {
    // the column titles, not the "sort NVCSW/s" line above them
    let header = screen
        .lines()
        .find(|l| l.contains("NVCSW/s") && l.contains("COMM"))?;
    let hc: Vec<char> = header.chars().collect();
    let title: Vec<char> = "NVCSW/s".chars().collect();
    let start = hc
        .windows(title.len())
        .position(|w| w == title.as_slice())?;
    let end = start + title.len();
    let row = screen.lines().find(|l| l.contains(name))?;
    let cells: String = row.chars().take(end).collect();
    parse_rate(cells.split_whitespace().last()?)
}

#[test]
fn live_view_shows_pinned_spinners_and_restores_the_terminal() {
    if !have_tmux() {
        return;
    }
    let _work = Workload::start();
    let tmux = Tmux::start("live", 160, 50, None);
    tmux.run_schedtop("-i 0.5");

    // filter to the workload
    tmux.send(&["/"]);
    tmux.type_text("e2e");
    tmux.send(&["Enter"]);
    let s = tmux.wait_for("both spinners with involuntary switches", 30, |s| {
        ["e2espin0", "e2espin1"]
            .iter()
            .all(|n| nvcsw_of(s, n).is_some_and(|v| v > 0.0))
    });
    assert!(s.contains("filter \"e2e\""), "{s}");
    assert!(s.contains("NVCSW/s"), "the table header survived");

    // the hostile name is shown escaped, and did not clear the screen
    let s = tmux.wait_for("the hostile thread", 10, |s| s.contains(HOSTILE_SHOWN));
    assert!(s.contains("switches/s"), "header still there:\n{s}");

    // process view, detail, pause
    tmux.send(&["H"]);
    tmux.wait_for("process view", 10, |s| {
        s.contains("Processes") && s.contains("THR")
    });
    tmux.send(&["H"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("detail pane", 10, |s| {
        s.contains("on-CPU slice") || s.contains("no histograms")
    });
    tmux.send(&["Space"]);
    tmux.wait_for("PAUSED", 10, |s| s.contains("PAUSED"));
    tmux.send(&["Space"]);
    tmux.wait_for("resumed", 10, |s| !s.contains("PAUSED"));
    tmux.send(&["?"]);
    tmux.wait_for("help", 10, |s| s.contains("schedtop keys"));
    tmux.send(&["Escape"]);

    // resize: columns drop out, then too small, then back
    tmux.tmux(&["resize-window", "-t", "t", "-x", "70", "-y", "20"]);
    tmux.wait_for("narrow layout", 10, |s| {
        s.contains("NVCSW/s") && !s.contains(" PID ") && s.lines().all(|l| l.chars().count() <= 70)
    });
    tmux.tmux(&["resize-window", "-t", "t", "-x", "30", "-y", "6"]);
    tmux.wait_for("too small", 10, |s| s.contains("too small"));
    tmux.tmux(&["resize-window", "-t", "t", "-x", "160", "-y", "50"]);
    tmux.wait_for("wide layout", 10, |s| {
        s.contains(" PID ") && s.contains("MIGR/s")
    });

    tmux.send(&["q"]);
    tmux.assert_restored("0");
}

#[test]
fn a_panic_restores_the_terminal() {
    if !have_tmux() {
        return;
    }
    let tmux = Tmux::start("panic", 160, 50, None);
    tmux.type_text(&format!(
        "SCHEDTOP_TEST_PANIC=1 {BIN} -i 0.2; echo SCHEDTOP_EXIT=$?"
    ));
    tmux.send(&["Enter"]);
    tmux.assert_restored("101");
    let s = tmux.screen();
    assert!(
        s.contains("SCHEDTOP_TEST_PANIC is set"),
        "panic message on the main screen:\n{s}"
    );
}

#[test]
fn sigterm_and_sighup_restore_the_terminal() {
    if !have_tmux() {
        return;
    }
    let tmux = Tmux::start("signals", 160, 50, None);
    for (sig, status) in [(libc::SIGTERM, "143"), (libc::SIGHUP, "129")] {
        tmux.run_schedtop("-i 0.5");
        let pid = tmux.schedtop_pid();
        // SAFETY: signalling a process we started.
        assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
        tmux.assert_restored(status);
        tmux.send(&["clear", "Enter"]);
        tmux.wait_for("clear screen", 10, |s| !s.contains("SCHEDTOP_EXIT"));
    }
}

#[test]
fn rate_cells_parse() {
    let screen = "Threads 2  sort NVCSW/s▼\n    TID COMM    NVCSW/s  CPU%\n     12 e2espin0   1.2k  50.0\n     13 e2espin1      -     -\n";
    assert_eq!(nvcsw_of(screen, "e2espin0"), Some(1200.0));
    assert_eq!(nvcsw_of(screen, "e2espin1"), None);
    assert_eq!(parse_rate("950"), Some(950.0));
}

/// Running, as opposed to gone or a zombie nobody reaped yet.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|x| x.1.starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

#[test]
fn a_closed_terminal_ends_schedtop() {
    if !have_tmux() {
        return;
    }
    // the window closes (the pty's master side goes away) without a SIGHUP
    // reaching schedtop: it must notice and exit, not spin on EOF
    let tmux = Tmux::start("hangup", 160, 50, None);
    tmux.run_schedtop("-i 0.5");
    let pid = tmux.schedtop_pid();
    drop(tmux);
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let still = alive(pid);
    if still {
        // SAFETY: killing the process this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(!still, "schedtop kept running after its terminal closed");
}
