//! `-u USER` and `--cgroup PATH` through the real binary's `--batch`: a
//! workload started as nobody (setpriv) and one as root; only nobody's
//! threads are listed with `-u nobody`, and the filters combine.
use crate::common;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// A shell that wakes every 20 ms, in a process group of its own, killed
/// with its group on drop.
struct Waker(Child);

impl Waker {
    fn start(prefix: &[&str]) -> Option<Waker> {
        let mut argv: Vec<&str> = prefix.to_vec();
        argv.extend(["sh", "-c", "while :; do sleep 0.02; done"]);
        let child = Command::new(argv[0])
            .args(&argv[1..])
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        Some(Waker(child))
    }

    fn pid(&self) -> u64 {
        u64::from(self.0.id())
    }
}

impl Drop for Waker {
    fn drop(&mut self) {
        // SAFETY: kill has no memory preconditions; the group is the child's.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

fn batch(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(["-b", "-n", "2", "-i", "0.5"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

fn euid(tid: u64) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let l = s.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn user_nobody_lists_only_nobodys_threads() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return common::skip::skip("starting a workload as nobody needs root");
    }
    let Some(theirs) = Waker::start(&[
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--",
    ]) else {
        return common::skip::skip("setpriv is not installed");
    };
    let root = Waker::start(&[]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(euid(theirs.pid()), Some(65534), "setpriv made it nobody");
    let v = batch(&["-u", "nobody"]);
    let threads = v["threads"].as_array().unwrap();
    let pids: Vec<u64> = threads.iter().map(|t| t["pid"].as_u64().unwrap()).collect();
    assert!(pids.contains(&theirs.pid()), "nobody's shell is missing");
    assert!(!pids.contains(&root.pid()), "root's shell is listed");
    let mut checked = 0;
    for t in threads {
        // short-lived `sleep`s may be gone by now: check those still here
        if let Some(uid) = euid(t["tid"].as_u64().unwrap()) {
            assert_eq!(uid, 65534, "{t}");
            checked += 1;
        }
    }
    assert!(checked >= 1);
    // by uid, the same; and without -u, root's shell is there
    let v = batch(&["-u", "65534"]);
    let by_uid: Vec<u64> = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["pid"].as_u64().unwrap())
        .collect();
    assert!(by_uid.contains(&theirs.pid()) && !by_uid.contains(&root.pid()));
    let all = batch(&["-p", &root.pid().to_string()]);
    assert!(!all["threads"].as_array().unwrap().is_empty());
}

#[test]
fn cgroup_keeps_a_subtree_and_filters_combine() {
    let me = Waker::start(&[]).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let v = batch(&["-p", &me.pid().to_string()]);
    let Some(path) = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|t| t["cgroup"].as_str().map(str::to_string))
    else {
        return common::skip::skip("no cgroup known for threads here");
    };
    let v = batch(&["--cgroup", &path]);
    let threads = v["threads"].as_array().unwrap();
    assert!(threads.iter().any(|t| t["pid"].as_u64() == Some(me.pid())));
    for t in threads {
        let c = t["cgroup"].as_str().unwrap();
        assert!(
            c == path || c.starts_with(&format!("{path}/")),
            "{c} is not under {path}"
        );
    }
    // both: nobody's threads in that subtree only (a `sleep` gone by now
    // cannot be asked)
    let v = batch(&["--cgroup", &path, "-u", "65534"]);
    let threads = v["threads"].as_array().unwrap();
    assert!(!threads.iter().any(|t| t["pid"].as_u64() == Some(me.pid())));
    let none: Vec<_> = threads
        .iter()
        .filter(|t| t["cgroup"].as_str().is_none_or(|c| !c.starts_with(&path)))
        .chain(
            threads
                .iter()
                .filter(|t| euid(t["tid"].as_u64().unwrap()).is_some_and(|u| u != 65534)),
        )
        .collect();
    assert!(none.is_empty(), "{none:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(["-b", "-n", "1", "-u", "no-such-user-here"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "schedtop: -u no-such-user-here: no such user"
    );
}
