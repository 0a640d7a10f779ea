//! cgroups through a recording: written, read back equal, and dumped as
//! JSON and as one CSV row per cgroup, against the Samples' own counters.
use schedtop::export::dump::{dump, DumpOptions, Format};
use schedtop::model::SourceKind;
use schedtop::record::{Reader, WriteOptions, Writer};
use schedtop::ui::fixtures;

#[test]
fn cgroups_survive_a_recording_and_dump_per_cgroup() {
    let host = fixtures::host(SourceKind::Bpf);
    let samples = fixtures::samples(SourceKind::Bpf);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.schedtop");
    let mut w = Writer::open(&path, &host, WriteOptions::default()).unwrap();
    for s in &samples[..4] {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    let mut r = Reader::open(&path).unwrap();
    for (i, s) in samples[..4].iter().enumerate() {
        assert_eq!(&r.sample(i).unwrap(), s, "Sample {i}");
    }

    let run = |format| {
        let mut out = Vec::new();
        let opts = DumpOptions {
            format,
            from: None,
            to: None,
            pids: vec![],
        };
        dump(&mut Reader::open(&path).unwrap(), &opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    };
    let csv = run(Format::CgroupsCsv);
    let lines: Vec<&str> = csv.lines().collect();
    let head: Vec<&str> = lines[0].split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    // 3 intervals of 10 cgroups
    assert_eq!(lines.len(), 1 + 3 * samples[0].cgroups.len());
    let ctr = samples[3]
        .cgroups
        .iter()
        .find(|c| c.quota_cpus.is_some())
        .unwrap();
    let before = samples[2]
        .cgroups
        .iter()
        .find(|c| c.path == ctr.path)
        .unwrap();
    let row: Vec<&str> = lines
        .iter()
        .rev()
        .find(|l| l.contains(&ctr.path))
        .unwrap()
        .split(',')
        .collect();
    let num = |name: &str| row[col(name)].parse::<f64>().unwrap();
    assert_eq!(num("cpu_quota_cpus"), 2.1);
    assert_eq!(
        num("throttled_usec") as u64,
        ctr.throttled_ns.unwrap() / 1000
    );
    assert_eq!(num("nr_throttled") as u64, ctr.nr_throttled.unwrap());
    let want_ms = (ctr.throttled_ns.unwrap() - before.throttled_ns.unwrap()) as f64 / 1e6;
    assert!((num("throttled_ms_per_s") - want_ms).abs() < 1e-6);
    assert_eq!(row[col("short_name")], "ctr 9b1c2d3e4f5a");
    // the session scope's vanished cpu.stat: empty cells, not 0
    let sess: Vec<&str> = lines
        .iter()
        .rev()
        .find(|l| l.contains("session-3.scope"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(sess[col("nr_throttled")], "");
    assert_eq!(sess[col("throttled_ms_per_s")], "");

    // JSON: the same figures, threads name their cgroup
    let json = run(Format::Json);
    let last: serde_json::Value = serde_json::from_str(json.lines().last().unwrap()).unwrap();
    let c = last["cgroups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == ctr.path.as_str())
        .unwrap();
    assert_eq!(c["nr_throttled"], ctr.nr_throttled.unwrap());
    assert!(c["psi_some_us"].is_u64());
    let t = last["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tid"] == 2211)
        .unwrap();
    assert_eq!(t["cgroup"], ctr.path.as_str());
    assert_eq!(last["system"]["psi_cpu_some_avg10"], 24.1);
}
