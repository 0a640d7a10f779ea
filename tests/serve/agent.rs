//! One agent process: `schedtop serve --record-dir DIR --trigger ...` loads
//! the probes once and feeds the exporter, the black box and incident
//! bundles from the same Samples. Checked against the kernel's own view of
//! the process: the BPF programs its descriptors hold (one sched_switch
//! program, not one per sink), what a scrape answers, the files on disk.
use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schedtop::record::reader::Reader;

struct Agent {
    child: Child,
    addr: SocketAddr,
    err: Arc<Mutex<String>>,
}

impl Drop for Agent {
    fn drop(&mut self) {
        // the whole process group, however the test ends
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Agent {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .arg("serve")
        .args(args)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let err = Arc::new(Mutex::new(String::new()));
    let mut lines = BufReader::new(child.stderr.take().unwrap());
    let mut agent = Agent {
        child,
        addr: "0.0.0.0:0".parse().unwrap(),
        err: err.clone(),
    };
    let mut line = String::new();
    loop {
        line.clear();
        let n = lines.read_line(&mut line).unwrap();
        assert!(n > 0, "serve exited early: {}", err.lock().unwrap());
        err.lock().unwrap().push_str(&line);
        if let Some(rest) = line.split("serving http://").nth(1) {
            agent.addr = rest.split('/').next().unwrap().parse().unwrap();
            break;
        }
    }
    // keep reading stderr so the child never blocks on it
    std::thread::spawn(move || {
        let mut l = String::new();
        while lines.read_line(&mut l).is_ok_and(|n| n > 0) {
            err.lock().unwrap().push_str(&l);
            l.clear();
        }
    });
    agent
}

fn scrape(addr: SocketAddr) -> (u16, String) {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return (0, String::new());
    };
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    );
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let code = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, out.split("\r\n\r\n").nth(1).unwrap_or("").to_string())
}

/// The ids of the BPF programs `pid` holds, from its descriptors'
/// fdinfo (a program's fd and a link's both name the program).
fn prog_ids_held(pid: u32) -> Vec<u32> {
    let mut ids = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .flatten()
    {
        let Ok(info) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        for l in info.lines() {
            if let Some(v) = l.strip_prefix("prog_id:") {
                ids.extend(v.trim().parse::<u32>().ok());
            }
        }
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The loaded BPF programs with these ids (bpftool): each one's name and
/// the pids bpftool says hold it (empty where bpftool cannot tell).
fn progs(ids: &[u32]) -> Vec<(String, Vec<u64>)> {
    let out = Command::new("bpftool")
        .args(["prog", "show", "--json"])
        .output()
        .expect("bpftool");
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    all.as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["id"]
                .as_u64()
                .is_some_and(|id| ids.contains(&(id as u32)))
        })
        .map(|p| {
            let pids = p["pids"]
                .as_array()
                .map(|v| v.iter().filter_map(|x| x["pid"].as_u64()).collect())
                .unwrap_or_default();
            (p["name"].as_str().unwrap_or("").to_string(), pids)
        })
        .collect()
}

/// Every process of the machine.
fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .collect()
}

/// The processes of process group `pgid` (the agent and anything it
/// started).
fn group_members(pgid: u32) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // the fields after the name, which may hold spaces and
            // parentheses: state, ppid, pgrp
            let after = stat.rsplit_once(')').map_or("", |x| x.1);
            after.split_whitespace().nth(2) == Some(&pgid.to_string())
        })
        .collect()
}

/// The processes other than `pid` holding a descriptor of one of `ids`
/// (their fdinfo; what bpftool's pid column shows when built with it).
fn other_holders(pid: u32, ids: &[u32]) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|&p| p != pid)
        .filter(|&p| {
            let Ok(dir) = std::fs::read_dir(format!("/proc/{p}/fdinfo")) else {
                return false;
            };
            dir.flatten().any(|e| {
                std::fs::read_to_string(e.path()).is_ok_and(|info| {
                    info.lines().any(|l| {
                        l.strip_prefix("prog_id:")
                            .and_then(|v| v.trim().parse::<u32>().ok())
                            .is_some_and(|id| ids.contains(&id))
                    })
                })
            })
        })
        .collect()
}

/// The value of an unlabelled series in a scrape.
fn metric(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {name} in the scrape"))
        .trim()
        .parse()
        .unwrap()
}

fn recordings(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|x| x == "schedtop"));
    v.sort();
    v
}

