//! Every fixture obeys physics (model/physics.rs): the screens and outputs
//! built from them can then catch unit and scale errors.
use schedtop::model::physics::check_all;
use schedtop::model::{Sample, SourceKind};
use schedtop::record::testdata::{synthetic_samples, SynthOptions};
use schedtop::record::Reader;
use schedtop::ui::fixtures;

fn assert_consistent(name: &str, samples: &[Sample]) {
    assert!(samples.len() >= 2, "{name}: fewer than two Samples");
    let v = check_all(samples);
    assert!(v.is_empty(), "{name}:\n{}", v.join("\n"));
}

/// A recording's segments (rates are only taken within one).
fn recording(path: &str) -> Vec<Vec<Sample>> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let mut r = Reader::open(&p).unwrap();
    let mut segs: Vec<Vec<Sample>> = Vec::new();
    for i in 0..r.len() {
        if r.prev_of(i).is_none() {
            segs.push(Vec::new());
        }
        if let Some(seg) = segs.last_mut() {
            seg.push(r.sample(i).unwrap());
        }
    }
    segs.retain(|s| s.len() >= 2);
    assert!(!segs.is_empty(), "{path}: no segment with two Samples");
    segs
}

#[test]
fn the_ui_fixtures() {
    assert_consistent("bpf", &fixtures::samples(SourceKind::Bpf));
    assert_consistent("procfs", &fixtures::samples(SourceKind::Procfs));
    assert_consistent("hostile", &fixtures::hostile_samples());
    assert_consistent("worker pool", &fixtures::worker_pool_samples());
    assert_consistent("quota", &fixtures::quota_samples());
    let (before, after) = fixtures::compare_samples();
    assert_consistent("compare before", &before);
    assert_consistent("compare after", &after);
    for (nodes, per) in [(1, 2), (2, 4), (16, 8)] {
        let t = fixtures::numa_topology(nodes, per);
        assert_consistent(&format!("numa {nodes}x{per}"), &fixtures::numa_samples(&t));
    }
}

#[test]
fn synthetic_and_recorded_data() {
    assert_consistent(
        "synthetic",
        &synthetic_samples(&SynthOptions {
            threads: 50,
            samples: 20,
            ..Default::default()
        }),
    );
    // The format-1 reference file is kept byte for byte; it was written by
    // a generator that set the system's switch count to the live threads'
    // sum (switches of reaped threads vanished from it). Its per-thread
    // figures must still hold.
    let v: Vec<String> = recording("tests/fixtures/v1.schedtop")
        .iter()
        .flat_map(|seg| check_all(seg))
        .filter(|m| !m.contains("the system only") && !m.contains("the system's to"))
        .collect();
    assert!(v.is_empty(), "v1:\n{}", v.join("\n"));
    for seg in recording("assets/demo.schedtop") {
        assert_consistent("demo", &seg);
    }
    // a real recording with throttled cgroups: the cgroup checks hold. (Its
    // CPU busy time is /proc/stat's, counted in ticks; in one interval the
    // threads ran 68 ms against 50 ms busy, so only cgroups are checked.)
    for seg in recording("assets/demo-cgroups.schedtop") {
        assert!(seg.iter().any(|s| !s.cgroups.is_empty()));
        let v: Vec<String> = check_all(&seg)
            .into_iter()
            .filter(|m| m.contains("cgroup"))
            .collect();
        assert!(v.is_empty(), "demo-cgroups:\n{}", v.join("\n"));
    }
}

