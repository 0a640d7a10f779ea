//! `schedtop doctor`: the build and what this kernel offers schedtop, for
//! bug reports. Every line is a fact checked now, not an assumption.
use std::path::Path;

use crate::collect::features::Feature;
use crate::collect::{LiveOptions, LiveSource};

/// Which cgroup layout the quotas come from and whether CPU pressure is
/// there: a v1 host without a unified tree has no PSI per cgroup.
pub fn cgroup_notes(proc_root: &Path) -> Vec<String> {
    use crate::collect::cgroupfs::{read_system_pressure, CgroupLayout};
    let l = CgroupLayout::discover(proc_root, Path::new("/"));
    let show = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map_or_else(|| "none".to_string(), |p| p.display().to_string())
    };
    let layout = match (&l.cpu_v1, &l.unified) {
        (Some(_), Some(_)) => {
            "v1 hybrid (quota from the v1 cpu controller, pressure from the unified tree)"
        }
        (Some(_), None) => "v1 only (no pressure per cgroup: '-')",
        (None, Some(_)) => "v2 (cpu.max, cpu.stat, cpu.pressure)",
        (None, None) => "none mounted (no cgroup figures: '-')",
    };
    let unified_psi = l
        .unified
        .as_ref()
        .is_some_and(|u| u.join("cpu.pressure").exists());
    vec![
        format!("cgroups:           {layout}"),
        format!(
            "  cpu controller:   {}",
            show(&l.cpu_v1.clone().or(l.unified.clone()))
        ),
        format!("  unified tree:     {}", show(&l.unified)),
        format!(
            "  cgroup PSI:       {}",
            if unified_psi {
                "yes (cpu.pressure in the unified tree)"
            } else {
                "no (PSI columns show '-')"
            }
        ),
        format!(
            "system PSI:        {}",
            if read_system_pressure(proc_root).is_some() {
                "yes (/proc/pressure/cpu)"
            } else {
                "no (/proc/pressure/cpu absent: CONFIG_PSI off or psi=0)"
            }
        ),
    ]
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

pub fn run() -> anyhow::Result<()> {
    crate::outln!(
        "schedtop {} (commit {})",
        env!("CARGO_PKG_VERSION"),
        env!("SCHEDTOP_GIT_COMMIT")
    );
    crate::outln!(
        "kernel:            {}",
        crate::collect::system::kernel_release()
    );
    // SAFETY: geteuid has no preconditions.
    crate::outln!(
        "root:              {}",
        yes_no(unsafe { libc::geteuid() } == 0)
    );
    crate::outln!("capabilities:      {}", crate::util::privileges::describe());
    crate::outln!(
        "kernel BTF:        {} (/sys/kernel/btf/vmlinux)",
        yes_no(Path::new("/sys/kernel/btf/vmlinux").exists())
    );
    crate::outln!(
        "sched_info:        {} (/proc/self/schedstat: slice and wait accounting)",
        yes_no(Path::new("/proc/self/schedstat").exists())
    );
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unreadable".into());
    crate::outln!("perf_event_paranoid: {paranoid}");
    let opts = LiveOptions {
        interval_ns: 1_000_000_000,
        pid_filter: vec![],
        force_procfs: false,
        require_bpf: false,
        run_delay_waits: false,
        threads: Default::default(),
    };
    let src = LiveSource::open(&opts)?;
    let host = src.host();
    let bpf = src.bpf().is_some();
    crate::outln!(
        "BPF probes:        {} (sched_switch, sched_migrate_task, task iterator)",
        if bpf { "loaded" } else { "not loaded" }
    );
    crate::outln!("source:            {}", host.source.as_str());
    crate::outln!(
        "sched_ext:         {}",
        crate::collect::sched_ext::read(Path::new("/sys")).describe()
    );
    if let Some(r) = &host.degraded_reason {
        crate::outln!("note:              {r}");
    }
    let mut features = src.features();
    match crate::collect::flight::probe() {
        Ok(how) => features.set(Feature::Tracer, true, how),
        Err(e) => features.set(Feature::Tracer, false, format!("{e:#}")),
    }
    crate::outln!("features:");
    for f in &features.0 {
        crate::outln!(
            "  {:<18} {:<3} {}",
            format!("{}:", f.feature.name()),
            if f.on { "on" } else { "off" },
            f.detail
        );
    }
    for line in crate::collect::irq_time::doctor_lines(features.is_on(Feature::IrqTime)) {
        crate::outln!("{line}");
    }
    for line in cgroup_notes(Path::new("/proc")) {
        crate::outln!("{line}");
    }
    crate::outln!(
        "topology:          {} CPUs, {} NUMA nodes",
        host.topology.cpus.len(),
        host.topology.nodes().len()
    );
    Ok(())
}
