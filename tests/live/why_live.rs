//! `schedtop why` (the real binary, BPF probes) against workloads whose
//! trouble is known, and the kernel's own counters: a cgroup held at a
//! 0.5-CPU quota by 16 spinners, a thread preempted by a nice -20 spinner
//! on its CPU, and by a SCHED_FIFO one, 8 threads contending one mutex, and loads that must stay
//! silent (sleepers, and one nice -20 spinner per CPU). Workloads are C
//! programs (tests/workloads/why_load.c) in their own process groups,
//! killed with them however a test ends.
use crate::common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::time::Duration;

use schedtop::collect::cgroupfs::CgroupLayout;

/// The window of the tests that expect a finding. Every rule compares a
/// rate or a share with its threshold, not a count, so three 1 s
/// intervals judge as five did (the quota's 16 spinners are throttled in
/// 30 of 30 periods instead of 50 of 50); the silent loads keep 10 s.
const WINDOW: &str = "3s";

/// The workload built once, reachable under `name` (a symlink: the
/// process's comm is the name it was started by).
fn workload(name: &str) -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    let bin = BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let out = dir.join("why_load");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads/why_load.c");
        let ok = Command::new("cc")
            .args(["-O2", "-pthread", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(out)
    });
    let Some(bin) = bin else {
        common::cannot_run("no C compiler (cc) to build the workload");
        return None;
    };
    let link = bin.with_file_name(name);
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(bin, &link).unwrap();
    Some(link)
}

/// A workload process group, killed when dropped.
struct Load(Child);

impl Load {
    fn start(name: &str, args: &[&str]) -> Option<Load> {
        let bin = workload(name)?;
        let child = Command::new(bin)
            .args(args)
            .process_group(0)
            .spawn()
            .unwrap();
        Some(Load(child))
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// The workload's threads (not the main one, which only waits).
    fn threads(&self) -> Vec<u32> {
        let mut v: Vec<u32> = std::fs::read_dir(format!("/proc/{}/task", self.pid()))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|&t| t != self.pid())
            .collect();
        v.sort_unstable();
        v
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        // SAFETY: kill of the process group this test made.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// Workloads in a session of their own, whose autogroup gets `nice`: with
/// autogroups on (Debian's default), a thread's nice counts only within its
/// session, and a shared machine's other sessions would otherwise take
/// half of any CPU whatever the nice. Killed with the session's process
/// group when dropped.
struct Session {
    sh: Child,
    /// the workloads' pids, in the order given
    pids: Vec<u32>,
}

impl Session {
    fn start(loads: &[(&str, &[&str])], nice: i32) -> Option<Session> {
        let mut script = String::new();
        let mut bins = Vec::new();
        for (i, (name, args)) in loads.iter().enumerate() {
            bins.push(workload(name)?);
            script.push_str(&format!("\"${}\" {} & ", i + 1, args.join(" ")));
        }
        script.push_str("wait");
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", &script, "sh"]).args(&bins);
        // SAFETY: setsid is async-signal-safe; the child is not a group
        // leader after fork, so it succeeds.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let sh = cmd.spawn().unwrap();
        let mut s = Session {
            pids: Vec::new(),
            sh,
        };
        let _ = std::fs::write(format!("/proc/{}/autogroup", s.sh.id()), nice.to_string());
        for _ in 0..100 {
            let kids = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", s.sh.id()))
                .unwrap_or_default();
            let by_name: Vec<(u32, String)> = kids
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .map(|p: u32| {
                    let comm =
                        std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
                    (p, comm.trim().to_string())
                })
                .collect();
            let found: Vec<u32> = loads
                .iter()
                .filter_map(|(name, _)| by_name.iter().find(|(_, c)| c == name).map(|x| x.0))
                .collect();
            if found.len() == loads.len() {
                s.pids = found;
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the session's workloads did not start");
    }

    /// The threads of workload `i` (not its main thread, which only waits).
    fn threads(&self, i: usize) -> Vec<u32> {
        let pid = self.pids[i];
        let mut v: Vec<u32> = std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|&t| t != pid)
            .collect();
        v.sort_unstable();
        v
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: kill of the process group (the session) this test made.
        unsafe { libc::kill(-(self.sh.id() as i32), libc::SIGKILL) };
        let _ = self.sh.wait();
    }
}

/// BPF can run here (the binary is told to require it).
fn bpf_here() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root || !Path::new("/sys/kernel/btf/vmlinux").exists() {
        common::skip::bpf_unavailable("schedtop why's BPF tests need root and kernel BTF");
        return false;
    }
    true
}

/// `schedtop why --require-bpf ARGS`: exit status, stdout.
fn why(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .arg("why")
        .arg("--require-bpf")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "why {args:?} failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, stdout)
}

fn why_json(args: &[&str]) -> (i32, serde_json::Value) {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let (code, out) = why(&a);
    (code, serde_json::from_str(&out).unwrap())
}

fn findings(v: &serde_json::Value) -> &Vec<serde_json::Value> {
    v["findings"].as_array().unwrap()
}

/// The kernel's (nr_periods, nr_throttled) of a v1 cpu cgroup directory.
fn cpu_stat(dir: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(dir.join("cpu.stat")).unwrap();
    let get = |k: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(k)?.trim().parse().ok())
            .unwrap()
    };
    (get("nr_periods "), get("nr_throttled "))
}

