//! `record --dir` on a small disk: a loop-mounted 32 MiB ext4 (reserved
//! blocks and all). The recorder keeps `--keep-free` free (statvfs polled
//! by the test the whole run), prunes its own oldest files to do so, pauses
//! when that is not enough (the test takes the space), never exits, leaves
//! no empty files, and records again in the same run once space is freed.
//! And a full disk (ENOSPC, no floor) pauses instead of ending the process.
use crate::common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schedtop::record::dir::recording_files;
use schedtop::record::disk_floor::space;
use schedtop::record::Reader;

const MIB: u64 = 1 << 20;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_schedtop")
}

/// A mounted filesystem, unmounted (and its loop device detached) when
/// dropped, also when the test panics.
struct Mount {
    at: PathBuf,
    loop_dev: Option<String>,
}

impl Drop for Mount {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(&self.at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&self.at).status();
        }
        if let Some(dev) = &self.loop_dev {
            let _ = Command::new("losetup").args(["-d", dev]).status();
        }
    }
}

fn sh(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A 32 MiB ext4 on a loop device at `dir/mnt`, or None (skipped).
fn loop_ext4(dir: &Path) -> Option<Mount> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::skip::skip("mounting a loop device needs root");
        return None;
    }
    let img = dir.join("fs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 * MIB)
        .unwrap();
    let at = dir.join("mnt");
    std::fs::create_dir(&at).unwrap();
    let made = sh("mkfs.ext4", &["-q", "-F", img.to_str().unwrap()])
        .and_then(|_| sh("losetup", &["-f", "--show", img.to_str().unwrap()]));
    let dev = match made {
        Ok(dev) => dev,
        Err(e) => {
            common::skip::skip(&format!("no loop-mounted ext4 here: {e}"));
            return None;
        }
    };
    let m = Mount {
        at: at.clone(),
        loop_dev: Some(dev.clone()),
    };
    if let Err(e) = sh("mount", &[&dev, at.to_str().unwrap()]) {
        common::skip::skip(&format!("cannot mount {dev}: {e}"));
        return None;
    }
    Some(m)
}

/// The recorder, killed with its process group when dropped; its stderr
/// collected as it comes.
struct Recorder {
    child: Child,
    err: Arc<Mutex<String>>,
}

impl Recorder {
    fn start(args: &[&str]) -> Recorder {
        let mut child = Command::new(bin())
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let err = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let e = err.clone();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                e.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Recorder { child, err }
    }

