//! Dropping capabilities once the probes are attached (`schedtop serve`):
//! every thread of the process loses them, including one blocked in a
//! read and one asleep, and the kernel then refuses what a dropped
//! capability allowed while what was kept still works. Checked in a child
//! process (this test binary again), so the tests here keep root's sets;
//! the kernel's own /proc/PID/task/TID/status is the oracle.
mod common;

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use caps::{Capability, CapsHashSet};
use schedtop::util::privileges;

const CHILD: &str = "SCHEDTOP_PRIVILEGES_CHILD";
/// CAP_BPF (39): what the child keeps
const BPF_ONLY: &str = "0000008000000000";

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The child: threads in different states, then the drop to CAP_BPF, then
/// what the kernel says and does.
#[test]
#[ignore = "run by every_thread_loses_what_is_dropped in a child process"]
fn child_drops_to_cap_bpf() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (mut tx, rx) = std::os::unix::net::UnixStream::pair().unwrap();
    let reader = std::thread::spawn(move || {
        let mut rx = rx;
        let mut buf = [0u8; 5];
        // blocked here while the signal comes: SA_RESTART resumes the read
        rx.read_exact(&mut buf).map(|_| buf)
    });
    let sleeper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let spinner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    let keep: CapsHashSet = [Capability::CAP_BPF].into_iter().collect();
    privileges::keep_only(&keep).unwrap();
    for t in std::fs::read_dir("/proc/self/task").unwrap() {
        let status = std::fs::read_to_string(t.unwrap().path().join("status")).unwrap();
        let caps: Vec<String> = status
            .lines()
            .filter(|l| l.starts_with("Cap"))
            .map(|l| l.replace('\t', ""))
            .collect();
        println!("thread {}", caps.join(" "));
    }
    tx.write_all(b"hello").unwrap();
    let read = reader.join().unwrap();
    println!(
        "read {:?}",
        read.map(|b| String::from_utf8_lossy(&b).into_owned())
    );
    stop.store(true, Ordering::Relaxed);
    sleeper.join().unwrap();
    spinner.join().unwrap();
    // CAP_CHOWN is gone: giving a file away is refused even to uid 0
    let file = tempfile::NamedTempFile::new().unwrap();
    let c = std::ffi::CString::new(file.path().as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; uid and gid are plain numbers.
    let r = unsafe { libc::chown(c.as_ptr(), 1, 1) };
    println!(
        "chown {}",
        if r == 0 {
            "allowed".to_string()
        } else {
            std::io::Error::last_os_error().to_string()
        }
    );
    println!("can load bpf {}", privileges::can_load_bpf());
}

#[test]
fn every_thread_loses_what_is_dropped() {
    if !is_root() {
        common::cannot_run("not root: the capability drop needs capabilities to drop");
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_drops_to_cap_bpf",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    // SAFETY: the child's own process group, whatever it left running
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let status = child.wait().unwrap();
    assert!(status.success(), "child failed: {out}");
    let threads: Vec<&str> = out.lines().filter(|l| l.starts_with("thread ")).collect();
    // the test harness's main thread, the test's thread and its three
    assert!(threads.len() >= 4, "{out}");
    for t in &threads {
        for set in ["CapPrm", "CapEff", "CapBnd"] {
            assert!(
                t.contains(&format!("{set}:{BPF_ONLY}")),
                "{set} not CAP_BPF only: {t}"
            );
        }
        // root starts with none inheritable: lowered, it stays at none
        let inh =
            t.contains("CapInh:0000000000000000") || t.contains(&format!("CapInh:{BPF_ONLY}"));
        assert!(inh, "{t}");
        assert!(t.contains("CapAmb:0000000000000000"), "{t}");
    }
    assert!(
        out.contains("read Ok(\"hello\")"),
        "the blocked read broke: {out}"
    );
    assert!(out.contains("chown Operation not permitted"), "{out}");
    // CAP_PERFMON went too: the probes could no longer be loaded
    assert!(out.contains("can load bpf false"), "{out}");
}

/// Whether bpf() on an open descriptor needs CAP_BPF: the kernel source's
/// rule (kernel/bpf/syscall.c: before 6.5 __sys_bpf checked
/// unprivileged_bpf_disabled for every command; from 6.5 only creating
/// maps, programs and BTF does), against the measurement.
#[test]
fn the_measured_need_for_cap_bpf_matches_the_kernel_rule() {
    if !is_root() {
        common::cannot_run("not root: the measurement needs CAP_BPF to create its map");
        return;
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut v = release
        .trim()
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (v.next().unwrap(), v.next().unwrap());
    let disabled = std::fs::read_to_string("/proc/sys/kernel/unprivileged_bpf_disabled")
        .unwrap()
        .trim()
        .to_string();
    let expected = (major, minor) < (6, 5) && disabled != "0";
    let before = privileges::effective();
    assert_eq!(
        privileges::bpf_calls_need_caps(),
        expected,
        "kernel {release} with unprivileged_bpf_disabled={disabled}"
    );
    // the measurement gives the effective set back
    assert_eq!(privileges::effective(), before);
}
