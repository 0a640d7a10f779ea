//! `schedtop doctor` lists every feature as on or off with a reason, and on
//! a kernel where BPF loads (root, BTF; CI) the BPF features are on.
use crate::common;

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

#[test]
fn doctor_lists_each_feature_on_or_off_with_a_reason() {
    let out = Command::new(BIN)
        .arg("doctor")
        .env("SCHEDTOP_IRQ_TIME", "1")
        .env("SCHEDTOP_WAKERS", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let d = String::from_utf8_lossy(&out.stdout).into_owned();
    let status = |name: &str| -> (String, String) {
        let line = d
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name}:")))
            .unwrap_or_else(|| panic!("doctor lacks the {name} line:\n{d}"));
        let rest = line.trim_start()[name.len() + 1..].trim_start();
        let (state, reason) = rest.split_once(' ').unwrap_or((rest, ""));
        (state.to_string(), reason.trim().to_string())
    };
    let names = [
        "switch counts",
        "histograms",
        "migrations",
        "run-queue sampler",
        "exits",
        "tracer",
    ];
    for name in names {
        let (state, reason) = status(name);
        assert!(state == "on" || state == "off", "{name}: {state}\n{d}");
        assert!(!reason.is_empty(), "{name} gives no reason\n{d}");
    }
    // SAFETY: geteuid has no preconditions.
    let can_bpf =
        unsafe { libc::geteuid() } == 0 && std::path::Path::new("/sys/kernel/btf/vmlinux").exists();
    if !can_bpf {
        common::skip::bpf_unavailable("BPF features need root and kernel BTF");
        return;
    }
    for name in [
        "switch counts",
        "histograms",
        "migrations",
        "exits",
        "tracer",
        "interrupt time",
        "wakers",
    ] {
        assert_eq!(status(name).0, "on", "{name}\n{d}");
    }
    // what /proc/stat's irq columns mean, against the kernel's own config
    let config = Command::new("sh")
        .args([
            "-c",
            "zcat /proc/config.gz 2>/dev/null || cat /boot/config-$(uname -r)",
        ])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let reason = status("interrupt time").1;
    let stolen = |key: &str| {
        d.lines()
            .find(|l| l.trim_start().starts_with(key))
            .unwrap_or_else(|| panic!("doctor lacks {key}:\n{d}"))
            .to_string()
    };
    let per_cpu = stolen("per CPU, irq/softirq:");
    if config.contains("CONFIG_IRQ_TIME_ACCOUNTING=y") {
        assert!(reason.contains("exact"), "{reason}");
        assert!(
            per_cpu.contains("CONFIG_IRQ_TIME_ACCOUNTING is set"),
            "{per_cpu}"
        );
    } else if config.contains("# CONFIG_IRQ_TIME_ACCOUNTING is not set") {
        assert!(reason.contains("tick-sampled"), "{reason}");
        assert!(per_cpu.contains("tick-sampled"), "{per_cpu}");
        assert!(
            per_cpu.contains("CONFIG_IRQ_TIME_ACCOUNTING is not set"),
            "{per_cpu}"
        );
    } else {
        common::cannot_run("the kernel's config is not readable here");
    }
    // the probes are on here: the per-thread figure is measured
    assert!(
        stolen("per thread, interrupts:").contains("measured by"),
        "{d}"
    );
    // /proc/<pid>/schedstat has three numbers (run, wait, slices): no steal
    let schedstat = std::fs::read_to_string("/proc/self/schedstat").unwrap();
    assert_eq!(schedstat.split_whitespace().count(), 3, "{schedstat}");
    assert!(stolen("per thread, steal:").contains("none"), "{d}");
    assert!(stolen("per CPU, steal:").contains("/proc/stat"), "{d}");
}

#[test]
fn doctor_says_which_cgroup_layout_and_whether_psi_is_there() {
    let out = Command::new(BIN).arg("doctor").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let d = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = |key: &str| {
        d.lines()
            .find(|l| l.trim_start().starts_with(key))
            .unwrap_or_else(|| panic!("doctor lacks {key}:\n{d}"))
            .to_string()
    };
    // against the mounts and files themselves
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let v1_cpu = mounts.lines().any(|l| {
        l.contains(" - cgroup ") && l.rsplit(' ').next().unwrap().split(',').any(|o| o == "cpu")
    });
    let v2 = mounts.lines().any(|l| l.contains(" - cgroup2 "));
    let layout = line("cgroups:");
    match (v1_cpu, v2) {
        (true, true) => assert!(layout.contains("v1 hybrid"), "{layout}"),
        (true, false) => assert!(layout.contains("v1 only"), "{layout}"),
        (false, true) => assert!(layout.contains("v2"), "{layout}"),
        (false, false) => assert!(layout.contains("none"), "{layout}"),
    }
    let sys = line("system PSI:");
    let has = std::path::Path::new("/proc/pressure/cpu").exists();
    assert_eq!(sys.contains("yes"), has, "{sys}");
    assert!(line("cgroup PSI:").contains(if v2 { "" } else { "no" }));
}