    fn err(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    /// Wait until stderr says `what`; panics after `secs` or if the
    /// recorder exits.
    fn wait_for(&mut self, what: &str, secs: u64) {
        let t = Instant::now();
        while !self.err().contains(what) {
            if let Some(st) = self.child.try_wait().unwrap() {
                panic!(
                    "the recorder exited ({st}) waiting for {what:?}:\n{}",
                    self.err()
                );
            }
            assert!(
                t.elapsed() < Duration::from_secs(secs),
                "no {what:?} in {secs} s:\n{}",
                self.err()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// The lowest free space seen while `watching`, polled every 10 ms.
struct Watch {
    min: Arc<AtomicU64>,
    watching: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
}

impl Watch {
    fn start(at: &Path) -> Watch {
        let w = Watch {
            min: Arc::new(AtomicU64::new(u64::MAX)),
            watching: Arc::new(AtomicBool::new(true)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (min, watching, stop, at) = (
            w.min.clone(),
            w.watching.clone(),
            w.stop.clone(),
            at.to_path_buf(),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if watching.load(Ordering::Relaxed) {
                    if let Ok(s) = space(&at) {
                        min.fetch_min(s.avail, Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        w
    }

    /// The minimum since the last call, and start again.
    fn take(&self) -> u64 {
        self.min.swap(u64::MAX, Ordering::Relaxed)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn fill(path: &Path, bytes: u64) {
    std::fs::write(path, vec![7u8; bytes as usize]).unwrap();
    std::fs::File::open(path).unwrap().sync_all().unwrap();
}

/// Every file in `dir` as (path, Samples, dropped_before); panics on a
/// file that does not open.
fn files(dir: &Path) -> Vec<(PathBuf, usize, u64)> {
    let mut v: Vec<_> = recording_files(dir)
        .unwrap()
        .into_iter()
        .map(|p| {
            let r = Reader::open(&p).unwrap_or_else(|e| panic!("{}: {e:#}", p.display()));
            let dropped = r.header().dropped_before;
            (p, r.len(), dropped)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_floor_holds_on_a_small_disk_and_recording_resumes() {
    let d = tempfile::tempdir().unwrap();
    let Some(m) = loop_ext4(d.path()) else {
        return;
    };
    let t0 = Instant::now();
    let floor = 8 * MIB;
    let s = space(&m.at).unwrap();
    eprintln!(
        "ext4 on {:?}: {:.1} MiB, {:.1} MiB free to users",
        m.loop_dev,
        s.total as f64 / MIB as f64,
        s.avail as f64 / MIB as f64
    );
    // 320 KiB above the floor (the recorder keeps 256 KiB more for its
    // next write): reached in seconds at 10 Samples a second, however few
    // threads the machine runs
    fill(&m.at.join("filler1"), s.avail - floor - 320 * 1024);
    let bb = m.at.join("bb");
    let watch = Watch::start(&m.at);
    let mut rec = Recorder::start(&[
        "record",
        "--dir",
        bb.to_str().unwrap(),
        "--rotate",
        "2s",
        "-i",
        "0.1",
        "--procfs",
        "--keep-free",
        "8M",
    ]);
    // 1: the recorder alone reaches the floor and prunes its own files
    rec.wait_for("(free-space floor)", 60);
    let first_prune = t0.elapsed();
    // and goes on pruning at the floor: watched until four more of its
    // files went (a fixed 20 s here saw 13 go; a slow machine gets the 20 s)
    let t = Instant::now();
    while rec.err().matches("(free-space floor)").count() < 5 && t.elapsed().as_secs() < 20 {
        std::thread::sleep(Duration::from_millis(50));
    }
    let min1 = watch.take();
    assert!(min1 >= floor, "{min1} free, under the floor {floor}");
    let f1 = files(&bb);
    assert!(f1.iter().all(|f| f.1 > 0), "an empty file: {f1:?}");

    // 2: the test takes the space: below the floor even with every own
    // file but the newest gone, the recorder pauses and stays up
    watch.watching.store(false, Ordering::Relaxed);
    let now = space(&m.at).unwrap().avail;
    fill(&m.at.join("filler2"), now - floor + MIB);
    rec.wait_for("writing paused", 15);
    std::thread::sleep(Duration::from_millis(500));
    let paused_at = space(&m.at).unwrap().avail;
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        space(&m.at).unwrap().avail,
        paused_at,
        "nothing written while paused"
    );
    assert!(rec.alive());
    let f2 = files(&bb);
    assert_eq!(f2.len(), 1, "the newest file only: {f2:?}\n{}", rec.err());
    assert!(f2[0].1 > 0);

    // 3: space freed: recording again, in the same run, above the floor
    std::fs::remove_file(m.at.join("filler2")).unwrap();
    watch.take();
    watch.watching.store(true, Ordering::Relaxed);
    rec.wait_for("recording again", 15);
    std::thread::sleep(Duration::from_secs(6));
    let min3 = watch.take();
    assert!(min3 >= floor, "{min3} free, under the floor {floor}");
    assert!(rec.alive());
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(rec.child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let status = loop {
        if let Some(st) = rec.child.try_wait().unwrap() {
            break st;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no exit on SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(200));
    let err = rec.err();
    assert!(status.success(), "{err}");
    let f3 = files(&bb);
    assert!(f3.iter().all(|f| f.1 > 0), "an empty file: {f3:?}");
    // the file after the pause says how many Samples were dropped, as stderr did
    let said: u64 = err
        .split("Samples dropped while paused")
        .next()
        .and_then(|h| h.rsplit('(').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(said >= 20, "paused 3.5 s at 0.1 s: {said}\n{err}");
    let resumed: Vec<&(PathBuf, usize, u64)> = f3.iter().filter(|f| f.2 > 0).collect();
    assert_eq!(resumed.len(), 1, "{f3:?}");
    assert_eq!(resumed[0].2, said);
    assert!(
        err.contains(&format!("{said} dropped at the free-space floor")),
        "{err}"
    );
    let removed = err.matches("(free-space floor)").count();
    eprintln!(
        "floor {} MiB; lowest free: {:.2} MiB while recording, {:.2} MiB after the pause; \
         first prune after {:.1} s; {removed} files pruned for the floor; {said} Samples dropped \
         while paused; {} files at the end; {:.0} s in all",
        floor / MIB,
        min1 as f64 / MIB as f64,
        min3 as f64 / MIB as f64,
        first_prune.as_secs_f64(),
        f3.len(),
        t0.elapsed().as_secs_f64()
    );
    drop(watch);
}

/// No floor (--keep-free 0) and one file (--rotate 1h): the disk fills,
/// the write fails with ENOSPC, nothing older can be removed, and the
/// recorder pauses (it stopped for good before), then records again once
/// space is freed. What was written reads back, with no empty file.
#[test]
fn a_full_disk_pauses_and_keeps_what_was_written() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        common::skip::skip("mounting a small tmpfs needs root");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let at = d.path().join("mnt");
    std::fs::create_dir(&at).unwrap();
    sh(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=1m",
            "tmpfs",
            at.to_str().unwrap(),
        ],
    )
    .unwrap();
    let _m = Mount {
        at: at.clone(),
        loop_dev: None,
    };
    // leave 48 KiB free
    fill(&at.join("filler"), MIB - 48 * 1024);
    let mut rec = Recorder::start(&[
        "record",
        "--dir",
        at.to_str().unwrap(),
        "--rotate",
        "1h",
        "-i",
        "0.1",
        "--procfs",
        "--keep-free",
        "0",
    ]);
    rec.wait_for("No space left on device", 30);
    rec.wait_for("writing paused", 1);
    std::thread::sleep(Duration::from_secs(1));
    assert!(rec.alive());
    std::fs::remove_file(at.join("filler")).unwrap();
    rec.wait_for("recording again", 5);
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill has no memory preconditions.
    unsafe { libc::kill(rec.child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let status = loop {
        if let Some(st) = rec.child.try_wait().unwrap() {
            break st;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no exit on SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(200));
    let err = rec.err();
    eprintln!("{err}");
    assert!(status.success(), "{err}");
    let f = files(&at);
    assert_eq!(f.len(), 2, "the file before the pause and after: {f:?}");
    assert!(f.iter().all(|f| f.1 > 0), "{f:?}");
    assert!(f[1].2 >= 3, "{f:?}");
    assert!(
        err.contains(&format!("{} dropped at the free-space floor", f[1].2)),
        "{err}"
    );
    let out = Command::new(bin()).arg("dump").arg(&at).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let intervals = String::from_utf8_lossy(&out.stdout).lines().count();
    let samples: usize = f.iter().map(|f| f.1).sum();
    // every Sample written reads back; the one after the pause may start
    // no interval (the timeline has a gap there)
    assert!(
        (samples - f.len()..samples).contains(&intervals),
        "{intervals} intervals from {samples} Samples"
    );
}
