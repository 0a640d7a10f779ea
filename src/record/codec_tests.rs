//! Round trips and bounds of codec.rs.
use super::*;
use crate::model::SystemSample;
use crate::record::testdata::{synthetic_samples, SynthOptions};
use std::sync::Arc;

#[test]
fn key_and_delta_round_trip() {
    let samples = synthetic_samples(&SynthOptions {
        threads: 50,
        samples: 6,
        ..Default::default()
    });
    let mut prev: Option<&Sample> = None;
    for s in &samples {
        let raw = encode(s, prev);
        assert_eq!(is_key(&raw), prev.is_none());
        let (raw2, splits) = encode_split(s, prev);
        assert_eq!(raw2, raw);
        let z = compress(&raw, &splits, 3);
        let back = decode(&decompress(&z).unwrap(), prev).unwrap();
        assert_eq!(&back, s);
        // a key frame of the same Sample decodes without the previous one
        assert_eq!(&decode(&encode(s, None), None).unwrap(), s);
        prev = Some(s);
    }
}

#[test]
fn delta_needs_its_base_and_rejects_garbage() {
    let samples = synthetic_samples(&SynthOptions {
        threads: 5,
        samples: 2,
        ..Default::default()
    });
    let raw = encode(&samples[1], Some(&samples[0]));
    assert!(decode(&raw, None).is_err());
    for cut in 0..raw.len() {
        assert!(decode(&raw[..cut], Some(&samples[0])).is_err(), "cut {cut}");
    }
    assert!(decompress(&[0xff, 0xff, 0xff, 0xff, 0x7f]).is_err());
    assert!(decompress(&compress(b"abc", &[1], 1)[..3]).is_err());
    assert_eq!(
        decompress(&compress(b"abcdef", &[1, 1, 9], 1)).unwrap(),
        b"abcdef"
    );
}

#[test]
fn odd_values_round_trip() {
    let t = ThreadSample {
        tid: u32::MAX,
        pid: 0,
        comm: "\u{1b}[31mred\n".into(),
        start_time_ns: u64::MAX,
        voluntary: u64::MAX,
        slice_hist: Some(Log2Hist::default()),
        wait_hist: Some(Log2Hist::from_counts(0..100)),
        baseline: Some(Box::default()),
        exited: true,
        ..Default::default()
    };
    let a = Sample {
        time_ns: u64::MAX,
        threads: vec![t.clone(), t.clone()].into(),
        system: SystemSample {
            load: [f64::NAN, -0.0, f64::INFINITY],
            ..Default::default()
        },
        ..Default::default()
    };
    let mut b = a.clone();
    b.time_ns = 0;
    b.threads[1].voluntary = 0;
    b.threads[1].baseline = None;
    b.threads.reverse();
    let back = decode(&encode(&b, Some(&a)), Some(&a)).unwrap();
    // NaN != NaN, so compare through the encoding
    assert_eq!(encode(&back, None), encode(&b, None));
    assert_eq!(back.threads, b.threads);
    assert!(back.system.load[0].is_nan());
}

