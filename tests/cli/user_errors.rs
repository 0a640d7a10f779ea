//! Every error a user can hit prints one clear line and exits non-zero,
//! never a backtrace: no root, no BTF, a bad file, a bad time, an unknown pid.
use std::process::{Command, Output};

use crate::common::skip;
use skip::skip;

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

fn one_line_error(out: &Output, needle: &str, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what}: exit 0");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    assert!(err.starts_with("schedtop: "), "{what}: {err}");
    assert!(err.contains(needle), "{what}: wanted {needle:?} in {err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{what}: {err}"
    );
}

fn schedtop(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The binary, copied where user nobody can run it.
fn binary_for_nobody() -> String {
    let dst = std::env::temp_dir().join(format!("schedtop-errors-{}", std::process::id()));
    std::fs::copy(BIN, &dst).unwrap();
    Command::new("chmod").arg("755").arg(&dst).status().unwrap();
    dst.to_string_lossy().into_owned()
}

#[test]
fn bad_files_and_bad_times() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.schedtop");
    one_line_error(
        &schedtop(&["dump", missing.to_str().unwrap()]),
        "missing.schedtop",
        "missing file",
    );
    let garbage = dir.path().join("garbage.schedtop");
    std::fs::write(&garbage, vec![0x5au8; 4096]).unwrap();
    one_line_error(
        &schedtop(&["dump", garbage.to_str().unwrap()]),
        "garbage.schedtop",
        "garbage file",
    );
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v1.schedtop");
    for bad in ["yesterday", "-5parsecs", "25:99:00", "+"] {
        one_line_error(
            &schedtop(&["dump", fixture, "--from", bad]),
            bad,
            "bad time",
        );
    }
    one_line_error(
        &schedtop(&["dump", fixture, "--format", "xml"]),
        "xml",
        "bad format",
    );
}

#[test]
fn unknown_pid() {
    one_line_error(
        &schedtop(&["-b", "-n", "1", "-p", "4000000"]),
        "no process with pid 4000000",
        "pid",
    );
}

#[test]
fn not_root() {
    if !root() {
        skip("needs root to become nobody");
        return;
    }
    let bin = binary_for_nobody();
    let as_nobody = |args: &[&str]| {
        Command::new("runuser")
            .args(["-u", "nobody", "--", &bin])
            .args(args)
            .output()
            .unwrap()
    };
    one_line_error(
        &as_nobody(&["-b", "-n", "1", "--require-bpf"]),
        "not root",
        "require-bpf as nobody",
    );
    let out = as_nobody(&[
        "trace",
        "-d",
        "0.1",
        "-o",
        "/tmp/schedtop-nobody-trace.pftrace",
    ]);
    one_line_error(&out, "root", "trace as nobody");
    let _ = std::fs::remove_file(&bin);
}

#[test]
fn no_btf() {
    if !root() {
        skip("needs root for a mount namespace");
        return;
    }
    // hide the kernel's BTF in a private mount namespace
    let script =
        format!("mount -t tmpfs none /sys/kernel/btf && exec {BIN} -b -n 1 -i 0.1 --require-bpf");
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    one_line_error(&out, "no kernel BTF", "no BTF");
    // without --require-bpf it falls back and says why, in one line
    let script = format!("mount -t tmpfs none /sys/kernel/btf && exec {BIN} -b -n 1 -i 0.1");
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no kernel BTF") && err.lines().count() == 1,
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["source"], "procfs");
}
