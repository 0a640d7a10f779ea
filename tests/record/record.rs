//! Recordings: Samples -> file -> Samples, damage of every kind, appending,
//! file creation rules, dump output. No timing here (see bench/).
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use schedtop::export::dump::{csv_header, dump, DumpOptions, Format};
use schedtop::model::Sample;
use schedtop::record::testdata::{synthetic_host, synthetic_samples, Rng, SynthOptions};
use schedtop::record::timeexpr::parse_time;
use schedtop::record::{OpenMode, Reader, WriteOptions, Writer, Written};

fn opts(key_every: u32, index_every: u32) -> WriteOptions {
    WriteOptions {
        key_every,
        index_every,
        ..Default::default()
    }
}

fn synth(threads: usize, samples: usize, seed: u64) -> (SynthOptions, Vec<Sample>) {
    let o = SynthOptions {
        threads,
        samples,
        churn: 0.05,
        seed,
        ..Default::default()
    };
    let s = synthetic_samples(&o);
    (o, s)
}

/// Write `samples`; `finish` false leaves the file as a killed recorder does.
fn write(path: &Path, o: &SynthOptions, samples: &[Sample], w: WriteOptions, finish: bool) {
    let mut wr = Writer::open(path, &synthetic_host(o), w).unwrap();
    for s in samples {
        assert_eq!(wr.write_sample(s).unwrap(), Written::Ok);
    }
    if finish {
        wr.finish().unwrap();
    }
}

fn read_all<S: schedtop::record::storage::Storage>(r: &mut Reader<S>) -> Vec<Sample> {
    (0..r.len()).map(|i| r.sample(i).unwrap()).collect()
}

#[test]
fn samples_round_trip_through_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.schedtop");
    let (o, samples) = synth(30, 130, 7);
    write(&path, &o, &samples, opts(10, 16), true);
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.len(), samples.len());
    assert_eq!(r.host(), &synthetic_host(&o));
    assert!(r.header().tool.starts_with("schedtop "));
    assert!(r.damage().is_empty(), "{:?}", r.damage());
    assert_eq!(read_all(&mut r), samples);
    // random access, backwards and by time
    for i in [129, 0, 64, 63, 10, 9, 11, 128, 5] {
        assert_eq!(r.sample(i).unwrap(), samples[i], "sample {i}");
    }
    assert_eq!(r.first_time(), Some(samples[0].time_ns));
    assert_eq!(r.last_time(), Some(samples[129].time_ns));
    assert_eq!(r.index_at_time(samples[42].time_ns), Some(42));
    assert_eq!(r.index_at_time(samples[42].time_ns + 1), Some(42));
    assert_eq!(r.index_from_time(samples[42].time_ns + 1), Some(43));
    assert_eq!(r.index_at_time(0), Some(0));
    assert_eq!(r.index_from_time(u64::MAX), None);
    assert_eq!(r.prev_of(0), None);
    assert_eq!(r.prev_of(5), Some(4));
    assert!(r.is_key(0) && r.is_key(10) && !r.is_key(11));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn without_an_index_the_walk_finds_the_same_samples() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.schedtop");
    let (o, samples) = synth(10, 50, 3);
    // killed before any index frame: index_every larger than the recording
    write(&path, &o, &samples, opts(8, 1000), false);
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(read_all(&mut r), samples);
}

/// Bytes of a recording plus where each Sample frame is.
fn recording(
    samples: &[Sample],
    o: &SynthOptions,
    w: WriteOptions,
    finish: bool,
) -> (Vec<u8>, Vec<(u64, u64)>, Vec<bool>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.schedtop");
    write(&path, o, samples, w, finish);
    let bytes = std::fs::read(&path).unwrap();
    let r = Reader::open(&path).unwrap();
    assert_eq!(r.len(), samples.len());
    let ranges = (0..r.len()).map(|i| r.frame_range(i).unwrap()).collect();
    let keys = (0..r.len()).map(|i| r.is_key(i)).collect();
    (bytes, ranges, keys)
}

