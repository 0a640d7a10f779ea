//! The ancestors beside a recorded Sample (codec_ancestors.rs): round
//! trips, what a reader from before them sees, damage.
use super::super::codec_ancestors::{ancestors_of, length_prefix};
use super::*;
use crate::model::AncestorProcess;
use crate::record::testdata::{synthetic_samples, SynthOptions};

/// Two neighbouring Samples of `threads` threads.
fn two(threads: usize) -> (Sample, Sample) {
    let mut v = synthetic_samples(&SynthOptions {
        threads,
        samples: 2,
        ..Default::default()
    });
    let b = v.pop().unwrap();
    (v.pop().unwrap(), b)
}

fn ancestor(pid: u32, ppid: u32, comm: &str) -> AncestorProcess {
    AncestorProcess {
        pid,
        ppid,
        comm: comm.into(),
    }
}

#[test]
fn round_trip_and_what_a_reader_without_them_sees() {
    let (mut s, mut next) = two(3);
    s.ancestors = vec![ancestor(1, 0, "systemd"), ancestor(700, 1, "sshd: x (y)")];
    let z = encode_compressed(&s, None, 3);
    assert_eq!(decode_compressed(&z, None).unwrap(), s);
    // a reader from before: its decompress and decode, no ancestors
    let old = decode(&decompress(&z).unwrap(), None).unwrap();
    assert!(old.ancestors.is_empty());
    assert_eq!(
        Sample {
            ancestors: Vec::new(),
            ..s.clone()
        },
        old
    );

    // a delta with the same ancestors carries none and reads them back
    next.ancestors = s.ancestors.clone();
    let d = encode_compressed(&next, Some(&s), 3);
    assert!(ancestors_of(&d).unwrap().is_none());
    assert_eq!(decode_compressed(&d, Some(&s)).unwrap(), next);
    // ancestors gone: the delta says so (an empty list)
    let mut gone = next.clone();
    gone.ancestors.clear();
    let d = encode_compressed(&gone, Some(&next), 3);
    assert_eq!(ancestors_of(&d).unwrap(), Some(Vec::new()));
    assert_eq!(decode_compressed(&d, Some(&next)).unwrap(), gone);
    // a Sample from before them: no frame, no ancestors
    let plain = compress(&encode(&gone, None), &[], 3);
    assert_eq!(decode_compressed(&plain, None).unwrap(), gone);
}

#[test]
fn damaged_ancestors_are_refused_not_misread() {
    let (mut s, _) = two(2);
    s.ancestors = vec![ancestor(1, 0, "init")];
    let z = encode_compressed(&s, None, 3);
    let at = length_prefix(&z);
    // the frame's length past the payload
    let mut bad = z.clone();
    bad[at + 4..at + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(decode_compressed(&bad, None).is_err());
    // a count the data cannot hold
    let mut bad = z.clone();
    bad[at + 8] = 0x7f;
    assert!(decode_compressed(&bad, None).is_err());
}
