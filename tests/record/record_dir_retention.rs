//! `record --dir` retention deletes only its own files, in the order the
//! recordings give, not by mtime: a user's `notes.schedtop`, a file a
//! running `record -o` is writing into the directory and an own file whose
//! writer's lock is held all survive `--retain-size 1`; files stamped in
//! the future (the clock stepped back) and files that look days old (the
//! clock stepped forward) do not cost the newest recordings.
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use schedtop::record::dir::recording_files;
use schedtop::record::Reader;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_schedtop")
}

/// Kills a process group when dropped (the test ends, or panics).
struct Group(u32);
impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(-(self.0 as i32), libc::SIGKILL) };
    }
}

fn spawn(args: &[&str]) -> (Child, Group) {
    let child = Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let g = Group(child.id());
    (child, g)
}

fn run(args: &[&str]) -> Output {
    let (child, _g) = spawn(args);
    child.wait_with_output().unwrap()
}

/// `record --dir D` for `secs`, a file a second, this process's threads.
fn record_dir(dir: &Path, secs: &str, extra: &[&str]) -> String {
    let pid = std::process::id().to_string();
    let mut args = vec![
        "record",
        "--dir",
        dir.to_str().unwrap(),
        // the floor is tested in record_dir_floor.rs; this disk may be fuller
        "--keep-free",
        "0",
        "--rotate",
        "1s",
        "-i",
        "0.2",
        "--procfs",
        "-p",
        &pid,
        "--duration",
        secs,
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

fn own_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = recording_files(dir)
        .unwrap()
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("schedtop-")
        })
        .collect();
    v.sort();
    v
}

fn set_mtime(p: &Path, t: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[test]
fn retention_leaves_foreign_running_and_held_files_alone() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("bb");
    // the recorder's own older files
    record_dir(&dir, "3.5s", &[]);
    let first_run = own_files(&dir);
    assert!(first_run.len() >= 3, "{first_run:?}");
    // a user's file, and one of the recorder's files held by a writer (as
    // `record --append` holds it)
    let notes = dir.join("notes.schedtop");
    std::fs::write(&notes, b"my notes, not a recording").unwrap();
    let held = first_run[1].clone();
    let lock = std::fs::File::open(&held).unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(
        unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    // another recorder writing into the directory
    let mine = dir.join("mine.schedtop");
    let pid = std::process::id().to_string();
    let (other, _g) = spawn(&[
        "record",
        "-o",
        mine.to_str().unwrap(),
        "-i",
        "0.2",
        "--procfs",
        "-p",
        &pid,
    ]);
    std::thread::sleep(Duration::from_millis(800));
    let err = record_dir(&dir, "2.5s", &["--retain-size", "1"]);
    eprintln!("{err}");

    // the other recorder still writes to the file at its path
    assert!(mine.exists(), "{err}");
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(other.id() as i32, libc::SIGINT) };
    let out = other.wait_with_output().unwrap();
    let oerr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{oerr}");
    let said: usize = oerr
        .split("stopped by signal: ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{oerr}"));
    let r = Reader::open(&mine).unwrap();
    assert_eq!(r.len(), said, "every Sample it reported is in the file");
    assert!(said >= 10, "{oerr}");

    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes, not a recording");
    assert!(held.exists(), "a held file was deleted\n{err}");
    // every other file of the first run went; named in the order written
    for f in &first_run {
        if *f != held {
            assert!(!f.exists(), "{} kept\n{err}", f.display());
            assert!(err.contains(&format!("removed {}", f.display())), "{err}");
        }
    }
    // the strangers are named once each, the held file with its holder
    for name in ["notes.schedtop", "mine.schedtop"] {
        assert_eq!(err.matches(name).count(), 1, "{name}\n{err}");
    }
    assert!(
        err.contains(&format!("is held by pid {}", std::process::id())),
        "{err}"
    );
    drop(lock);
}

/// The clock stepped back a day between two runs: the first run's files
/// have mtimes a day ahead of the second's. --retain-size deletes the
/// first run's files (the older recordings), not the newest.
#[test]
fn files_stamped_in_the_future_do_not_cost_the_newest() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("bb");
    record_dir(&dir, "3.5s", &[]);
    let first_run = own_files(&dir);
    assert!(first_run.len() >= 3, "{first_run:?}");
    let tomorrow = SystemTime::now() + Duration::from_secs(86_400);
    for f in &first_run {
        set_mtime(f, tomorrow);
    }
    let size = |p: &PathBuf| std::fs::metadata(p).unwrap().len();
    let first_total: u64 = first_run.iter().map(size).sum();
    let largest = first_run.iter().map(size).max().unwrap();
    // room for about the second run and two of the first run's files
    let limit = first_total + 2 * largest;
    let err = record_dir(&dir, "3.5s", &["--retain-size", &limit.to_string()]);
    let now = own_files(&dir);
    let second_run: Vec<&PathBuf> = now.iter().filter(|f| !first_run.contains(f)).collect();
    assert!(second_run.len() >= 3, "{now:?}\n{err}");
    let gone: Vec<&PathBuf> = first_run.iter().filter(|f| !f.exists()).collect();
    assert!(!gone.is_empty(), "nothing was over the limit?\n{err}");
    // what went was the oldest recordings, oldest first
    assert_eq!(gone, first_run.iter().take(gone.len()).collect::<Vec<_>>());
    let total: u64 = now.iter().map(size).sum();
    assert!(total <= limit, "{total} > {limit}\n{err}");
    // the newest file of all and the second run whole
    for f in &second_run {
        assert!(f.exists());
    }
}

/// The clock stepped forward three days: the files of a minute ago look
/// three days old by mtime. `--retain 1h` keeps them: their recorded age
/// is seconds.
#[test]
fn a_clock_step_forward_keeps_the_newest_recordings() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("bb");
    record_dir(&dir, "3.5s", &[]);
    let first_run = own_files(&dir);
    assert!(first_run.len() >= 3, "{first_run:?}");
    let back = SystemTime::now() - Duration::from_secs(3 * 86_400);
    for f in &first_run {
        set_mtime(f, back);
    }
    let err = record_dir(&dir, "2.5s", &["--retain", "1h"]);
    for f in &first_run {
        assert!(f.exists(), "{} deleted\n{err}", f.display());
    }
    assert!(!err.contains("removed"), "{err}");
    // and --retain 1s still deletes them: they are seconds old
    let err = record_dir(&dir, "2.5s", &["--retain", "1s"]);
    for f in &first_run {
        assert!(!f.exists(), "{} kept\n{err}", f.display());
    }
}