#[test]
fn truncation_at_any_point_keeps_every_complete_sample() {
    let (o, samples) = synth(12, 40, 11);
    let (bytes, ranges, _) = recording(&samples, &o, opts(6, 9), true);
    let mut cuts: Vec<usize> = (0..bytes.len()).step_by(37).collect();
    for &(s, e) in &ranges {
        cuts.extend([
            s as usize,
            s as usize + 1,
            e as usize - 1,
            e as usize,
            e as usize + 1,
        ]);
    }
    cuts.retain(|&c| c <= bytes.len());
    let mut checked = 0;
    for cut in cuts {
        let complete = ranges.iter().filter(|&&(_, e)| e as usize <= cut).count();
        match Reader::from_storage(bytes[..cut].to_vec()) {
            Err(_) => assert_eq!(
                complete, 0,
                "cut {cut}: open failed with {complete} complete"
            ),
            Ok(mut r) => {
                assert_eq!(r.len(), complete, "cut {cut}");
                for (i, want) in samples.iter().enumerate().take(complete) {
                    assert_eq!(&r.sample(i).unwrap(), want, "cut {cut} sample {i}");
                }
                let torn = ranges
                    .iter()
                    .any(|&(s, e)| (s as usize) < cut && cut < e as usize);
                if torn {
                    assert!(!r.damage().is_empty(), "cut {cut}: torn frame not reported");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn bit_flips_cost_only_the_damaged_frame_and_its_deltas() {
    let (o, samples) = synth(12, 40, 5);
    let (bytes, ranges, keys) = recording(&samples, &o, opts(5, 7), true);
    // the frames Sample i needs: back to its key frame
    let needs = |i: usize| {
        let mut k = i;
        while !keys[k] {
            k -= 1;
        }
        k..=i
    };
    let mut rng = Rng(99);
    for round in 0..400 {
        let mut b = bytes.clone();
        let flips = if round % 4 == 0 { 3 } else { 1 };
        let mut at = Vec::new();
        for _ in 0..flips {
            let pos = rng.below(b.len() as u64) as usize;
            b[pos] ^= 1 << rng.below(8);
            at.push(pos as u64);
        }
        let Ok(mut r) = Reader::from_storage(b) else {
            panic!("round {round}: flips at {at:?} made the file unreadable");
        };
        let mut good = 0;
        for (i, want) in samples.iter().enumerate() {
            let hit = needs(i).any(|j| at.iter().any(|&p| ranges[j].0 <= p && p < ranges[j].1));
            // find the Sample by time: a lost frame shifts positions
            let idx = (0..r.len()).find(|&k| r.time_of(k) == Some(want.time_ns));
            match (hit, idx) {
                (false, Some(k)) => {
                    assert_eq!(
                        &r.sample(k).unwrap(),
                        want,
                        "round {round} sample {i} flips {at:?}"
                    );
                    good += 1;
                }
                (false, None) => panic!("round {round}: intact sample {i} lost, flips {at:?}"),
                (true, Some(k)) => assert!(
                    r.sample(k).is_err(),
                    "round {round}: damaged sample {i} read"
                ),
                (true, None) => {}
            }
        }
        assert!(
            good + flips * 5 >= samples.len(),
            "round {round}: only {good} read"
        );
    }
}

#[test]
fn appending_to_a_torn_file_keeps_both_parts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.schedtop");
    let (o, samples) = synth(15, 30, 21);
    write(&path, &o, &samples[..20], opts(6, 8), false);
    // tear the last frame in half, as a crash during a write would
    let r = Reader::open(&path).unwrap();
    let (s, e) = r.frame_range(19).unwrap();
    drop(r);
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len((s + e) / 2).unwrap();
    drop(f);
    let mut o2 = o.clone();
    o2.interval_ns = 2_000_000_000;
    write(
        &path,
        &o2,
        &samples[20..],
        WriteOptions {
            mode: OpenMode::Append,
            ..opts(4, 3)
        },
        true,
    );
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.len(), 29);
    assert_eq!(r.segments(), 2);
    assert_eq!(r.damage().len(), 1, "{:?}", r.damage());
    let got = read_all(&mut r);
    assert_eq!(&got[..19], &samples[..19]);
    assert_eq!(&got[19..], &samples[20..]);
    assert_eq!(r.prev_of(19), None, "a new segment restarts the rates");
    assert_eq!(r.prev_of(20), Some(19));
    assert_eq!(r.host_of(0).interval_ns, 1_000_000_000);
    assert_eq!(r.host_of(25).interval_ns, 2_000_000_000);
    // and once more, after a clean close
    write(
        &path,
        &o,
        &samples[..3],
        WriteOptions {
            mode: OpenMode::Append,
            ..opts(4, 3)
        },
        true,
    );
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.len(), 32);
    assert_eq!(r.segments(), 3);
    assert_eq!(r.sample(31).unwrap(), samples[2]);
}

#[test]
fn files_are_never_clobbered_or_written_through_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.schedtop");
    let (o, samples) = synth(3, 3, 1);
    let host = synthetic_host(&o);
    write(&path, &o, &samples, opts(4, 4), true);
    let before = std::fs::read(&path).unwrap();
    let err = Writer::open(&path, &host, WriteOptions::default())
        .err()
        .unwrap();
    let msg = format!("{err:#}");
    assert!(msg.contains("--append") && msg.contains("--force"), "{msg}");
    assert_eq!(std::fs::read(&path).unwrap(), before);

    let target = dir.path().join("target");
    std::fs::write(&target, b"precious").unwrap();
    let link = dir.path().join("link.schedtop");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for mode in [OpenMode::CreateNew, OpenMode::Append, OpenMode::Replace] {
        let w = WriteOptions {
            mode,
            ..Default::default()
        };
        assert!(Writer::open(&link, &host, w).is_err(), "{mode:?}");
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    }
    // appending to something that is not a recording
    let w = WriteOptions {
        mode: OpenMode::Append,
        ..Default::default()
    };
    let err = Writer::open(&target, &host, w).err().unwrap();
    assert!(format!("{err:#}").contains("cannot append"));
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");

    // one writer at a time
    let held = Writer::open(
        &path,
        &host,
        WriteOptions {
            mode: OpenMode::Append,
            ..Default::default()
        },
    )
    .unwrap();
    let err = Writer::open(
        &path,
        &host,
        WriteOptions {
            mode: OpenMode::Append,
            ..Default::default()
        },
    )
    .err()
    .unwrap();
    assert!(
        format!("{err:#}").contains("another schedtop record"),
        "{err:#}"
    );
    drop(held);

    // --force replaces, 0600 again
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    write(
        &path,
        &o,
        &samples[..1],
        WriteOptions {
            mode: OpenMode::Replace,
            ..Default::default()
        },
        true,
    );
    assert_eq!(Reader::open(&path).unwrap().len(), 1);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn max_size_stops_before_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.schedtop");
    let (o, samples) = synth(50, 60, 2);
    let limit = 20_000;
    let mut w = Writer::open(
        &path,
        &synthetic_host(&o),
        WriteOptions {
            max_size: Some(limit),
            ..opts(10, 4)
        },
    )
    .unwrap();
    let mut written = 0;
    for s in &samples {
        if w.write_sample(s).unwrap() == Written::Full {
            break;
        }
        written += 1;
    }
    w.finish().unwrap();
    assert!(written > 0 && written < samples.len(), "{written}");
    assert!(std::fs::metadata(&path).unwrap().len() <= limit);
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(read_all(&mut r), samples[..written]);
}

#[test]
fn dump_json_is_the_batch_schema_and_csv_has_a_row_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.schedtop");
    let (o, samples) = synth(8, 12, 4);
    write(&path, &o, &samples, opts(5, 5), true);
    let mut r = Reader::open(&path).unwrap();
    let all = DumpOptions {
        format: Format::Json,
        from: None,
        to: None,
        pids: vec![],
    };
    let mut out = Vec::new();
    let rep = dump(&mut r, &all, &mut out).unwrap();
    assert_eq!(rep.intervals, 11);
    let lines: Vec<&str> = std::str::from_utf8(&out).unwrap().lines().collect();
    assert_eq!(lines.len(), 11);
    // what each record carries, read straight from the Samples (the
    // figures themselves are checked by hand in the test below)
    for (k, line) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let cur = &samples[k + 1];
        assert_eq!(v["time_ns"].as_u64(), Some(cur.time_ns), "interval {k}");
        assert_eq!(v["host"], "synth", "interval {k}");
        let threads = v["threads"].as_array().unwrap();
        assert_eq!(threads.len(), cur.threads.len(), "interval {k}");
        for (t, want) in threads.iter().zip(cur.threads.iter()) {
            assert_eq!(t["tid"].as_u64(), Some(want.tid.into()));
            assert_eq!(t["voluntary"].as_u64(), Some(want.voluntary), "cumulative");
            assert_eq!(t["involuntary"].as_u64(), Some(want.involuntary));
        }
    }

    let csv = DumpOptions {
        format: Format::Csv,
        ..all.clone()
    };
    let mut out = Vec::new();
    let rep = dump(&mut r, &csv, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows[0], csv_header());
    // the documented header (docs/json-and-csv.md, CSV): scripts read these names
    assert_eq!(
        csv_header(),
        "time,time_ns,interval_s,host,tid,pid,comm,process,cpu,voluntary,involuntary,\
voluntary_per_s,involuntary_per_s,oncpu_ns,wait_ns,migrations,cross_node_migrations,\
slice_hist_us,wait_hist_us,wakeup_wait_hist_us,preempt_wait_hist_us,exited,nice,policy,rt_priority,cgroup,\
stolen_ns,stolen_by_kind_ns,mig_wakeup,mig_load_balance,mig_numa_balance,mig_affinity,mig_other,blocked_futex,blocked_sleep,\
blocked_poll,blocked_pipe,blocked_socket,blocked_disk_io,blocked_page_fault,blocked_child,\
blocked_other,preempted_by,preempted_by_other"
    );
    let want_rows: usize = samples[1..].iter().map(|s| s.threads.len()).sum();
    assert_eq!(rows.len() - 1, want_rows);
    assert_eq!(rep.rows as usize, want_rows);
    let cols = csv_header().split(',').count();
    assert!(rows.iter().all(|r| r.split(',').count() == cols));

    // -p and a time window
    let pid = samples[3].threads[0].pid;
    let sel = DumpOptions {
        format: Format::Json,
        from: Some(parse_time("+2s").unwrap()),
        to: Some(parse_time("-3s").unwrap()),
        pids: vec![pid],
    };
    let mut out = Vec::new();
    dump(&mut r, &sel, &mut out).unwrap();
    let lines: Vec<serde_json::Value> = std::str::from_utf8(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // samples 2..=8 by time (a few ms of jitter after each second)
    let first = samples[0].time_ns;
    let last = samples[11].time_ns;
    let want: Vec<u64> = samples
        .iter()
        .map(|s| s.time_ns)
        .filter(|&t| t >= first + 2_000_000_000 && t <= last - 3_000_000_000)
        .collect();
    assert_eq!(lines.len(), want.len());
    for (l, t) in lines.iter().zip(&want) {
        assert_eq!(l["time_ns"].as_u64(), Some(*t));
        let threads = l["threads"].as_array().unwrap();
        assert!(!threads.is_empty());
        assert!(threads
            .iter()
            .all(|t| t["pid"].as_u64() == Some(pid as u64)));
    }
}
