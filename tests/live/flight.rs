//! The flight recorder against the kernel's own counters: a pipe ping-pong
//! pair runs while `schedtop trace` records; the written Perfetto file is
//! decoded here (tests/common/perfetto.rs, a protobuf reader independent of
//! the encoder) and its sched_switch events are compared with the threads'
//! voluntary + nonvoluntary switches from /proc.
use crate::common;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use schedtop::trace::{trace, TraceOptions};

use common::perfetto::{
    decode, int32, string, uint, SCHED_MIGRATE_TASK, SCHED_SWITCH, SCHED_WAKEUP, SCHED_WAKEUP_NEW,
};

// ---- the workload ------------------------------------------------------

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two fds into the array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both fds are fresh and owned by nobody else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

fn read1(fd: &OwnedFd) {
    let mut b = [0u8; 1];
    // SAFETY: reads one byte into a live buffer.
    assert_eq!(
        unsafe { libc::read(fd.as_raw_fd(), b.as_mut_ptr().cast(), 1) },
        1
    );
}

fn write1(fd: &OwnedFd) {
    // SAFETY: writes one byte from a live buffer.
    assert_eq!(
        unsafe { libc::write(fd.as_raw_fd(), b"x".as_ptr().cast(), 1) },
        1
    );
}

fn thread_state(tid: u32) -> char {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, r)| r.trim_start().chars().next())
        })
        .unwrap_or('?')
}

/// Where the thread sleeps in the kernel ("anon_pipe_read", ...).
fn wchan(tid: u32) -> String {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/wchan")).unwrap_or_default()
}