/// A test cgroup under the v1 cpu controller, removed however the test
/// ends (after its workload is gone: a cgroup with tasks cannot go).
struct TestCgroup {
    dir: PathBuf,
    rel: String,
    load: Option<Load>,
}

impl Drop for TestCgroup {
    fn drop(&mut self) {
        drop(self.load.take());
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("could not remove the test cgroup {}", self.dir.display());
    }
}

#[test]
fn a_cgroup_at_its_quota_is_the_top_finding_and_why_exits_1() {
    let _g = common::serial();
    if !bpf_here() {
        return;
    }
    let layout = CgroupLayout::discover(Path::new("/proc"), Path::new("/"));
    let Some(root) = layout.cpu_v1.clone() else {
        common::cannot_run(
            "no v1 cpu controller here (the v2 case runs in the kernel-matrix guests)",
        );
        return;
    };
    let rel = format!("/schedtop-why-{}", std::process::id());
    let dir = root.join(rel.trim_start_matches('/'));
    std::fs::create_dir(&dir).unwrap();
    let mut cg = TestCgroup {
        dir: dir.clone(),
        rel: rel.clone(),
        load: None,
    };
    std::fs::write(dir.join("cpu.cfs_period_us"), "100000").unwrap();
    std::fs::write(dir.join("cpu.cfs_quota_us"), "50000").unwrap();
    let Some(load) = Load::start("why_quota", &["spin", "16"]) else {
        return;
    };
    let pid = load.pid().to_string();
    std::fs::write(dir.join("cgroup.procs"), &pid).unwrap();
    cg.load = Some(load);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(cg.load.as_ref().unwrap().threads().len(), 16);

    let before = cpu_stat(&dir);
    let (code, v) = why_json(&["-d", WINDOW, "--cgroup", &cg.rel]);
    let after = cpu_stat(&dir);
    let kernel_share = (after.1 - before.1) as f64 / (after.0 - before.0).max(1) as f64;
    assert_eq!(code, 1, "a warning: exit 1\n{v:#}");
    let top = &findings(&v)[0];
    assert_eq!(top["kind"], "cpu_quota", "{v:#}");
    assert_eq!(top["subject"]["type"], "cgroup");
    assert_eq!(top["subject"]["id"], rel.as_str());
    assert_eq!(top["evidence"]["quota_cpus"], 0.5);
    // 16 spinners in 0.5 CPU: the kernel throttles nearly every period,
    // and schedtop's share is the kernel's over (nearly) the same span
    let shown = top["evidence"]["throttled_periods_pct"].as_f64().unwrap() / 100.0;
    assert!(kernel_share > 0.8, "the kernel throttled {kernel_share:.2}");
    assert!(
        (shown - kernel_share).abs() < 0.1,
        "{shown} vs {kernel_share}"
    );
    let text = top["text"].as_str().unwrap();
    assert!(text.contains("0.50 CPUs") && text.contains(rel.trim_start_matches('/')));

    // the text a person pastes: scoped to the process this time, the quota
    // still first, and exit 1
    let (code, out) = why(&["-d", WINDOW, "-p", &pid]);
    assert_eq!(code, 1, "{out}");
    let first = out.lines().find(|l| l.starts_with("1. ")).unwrap_or("");
    assert!(
        first.contains("WARNING cpu_quota") && first.contains(&rel),
        "{out}"
    );
}

