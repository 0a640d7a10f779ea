//! `schedtop doctor` lists every feature as on or off with a reason, and on
//! a kernel where BPF loads (root, BTF; CI) the BPF features are on.
mod common;

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

#[test]
fn doctor_lists_each_feature_on_or_off_with_a_reason() {
    let out = Command::new(BIN).arg("doctor").output().unwrap();
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
        common::cannot_run("BPF features need root and kernel BTF");
        return;
    }
    for name in [
        "switch counts",
        "histograms",
        "migrations",
        "exits",
        "tracer",
    ] {
        assert_eq!(status(name).0, "on", "{name}\n{d}");
    }
}
