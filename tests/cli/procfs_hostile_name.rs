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

/// A hostile name, the way a thread sets it, on a thread of this test
/// process that sleeps until the returned sender is dropped.
fn named_thread(name: &'static [u8]) -> (u32, mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (tid_tx, tid_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || {
        unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
        tid_tx.send(unsafe { libc::gettid() } as u32).unwrap();
        let _ = stop_rx.recv();
    });
    let tid = tid_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    (tid, stop_tx, worker)
}

/// `-u USER` read each thread's uid from a status file that was refused
/// for its name: such a thread fell out of every user filter.
#[test]
fn a_user_filter_keeps_a_thread_named_with_invalid_utf8() {
    use schedtop::collect::{ThreadFilter, ThreadSieve};
    let (tid, stop, worker) = named_thread(b"\xff\xfe\xc3\x28 hidden\0");
    let mut sample = ProcfsReader::new("/proc", vec![std::process::id()])
        .read()
        .unwrap();
    let euid = unsafe { libc::geteuid() };
    // the kernel's own answer for this thread's owner
    assert_eq!(status_field_nth(tid, "Uid", 1), u64::from(euid));
    let before = sample.threads.len();
    let filter = ThreadFilter::parse(&[euid.to_string()], None).unwrap();
    ThreadSieve::new(filter).apply(&mut sample);
    drop(stop);
    worker.join().unwrap();
    // every thread of this process is ours: the filter keeps them all
    assert!(sample.threads.iter().any(|t| t.tid == tid), "{tid} dropped");
    assert_eq!(sample.threads.len(), before);
}

/// The nth number of a status line (Uid: real effective saved fs).
fn status_field_nth(tid: u32, key: &str, n: usize) -> u64 {
    let raw = std::fs::read(format!("/proc/self/task/{tid}/status")).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {key} in status"));
    line.split_whitespace().nth(n).unwrap().parse().unwrap()
}

/// A filtered list's parents come from /proc/<pid>/stat; a parent whose
/// name (its program's file name) is not UTF-8 was refused, and the tree
/// lost it and everything above it.
#[test]
fn a_parent_named_with_invalid_utf8_stays_in_the_process_tree() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    // a shell whose file name, and so whose process name, is not UTF-8
    let sh = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"\xff\xfe\xc3\x28sh"));
    std::fs::copy("/bin/sh", &sh).unwrap();
    let child = std::process::Command::new(&sh)
        .args(["-c", "sleep 30; :"])
        .process_group(0)
        .spawn()
        .unwrap();
    struct Group(std::process::Child);
    impl Drop for Group {
        fn drop(&mut self) {
            // SAFETY: kill has no memory preconditions; the group is the child's
            unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
            let _ = self.0.wait();
        }
    }
    let group = Group(child);
    let sh_pid = group.0.id();
    let children = format!("/proc/{sh_pid}/task/{sh_pid}/children");
    let t0 = std::time::Instant::now();
    let sleep_pid: u32 = loop {
        let text = std::fs::read_to_string(&children).unwrap_or_default();
        if let Some(p) = text.split_whitespace().next() {
            break p.parse().unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no sleep under sh");
        std::thread::sleep(Duration::from_millis(10));
    };
    // the kernel's name for the shell holds the raw bytes
    let comm = std::fs::read(format!("/proc/{sh_pid}/comm")).unwrap();
    assert!(comm.starts_with(b"\xff\xfe"), "{comm:?}");
    let sample = ProcfsReader::new("/proc", vec![sleep_pid]).read().unwrap();
    assert!(sample.threads.iter().any(|t| t.pid == sleep_pid));
    let above = schedtop::collect::process_ancestors::ancestors(
        &sample.threads,
        std::path::Path::new("/proc"),
    );
    drop(group);
    let shell = above
        .iter()
        .find(|a| a.pid == sh_pid)
        .unwrap_or_else(|| panic!("the shell {sh_pid} is missing above the sleep: {above:?}"));
    assert!(
        shell.comm.to_string().contains('\u{FFFD}'),
        "{:?}",
        shell.comm
    );
    // and the chain goes on above it, up to this test process's ancestors
    assert!(above.iter().any(|a| a.pid == 1), "{above:?}");
}
