//! Small command-line promises: every command that writes to stdout ends
//! quietly when its reader goes away; inverted ranges, `-n 0` and a
//! missing --screenshot-dir are errors, not silently accepted.
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v1.schedtop");

/// stdout: a pipe whose read end is already closed, so the first write
/// meets EPIPE whatever the command's timing.
fn closed_pipe() -> Stdio {
    let mut fds = [0i32; 2];
    // SAFETY: pipe writes two descriptors into fds.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fds[0] is ours to close; fds[1] is handed over once.
    unsafe {
        libc::close(fds[0]);
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

#[test]
fn every_command_ends_quietly_when_stdout_closes() {
    for args in [
        vec!["doctor"],
        vec!["completions", "bash"],
        vec!["man"],
        vec!["dump", "--format", "json", FIXTURE],
        vec!["dump", "--format", "csv", FIXTURE],
        vec!["--batch", "-n", "2", "--procfs", "-i", "0.2"],
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        // batch mode notes the procfs fallback first; nothing else is said
        let said: Vec<&str> = err
            .lines()
            .filter(|l| !l.contains("procfs source requested"))
            .collect();
        assert!(said.is_empty(), "{args:?}: {err}");
        // ended by SIGPIPE at the first write, as cat or grep are
        assert!(
            out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?}",
            out.status
        );
    }
}

fn one_line_error(args: &[&str], needle: &str) {
    let out = Command::new(BIN).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?}: exit 0");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: wanted {needle:?} in {err}");
}

#[test]
fn inverted_ranges_and_zero_counts_are_errors() {
    one_line_error(
        &["dump", FIXTURE, "--from", "+15s", "--to", "+5s"],
        "inverted",
    );
    let out = Command::new(BIN).args(["-b", "-n", "0"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--count"));
    one_line_error(
        &["-b", "-n", "1", "--screenshot-dir", "/nonexistent/dir"],
        "--screenshot-dir",
    );
}
