//! Round trips and bounds of codec.rs.
use super::*;
use crate::record::testdata::{synthetic_samples, SynthOptions};

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
        baseline: Some(Baseline::default()),
        exited: true,
        ..Default::default()
    };
    let a = Sample {
        time_ns: u64::MAX,
        threads: vec![t.clone(), t.clone()],
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
