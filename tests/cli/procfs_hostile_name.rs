//! The /proc fallback and a thread whose name is not UTF-8 (any 15 bytes
//! are allowed by prctl(PR_SET_NAME)): it must be listed like any other,
//! with the kernel's own switch counts, not left out.
use std::sync::mpsc;
use std::time::Duration;

use schedtop::collect::procfs::ProcfsReader;

/// A field of /proc/self/task/TID/status, read as bytes (the Name line is
/// not UTF-8 here).
fn status_field(tid: u32, key: &str) -> u64 {
    let raw = std::fs::read(format!("/proc/self/task/{tid}/status")).unwrap();
    let text = String::from_utf8_lossy(&raw);
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {key} in status"))
}

#[test]
fn a_thread_named_with_invalid_utf8_is_listed_with_its_counts() {
    let (tid_tx, tid_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        // 15 bytes, none of it valid UTF-8 as a whole
        let name = b"\xff\xfe\xc3\x28\xe2\x80\xaeAB,<b>{}\xff\0";
        unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
        // 20 sleeps: at least 20 voluntary switches
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(1));
        }
        tid_tx.send(unsafe { libc::gettid() } as u32).unwrap();
        let _ = stop_rx.recv();
    });
    let tid = tid_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // parked on the channel: its counts hold still while we read
    std::thread::sleep(Duration::from_millis(50));
    let before = status_field(tid, "voluntary_ctxt_switches");
    let sample = ProcfsReader::new("/proc", vec![std::process::id()])
        .read()
        .unwrap();
    let after = status_field(tid, "voluntary_ctxt_switches");
    drop(stop_tx);
    worker.join().unwrap();

    let listed: Vec<u32> = sample.threads.iter().map(|t| t.tid).collect();
    let t = sample
        .threads
        .iter()
        .find(|t| t.tid == tid)
        .unwrap_or_else(|| panic!("thread {tid} is missing from {listed:?}"));
    assert!(
        t.voluntary >= before.max(20) && t.voluntary <= after,
        "voluntary {} outside the kernel's {before}..={after}",
        t.voluntary
    );
    let comm = t.comm.to_string();
    assert!(
        comm.contains('\u{FFFD}') && comm.contains("AB,<b>{}"),
        "{comm:?}"
    );
}