/// Wait until the thread is asleep in a pipe read (it has switched out and
/// stays out until the pipe is written): a condition, not a guessed delay.
fn wait_sleeping(tid: u32) {
    let t0 = Instant::now();
    while !(thread_state(tid) == 'S' && wchan(tid).contains("pipe")) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "thread {tid} never slept in a pipe read ({:?})",
            wchan(tid)
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

const ROUND_TRIPS: usize = 3000;

#[test]
fn trace_counts_match_the_kernel_counters() {
    let _serial = common::serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pingpong.perfetto-trace");

    // two threads, parked on a pipe until the recorder is attached
    let (go_r, go_w) = pipe();
    let (ab_r, ab_w) = pipe();
    let (ba_r, ba_w) = pipe();
    let (rel_r, rel_w) = pipe();
    let go_r = Arc::new(go_r);
    let rel_r = Arc::new(rel_r);
    let (tid_tx, tid_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    let ping = {
        let (go_r, rel_r, tx, done) =
            (go_r.clone(), rel_r.clone(), tid_tx.clone(), done_tx.clone());
        std::thread::Builder::new()
            .name("flight-ping".into())
            .spawn(move || {
                tx.send((0, common::gettid())).unwrap();
                read1(&go_r);
                for _ in 0..ROUND_TRIPS {
                    write1(&ab_w);
                    read1(&ba_r);
                }
                done.send(()).unwrap();
                read1(&rel_r);
            })
            .unwrap()
    };
    let pong = {
        let (rel_r, tx, done) = (rel_r.clone(), tid_tx.clone(), done_tx.clone());
        std::thread::Builder::new()
            .name("flight-pong".into())
            .spawn(move || {
                tx.send((1, common::gettid())).unwrap();
                for _ in 0..ROUND_TRIPS {
                    read1(&ab_r);
                    write1(&ba_w);
                }
                done.send(()).unwrap();
                read1(&rel_r);
            })
            .unwrap()
    };
    let mut tids = [tid_rx.recv().unwrap(), tid_rx.recv().unwrap()];
    tids.sort();
    let tids = tids.map(|(_, tid)| tid);
    for &t in &tids {
        wait_sleeping(t);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = mpsc::channel();
    let recorder = {
        let stop = stop.clone();
        let out = out.clone();
        std::thread::spawn(move || {
            let opts = TraceOptions {
                duration: Duration::from_secs(120),
                output: out,
                force: false,
                ringbuf_bytes: 8 << 20,
                // only this process: the counts must not depend on what
                // else the machine runs meanwhile
                pid: Some(std::process::id()),
            };
            trace(&opts, &mut || ready_tx.send(()).unwrap(), &stop)
        })
    };
    if ready_rx.recv_timeout(Duration::from_secs(60)).is_err() {
        let err = recorder
            .join()
            .unwrap()
            .expect_err("not ready, so it failed");
        write1(&go_w);
        write1(&rel_w);
        write1(&rel_w);
        common::skip::bpf_unavailable(&format!("the flight recorder cannot load here: {err:#}"));
        return;
    }

    let before: Vec<(u64, u64)> = tids.iter().map(|&t| common::proc_switches(t)).collect();
    write1(&go_w);
    for _ in &tids {
        done_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("ping-pong finished");
    }
    for &t in &tids {
        wait_sleeping(t);
    }
    // both threads are asleep on the release pipe, past their last switch
    let after: Vec<(u64, u64)> = tids.iter().map(|&t| common::proc_switches(t)).collect();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let summary = recorder.join().unwrap().expect("trace written");
    write1(&rel_w);
    write1(&rel_w);
    ping.join().unwrap();
    pong.join().unwrap();

    let bytes: &'static [u8] = Box::leak(std::fs::read(&out).unwrap().into_boxed_slice());
    let d = decode(bytes);
    eprintln!(
        "trace: {} bytes, {} events ({} switches, {} wakeups, {} migrations), {} dropped",
        bytes.len(),
        summary.stats.events,
        summary.switches,
        summary.wakeups,
        summary.migrations,
        summary.stats.dropped
    );
    assert_eq!(summary.stats.malformed, 0);
    assert_eq!(
        d.events.len() as u64,
        summary.stats.events,
        "every recorded event is in the file"
    );
    assert_eq!(
        summary.stats.dropped, 0,
        "nothing dropped: a few thousand events of one process"
    );

    // clocks: boot time, related to monotonic and wall time
    let boot0 = *d.clocks.get(&6).expect("BOOTTIME in the clock snapshot");
    assert!(d.clocks.contains_key(&3) && d.clocks.contains_key(&1));
    // SAFETY: clock_gettime writes one timespec.
    let boot_now = unsafe {
        let mut ts = std::mem::zeroed::<libc::timespec>();
        libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts);
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    for (_, ts, ..) in &d.events {
        assert!(
            *ts >= boot0 - 1_000_000_000 && *ts <= boot_now,
            "timestamp {ts} outside the recording"
        );
    }

    for (i, &tid) in tids.iter().enumerate() {
        let voluntary = after[i].0 - before[i].0;
        let kernel = voluntary + after[i].1 - before[i].1;
        let switches_out = d
            .events
            .iter()
            .filter(|(_, _, _, w, f)| *w == SCHED_SWITCH && int32(f, 2) == Some(tid as i32))
            .count() as u64;
        let switches_in = d
            .events
            .iter()
            .filter(|(_, _, _, w, f)| *w == SCHED_SWITCH && int32(f, 6) == Some(tid as i32))
            .count() as u64;
        let wakeups = d
            .events
            .iter()
            .filter(|(_, _, _, w, f)| *w == SCHED_WAKEUP && int32(f, 2) == Some(tid as i32))
            .count() as u64;
        eprintln!(
            "tid {tid}: kernel counted {kernel} switches ({voluntary} voluntary); trace: {switches_out} out, {switches_in} in, {wakeups} wakeups"
        );
        assert!(
            kernel >= ROUND_TRIPS as u64 / 2,
            "the workload switched ({kernel})"
        );
        assert!(
            switches_out.abs_diff(kernel) <= 2,
            "tid {tid}: {switches_out} sched_switch events vs {kernel} in /proc"
        );
        // each switch out is followed by a switch in (the last one into the
        // release wait came before the go: the window starts asleep)
        assert!(
            switches_in.abs_diff(switches_out) <= 2,
            "in {switches_in} vs out {switches_out}"
        );
        // a thread that went to sleep needs a wakeup to run again
        assert!(
            wakeups.abs_diff(voluntary) <= 2,
            "wakeups {wakeups} vs voluntary switches {voluntary}"
        );
        let (tgid, name) = d
            .threads
            .get(&(tid as i32))
            .expect("thread in the process tree");
        assert_eq!(*tgid as u32, std::process::id());
        assert_eq!(name, if i == 0 { "flight-ping" } else { "flight-pong" });
    }
    // the other kinds are there and well-formed
    for (cpu, _, _, which, f) in &d.events {
        assert!((*cpu as usize) < 4096);
        match *which {
            SCHED_SWITCH => {
                assert!(string(f, 1).is_some() && string(f, 5).is_some());
                let state = uint(f, 4).unwrap_or(0);
                assert!(
                    state <= 0x100 && (state == 0 || state.is_power_of_two()),
                    "prev_state {state:#x}"
                );
            }
            SCHED_WAKEUP | SCHED_WAKEUP_NEW => assert_eq!(int32(f, 4), Some(1)),
            SCHED_MIGRATE_TASK => assert!(int32(f, 4).is_some() && int32(f, 5).is_some()),
            other => panic!("unexpected event field {other}"),
        }
    }
    // prev_state of the ping-pong threads' switches: asleep on a pipe ("S")
    let sleeping = d
        .events
        .iter()
        .filter(|(_, _, _, w, f)| {
            *w == SCHED_SWITCH && int32(f, 2) == Some(tids[0] as i32) && uint(f, 4) == Some(1)
        })
        .count();
    assert!(sleeping > 0, "voluntary switches show as S");
}

#[test]
fn trace_command_writes_a_file_and_refuses_to_clobber() {
    let _serial = common::serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.pftrace");
    let bin = env!("CARGO_BIN_EXE_schedtop");
    let run = |args: &[&std::ffi::OsStr]| Command::new(bin).args(args).output().unwrap();

    let o = run(&[
        "trace".as_ref(),
        "-d".as_ref(),
        "0.5".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() && stderr.contains("could not start") {
        common::skip::bpf_unavailable(&format!("schedtop trace could not start: {stderr}"));
        assert!(!out.exists(), "a failed trace leaves no file");
        return;
    }
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("dropped"), "{stderr}");
    let bytes: &'static [u8] = Box::leak(std::fs::read(&out).unwrap().into_boxed_slice());
    let d = decode(bytes);
    assert!(
        d.events.iter().any(|e| e.3 == SCHED_SWITCH),
        "half a second has switches"
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o077,
        0
    );

    // an existing file is not replaced without --force
    let o = run(&[
        "trace".as_ref(),
        "-d".as_ref(),
        "0.1".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("exists"), "{stderr}");
    assert_eq!(std::fs::read(&out).unwrap(), bytes);

    // nor is a symlink followed, even with --force
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.path().join("link.pftrace");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    for force in [false, true] {
        let mut args: Vec<&std::ffi::OsStr> = vec![
            "trace".as_ref(),
            "-d".as_ref(),
            "0.1".as_ref(),
            "-o".as_ref(),
            link.as_os_str(),
        ];
        if force {
            args.push("--force".as_ref());
        }
        let o = run(&args);
        assert!(!o.status.success());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
    // -p: only this process's threads (a thread of ours sleeps in a loop)
    let busy = Arc::new(AtomicBool::new(true));
    let sleeper = {
        let busy = busy.clone();
        std::thread::spawn(move || {
            while busy.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let ours = dir.path().join("ours.pftrace");
    let me = std::process::id().to_string();
    let o = run(&[
        "trace".as_ref(),
        "-d".as_ref(),
        "0.5".as_ref(),
        "-p".as_ref(),
        me.as_ref(),
        "-o".as_ref(),
        ours.as_os_str(),
    ]);
    busy.store(false, std::sync::atomic::Ordering::SeqCst);
    sleeper.join().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes: &'static [u8] = Box::leak(std::fs::read(&ours).unwrap().into_boxed_slice());
    let d = decode(bytes);
    let switches: Vec<_> = d.events.iter().filter(|e| e.3 == SCHED_SWITCH).collect();
    assert!(
        switches.len() > 20,
        "the sleeper switched: {}",
        switches.len()
    );
    let mine = |tid: Option<i32>| {
        tid.is_some_and(|t| {
            std::path::Path::new(&format!("/proc/self/task/{t}")).exists()
                || d.threads
                    .get(&t)
                    .is_some_and(|(tgid, _)| *tgid as u32 == std::process::id())
        })
    };
    for e in &switches {
        assert!(
            mine(int32(&e.4, 2)) || mine(int32(&e.4, 6)),
            "a switch of another process: {:?}",
            e.4
        );
    }

    // bad arguments: one clear line from clap
    let o = run(&[
        "trace".as_ref(),
        "-d".as_ref(),
        "0".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("duration must be between"));
}

/// The tracer takes prev_state from the tracepoint where it has one (5.18+:
/// a task woken while it blocks is still reported as blocking); the check
/// reads the kernel's BTF, checked here against the release number.
#[test]
fn sched_switch_prev_state_is_used_from_5_18() {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let mut parts = release.trim().split(['.', '-']);
    let major: u32 = parts.next().unwrap().parse().unwrap();
    let minor: u32 = parts.next().unwrap().parse().unwrap();
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        common::skip::bpf_unavailable("no kernel BTF");
        return;
    }
    assert_eq!(
        schedtop::collect::flight::sched_switch_has_prev_state(),
        (major, minor) >= (5, 18),
        "kernel {}",
        release.trim()
    );
}
