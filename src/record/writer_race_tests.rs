//! `record --append` against a file that changes under it.
use super::*;
use crate::record::testdata::{synthetic_host, SynthOptions};
use crate::util::read_regular::FifoSwapper;
use std::time::{Duration, Instant};

/// --append checked the path with lstat and then opened it by name: a FIFO
/// put there in between was opened, locked and written to, and the error
/// that came out was the fdatasync's (EINVAL), which names no cause. 2 s
/// of appends while a FIFO and the recording swap places: each either
/// appends or says the file is not a regular file.
#[test]
fn a_recording_swapped_for_a_fifo_after_its_check_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("r.schedtop");
    let swap = FifoSwapper::start(&path, b"");
    let host = synthetic_host(&SynthOptions::default());
    let opts = || WriteOptions {
        mode: OpenMode::Append,
        ..WriteOptions::default()
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (t0, mut appended, mut refused) = (Instant::now(), 0u32, 0u32);
        let mut other = Vec::new();
        while t0.elapsed() < Duration::from_secs(2) {
            match Writer::open(&path, &host, opts()) {
                Ok(_) => appended += 1,
                Err(e) if format!("{e:#}").ends_with("not a regular file") => refused += 1,
                Err(e) => other.push(format!("{e:#}")),
            }
        }
        let _ = tx.send((appended, refused, other));
    });
    let got = rx.recv_timeout(Duration::from_secs(10));
    drop(swap);
    let (appended, refused, other) = got.expect("appending hung on a FIFO");
    assert!(
        other.is_empty(),
        "{} other errors: {:?}",
        other.len(),
        &other[..1]
    );
    assert!(
        appended > 0 && refused > 0,
        "appended {appended}, refused {refused}"
    );
}
