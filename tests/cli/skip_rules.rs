//! The skip helpers' rules, run in a child copy of this test binary: a BPF
//! test that cannot load passes (as a skip that says so) only where
//! neither SCHEDTOP_REQUIRE_BPF=1 nor SCHEDTOP_REQUIRE_ALL=1 is set.
use std::process::Command;

use crate::common::skip;

#[test]
#[ignore = "run by bpf_that_cannot_load_fails_where_ci_requires_it"]
fn a_bpf_test_that_cannot_load() {
    skip::bpf_unavailable("BPF cannot load here (the skip rules' probe)");
}

/// Run the probe above in a child; (passed, its output).
fn probe(env: &[(&str, &str)]) -> (bool, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "skip_rules::a_bpf_test_that_cannot_load",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env_remove("SCHEDTOP_REQUIRE_BPF")
    .env_remove("SCHEDTOP_REQUIRE_ALL");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    // the child ran the probe, not nothing
    assert!(
        text.contains("1 passed") || text.contains("1 failed"),
        "{text}"
    );
    (out.status.success(), text)
}

#[test]
fn bpf_that_cannot_load_fails_where_ci_requires_it() {
    let (passed, text) = probe(&[]);
    assert!(
        passed && text.contains("SKIPPED: BPF cannot load here"),
        "{text}"
    );
    let (passed, text) = probe(&[("SCHEDTOP_REQUIRE_BPF", "1")]);
    assert!(
        !passed && text.contains("BPF required (SCHEDTOP_REQUIRE_BPF=1)"),
        "{text}"
    );
    let (passed, text) = probe(&[("SCHEDTOP_REQUIRE_ALL", "1")]);
    assert!(
        !passed && text.contains("SCHEDTOP_REQUIRE_ALL=1 makes this a failure"),
        "{text}"
    );
}