#[test]
fn a_nice_spinner_on_the_victims_cpu_is_named_as_the_antagonist() {
    let _g = common::serial();
    if !bpf_here() {
        return;
    }
    let cpu = common::allowed_cpus().last().copied().unwrap().to_string();
    // one session at autogroup nice -20: the rest of the machine stays out
    // of it, and within it the nice values decide
    let Some(s) = Session::start(
        &[
            ("why_victim", &["spin", "1", &cpu, "0"]),
            ("why_hog", &["spin", "1", &cpu, "-20"]),
        ],
        -20,
    ) else {
        return;
    };
    let (victim, hog) = (s.pids[0], s.pids[1]);
    std::thread::sleep(Duration::from_millis(300));
    let tid = s.threads(0)[0];
    let delay = || -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{victim}/task/{tid}/schedstat")).unwrap();
        s.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let t0 = (delay(), std::time::Instant::now());
    let (code, v) = why_json(&["-d", WINDOW, "-p", &victim.to_string()]);
    let waited = (delay() - t0.0) as f64 / 1e9 / t0.1.elapsed().as_secs_f64();
    // the kernel's own run_delay: the victim waited most of the time
    assert!(
        waited > 0.5,
        "the victim waited only {waited:.2} of the time"
    );
    assert_eq!(code, 1, "{v:#}");
    let a = findings(&v)
        .iter()
        .find(|f| f["kind"] == "antagonist")
        .unwrap_or_else(|| panic!("no antagonist: {v:#}"));
    assert_eq!(a["subject"]["type"], "thread");
    assert_eq!(a["subject"]["id"], tid);
    let pids = a["evidence"]["preempted_by_pids"].as_str().unwrap();
    assert_eq!(
        pids.split(',').next(),
        Some(hog.to_string().as_str()),
        "{a:#}"
    );
    assert_eq!(a["evidence"]["cpus"], cpu.as_str());
    assert!(a["text"].as_str().unwrap().contains("why_hog"), "{a:#}");
}

#[test]
fn a_fifo_spinner_on_the_victims_cpu_is_named_as_an_rt_hog() {
    let _g = common::serial();
    if !bpf_here() {
        return;
    }
    // RT throttling must leave the CPU's normal threads their 5 %: without
    // it a FIFO spinner would own the CPU (and its kernel threads) outright
    let runtime =
        std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap_or_default();
    if runtime.trim().parse::<i64>().is_ok_and(|r| r < 0) || runtime.is_empty() {
        common::cannot_run("RT throttling is off (sched_rt_runtime_us -1): no FIFO spinner here");
        return;
    }
    let cpu = common::allowed_cpus().last().copied().unwrap().to_string();
    let Some(s) = Session::start(
        &[
            ("why_victim", &["spin", "1", &cpu, "0"]),
            ("why_rt", &["spin", "1", &cpu, "0"]),
        ],
        -20,
    ) else {
        return;
    };
    let (victim, hog) = (s.pids[0], s.pids[1]);
    std::thread::sleep(Duration::from_millis(100));
    let rt_tid = s.threads(1)[0];
    let chrt = Command::new("chrt")
        .args(["-f", "-p", "50", &rt_tid.to_string()])
        .status();
    if !chrt.is_ok_and(|st| st.success()) {
        common::cannot_run("chrt could not make the spinner SCHED_FIFO");
        return;
    }
    // the kernel's own policy for it (stat field 41) and priority (40)
    let stat = std::fs::read_to_string(format!("/proc/{hog}/task/{rt_tid}/stat")).unwrap();
    let f: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!((f[37], f[38]), ("50", "1"), "rt_priority, policy: {stat}");
    std::thread::sleep(Duration::from_millis(300));
    let tid = s.threads(0)[0];
    let delay = || -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{victim}/task/{tid}/schedstat")).unwrap();
        s.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let t0 = (delay(), std::time::Instant::now());
    let (code, v) = why_json(&[
        "-d",
        WINDOW,
        "-p",
        &victim.to_string(),
        "-p",
        &hog.to_string(),
    ]);
    let waited = (delay() - t0.0) as f64 / 1e9 / t0.1.elapsed().as_secs_f64();
    drop(s);
    // the kernel's run_delay: the victim waited most of the time
    assert!(
        waited > 0.8,
        "the victim waited only {waited:.2} of the time"
    );
    assert_eq!(code, 1, "{v:#}");
    let h = findings(&v)
        .iter()
        .find(|f| f["kind"] == "rt_hog")
        .unwrap_or_else(|| panic!("no rt_hog: {v:#}"));
    assert_eq!(h["subject"]["type"], "process");
    assert_eq!(h["subject"]["id"], hog);
    assert_eq!(h["evidence"]["cpus"], cpu.as_str());
    assert_eq!(h["evidence"]["policy"], "FIFO");
    assert_eq!(h["evidence"]["rt_priority"], 50);
    assert!(
        h["evidence"]["hog_cpu_pct"].as_f64().unwrap() > 80.0,
        "{h:#}"
    );
    assert!(h["text"].as_str().unwrap().contains("why_rt"), "{h:#}");
    // the victim is the hog's, not an antagonist's
    assert!(
        !findings(&v).iter().any(|f| f["kind"] == "antagonist"),
        "{v:#}"
    );
}