/// Samples with "why" figures: causes and reasons growing, preemptors per
/// interval, one thread without any.
fn with_why() -> Vec<Sample> {
    let mut samples = synthetic_samples(&SynthOptions {
        threads: 20,
        samples: 4,
        ..Default::default()
    });
    for (k, s) in samples.iter_mut().enumerate() {
        let k = k as u64;
        s.system.losses.preempt_pairs_full = k * 3;
        s.system.losses.wake_pairs_full = k * 2;
        s.system.migrations_by_cause = (0..5)
            .map(|c| {
                (0..c)
                    .map(|i| crate::model::MigrationCount {
                        from_cpu: i,
                        to_cpu: c,
                        count: k * u64::from(i + c),
                    })
                    .collect()
            })
            .collect();
        for (i, t) in s.threads.iter_mut().enumerate().skip(1) {
            let i = i as u64;
            t.why = Some(
                crate::model::why::WhySample {
                    migrations_by_cause: [k, 2 * k, 0, i, k * i],
                    blocked_on: [k * 7, 0, i, 0, 0, k, 0, 0, u64::MAX - k],
                    preempted_by: (0..(i % 9)).map(|p| (p as u32 + 7, p * k + 1)).collect(),
                    preempted_by_rest: k,
                    // wakers: thread wakers and pseudo-wakers, a rest, and
                    // some threads with wakeups but no pairs this interval
                    woken_by: (0..(i % 4))
                        .map(|p| (p as u32 + 3, p * k + 2))
                        .chain(
                            i.is_multiple_of(3)
                                .then_some((0xffff_ff00 + (i % 6) as u32, k + 1)),
                        )
                        .collect(),
                    woken_by_rest: k * (i % 2),
                    wakeups: Some(k * 100 + i),
                }
                .into(),
            );
        }
        // format 5: threads outside the list that preempted these
        s.outside = (0..k)
            .map(|i| crate::model::OutsideThread {
                tid: 1000 + 3 * i as u32,
                pid: 900,
                comm: format!("outside{i}\n").into(),
                process_comm: "its process".into(),
            })
            .collect();
    }
    samples
}

#[test]
fn why_figures_round_trip_and_truncations_fail() {
    let samples = with_why();
    let mut prev: Option<&Sample> = None;
    for s in &samples {
        let back = decode(&encode(s, prev), prev).unwrap();
        assert_eq!(&back, s);
        prev = Some(s);
    }
    let raw = encode(&samples[2], Some(&samples[1]));
    let whole = decode(&raw, Some(&samples[1])).unwrap();
    assert_eq!(whole.outside.len(), 2);
    for cut in 0..raw.len() {
        // a cut at a section boundary reads as an older format: without
        // the section, never as the whole Sample
        if let Ok(s) = decode(&raw[..cut], Some(&samples[1])) {
            assert_ne!(s, whole, "cut {cut}");
            if !s.outside.is_empty() {
                // cut before the wakers: every thread's wakers unknown
                // (as a Sample whose source did not count them)
                assert_eq!(s.outside, whole.outside, "cut {cut}");
                assert!(s.threads.iter().filter_map(|t| t.why.as_deref()).all(|w| w
                    .wakeups
                    .is_none()
                    && w.woken_by.is_empty()
                    && w.woken_by_rest == 0));
                assert_eq!(s.system.losses.wake_pairs_full, 0);
                continue;
            }
            if s.threads.iter().any(|t| t.why.is_some()) {
                // cut before the outside threads: the why figures whole
                for (a, b) in s.threads.iter().zip(whole.threads.iter()) {
                    let (a, b) = (a.why.as_deref(), b.why.as_deref());
                    assert_eq!(a.map(|w| w.blocked_on), b.map(|w| w.blocked_on));
                    assert_eq!(a.map(|w| &w.preempted_by), b.map(|w| &w.preempted_by));
                    assert!(a.is_none_or(|w| w.woken_by.is_empty()), "cut {cut}");
                }
            }
        }
    }
}

/// Wakers counted, then not (the probes' waker counting off), then again,
/// and one thread without them in a Sample that has others': each Sample
/// reads back as it was, an unknown never as "woken by nobody".
#[test]
fn wakers_unknown_round_trip_as_unknown() {
    let mut samples = with_why();
    let unknown = |s: &mut Sample, from: usize| {
        for t in s.threads.iter_mut().skip(from) {
            if let Some(w) = t.why.as_mut() {
                let w = Arc::make_mut(w);
                w.wakeups = None;
                w.woken_by.clear();
                w.woken_by_rest = 0;
            }
        }
    };
    unknown(&mut samples[1], 0);
    // the last thread only: the others keep theirs
    let n = samples[2].threads.len();
    unknown(&mut samples[2], n - 1);
    let mut prev: Option<&Sample> = None;
    for (i, s) in samples.iter().enumerate() {
        let back = decode(&encode(s, prev), prev).unwrap();
        assert_eq!(&back, s, "Sample {i}");
        let wakeups = |s: &Sample| -> Vec<Option<u64>> {
            s.threads
                .iter()
                .filter_map(|t| t.why.as_deref().map(|w| w.wakeups))
                .collect()
        };
        let w = wakeups(&back);
        assert!(!w.is_empty());
        match i {
            1 => assert!(w.iter().all(Option::is_none), "{w:?}"),
            2 => {
                assert_eq!(w.last(), Some(&None));
                assert!(w[..w.len() - 1].iter().all(Option::is_some), "{w:?}");
            }
            _ => assert!(w.iter().all(Option::is_some), "{w:?}"),
        }
        prev = Some(s);
    }
}

