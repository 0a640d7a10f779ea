//! Fault test: `R` in the real binary, in a real terminal (tmux), with the
//! current directory on a tiny tmpfs. The filesystem fills; the TUI must
//! keep running and say "recording stopped: No space left on device", quit
//! normally, and leave a file whose every complete frame reads.
//!
//! Also: `schedtop replay --at` in tmux as an unprivileged user (replay
//! needs no root), its keys and its timeline.
//!
//! Needs root (mount, changing user) and tmux; skips without them unless
//! SCHEDTOP_REQUIRE_ALL=1.
use std::path::{Path, PathBuf};
use std::process::Command;

use schedtop::record::Reader;

use crate::common;
use common::tmux::{have_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");

fn skip(why: &str) -> bool {
    if std::env::var("SCHEDTOP_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("{why} and SCHEDTOP_REQUIRE_ALL=1");
    }
    eprintln!("skipping: {why} (SCHEDTOP_REQUIRE_ALL=1 makes this fail)");
    true
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The binary under test is this tree's (a build of another checkout into
/// a shared target directory can replace target/debug/schedtop).
fn assert_this_build() {
    let o = Command::new(BIN)
        .args(["replay", "--help"])
        .output()
        .expect("running schedtop");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("--at"),
        "{BIN} is not this tree's build (another build replaced it): rebuild and rerun"
    );
}

/// A tmpfs of `size` mounted on a fresh directory; unmounted on drop.
struct SmallFs {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl SmallFs {
    fn mount(size: &str) -> SmallFs {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fs");
        std::fs::create_dir(&path).unwrap();
        let o = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "none",
            ])
            .arg(&path)
            .output()
            .expect("running mount");
        assert!(
            o.status.success(),
            "mount: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        SmallFs { _dir: dir, path }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).output();
    }
}

/// The header's clock ("at HH:MM:SS UTC"), to see the screen still moving.
fn clock(screen: &str) -> Option<String> {
    let i = screen.find(" at ")?;
    Some(screen[i + 4..].chars().take(8).collect())
}

#[test]
fn recording_onto_a_full_filesystem_stops_the_recording_not_the_ui() {
    if !is_root() {
        skip("not root (mounting a tmpfs needs it)");
        return;
    }
    if !have_tmux() {
        skip("tmux is not installed");
        return;
    }
    assert_this_build();
    let fs = SmallFs::mount("128k");
    let tmux = Tmux::start("recfault-full", 200, 50, Some(&fs.path));
    tmux.type_text(&format!("{BIN} -i 0.1; echo SCHEDTOP_EXIT=$?"));
    tmux.send(&["Enter"]);
    tmux.wait_for("the live view", 30, |s| s.contains("NVCSW/s"));
    tmux.send(&["R"]);
    tmux.wait_for("REC in the header", 10, |s| s.contains("REC  schedtop-"));
    let s = tmux.wait_for("the recording to fill the filesystem", 180, |s| {
        s.contains("recording stopped: No space left on device")
    });
    assert!(!s.contains("REC  schedtop-"), "still says REC:\n{s}");
    // the UI goes on: the clock moves, keys work
    let before = clock(&s).expect("a clock in the header");
    tmux.wait_for("the clock to move after the error", 10, |s| {
        clock(s).is_some_and(|c| c != before)
    });
    tmux.send(&["H"]);
    tmux.wait_for("the processes view", 10, |s| s.contains("Processes"));
    // R again: the filesystem is still full, a message, still running
    tmux.send(&["R"]);
    tmux.wait_for("a second try to fail politely", 10, |s| {
        s.contains("No space left on device") && s.contains("switches/s")
    });
    tmux.send(&["q"]);
    tmux.wait_for("a clean exit", 20, |s| s.contains("SCHEDTOP_EXIT=0"));

    let files: Vec<PathBuf> = std::fs::read_dir(&fs.path)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "schedtop"))
        .collect();
    assert!(!files.is_empty(), "no recording in {}", fs.path.display());
    let mut total = 0;
    for f in &files {
        let size = std::fs::metadata(f).unwrap().len();
        if size == 0 {
            // the second R: created, then not even its header fitted
            continue;
        }
        let mut r = Reader::open(f).unwrap_or_else(|e| panic!("{}: {e:#}", f.display()));
        assert!(
            r.damage().is_empty(),
            "{}: the file must end with a complete frame: {:?}",
            f.display(),
            r.damage()
        );
        for i in 0..r.len() {
            r.sample(i)
                .unwrap_or_else(|e| panic!("{} Sample {i}: {e:#}", f.display()));
        }
        total += r.len();
    }
    assert!(total >= 2, "the recording holds {total} Samples");
    drop(tmux);
}

#[test]
fn replay_as_an_unprivileged_user_with_its_keys() {
    if !is_root() {
        skip("not root (the test runs the replay as nobody)");
        return;
    }
    if !have_tmux() {
        skip("tmux is not installed");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    assert_this_build();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let rec = dir.path().join("v1.schedtop");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1.schedtop"),
        &rec,
    )
    .unwrap();
    std::fs::set_permissions(&rec, std::fs::Permissions::from_mode(0o644)).unwrap();
    // the binary must be reachable by nobody: copy it next to the recording
    let bin = dir.path().join("schedtop");
    std::fs::copy(BIN, &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tmux = Tmux::start("recfault-user", 200, 50, Some(dir.path()));
    tmux.type_text(&format!(
        "setpriv --reuid=65534 --regid=65534 --clear-groups {} replay v1.schedtop --at 23:00:05Z; echo SCHEDTOP_EXIT=$?",
        bin.display()
    ));
    tmux.send(&["Enter"]);
    let s = tmux.wait_for("the replay, paused at 23:00:05", 30, |s| {
        s.contains("sample 6/14") && s.contains("PAUSE")
    });
    assert!(s.contains("source replay"), "{s}");
    assert!(s.contains("worker-"), "{s}");
    tmux.send(&["t"]);
    tmux.wait_for("one step forward", 10, |s| s.contains("sample 7/14"));
    tmux.send(&["T", "T"]);
    tmux.wait_for("two steps back", 10, |s| s.contains("sample 5/14"));
    tmux.send(&["End"]);
    tmux.wait_for("the last sample", 10, |s| s.contains("sample 14/14"));
    tmux.send(&["j"]);
    tmux.type_text("yesterday");
    tmux.wait_for("the prompt", 10, |s| s.contains("Jump to: yesterday_"));
    tmux.send(&["Enter"]);
    tmux.wait_for("a one-line error", 10, |s| {
        s.contains("bad time \"yesterday\"") && s.contains("sample 14/14")
    });
    tmux.send(&["j"]);
    tmux.type_text("+2s");
    tmux.send(&["Enter"]);
    tmux.wait_for("the jump", 10, |s| s.contains("sample 3/14"));
    // play at x100: runs to the end and stops there
    tmux.send(&["x", "x", "Space"]);
    tmux.wait_for("playback to the end", 30, |s| {
        s.contains("sample 14/14") && s.contains("end of the recording")
    });
    tmux.send(&["q"]);
    tmux.wait_for("a clean exit", 20, |s| s.contains("SCHEDTOP_EXIT=0"));
}