#[test]
fn eight_threads_on_one_mutex_block_on_a_futex() {
    let _g = common::serial();
    if !bpf_here() {
        return;
    }
    let Some(load) = Load::start("why_mutex", &["mutex", "8"]) else {
        return;
    };
    std::thread::sleep(Duration::from_millis(300));
    let (pid, tids) = (load.pid(), load.threads());
    let voluntary = move || -> u64 { tids.iter().map(|t| common_switches(pid, *t).0).sum() };
    // the kernel's count over the window the finding was made of
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let kernel = common::window_clock::sample_until(stop.clone(), voluntary);
    let (code, v) = why_json(&["-d", WINDOW, "-p", &load.pid().to_string()]);
    let offset = common::window_clock::realtime_offset_ns();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let kernel = kernel.join().unwrap();
    let (start, end) = common::window_clock::why_window(&v, offset);
    let at = |t| common::window_clock::at(&kernel, t);
    let kernel_per_s = (at(end) - at(start)) / ((end - start) as f64 / 1e9);
    assert_eq!(code, 1, "{v:#}");
    let b = findings(&v)
        .iter()
        .find(|f| f["kind"] == "blocking")
        .unwrap_or_else(|| panic!("no blocking finding: {v:#}"));
    assert_eq!(b["evidence"]["reason"], "futex");
    assert_eq!(b["severity"], "warning");
    assert_eq!(b["subject"]["id"], load.pid());
    // the futex blocks are the kernel's voluntary switches, most of them
    let shown = b["evidence"]["blocks_per_s"].as_f64().unwrap();
    assert!(
        shown <= kernel_per_s * 1.1 && shown >= kernel_per_s * 0.5,
        "{shown}/s futex blocks, the kernel counted {kernel_per_s:.0} voluntary switches/s"
    );
}

/// A thread's (voluntary, involuntary) switches as the kernel counts them.
fn common_switches(pid: u32, tid: u32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap_or_default();
    let get = |k: &str| -> u64 {
        s.lines()
            .find_map(|l| l.strip_prefix(k)?.trim().parse().ok())
            .unwrap_or(0)
    };
    (
        get("voluntary_ctxt_switches:"),
        get("nonvoluntary_ctxt_switches:"),
    )
}

/// No warning where nothing waits: `schedtop why -d 10s` over `loads` in a
/// session of their own at autogroup nice -20 (so the other work on a
/// shared machine does not take their CPUs) exits 0. 10 s each, not the
/// 60 s the issue asks for: CI time.
fn silent(loads: &[(&str, &[&str])]) -> Option<Session> {
    let s = Session::start(loads, -20)?;
    std::thread::sleep(Duration::from_millis(300));
    let mut args = vec!["-d".to_string(), "10s".to_string()];
    for p in &s.pids {
        args.push("-p".into());
        args.push(p.to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, v) = why_json(&args);
    let warnings: Vec<_> = findings(&v)
        .iter()
        .filter(|f| f["severity"] == "warning")
        .collect();
    assert!(warnings.is_empty(), "false alarms: {warnings:#?}");
    assert_eq!(code, 0);
    Some(s)
}

#[test]
fn idle_threads_give_no_warning() {
    let _g = common::serial();
    if !bpf_here() {
        return;
    }
    let Some(s) = silent(&[("why_idle", &["sleep", "4"])]) else {
        return;
    };
    // they did wake up all along: ~100 times a second each (the kernel's count)
    for t in s.threads(0) {
        let (vol, _) = common_switches(s.pids[0], t);
        assert!(vol > 500, "thread {t} woke only {vol} times");
    }
}

#[test]
fn one_spinner_per_cpu_gives_no_warning() {
    let _g = common::serial();
    if !bpf_here() {
        return;
    }
    let cpus = common::allowed_cpus();
    if cpus.len() < 2 || cpus[..2] != [0, 1] {
        common::cannot_run("the spinners pin thread i to CPU i: needs CPUs 0 and 1");
        return;
    }
    let Some(s) = silent(&[("why_own_cpu", &["spin", "2", "-2", "0"])]) else {
        return;
    };
    // they did spin all along (the kernel's count: over 8 s of user time
    // each, in clock ticks of 10 ms)
    for t in s.threads(0) {
        let stat = std::fs::read_to_string(format!("/proc/{}/task/{t}/stat", s.pids[0])).unwrap();
        let fields: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        let utime: u64 = fields[11].parse().unwrap();
        assert!(utime > 800, "thread {t} ran only {utime} ticks");
    }
}