#[test]
fn unchanged_threads_are_a_flag_and_round_trip() {
    let samples = with_why();
    let base = &samples[2];
    // the next Sample: every thread as it was (its why counts too, no
    // preemptors this interval) but the first, which ran
    let mut next = base.clone();
    next.time_ns += 1_000_000_000;
    next.mono_ns += 1_000_000_000;
    next.outside.clear();
    for t in next.threads.iter_mut() {
        if let Some(w) = t.why.as_mut() {
            let w = std::sync::Arc::make_mut(w);
            w.preempted_by.clear();
            w.preempted_by_rest = 0;
        }
    }
    next.threads[0].voluntary += 1;
    let raw = encode(&next, Some(base));
    assert_eq!(decode(&raw, Some(base)).unwrap(), next);
    // the same Sample on a reference whose every thread differs (one ns
    // more on the CPU): each thread written out in full
    let mut other = base.clone();
    for t in other.threads.iter_mut() {
        t.oncpu_ns += 1;
    }
    let full = encode(&next, Some(&other));
    assert_eq!(decode(&full, Some(&other)).unwrap(), next);
    let n = next.threads.len() - 1;
    assert!(
        raw.len() + 8 * n <= full.len(),
        "{n} unchanged threads: {} bytes, {} written in full",
        raw.len(),
        full.len()
    );
    // a key frame has no reference to be unchanged from
    let key = encode(&next, None);
    assert_eq!(decode(&key, None).unwrap(), next);
}

#[test]
fn a_key_frame_decodes_names_written_alike_into_one_allocation() {
    let mut s = synthetic_samples(&SynthOptions {
        threads: 6,
        samples: 1,
        ..Default::default()
    })
    .remove(0);
    let mut threads = s.threads.to_vec();
    for (i, t) in threads.iter_mut().enumerate() {
        t.comm = if i < 4 {
            "worker".into()
        } else {
            format!("io-{i}").into()
        };
        t.process_comm = "java".into();
    }
    s.threads = threads.into();
    let back = decode(&encode(&s, None), None).unwrap();
    assert_eq!(back, s);
    let t = &back.threads;
    assert!(Arc::ptr_eq(&t[0].comm, &t[3].comm));
    assert!(Arc::ptr_eq(&t[0].process_comm, &t[5].process_comm));
    assert!(!Arc::ptr_eq(&t[4].comm, &t[5].comm));
}

#[test]
fn compressing_in_parts_writes_the_bytes_of_the_whole() {
    let samples = synthetic_samples(&SynthOptions {
        threads: 300,
        samples: 3,
        ..Default::default()
    });
    let mut why = samples[2].clone();
    why.outside = vec![crate::model::OutsideThread {
        tid: 9,
        pid: 9,
        comm: "sh".into(),
        process_comm: "sh".into(),
    }];
    for (s, prev) in [
        (&samples[0], None),
        (&samples[1], Some(&samples[0])),
        (&why, Some(&samples[1])),
    ] {
        let (raw, splits) = encode_split(s, prev);
        assert_eq!(encode(s, prev), raw);
        let fused = encode_compressed(s, prev, 3);
        assert_eq!(fused, compress(&raw, &splits, 3));
        assert_eq!(&decode(&decompress(&fused).unwrap(), prev).unwrap(), s);
    }
}
