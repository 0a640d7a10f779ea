//! cgroups on a pure v2 hierarchy (the guest's /init mounts cgroup2 at
//! /sys/fs/cgroup; the development machines are v1 hybrids, so this is the
//! only place the v2 files are read for real): two test groups, one with a
//! 0.2-CPU quota (`cpu.max`) and four spinners, one unlimited with one.
//! schedtop's cgroup rows are checked against cpu.stat and cpu.pressure
//! read straight from the kernel, with the limited workload frozen so the
//! counters hold still.
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schedtop::collect::cgroupfs::{read_cgroup_cpu, CgroupLayout};
use schedtop::collect::LiveSource;
use schedtop::model::interval::derive;
use schedtop::model::{CgroupSample, Sample};

use crate::checks::Outcome;
use crate::workload::{Mix, Workload};

const ROOT: &str = "/sys/fs/cgroup";

/// The test groups, removed (after their workloads are gone) on drop.
struct Groups(Vec<PathBuf>);

impl Drop for Groups {
    fn drop(&mut self) {
        for g in &self.0 {
            // the killed workloads leave their groups as they are reaped
            for _ in 0..50 {
                if fs::remove_dir(g).is_ok() || !g.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn row<'a>(s: &'a Sample, path: &str) -> Result<&'a CgroupSample, String> {
    s.cgroups
        .iter()
        .find(|c| c.path == path)
        .ok_or_else(|| format!("{path} not in the Sample's cgroups"))
}

pub fn cgroup_v2(src: &mut LiveSource) -> Outcome {
    let layout = CgroupLayout::discover(Path::new("/proc"), Path::new("/"));
    if layout.cpu_v1.is_some() || layout.unified.as_deref() != Some(Path::new(ROOT)) {
        return Err(format!("not a pure v2 hierarchy at {ROOT}: {layout:?}"));
    }
    let controllers = fs::read_to_string(format!("{ROOT}/cgroup.controllers")).unwrap_or_default();
    if !controllers.split_whitespace().any(|c| c == "cpu") {
        return Err(format!("no cpu controller in v2: {controllers:?}"));
    }
    write(Path::new(&format!("{ROOT}/cgroup.subtree_control")), "+cpu")?;
    let (limited, free) = ("/st-limited", "/st-free");
    let groups = Groups(vec![
        PathBuf::from(format!("{ROOT}{limited}")),
        PathBuf::from(format!("{ROOT}{free}")),
    ]);
    for g in &groups.0 {
        fs::create_dir(g).map_err(|e| format!("{}: {e}", g.display()))?;
    }
    write(&groups.0[0].join("cpu.max"), "20000 100000")?;
    let mix = |spinners| Mix {
        spinners,
        sleepers: 0,
        cpu: None,
        sleep_us: 0,
    };
    let spin_limited = Workload::start(mix(4))?;
    let spin_free = Workload::start(mix(1))?;
    write(
        &groups.0[0].join("cgroup.procs"),
        &spin_limited.pid.to_string(),
    )?;
    write(
        &groups.0[1].join("cgroup.procs"),
        &spin_free.pid.to_string(),
    )?;

    std::thread::sleep(Duration::from_millis(500));
    let s0 = src.sample().map_err(|e| format!("{e:#}"))?;
    let k0 = read_cgroup_cpu(&layout, limited);
    std::thread::sleep(Duration::from_secs(3));
    let s1 = src.sample().map_err(|e| format!("{e:#}"))?;
    let k1 = read_cgroup_cpu(&layout, limited);
    let verdict = quota_finding(src, &s0, &s1, limited, &k0, &k1)?;
    // frozen, the limited group stops running and so stops being throttled
    spin_limited.freeze()?;
    std::thread::sleep(Duration::from_millis(300));
    let s2 = src.sample().map_err(|e| format!("{e:#}"))?;
    let kernel = read_cgroup_cpu(&layout, limited);
    let kernel_free = read_cgroup_cpu(&layout, free);

    // every workload thread is named by its v2 group
    for (w, want) in [(&spin_limited, limited), (&spin_free, free)] {
        for tid in w.tids()? {
            let t = s1.thread(tid).ok_or(format!("thread {tid} missing"))?;
            let got = t.cgroup.and_then(|c| s1.cgroups.get(c as usize));
            if got.map(|c| c.path.as_str()) != Some(want) {
                return Err(format!(
                    "thread {tid}: cgroup {:?}, want {want}",
                    got.map(|c| &c.path)
                ));
            }
        }
    }
    let ours = row(&s2, limited)?;
    let (n, ns) = (ours.nr_throttled, ours.throttled_ns);
    if n != kernel.nr_throttled || n.is_none_or(|n| n == 0) {
        return Err(format!(
            "nr_throttled {n:?} vs cpu.stat {:?}",
            kernel.nr_throttled
        ));
    }
    let near = |a: u64, b: u64| a.abs_diff(b) as f64 <= 0.02 * b as f64;
    match (ns, kernel.throttled_ns) {
        (Some(a), Some(b)) if near(a, b) && a > 0 => {}
        _ => {
            return Err(format!(
                "throttled {ns:?} ns vs cpu.stat {:?}",
                kernel.throttled_ns
            ))
        }
    }
    if ours.quota_cpus != Some(0.2) || row(&s2, free)?.quota_cpus.is_some() {
        return Err(format!(
            "quota {:?} (want 0.2) and unlimited",
            ours.quota_cpus
        ));
    }
    if kernel_free.nr_throttled != Some(0) || row(&s2, free)?.nr_throttled != Some(0) {
        return Err(format!("the unlimited group throttled: {kernel_free:?}"));
    }
    // rates while spinning: throttled, and no more CPU than the quota
    let d = derive(Some(&s0), &s1, 3.0);
    let get = |p: &str| d.cgroups.iter().find(|r| r.path == p).cloned();
    let (lim, fr) = (
        get(limited).ok_or("no limited row")?,
        get(free).ok_or("no free row")?,
    );
    let ms = lim.throttled_ms_per_s.unwrap_or(0.0);
    let cpu = lim.cpu_pct.unwrap_or(f64::INFINITY);
    // each workload process: its spinners and its main thread
    if lim.threads != 5 || fr.threads != 2 || ms <= 0.0 || cpu > 20.0 * 1.1 + 2.0 {
        return Err(format!(
            "rows: limited {} threads {cpu:.1} % CPU {ms:.1} throttled ms/s; free {} threads",
            lim.threads, fr.threads
        ));
    }
    // pressure: the group's own cpu.pressure where the kernel has PSI
    let psi_file = groups.0[0].join("cpu.pressure").exists();
    let (p0, p1) = (row(&s0, limited)?.pressure, row(&s1, limited)?.pressure);
    if p1.is_some() != psi_file {
        return Err(format!(
            "pressure {p1:?} but cpu.pressure exists: {psi_file}"
        ));
    }
    let stalled = p0
        .zip(p1)
        .map(|(a, b)| b.some_total_us.saturating_sub(a.some_total_us));
    if psi_file && stalled.is_none_or(|us| us == 0) {
        return Err(format!(
            "four spinners on 0.2 CPU, yet no pressure: {p0:?} {p1:?}"
        ));
    }
    drop((spin_limited, spin_free));
    drop(groups);
    Ok(format!(
        "nr_throttled {} = cpu.stat, throttled {:.1} ms vs {:.1} ms, quota 0.2, limited {cpu:.1} % CPU {ms:.0} throttled ms/s, free 0; psi some +{} µs; {verdict}",
        n.unwrap_or(0),
        ns.unwrap_or(0) as f64 / 1e6,
        kernel.throttled_ns.unwrap_or(0) as f64 / 1e6,
        stalled.map_or("n/a".into(), |u| u.to_string())
    ))
}

/// The verdict on the same interval: its top finding is the v2 quota of
/// the limited group (the box has idle CPUs), with the quota and the
/// throttled periods the kernel's cpu.stat counted meanwhile (its reads
/// sit next to the Samples': one period apart at most).
fn quota_finding(
    src: &LiveSource,
    s0: &Sample,
    s1: &Sample,
    limited: &str,
    k0: &CgroupSample,
    k1: &CgroupSample,
) -> Result<String, String> {
    use schedtop::model::findings::{of_samples, FindingKind, Scope, Severity, Value};
    let found = of_samples(&src.host().topology, s0, s1, &Scope::default());
    let top = found
        .first()
        .ok_or_else(|| "four spinners on 0.2 CPU, yet no finding".to_string())?;
    let is_quota = top.kind == FindingKind::CpuQuota
        && top.severity == Severity::Warning
        && top.subject.id == Value::Text(limited.into());
    if !is_quota {
        return Err(format!(
            "top finding {:?} on {}: {}",
            top.kind, top.subject.id, top.text
        ));
    }
    let num = |k: &str| match top.evidence.get(k) {
        Some(Value::Num(x)) => Some(*x),
        Some(Value::Int(n)) => Some(*n as f64),
        _ => None,
    };
    let kernel = k1
        .nr_throttled
        .zip(k0.nr_throttled)
        .map(|(b, a)| b.saturating_sub(a) as f64);
    let ours = num("throttled_periods");
    let agree = matches!((ours, kernel), (Some(a), Some(b)) if (a - b).abs() <= 1.0 && a > 0.0);
    if num("quota_cpus") != Some(0.2) || !agree || num("box_idle_cpus").is_none_or(|i| i < 0.5) {
        return Err(format!(
            "quota finding: {:?}; cpu.stat throttled {kernel:?} periods meanwhile",
            top.evidence
        ));
    }
    Ok(format!(
        "why: cpu_quota on {limited} first, {} throttled periods (cpu.stat {})",
        ours.unwrap_or(0.0),
        kernel.unwrap_or(0.0)
    ))
}