#[test]
fn serve_with_record_dir_and_a_trigger_is_one_process_with_one_set_of_probes() {
    if common::bpf_source(vec![]).is_none() {
        return;
    }
    if Command::new("bpftool").arg("version").output().is_err() {
        common::cannot_run("bpftool is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (rec, inc) = (d.path().join("rec"), d.path().join("inc"));
    std::fs::create_dir(&inc).unwrap();
    let agent = start(&[
        "--listen",
        "127.0.0.1:0",
        "-i",
        "0.5",
        "--require-bpf",
        "--record-dir",
        rec.to_str().unwrap(),
        "--rotate",
        "2s",
        "--keep-free",
        "0",
        // holds at the first interval: one bundle, then the cooldown
        "--trigger",
        "system:invol_per_s >= 0",
        "--incident-dir",
        inc.to_str().unwrap(),
        "--before",
        "5s",
        "--after",
        "1s",
        "--cooldown",
        "1h",
    ]);
    // the exporter answers
    let deadline = Instant::now() + Duration::from_secs(30);
    let body = loop {
        let (code, body) = scrape(agent.addr);
        if code == 200 {
            break body;
        }
        assert!(Instant::now() < deadline, "no 200 from /metrics");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(body.contains("schedtop_switches_total{kind=\"voluntary\"}"));
    // one copy of the probes: one process holds them (nothing else of its
    // group holds a program), and each program name appears once
    let pid = agent.child.id();
    let ids = prog_ids_held(pid);
    let held = progs(&ids);
    assert_eq!(held.len(), ids.len(), "bpftool lists {held:?} of {ids:?}");
    let mut names: Vec<&str> = held.iter().map(|p| p.0.as_str()).collect();
    assert!(names.contains(&"handle_switch"), "programs held: {names:?}");
    assert!(names.len() >= 3, "programs held: {names:?}");
    names.sort_unstable();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "a program loaded twice: {held:?}");
    for (name, pids) in &held {
        // bpftool names every process with a descriptor of the program
        assert!(
            pids.iter().all(|&p| p == u64::from(pid)),
            "{name} held by {pids:?}, the agent is {pid}"
        );
    }
    // the machine's every process: none but the agent holds its programs
    assert_eq!(other_holders(pid, &ids), Vec::<u32>::new(), "{held:?}");
    let members = group_members(pid);
    assert!(members.contains(&pid), "{members:?}");
    for other in members.into_iter().filter(|&p| p != pid) {
        assert!(
            prog_ids_held(other).is_empty(),
            "process {other} of the agent's group holds BPF programs too"
        );
    }
    eprintln!("agent {pid}: {n} programs, one copy each: {names:?}");
    // the black box rotates and the trigger writes its bundle
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let files = recordings(&rec).len();
        let bundles = common::incident_bundles(&inc);
        let complete = bundles.first().is_some_and(|b| {
            b.join("recording.schedtop").exists() && b.join("summary.json").exists()
        });
        if files >= 3 && complete {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{files} recordings, bundles {bundles:?}\n{}",
            agent.err.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // one derivation per Sample with the exporter, the black box and the
    // trigger (which fired and wrote its bundle) all fed: the counter the
    // process keeps equals the Samples it took, scrape after scrape
    for _ in 0..2 {
        let (code, body) = scrape(agent.addr);
        assert_eq!(code, 200);
        let samples = metric(&body, "schedtop_samples_total");
        let derived = metric(&body, "schedtop_interval_derivations_total");
        assert!(samples >= 6.0, "{samples} Samples");
        assert_eq!(derived, samples, "derivations vs Samples");
        std::thread::sleep(Duration::from_millis(700));
    }
    // a clean stop, and a closing line for the black box
    unsafe { libc::kill(agent.child.id() as i32, libc::SIGTERM) };
    let mut agent = agent;
    let status = agent.child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let err = agent.err.lock().unwrap().clone();
    assert!(status.success(), "{status:?}\n{err}");
    let summary = err
        .lines()
        .find_map(|l| l.strip_prefix("schedtop: black box: "))
        .unwrap_or_else(|| panic!("no closing line:\n{err}"));
    let said: usize = summary.split(' ').next().unwrap().parse().unwrap();
    // every Sample the black box says it wrote is in its files, which read
    // as recordings of the BPF source
    let mut read = 0;
    for f in recordings(&rec) {
        let r = Reader::open(&f).unwrap();
        assert_eq!(r.host().source.as_str(), "bpf", "{}", f.display());
        read += r.len();
    }
    assert_eq!(read, said, "{summary}");
    assert_eq!(common::incident_bundles(&inc).len(), 1, "{err}");
}
