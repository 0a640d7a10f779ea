//! `schedtop why` names who wakes blocked threads (the real binary, BPF
//! probes with the wakers counted): a feeder process writes to the pipes of
//! four reader threads of another process and reads their replies
//! (tests/workloads/pipe_fanout.c). The readers block on their pipes and
//! only the feeder's writes wake them; the feeder itself blocks on the
//! replies, woken by the readers. Checked against the kernel's own count
//! of the readers' voluntary switches (each one ends with a wakeup).
use crate::common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The workload's process group, killed when dropped.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: kill of the process group this test made.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

fn build() -> Option<std::path::PathBuf> {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pipe_fanout");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads/pipe_fanout.c");
    let ok = Command::new("cc")
        .args(["-O2", "-pthread", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        common::cannot_run("no C compiler (cc) to build the workload");
        return None;
    }
    Some(out)
}

/// Tids of `pid`'s threads other than the main one.
fn threads(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&t| t != pid)
        .collect()
}

/// The kernel's voluntary switches of these threads of `pid`, summed.
fn voluntary(pid: u32, tids: &[u32]) -> u64 {
    tids.iter()
        .map(|t| {
            let s = std::fs::read_to_string(format!("/proc/{pid}/task/{t}/status")).unwrap();
            s.lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .unwrap()
                .trim()
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

#[test]
fn readers_blocked_on_pipes_are_named_as_woken_by_the_feeder_and_the_feeder_by_them() {
    let _g = common::serial();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !Path::new("/sys/kernel/btf/vmlinux").exists() {
        common::skip::bpf_unavailable("schedtop why's BPF tests need root and kernel BTF");
        return;
    }
    let Some(bin) = build() else { return };
    let load = Group(Command::new(bin).arg("4").process_group(0).spawn().unwrap());
    let readers_pid = load.0.id();
    // the feeder is the reader process's only child
    let mut feeder = None;
    for _ in 0..100 {
        let kids =
            std::fs::read_to_string(format!("/proc/{readers_pid}/task/{readers_pid}/children"))
                .unwrap_or_default();
        feeder = kids.split_whitespace().next().and_then(|p| p.parse().ok());
        if feeder.is_some() && threads(readers_pid).len() == 4 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let feeder: u32 = feeder.expect("the feeder process did not start");
    let readers = threads(readers_pid);
    assert_eq!(readers.len(), 4);

    let (v0, t0) = (voluntary(readers_pid, &readers), Instant::now());
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(["why", "--require-bpf", "--json", "-d", "4s", "-p"])
        .arg(readers_pid.to_string())
        .arg("-p")
        .arg(feeder.to_string())
        .env("SCHEDTOP_WAKERS", "1")
        .output()
        .unwrap();
    let kernel_per_s = (voluntary(readers_pid, &readers) - v0) as f64 / t0.elapsed().as_secs_f64();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "why failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found = v["findings"].as_array().unwrap();
    let warned = found.iter().any(|f| f["severity"] == "warning");
    assert_eq!(code, i32::from(warned), "{v:#}");
    let b = found
        .iter()
        .find(|f| f["kind"] == "blocking" && f["subject"]["id"] == readers_pid)
        .unwrap_or_else(|| panic!("no blocking finding for the readers: {v:#}"));
    let ev = &b["evidence"];
    eprintln!(
        "readers: {}; the kernel counted {kernel_per_s:.0} voluntary switches/s",
        b["text"]
    );
    assert_eq!(ev["reason"], "pipe");
    assert_eq!(ev["threads"], 4);
    // only the feeder writes to the readers' pipes
    assert_eq!(ev["woken_by_pid"], feeder, "{ev:#}");
    let share = ev["woken_by_share_pct"].as_f64().unwrap();
    assert!(share >= 95.0, "woken by the feeder only {share} %");
    // the second hop: the feeder blocks on the replies' pipes, woken by a
    // reader thread
    assert_eq!(ev["waker_blocks_on"], "pipe", "{ev:#}");
    assert_eq!(ev["waker_woken_by"], "pipe_reader", "{ev:#}");
    // the wakeups counted are the readers' blocks as the kernel counts
    // them (rates: the window is not quite the time measured around it)
    let window = v["window_s"].as_f64().unwrap();
    let per_s = ev["wakeups"].as_f64().unwrap() / window;
    assert!(
        per_s <= kernel_per_s * 1.15 && per_s >= kernel_per_s * 0.6,
        "{per_s:.0} wakeups/s counted, the kernel {kernel_per_s:.0} voluntary switches/s"
    );
    let text = b["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("woken 100% by pipe_feeder (pid {feeder})")),
        "{text}"
    );
    // the feeder, re-parented when the reader process dies, is gone too
    drop(load);
    let gone = Instant::now();
    while Path::new(&format!("/proc/{feeder}")).exists() {
        assert!(
            gone.elapsed() < Duration::from_secs(5),
            "the feeder lives on"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
