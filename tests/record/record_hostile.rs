//! Hostile and damaged recordings (tests/fixtures/hostile/, built by
//! `record::crafted`) read by the real binary under a memory cap
//! (`prlimit --as`) and a time cap: each costs a clear message and at most
//! its own Samples, never the host.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use schedtop::record::crafted;

const BIN: &str = env!("CARGO_BIN_EXE_schedtop");
/// Address space for one `dump`: the binary maps ~30 MB; a Sample may
/// decompress to 128 MiB and decode to at most the codec's budget.
const MEM_CAP: u64 = 1 << 30;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile")
}

/// The checked-in fixtures and the builders that made them.
type Builder = fn() -> Vec<u8>;

fn fixtures() -> Vec<(&'static str, Builder)> {
    vec![
        ("huge-counts", crafted::huge_counts),
        ("zero-threads", crafted::zero_threads),
        ("repeated-headers", || crafted::repeated_headers(300)),
        ("newer-segment", crafted::newer_segment),
        ("junk-prefix", crafted::junk_prefix),
        ("concatenated", crafted::concatenated),
        ("truncated", crafted::truncated),
        ("bit-flipped", crafted::bit_flipped),
    ]
}

fn fixture(name: &str) -> PathBuf {
    fixture_dir().join(format!("{name}.schedtop"))
}

/// The fixtures are what the builders make (SCHEDTOP_REGEN_FIXTURES=1
/// rewrites them).
#[test]
fn fixtures_match_their_builders() {
    let regen = std::env::var_os("SCHEDTOP_REGEN_FIXTURES").is_some();
    for (name, build) in fixtures() {
        let bytes = build();
        if regen {
            std::fs::create_dir_all(fixture_dir()).unwrap();
            std::fs::write(fixture(name), &bytes).unwrap();
        }
        let on_disk = std::fs::read(fixture(name)).unwrap();
        assert!(on_disk == bytes, "{name}: fixture differs from its builder");
        assert!(on_disk.len() < 200_000, "{name}: {} bytes", on_disk.len());
    }
}

/// `schedtop dump --format json FILE` under the memory cap; killed after
/// `time_cap`.
fn dump_capped(file: &Path, time_cap: Duration) -> (Output, Duration) {
    let t = Instant::now();
    let child = Command::new("prlimit")
        .arg(format!("--as={MEM_CAP}"))
        .arg(BIN)
        .args(["dump", "--format", "json"])
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("prlimit (util-linux)");
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        let end = Instant::now() + time_cap;
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
            // SAFETY: signal 0 only checks that the process exists.
            if unsafe { libc::kill(pid as i32, 0) } != 0 {
                return;
            }
        }
        // SAFETY: our own child (reaped below by wait_with_output).
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    });
    let out = child.wait_with_output().unwrap();
    let _ = watchdog.join();
    (out, t.elapsed())
}

struct Outcome {
    ok: bool,
    intervals: usize,
    stderr: String,
}

fn read_capped(file: &Path, time_cap: Duration) -> Outcome {
    let (out, took) = dump_capped(file, time_cap);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let name = file.display();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        None,
        "{name}: killed ({took:?}, cap {time_cap:?}, {MEM_CAP} bytes): {stderr}"
    );
    assert!(took < time_cap, "{name}: {took:?}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("memory allocation"),
        "{name}: {stderr}"
    );
    for l in stderr.lines() {
        assert!(l.starts_with("schedtop: "), "{name}: {l}");
        assert!(l.len() < 400, "{name}: long line {l}");
    }
    Outcome {
        ok: out.status.success(),
        intervals: out.stdout.iter().filter(|&&b| b == b'\n').count(),
        stderr,
    }
}

const CAP: Duration = Duration::from_secs(20);

#[test]
fn counts_larger_than_their_data_cost_nothing() {
    for name in ["huge-counts", "zero-threads"] {
        let o = read_capped(&fixture(name), CAP);
        assert!(!o.ok, "{name}: nothing was readable, yet exit 0");
        assert_eq!(o.intervals, 0);
        assert!(
            o.stderr.contains("memory limit") || o.stderr.contains("larger than the data"),
            "{name}: {}",
            o.stderr
        );
    }
}

#[test]
fn repeated_headers_read_the_recording_after_them() {
    let o = read_capped(&fixture("repeated-headers"), CAP);
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.intervals, 7);
}

#[test]
fn a_newer_segment_is_skipped_and_named_the_rest_reads() {
    let o = read_capped(&fixture("newer-segment"), CAP);
    assert!(o.ok, "{}", o.stderr);
    // 6 Samples in each readable segment: 5 intervals each
    assert_eq!(o.intervals, 10, "{}", o.stderr);
    assert!(o.stderr.contains("newer schedtop"), "{}", o.stderr);
    let newer = format!("format {}", schedtop::record::format::FORMAT_VERSION + 1);
    assert!(o.stderr.contains(&newer), "{}", o.stderr);
    assert!(o.stderr.contains("6 Samples"), "{}", o.stderr);
}

