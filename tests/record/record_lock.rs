//! One writer per recording: a second `record --append` or `--force` on a
//! file another recorder holds is refused with that recorder's pid, before
//! it reads or replaces anything.
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;

use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::{OpenMode, Reader, WriteOptions, Writer, Written};

fn opts(mode: OpenMode) -> WriteOptions {
    WriteOptions {
        mode,
        ..Default::default()
    }
}

#[test]
fn force_does_not_replace_a_file_another_writer_holds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.schedtop");
    let o = SynthOptions::default();
    let samples = synthetic_samples(&o);
    let mut first = Writer::open(&path, &synthetic_host(&o), opts(OpenMode::CreateNew)).unwrap();
    assert_eq!(first.write_sample(&samples[0]).unwrap(), Written::Ok);
    let ino = std::fs::metadata(&path).unwrap().ino();
    let err = Writer::open(&path, &synthetic_host(&o), opts(OpenMode::Replace))
        .err()
        .expect("--force replaced a file being written");
    let msg = format!("{err:#}");
    assert!(msg.contains("being written by another"), "{msg}");
    assert!(
        msg.contains(&format!("pid {}", std::process::id())),
        "{msg}"
    );
    // the first writer's file is still the one at the path, and whole
    assert_eq!(std::fs::metadata(&path).unwrap().ino(), ino);
    for s in &samples[1..] {
        first.write_sample(s).unwrap();
    }
    first.finish().unwrap();
    let r = Reader::open(&path).unwrap();
    assert_eq!(r.len(), samples.len());
    // once it is done, --force replaces it
    let w = Writer::open(&path, &synthetic_host(&o), opts(OpenMode::Replace)).unwrap();
    w.finish().unwrap();
    assert_ne!(std::fs::metadata(&path).unwrap().ino(), ino);
}

/// The appender takes the lock before reading the file: a file another
/// writer holds is refused as held, whatever its bytes (read first, these
/// bytes made it fail as "not a recording", and a real one's size and index
/// could change between the read and the lock).
#[test]
fn append_locks_before_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.schedtop");
    std::fs::write(&path, b"half a frame, still being written").unwrap();
    let holder = std::fs::File::open(&path).unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(
        unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let o = SynthOptions::default();
    let err = Writer::open(&path, &synthetic_host(&o), opts(OpenMode::Append))
        .err()
        .expect("appended to a held file");
    let msg = format!("{err:#}");
    assert!(msg.contains("being written by another"), "{msg}");
    assert!(
        msg.contains(&format!("pid {}", std::process::id())),
        "{msg}"
    );
    drop(holder);
}