#[test]
fn the_check_catches_what_the_fixtures_once_had() {
    // a thread at 48 % CPU with 1,030 slices all of 1 ms or more
    let mut s = fixtures::samples(SourceKind::Bpf);
    let (a, b) = (s[0].clone(), &mut s[1]);
    let t = b.threads.iter_mut().find(|t| t.tid == 2211).unwrap();
    let before = a.threads.iter().find(|t| t.tid == 2211).unwrap();
    t.oncpu_ns = before.oncpu_ns + 480_000_000;
    let mut h = before.slice_hist.clone().unwrap();
    h.add_at(11 * 4, 1030); // [1024, 1280) us
    t.slice_hist = Some(h);
    let v = check_all(&[a.clone(), b.clone()]);
    assert!(
        v.iter()
            .any(|m| m.contains("thread 2211") && m.contains("slices")),
        "{v:?}"
    );
    // CPUs whose switches add up to more than the system's
    let mut c = b.clone();
    for cpu in &mut c.cpus {
        cpu.switches *= 4;
    }
    let v = check_all(&[a.clone(), c]);
    assert!(v.iter().any(|m| m.contains("CPUs' switches")), "{v:?}");
    // a container whose threads ran more than its quota, throttled for
    // longer than its throttled periods allow, more periods throttled than
    // there were, and pressure longer than the interval
    let ffmpeg = |s: &mut schedtop::model::Sample| -> usize {
        s.cgroups
            .iter()
            .position(|c| c.quota_cpus.is_some())
            .unwrap()
    };
    let mut d = b.clone();
    let i = ffmpeg(&mut d);
    d.cgroups[i].quota_cpus = Some(1.0);
    let p = a.cgroups[i].clone();
    d.cgroups[i].nr_periods = Some(p.nr_periods.unwrap() + 10);
    d.cgroups[i].nr_throttled = Some(p.nr_throttled.unwrap() + 11);
    d.cgroups[i].throttled_ns = Some(p.throttled_ns.unwrap() + 5_000_000_000);
    let mut psi = p.pressure.unwrap();
    psi.some_total_us += 2_000_000;
    d.cgroups[i].pressure = Some(psi);
    let v = check_all(&[a, d]);
    for what in ["quota", "throttled of", "ns in", "of pressure"] {
        assert!(
            v.iter().any(|m| m.contains("cgroup") && m.contains(what)),
            "{what}: {v:?}"
        );
    }
}

/// The check that keeps a fixture from waiting longer than its interval
/// (the main fixture's encoders once "waited" 4 s a second, 1,030 waits of
/// 2-8 ms each, and the header's finding line said so): a thread's wait
/// and CPU time fit in the interval, give or take one wait that began
/// before it.
#[test]
fn a_thread_cannot_wait_longer_than_the_interval() {
    use schedtop::model::{Log2Hist, ThreadSample};
    let sample = |s: u64, oncpu_ms: u64, wait_ms: u64, waits: u64| Sample {
        mono_ns: s * 1_000_000_000,
        time_ns: s * 1_000_000_000,
        threads: vec![ThreadSample {
            tid: 7,
            pid: 7,
            start_time_ns: 1,
            involuntary: waits,
            oncpu_ns: oncpu_ms * 1_000_000,
            wait_ns: wait_ms * 1_000_000,
            // every wait in [2048, 4096) us: octave 12
            wait_hist: Some(Log2Hist::from_octaves((0..=12).map(|o| {
                if o == 12 {
                    waits
                } else {
                    0
                }
            }))),
            ..Default::default()
        }]
        .into(),
        system: schedtop::model::SystemSample {
            context_switches: waits,
            ..Default::default()
        },
        ..Default::default()
    };
    // 200 waits of ~3 ms and 300 ms on CPU in 1 s: possible
    let ok = [sample(1, 0, 0, 0), sample(2, 300, 600, 200)];
    assert!(check_all(&ok).is_empty(), "{:?}", check_all(&ok));
    // 1,000 waits of 2-4 ms (at least 2 s) and 400 ms on CPU in 1 s: not
    let bad = [sample(1, 0, 0, 0), sample(2, 400, 2_500, 1000)];
    let v = check_all(&bad);
    assert!(
        v.iter().any(|l| l.contains("waiting for one in a")),
        "not caught: {v:?}"
    );
}