#[test]
fn an_index_that_does_not_line_up_falls_back_to_the_walk() {
    let o = read_capped(&fixture("junk-prefix"), CAP);
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.intervals, 11, "{}", o.stderr);
    assert!(o.stderr.contains("1 bytes at offset 0"), "{}", o.stderr);
    // two recordings, `cat a b`: two segments, 12 + 10 Samples
    let o = read_capped(&fixture("concatenated"), CAP);
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.intervals, 11 + 9, "{}", o.stderr);
}

#[test]
fn truncated_and_bit_flipped_lose_only_their_own_samples() {
    let o = read_capped(&fixture("truncated"), CAP);
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.intervals, 6, "{}", o.stderr);
    assert!(o.stderr.contains("interrupted write"), "{}", o.stderr);
    // Sample 1 damaged: it and its deltas 2, 3 are lost; 4 (a key frame)
    // reads but has no interval before it; 5..=11 do
    let o = read_capped(&fixture("bit-flipped"), CAP);
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.intervals, 7, "{}", o.stderr);
    assert_eq!(
        o.stderr.lines().count(),
        1,
        "one cause, said once: {}",
        o.stderr
    );
    assert!(o.stderr.contains("Samples 1 to 3"), "{}", o.stderr);
}

/// Resynchronisation is linear: 16 MiB of frame headers that each claim a
/// 2 MiB payload read in seconds (a resync that reads the claimed payload at
/// every header needs minutes), for Sample and for index frames.
#[test]
fn resync_is_linear_in_the_file_size() {
    let dir = tempfile::tempdir().unwrap();
    for (name, build) in [
        (
            "resync-storm",
            crafted::resync_storm as fn(usize) -> Vec<u8>,
        ),
        ("index-storm", crafted::index_storm),
    ] {
        let mut took = Vec::new();
        for mib in [4usize, 16] {
            let path = dir.path().join(format!("{name}-{mib}"));
            std::fs::write(&path, build((mib << 20) / 36)).unwrap();
            let t = Instant::now();
            let o = read_capped(&path, Duration::from_secs(30));
            took.push(t.elapsed());
            assert!(!o.ok, "{name}: nothing readable, yet exit 0");
        }
        // 4x the bytes: well under 16x the time (and seconds, not minutes)
        assert!(took[1] < Duration::from_secs(20), "{name}: {took:?}");
        assert!(
            took[1] < took[0] * 8 + Duration::from_secs(1),
            "{name}: {took:?}"
        );
    }
}

/// A FIFO is refused at once by every command that reads a recording
/// (opening one for reading waits for a writer that never comes).
#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.schedtop");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let f = fifo.to_str().unwrap();
    for args in [
        vec!["dump", f],
        vec!["replay", f],
        vec!["snapshot", "--from", f, "-o", "/dev/null"],
    ] {
        let t = Instant::now();
        let out = Command::new("timeout")
            .args(["-s", "KILL", "10", BIN])
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(t.elapsed() < Duration::from_secs(9), "{args:?}: waited");
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

/// Without an index, a damaged frame is not listed: messages still number
/// Samples as the writer did (5 is damaged, 6 and 7 are its deltas), and
/// say the cause once.
#[test]
fn damage_messages_number_samples_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u.schedtop");
    std::fs::write(&path, crafted::unindexed_damaged()).unwrap();
    let o = read_capped(&path, CAP);
    assert!(o.ok, "{}", o.stderr);
    let lost: Vec<&str> = o.stderr.lines().filter(|l| l.contains("Sample")).collect();
    assert_eq!(lost.len(), 1, "{}", o.stderr);
    assert!(lost[0].contains("Samples 6 to 7 (2 lost)"), "{}", o.stderr);
    assert!(lost[0].contains("(Sample 5) is missing"), "{}", o.stderr);
}

/// `snapshot --from` without `--at` shows the last Sample that reads, and
/// says the last one does not.
#[test]
fn snapshot_defaults_to_the_last_readable_sample() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.schedtop");
    std::fs::write(&path, crafted::last_sample_damaged()).unwrap();
    let out = Command::new(BIN)
        .args(["snapshot", "--format", "txt", "--size", "100x20", "--from"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("last Sample cannot be read"), "{err}");
    assert!(!out.stdout.is_empty());
}

/// The largest Sample the decoding budget lets through (half a million
/// threads of zero bytes, 1.5 KB on disk), twice: read and dumped within the
/// memory cap. The worst a file can cost.
#[test]
fn the_largest_sample_the_budget_allows_fits_the_memory_cap() {
    use schedtop::record::codec::MAX_DECODED;
    let n = MAX_DECODED / std::mem::size_of::<schedtop::model::ThreadSample>() - 1000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edge.schedtop");
    std::fs::write(&path, crafted::zero_threads_n(n)).unwrap();
    let o = read_capped(&path, Duration::from_secs(90));
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(o.intervals, 1, "{}", o.stderr);
}
