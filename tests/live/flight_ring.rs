//! `schedtop --flight SECS` against the kernel: the flight recorder thread
//! keeps a window of real scheduler events; a dump asked for the way the
//! `W` key asks is decoded (tests/common/perfetto.rs) and must hold the
//! events of a workload that ran in the window and none older than the
//! window plus a second.
use crate::common;

use std::collections::HashSet;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::perfetto::{decode, int32, Decoded, SCHED_SWITCH};
use common::Workload;
use schedtop::collect::flight::FlightOptions;
use schedtop::export::flight_ring::{
    DumpRequest, DumpSummary, FlightRecorder, CHUNK_NS, DEFAULT_BYTE_CAP,
};

const WINDOW: Duration = Duration::from_secs(2);

/// The recorder, or None (skipped) where BPF cannot load; with
/// SCHEDTOP_REQUIRE_BPF=1 that is a failure.
fn recorder() -> Option<FlightRecorder> {
    match FlightRecorder::start(WINDOW, FlightOptions::default(), DEFAULT_BYTE_CAP) {
        Ok(r) => Some(r),
        Err(e) => {
            common::skip::bpf_unavailable(&format!(
                "the flight recorder cannot start here (needs root): {e:#}"
            ));
            None
        }
    }
}

/// Ask for a dump the way the W key does; the summary and the decoded file.
fn dump(rec: &FlightRecorder, dir: &std::path::Path, time: SystemTime) -> (DumpSummary, Decoded) {
    let (tx, rx) = mpsc::channel();
    rec.requests()
        .send(DumpRequest {
            dir: dir.to_path_buf(),
            host: "flight-host".into(),
            time,
            reply: tx,
        })
        .unwrap();
    let s = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("an answer from the recorder")
        .expect("a written trace");
    let bytes: &'static [u8] = Box::leak(std::fs::read(&s.path).unwrap().into_boxed_slice());
    (s, decode(bytes))
}

/// Events naming thread `tid` (switched out or in, woken, migrated).
fn mentions(d: &Decoded, tid: u32) -> usize {
    let t = Some(tid as i32);
    d.events
        .iter()
        .filter(|(_, _, _, w, f)| int32(f, 2) == t || (*w == SCHED_SWITCH && int32(f, 6) == t))
        .count()
}

#[test]
fn the_ring_keeps_the_last_window_and_writes_it() {
    let _serial = common::serial();
    let Some(rec) = recorder() else { return };
    let dir = tempfile::tempdir().unwrap();
    let t0 = UNIX_EPOCH + Duration::from_secs(1_795_302_900);

    // a workload that sleeps 1 ms in a loop for half a second
    let old = Workload::sleepers(1, 0, Duration::from_millis(1));
    let old_tid = old.tids[0];
    std::thread::sleep(Duration::from_millis(500));
    drop(old);
    let (s1, d1) = dump(&rec, dir.path(), t0);
    assert!(
        mentions(&d1, old_tid) > 50,
        "the first dump holds the first workload ({} events of {old_tid} of {})",
        mentions(&d1, old_tid),
        d1.events.len()
    );
    assert_eq!(s1.events as usize, d1.events.len());

    // more than the window plus a second later, with another workload
    std::thread::sleep(WINDOW + Duration::from_millis(1500));
    let new = Workload::sleepers(1, 0, Duration::from_millis(1));
    let new_tid = new.tids[0];
    std::thread::sleep(Duration::from_millis(700));
    // the same second: the file name takes the next free suffix
    let (s2, d2) = dump(&rec, dir.path(), t0);
    drop(new);

    let name1 = s1.path.file_name().unwrap().to_string_lossy().into_owned();
    let name2 = s2.path.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(name1, "schedtop-flight-host-20261121-231500.pftrace");
    assert_eq!(name2, "schedtop-flight-host-20261121-231500-2.pftrace");
    for p in [&s1.path, &s2.path] {
        let m = std::fs::metadata(p).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o600, "{}", p.display());
        assert_eq!(m.uid(), unsafe { libc::geteuid() });
    }

    assert!(
        mentions(&d2, new_tid) > 50,
        "the workload in the window is there ({} events of {new_tid})",
        mentions(&d2, new_tid)
    );
    assert_eq!(
        mentions(&d2, old_tid),
        0,
        "nothing of the workload that stopped {} s before the dump",
        (WINDOW + Duration::from_millis(1500)).as_secs_f64()
    );
    let boot = *d2.clocks.get(&6).expect("BOOTTIME in the clock snapshot");
    let oldest = d2.events.iter().map(|e| e.1).min().unwrap();
    let limit = WINDOW.as_nanos() as u64 + CHUNK_NS;
    assert!(
        boot - oldest <= limit,
        "an event {} s before the dump, the window is {} s",
        (boot - oldest) as f64 / 1e9,
        WINDOW.as_secs_f64()
    );
    assert!(
        boot - oldest >= WINDOW.as_nanos() as u64 / 2,
        "the dump covers the window ({} s)",
        (boot - oldest) as f64 / 1e9
    );
    assert!(s2.span <= WINDOW + Duration::from_nanos(CHUNK_NS));
    // the process tree names the workload's thread
    let ours: HashSet<i32> = d2.threads.keys().copied().collect();
    assert!(ours.contains(&(new_tid as i32)));

    // the recorder stops (probes detached) when dropped
    drop(rec);
}
