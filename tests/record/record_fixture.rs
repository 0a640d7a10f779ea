//! Compatibility: tests/fixtures/v1.schedtop was written by format version 1
//! (examples/record_fixture.rs) and must read, with these values, in every
//! later version. Never regenerate it; add a new fixture for a new format.
use std::path::Path;

use schedtop::export::dump::{dump, DumpOptions, Format};
use schedtop::model::SourceKind;
use schedtop::record::Reader;

fn open() -> Reader {
    Reader::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1.schedtop"))
        .expect("fixture opens")
}

#[test]
fn fixture_header_and_layout() {
    let r = open();
    let h = r.header();
    assert_eq!(h.format_version, 1);
    assert!(h.tool.starts_with("schedtop "), "{}", h.tool);
    assert_eq!(h.key_every, 4);
    let host = r.host();
    assert_eq!(host.hostname, "synth");
    assert_eq!(host.kernel, "6.18.0-synthetic");
    assert_eq!(host.source, SourceKind::Bpf);
    assert_eq!(host.topology.cpus.len(), 2);
    // 12 Samples, the last torn by a "crash", then 3 appended
    assert_eq!(r.len(), 14);
    assert_eq!(r.segments(), 2);
    assert_eq!(r.damage().len(), 1, "{:?}", r.damage());
    assert_eq!(r.host_of(0).interval_ns, 1_000_000_000);
    assert_eq!(r.host_of(13).interval_ns, 2_000_000_000);
    assert_eq!(r.prev_of(11), None);
    assert_eq!(r.first_time(), Some(1_795_302_000_000_000_000));
}

#[test]
fn fixture_values() {
    let mut r = open();
    for i in 0..r.len() {
        r.sample(i).unwrap_or_else(|e| panic!("sample {i}: {e:#}"));
    }
    let s = r.sample(5).unwrap();
    assert_eq!(s.time_ns, 1_795_302_005_004_847_077);
    assert_eq!(s.mono_ns, 1_005_006_641_154);
    assert_eq!(s.threads.len(), 22);
    assert_eq!(s.threads.iter().filter(|t| t.exited).count(), 2);
    assert_eq!(s.system.context_switches, 1081);
    assert_eq!(s.cpus[0].switches, 540);
    assert_eq!(
        (
            s.migrations[0].from_cpu,
            s.migrations[0].to_cpu,
            s.migrations[0].count
        ),
        (1, 0, 3)
    );
    let t = &s.threads[3];
    assert_eq!((t.tid, t.pid, t.comm.as_ref()), (1004, 1000, "worker-4"));
    assert_eq!((t.voluntary, t.involuntary), (9, 3));
    assert_eq!((t.oncpu_ns, t.wait_ns), (2_697_608, 351_263));
    // written before the sub-buckets: read, and kept, as whole octaves
    let h = t.slice_hist.as_ref().unwrap();
    assert!(h.octaves_only);
    let pairs: Vec<(f64, u64)> = h
        .nonzero_pairs()
        .iter()
        .map(|p| (p.low_us(), p.count))
        .collect();
    assert_eq!(pairs, vec![(128.0, 8), (256.0, 4)]);
    // a quantile spans the octave, as the old recording only knew that much
    assert_eq!(h.quantile_us(1.0), Some(512));
    let t = &r.sample(10).unwrap().threads[3];
    assert_eq!((t.tid, t.involuntary, t.oncpu_ns), (1006, 4, 8_061_934));
    assert_eq!(t.migrations, Some(2));
    // the appended segment
    let s = r.sample(13).unwrap();
    assert_eq!(s.time_ns, 1_795_302_604_000_836_797);
    assert_eq!(r.last_time(), Some(s.time_ns));
    let t = &s.threads[3];
    assert_eq!((t.tid, t.voluntary, t.involuntary), (1003, 21, 3));
    assert_eq!(t.wait_ns, 641_610);
}

#[test]
fn fixture_dumps() {
    let mut r = open();
    let mut out = Vec::new();
    let opts = DumpOptions {
        format: Format::Json,
        from: None,
        to: None,
        pids: vec![],
    };
    let rep = dump(&mut r, &opts, &mut out).unwrap();
    // 10 intervals in the first segment, 2 in the second
    assert_eq!(rep.intervals, 12);
    assert!(rep.skipped.is_empty(), "{:?}", rep.skipped);
    let last: serde_json::Value =
        serde_json::from_str(std::str::from_utf8(&out).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(last["host"], "synth");
    assert_eq!(last["source"], "bpf");
    assert_eq!(last["threads"].as_array().unwrap().len(), 6);
}
