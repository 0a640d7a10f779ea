//! Output files never follow a symlink planted at the target path: the
//! file it points to is left alone, and the user gets one clear line.
use std::os::unix::fs::symlink;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

fn planted() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let target = dir.path().join("out");
    symlink(&victim, &target).unwrap();
    (dir, victim, target)
}

fn check(args: &[&str], victim: &std::path::Path) {
    let out = Command::new(BIN).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} wrote through a symlink");
    assert_eq!(
        std::fs::read_to_string(victim).unwrap(),
        "precious\n",
        "{args:?} changed the symlink's target"
    );
    assert!(
        err.trim().lines().count() == 1 && err.contains("schedtop:"),
        "{args:?}: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn record_refuses_a_symlink_even_with_force() {
    let (_d, victim, target) = planted();
    let t = target.to_str().unwrap();
    check(&["record", "--duration", "1s", "-o", t], &victim);
    check(&["record", "--duration", "1s", "--force", "-o", t], &victim);
    check(
        &["record", "--duration", "1s", "--append", "-o", t],
        &victim,
    );
}

#[test]
fn trace_refuses_a_symlink_even_with_force() {
    let (_d, victim, target) = planted();
    let t = target.to_str().unwrap();
    check(&["trace", "-d", "0.2", "-o", t], &victim);
    check(&["trace", "-d", "0.2", "--force", "-o", t], &victim);
}

/// `trace --force -o FIFO`: the open waited for a reader for ever, and as
/// SIGTERM and Ctrl-C only set a flag, nothing but SIGKILL ended it.
#[test]
fn trace_refuses_a_fifo_even_with_force_and_does_not_hang() {
    use std::os::unix::process::CommandExt;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.pftrace");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for force in [false, true] {
        let mut cmd = Command::new(BIN);
        cmd.args(["trace", "-d", "0.2", "-o", fifo.to_str().unwrap()]);
        if force {
            cmd.arg("--force");
        }
        let mut child = cmd
            .process_group(0)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let ended = crate::common::ended_within(&mut child, Duration::from_secs(10));
        if !ended {
            // SAFETY: kill has no memory preconditions; the group is the child's
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        }
        let out = child.wait_with_output().unwrap();
        assert!(ended, "trace -o FIFO (force {force}) hung for 10 s");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "force {force}");
        assert!(
            err.trim().lines().count() == 1 && err.contains("not a regular file"),
            "force {force}: {err}"
        );
    }
}

/// `trace --force` over an existing trace that then fails to start (here:
/// run without privileges, so the probes cannot load) kept nothing: the
/// old file was truncated at the open and held a trace's first bytes. The new trace is written beside it
/// and replaces it only when whole.
#[test]
fn a_trace_that_fails_does_not_cost_the_old_one() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    const NOBODY: u32 = 65534;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let old = dir.path().join("old.pftrace");
    std::fs::write(&old, "yesterday's trace\n").unwrap();
    std::os::unix::fs::chown(&old, Some(NOBODY), Some(NOBODY)).unwrap();
    let out = Command::new(BIN)
        .args(["trace", "-d", "0.2", "--force", "-o"])
        .arg(&old)
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "an unprivileged trace started: {err}"
    );
    assert!(
        err.contains("schedtop:") && !err.contains("panicked"),
        "{err}"
    );
    assert_eq!(
        String::from_utf8_lossy(&std::fs::read(&old).unwrap()),
        "yesterday's trace\n",
        "the failed trace replaced the old one ({err})"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "a partial file left behind: {left:?}");
}
