//! Incident bundles rotate instead of stopping at their caps: beyond
//! `--max-incidents` the oldest bundle schedtop made goes (a look-alike
//! directory it did not make stays), and the byte cap holds the whole
//! bundle, the flight recorder's trace included.
use crate::common;
use common::incident_bundles as bundles;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver};

use schedtop::collect::Seekable;
use schedtop::export::flight_ring::{DumpRequest, DumpSummary};
use schedtop::export::incident::{describe, IncidentOptions, Watch};
use schedtop::export::incident_writer::Render;
use schedtop::model::{HostInfo, Sample};
use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::ui::history::{History, DEFAULT_BYTE_CAP, DEFAULT_WINDOW_NS};

fn synth(n: usize) -> (HostInfo, Vec<Sample>) {
    let o = SynthOptions {
        threads: 20,
        samples: n,
        ..Default::default()
    };
    (synthetic_host(&o), synthetic_samples(&o))
}

fn opts(dir: &Path, max_bundles: u32, max_bytes: u64) -> IncidentOptions {
    let mut o = IncidentOptions::in_dir(dir.to_path_buf());
    o.after_ns = 0;
    o.cooldown_ns = 0;
    o.max_bundles = max_bundles;
    o.max_bytes = max_bytes;
    o
}

const NO_SCREENS: Render =
    |_: &HostInfo,
     _: &mut dyn Seekable,
     _: &std::sync::Arc<schedtop::model::shared_interval::Interval>| { Vec::new() };

/// Bytes of every file under `dir`, walked here (not schedtop's count).
fn du(dir: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let m = e.metadata().unwrap();
        n += if m.is_dir() { du(&e.path()) } else { m.len() };
    }
    n
}

/// The firing time a bundle's summary gives.
fn fired_at(bundle: &Path) -> u64 {
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("summary.json")).unwrap())
            .unwrap();
    j["time_ns"].as_u64().unwrap()
}

/// Fire by hand at Sample `i`, wait for the bundle's writer, and return
/// what was said (the writer's notes come with the next Sample).
fn fire(w: &mut Watch, kept: &mut History, host: &HostInfo, s: &[Sample], i: usize) -> Vec<String> {
    w.request("test");
    kept.push(&s[i]);
    let mut said: Vec<String> = w
        .on_sample(&s[i], host, kept, NO_SCREENS)
        .iter()
        .map(describe)
        .collect();
    said.extend(w.finish().iter().map(describe));
    kept.push(&s[i + 1]);
    said.extend(
        w.on_sample(&s[i + 1], host, kept, NO_SCREENS)
            .iter()
            .map(describe),
    );
    said
}

#[test]
fn a_third_bundle_removes_the_oldest_of_schedtops_and_never_a_strangers() {
    let d = tempfile::tempdir().unwrap();
    // a directory that looks like a bundle but was not made by schedtop
    // (no summary of its own), older than any
    let stranger = d.path().join("schedtop-incident-host-19700101-000000");
    std::fs::create_dir(&stranger).unwrap();
    std::fs::write(stranger.join("notes.txt"), "mine").unwrap();
    let (host, s) = synth(8);
    let mut w = Watch::new(Vec::new(), opts(d.path(), 2, 1 << 30));
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let mut said = Vec::new();
    for i in [0, 2, 4] {
        said.extend(fire(&mut w, &mut kept, &host, &s, i));
    }
    let b: Vec<PathBuf> = bundles(d.path())
        .into_iter()
        .filter(|p| *p != stranger)
        .collect();
    let mut times: Vec<u64> = b.iter().map(|p| fired_at(p)).collect();
    times.sort();
    assert_eq!(
        times,
        [s[2].time_ns, s[4].time_ns],
        "the first went, the newest stays: {said:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(stranger.join("notes.txt")).unwrap(),
        "mine"
    );
    let removed: Vec<&String> = said.iter().filter(|l| l.contains("removed")).collect();
    assert_eq!(removed.len(), 1, "{said:#?}");
}

/// A stand-in flight recorder: answers each request with a trace of
/// `size` bytes written into the bundle.
fn fake_flight(rx: Receiver<DumpRequest>, size: usize) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for req in rx {
            let path = req.dir.join("trace.pftrace");
            std::fs::write(&path, vec![7u8; size]).unwrap();
            let _ = req.reply.send(Ok(DumpSummary {
                path,
                events: 1,
                span: std::time::Duration::from_secs(1),
                dropped: 0,
            }));
        }
    })
}

#[test]
fn the_flight_trace_counts_in_the_byte_cap() {
    const CAP: u64 = 600_000;
    const TRACE: usize = 250_000;
    let d = tempfile::tempdir().unwrap();
    let (host, s) = synth(12);
    let (tx, rx) = mpsc::channel();
    let flight = fake_flight(rx, TRACE);
    let mut w = Watch::new(Vec::new(), opts(d.path(), 10, CAP)).with_flight(tx);
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let mut said = Vec::new();
    for i in [0, 2, 4, 6] {
        said.extend(fire(&mut w, &mut kept, &host, &s, i));
        // the cap holds after every bundle, traces and all
        let used = du(d.path());
        assert!(
            used <= CAP,
            "{used} bytes after the bundle at {i}: {said:#?}"
        );
    }
    // three traces do not fit 600 kB: two bundles at most, the newest kept
    let b = bundles(d.path());
    assert!(b.len() <= 2, "{b:?}");
    assert!(
        b.iter().any(|p| fired_at(p) == s[6].time_ns),
        "{b:?} {said:#?}"
    );
    let newest = b.iter().find(|p| fired_at(p) == s[6].time_ns).unwrap();
    assert_eq!(
        std::fs::metadata(newest.join("trace.pftrace"))
            .unwrap()
            .len(),
        TRACE as u64,
        "the newest keeps its trace"
    );
    assert!(said.iter().any(|l| l.contains("removed")), "{said:#?}");

    // a trace larger than the whole cap on its own: removed, said so, the
    // cap still holds
    let d2 = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::channel();
    let big = fake_flight(rx, 2 * CAP as usize);
    let mut w2 = Watch::new(Vec::new(), opts(d2.path(), 10, CAP)).with_flight(tx);
    let mut kept = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    let said = fire(&mut w2, &mut kept, &host, &s, 0);
    assert!(du(d2.path()) <= CAP, "{said:#?}");
    assert!(
        said.iter()
            .any(|l| l.contains("no flight trace") && l.contains("--incident-max-size")),
        "{said:#?}"
    );
    drop(w);
    drop(w2);
    flight.join().unwrap();
    big.join().unwrap();
}
