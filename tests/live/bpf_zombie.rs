//! A process whose main thread exits while another thread runs on keeps its
//! leader listed as a zombie until the whole process is reaped. The leader
//! must be reported exited once, with its final counts, and never again as
//! a live thread.
use crate::common;

use std::time::{Duration, Instant};

use common::*;

extern "C" fn outlive_the_leader(_: *mut libc::c_void) -> *mut libc::c_void {
    std::thread::sleep(Duration::from_millis(2500));
    // SAFETY: ends the child process, nothing to clean up
    unsafe { libc::_exit(0) }
}

fn state_of(pid: i32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s[s.rfind(')')? + 2..].chars().next()
}

#[test]
fn a_zombie_leader_is_reported_exited_once_and_never_again() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![]) else {
        return;
    };
    // SAFETY: the child only creates one thread, sleeps and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: plain pthread and syscall use in the child
        unsafe {
            let mut t: libc::pthread_t = std::mem::zeroed();
            libc::pthread_create(
                &mut t,
                std::ptr::null(),
                outlive_the_leader,
                std::ptr::null_mut(),
            );
            libc::usleep(300_000);
            // exit this thread only: the leader turns zombie, the process lives on
            libc::syscall(libc::SYS_exit, 0);
        }
        unreachable!();
    }
    let tid = pid as u32;
    let deadline = Instant::now() + Duration::from_secs(2);
    while state_of(pid) != Some('Z') {
        assert!(
            Instant::now() < deadline,
            "the leader never became a zombie"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let (mut exited, mut live_after_exit) = (0, 0);
    for _ in 0..6 {
        let s = src.sample().unwrap();
        for t in s.threads.iter().filter(|t| t.tid == tid) {
            if t.exited {
                exited += 1;
                assert!(t.voluntary >= 1, "the leader slept: {t:?}");
            } else if exited > 0 {
                live_after_exit += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    // the process is still alive: its leader still listed by the kernel
    assert_eq!(
        state_of(pid),
        Some('Z'),
        "the child ended too early for this test"
    );
    let mut status = 0;
    // SAFETY: reaps our own child
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(exited, 1, "leader {tid} reported exited {exited} times");
    assert_eq!(
        live_after_exit, 0,
        "leader {tid} reported live after its exit"
    );
}
