//! 10,000 threads created and destroyed per second for CHURN_SECS while
//! the TUI (in tmux) and a recording run: no crash, memory bounded, no BPF
//! map growth, and the recording replays with every exit exactly once.
use crate::common;
use common::tmux::{have_tmux, tmux};

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::tmux::BIN;

/// How long the churn runs: 240,000 exits, each of which must be recorded
/// exactly once (one lost or doubled fails), and a second part of 16 s in
/// which a leak per exited thread shows (below). It ran a minute; nothing
/// checked needs the other 36 s.
const CHURN_SECS: u64 = 24;
/// When the resident set is first read: the TUI's start-up is over.
const SETTLED_SECS: u64 = 8;

/// Peak resident set (VmHWM) of a process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmHWM:")
}

/// A `/proc/PID/status` figure in KiB (0 if unreadable).
fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn pid_of_pane(socket: &str) -> u32 {
    let o = tmux(socket, &["display", "-p", "-t", "t", "#{pane_pid}"]);
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap()
}

/// Entries now in every loaded BPF map named `exited` (schedtop's
/// dead-thread map): one `"key"` line per entry in bpftool's BTF-formatted
/// dump. Streamed: a full map dumps hundreds of MB of text, never held.
fn exited_map_entries() -> Option<usize> {
    use std::io::BufRead;
    let mut child = Command::new("bpftool")
        .args(["map", "dump", "name", "exited"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut total = 0;
    for line in std::io::BufReader::new(child.stdout.take()?).lines() {
        let line = line.ok()?;
        let t = line.trim_start();
        if t.starts_with("\"key\":") || t.starts_with("key:") {
            total += 1;
        }
    }
    child.wait().ok()?.success().then_some(total)
}

/// Kills the tmux server and the recorder however the test ends, so a
/// failed assertion leaves no schedtop running behind.
struct Cleanup {
    socket: String,
    recorder: Option<u32>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(pid) = self.recorder {
            // SAFETY: a plain signal to our own child
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        let _ = tmux(&self.socket, &["kill-server"]);
    }
}

#[test]
fn ten_thousand_threads_a_second_for_24_s() {
    let _g = common::serial();
    if common::bpf_source(vec![]).is_none() || !have_tmux() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("churn.schedtop");
    let socket = format!("schedtop-churn-{}", std::process::id());
    let mut cleanup = Cleanup {
        socket: socket.clone(),
        recorder: None,
    };
    assert!(tmux(
        &socket,
        &[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "120",
            "-y",
            "40",
            BIN
        ]
    )
    .status
    .success());
    let mut recorder = Command::new(BIN)
        .args(["record", "-i", "1", "-o"])
        .arg(&rec)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    cleanup.recorder = Some(recorder.id());
    std::thread::sleep(Duration::from_secs(2));
    let tui_pid = pid_of_pane(&socket);

    // the churn: batches of short-lived threads, paced at 10,000 a second
    let stop = Arc::new(AtomicBool::new(false));
    let made = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let mut half_time_rss = None;
    while start.elapsed() < Duration::from_secs(CHURN_SECS) {
        if half_time_rss.is_none() && start.elapsed() >= Duration::from_secs(SETTLED_SECS) {
            half_time_rss = Some(status_kib(tui_pid, "VmRSS:"));
        }
        let second = Instant::now();
        for _ in 0..100 {
            let hs: Vec<_> = (0..100)
                .map(|_| std::thread::spawn(|| std::hint::black_box(1)))
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            made.fetch_add(100, Ordering::Relaxed);
        }
        if let Some(rest) = Duration::from_secs(1).checked_sub(second.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rate = made.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    assert!(rate > 5000.0, "the churn only reached {rate:.0} threads/s");

    std::thread::sleep(Duration::from_secs(3));
    // both still alive, the TUI still drawing
    assert!(recorder.try_wait().unwrap().is_none(), "the recorder died");
    let screen = String::from_utf8_lossy(&tmux(&socket, &["capture-pane", "-p", "-t", "t"]).stdout)
        .into_owned();
    assert!(screen.contains("schedtop"), "TUI gone:\n{screen}");
    // memory bounded: the rest of the churn adds no more than the live
    // history's share (10,000 exited threads a Sample, ~0.4 MiB each
    // compressed: 6.4 MiB in 16 s) plus 20 MiB of allocator slack to what
    // the TUI settled at, and the peak stays under a ceiling. (The minute
    // this ran before allowed 12 + 20 MiB over 30 s; the slack is the same.
    // What 10,000 exits a second cost at all, ~140 MiB today, is the scale
    // work's to cut: per-thread records are copied whole each drain.)
    let tui_rss = peak_rss_kib(tui_pid);
    let rec_rss = peak_rss_kib(recorder.id());
    let (half, end) = (half_time_rss.unwrap_or(0), status_kib(tui_pid, "VmRSS:"));
    eprintln!("TUI resident: {half} KiB after {SETTLED_SECS} s, {end} KiB after {CHURN_SECS} s, peak {tui_rss} KiB; recorder peak {rec_rss} KiB");
    let history_kib = (CHURN_SECS - SETTLED_SECS) * 400 * 1024 / 1000;
    assert!(
        half > 0 && end <= half + history_kib + 20 * 1024,
        "TUI resident set grew from {half} to {end} KiB after the first {SETTLED_SECS} s"
    );
    assert!(
        tui_rss > 0 && tui_rss < 192 * 1024,
        "TUI peak RSS {tui_rss} KiB"
    );
    assert!(
        rec_rss > 0 && rec_rss < 128 * 1024,
        "recorder peak RSS {rec_rss} KiB"
    );
    // dead threads' records were drained: nothing piles up in the kernel
    // (both schedtops empty their map twice a second; 10,000 exits a
    // second leave at most ~5,000 each between two passes)
    match exited_map_entries() {
        Some(n) => assert!(n < 12_000, "{n} entries left in the exited-thread maps"),
        None => {
            common::cannot_run("bpftool is needed to count the kernel's map entries");
        }
    }

    // SAFETY: a plain signal to our own child
    unsafe { libc::kill(recorder.id() as i32, libc::SIGTERM) };
    let status = recorder.wait().unwrap();
    cleanup.recorder = None;
    let _ = tmux(&socket, &["kill-server"]);
    assert!(
        status.success() || status.code().is_none(),
        "recorder exit {status:?}"
    );
    let out = Command::new(BIN)
        .args(["dump", "--format", "json"])
        .arg(&rec)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // the recording spans 2 s + the churn + 3 s; 8 intervals may go missing
    // on a loaded machine, as before
    let span = 2 + CHURN_SECS + 3;
    assert!(
        records.len() as u64 >= span - 8,
        "{} intervals replayed from a {span} s recording",
        records.len()
    );
    let lost: u64 = records
        .iter()
        .map(|r| r["system"]["lost_updates"].as_u64().unwrap_or(0))
        .max()
        .unwrap_or(0);
    assert_eq!(lost, 0, "updates lost under churn");
    // every churned thread's exit, exactly once: the recorder ran from
    // before the first to after the last, and the kernel fires sched_switch
    // for every thread's final switch
    let me = std::process::id() as u64;
    let exited = records
        .iter()
        .flat_map(|r| r["threads"].as_array().unwrap())
        .filter(|t| t["exited"] == true && t["pid"].as_u64() == Some(me))
        .count() as u64;
    assert_eq!(
        exited,
        made.load(Ordering::Relaxed),
        "exits recorded vs threads made"
    );
}
