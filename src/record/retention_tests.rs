use super::*;
use crate::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use crate::record::writer::{WriteOptions, Writer};

const S: u64 = 1_000_000_000;
const T0: u64 = 1_795_302_900 * S; // 2026-11-21T23:15:00Z
const ID: u64 = 0xfeed;

/// An own file: `n` Samples from `start`, one a second, a step of `step`
/// seconds after the `at`th.
fn own(
    dir: &Path,
    name: &str,
    seq: u64,
    run: u64,
    start: u64,
    n: usize,
    step: Option<(usize, u64)>,
) -> PathBuf {
    own_of(ID, dir, name, seq, run, start, n, step)
}

#[allow(clippy::too_many_arguments)]
fn own_of(
    id: u64,
    dir: &Path,
    name: &str,
    seq: u64,
    run: u64,
    start: u64,
    n: usize,
    step: Option<(usize, u64)>,
) -> PathBuf {
    let o = SynthOptions {
        threads: 4,
        samples: n,
        ..Default::default()
    };
    let path = dir.join(name);
    let opts = WriteOptions {
        dir: Some(DirMark { id, seq, run }),
        ..Default::default()
    };
    let mut w = Writer::open(&path, &synthetic_host(&o), opts).unwrap();
    let mut t = start;
    for (i, mut s) in synthetic_samples(&o).into_iter().enumerate() {
        if step.is_some_and(|(at, _)| at == i) {
            t += step.unwrap().1 * S;
        }
        s.time_ns = t;
        w.write_sample(&s).unwrap();
        t += S;
    }
    w.finish().unwrap();
    path
}

fn name(i: u32) -> String {
    format!("schedtop-box-20261121-2315{i:02}.schedtop")
}

#[test]
fn own_names() {
    for n in [
        "schedtop-box-20261121-231500.schedtop",
        "schedtop-a-b.c-20261121-231500-2.schedtop",
        "schedtop-x-20261121-231500-100.schedtop",
    ] {
        assert!(own_name(n), "{n}");
    }
    for n in [
        "notes.schedtop",
        "mine.schedtop",
        "schedtop--20261121-231500.schedtop",
        "schedtop-box-2026112-231500.schedtop",
        "schedtop-box-20261121-231500.txt",
        "schedtop-box-20261121-23150x.schedtop",
        "xschedtop-box-20261121-231500.schedtop",
    ] {
        assert!(!own_name(n), "{n}");
    }
}

fn facts(seq: u64, run: u64, first: u64, last: u64, span: u64) -> Facts {
    Facts {
        path: PathBuf::new(),
        bytes: 0,
        mark: DirMark { id: ID, seq, run },
        samples: 2,
        first_ns: first,
        last_ns: last,
        span_ns: span,
        gap_cap_ns: 10 * S,
    }
}

#[test]
fn ages_count_recorded_time_not_clock_steps() {
    // run 1: 0..100 s, 100..200 s (1 s between the files); run 2, after a
    // real 1000 s stop: 1300..1400 s, then the clock steps 2 days forward
    // inside run 2, whose next file starts then
    let day = 86_400 * S;
    let files = [
        facts(0, 1, 0, 100 * S, 100 * S),
        facts(1, 1, 101 * S, 200 * S, 99 * S),
        facts(2, 2, 1200 * S, 1300 * S, 100 * S),
        facts(3, 2, 2 * day + 1301 * S, 2 * day + 1400 * S, 99 * S),
    ];
    let now = 2 * day + 1401 * S;
    let a = ages(&files, now, 2);
    // hand-computed: file 3 ends 1 s before now; file 2 ends the capped
    // step (10 s) before file 3 starts; file 1 ends 1000 s (between runs,
    // wall clock) before file 2 starts; file 0 1 s before file 1
    assert_eq!(a[3], S);
    assert_eq!(a[2], S + 99 * S + 10 * S);
    assert_eq!(a[1], a[2] + 100 * S + 1000 * S);
    assert_eq!(a[0], a[1] + 99 * S + S);
    // a clock stepped back between runs: the old files are "in the
    // future"; they are as old as the recording says, never negative
    let files = [
        facts(0, 1, 5000 * S, 5100 * S, 100 * S),
        facts(1, 2, 100 * S, 200 * S, 100 * S),
    ];
    let a = ages(&files, 201 * S, 2);
    assert_eq!(a, vec![S + 100 * S, S]);
}

/// A clock step forward longer than --retain inside a run: the files
/// just before it are seconds old, not days; with mtime every file but
/// the current one went.
#[test]
fn a_clock_step_forward_keeps_the_newest_recordings() {
    let d = tempfile::tempdir().unwrap();
    let day = 86_400;
    let a = own(d.path(), &name(0), 0, 7, T0, 20, None);
    let b = own(d.path(), &name(1), 1, 7, T0 + 20 * S, 20, None);
    // 2 days forward after the 10th Sample of c
    let c = own(
        d.path(),
        &name(2),
        2,
        7,
        T0 + 40 * S,
        20,
        Some((10, 2 * day)),
    );
    let mut r = Retention::new(d.path(), ID, 7);
    let now = T0 + (60 + 2 * day) * S;
    let limits = Limits {
        retain_ns: Some(3600 * S),
        retain_bytes: None,
    };
    let p = r.prune(&[&c], now, limits, 0).unwrap();
    assert!(p.removed.is_empty(), "{p:?}");
    assert!(a.exists() && b.exists() && c.exists());
    // --retain 35s: a (its last Sample 50 s of recording before now) goes,
    // b (30 s) stays
    let limits = Limits {
        retain_ns: Some(35 * S),
        retain_bytes: None,
    };
    let p = r.prune(&[&c], now, limits, 0).unwrap();
    assert_eq!(p.removed, vec![(a.clone(), "older than --retain")]);
    assert!(b.exists());
}

/// The clock stepped back: the newer files (higher sequence) have the
/// older times and mtimes. --retain-size deletes by sequence.
#[test]
fn size_retention_goes_by_sequence_not_by_time() {
    let d = tempfile::tempdir().unwrap();
    let old = own(d.path(), &name(0), 0, 1, T0 + 86_400 * S, 20, None);
    let new = own(d.path(), &name(1), 1, 2, T0, 20, None);
    let cur = own(d.path(), &name(2), 2, 2, T0 + 20 * S, 5, None);
    // mtimes as a stepped-back clock leaves them: the old file in the future
    let future = std::time::SystemTime::now() + std::time::Duration::from_secs(86_400);
    File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(future)
        .unwrap();
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    let mut r = Retention::new(d.path(), ID, 2);
    let limits = Limits {
        retain_ns: None,
        retain_bytes: Some(size(&new) + size(&cur)),
    };
    let p = r.prune(&[&cur], T0 + 25 * S, limits, 0).unwrap();
    assert_eq!(p.removed, vec![(old.clone(), "beyond --retain-size")]);
    assert!(new.exists() && cur.exists());
}

#[test]
fn foreign_held_and_empty_files() {
    let d = tempfile::tempdir().unwrap();
    let mine = own(d.path(), &name(0), 0, 1, T0, 5, None);
    let held = own(d.path(), &name(1), 1, 1, T0 + 5 * S, 5, None);
    // another directory's file under an own name, a user's file
    let other = own_of(ID + 5, d.path(), &name(2), 2, 1, T0 + 10 * S, 5, None);
    let mut r = Retention::new(d.path(), ID + 1, 1);
    let p = r
        .prune(
            &[],
            T0 + 20 * S,
            Limits {
                retain_ns: Some(0),
                retain_bytes: Some(1),
            },
            0,
        )
        .unwrap();
    assert!(p.removed.is_empty(), "another id: nothing is ours {p:?}");
    let notes = p.notes.join("\n");
    assert!(
        notes.contains("3 file(s) not written by this directory's recorder"),
        "{notes}"
    );
    // named once a run
    let p = r.prune(&[], T0 + 20 * S, Limits::default(), 0).unwrap();
    assert!(p.notes.is_empty(), "{:?}", p.notes);

    let notes_file = d.path().join("notes.schedtop");
    std::fs::write(&notes_file, b"my notes").unwrap();
    // an own file with a header and no Samples (a run cut at its start)
    let o = SynthOptions::default();
    let empty = d.path().join(name(3));
    let opts = WriteOptions {
        dir: Some(DirMark {
            id: ID,
            seq: 3,
            run: 1,
        }),
        ..Default::default()
    };
    Writer::open(&empty, &synthetic_host(&o), opts)
        .unwrap()
        .finish()
        .unwrap();
    let lock = File::open(&held).unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(
        unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let mut r = Retention::new(d.path(), ID, 1);
    let limits = Limits {
        retain_ns: None,
        retain_bytes: Some(1),
    };
    let p = r.prune(&[], T0 + 20 * S, limits, 0).unwrap();
    let gone: Vec<&Path> = p.removed.iter().map(|(p, _)| p.as_path()).collect();
    assert_eq!(gone, vec![mine.as_path(), empty.as_path()], "{p:?}");
    assert_eq!(p.removed[1].1, "no Samples");
    assert!(held.exists() && other.exists() && notes_file.exists());
    let notes = p.notes.join("\n");
    assert!(
        notes.contains(&format!("is held by pid {}", std::process::id())),
        "{notes}"
    );
    assert!(
        notes.contains(&format!(
            "2 file(s) not written by this directory's recorder, left alone and not counted in --retain-size: notes.schedtop, {}",
            name(2)
        )),
        "{notes}"
    );
    // the held file goes once its writer is done
    drop(lock);
    let p = r.prune(&[], T0 + 20 * S, limits, 0).unwrap();
    assert_eq!(p.removed, vec![(held.clone(), "beyond --retain-size")]);
}

#[test]
fn the_directory_id_is_kept_in_the_lock_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("lock");
    let open = || {
        File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&p)
            .unwrap()
    };
    let id = dir_id(&mut open()).unwrap();
    assert_eq!(dir_id(&mut open()).unwrap(), id);
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(text, format!("schedtop-dir {id:016x}\n"));
}

/// A held file is not counted in --retain-size: it does not push out an
/// older file that fits beside the ones the recorder may delete.
#[test]
fn a_held_file_does_not_push_out_the_others() {
    let d = tempfile::tempdir().unwrap();
    let old = own(d.path(), &name(0), 0, 1, T0, 20, None);
    let held = own(d.path(), &name(1), 1, 1, T0 + 20 * S, 40, None);
    let cur = own(d.path(), &name(2), 2, 1, T0 + 60 * S, 5, None);
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    let lock = File::open(&held).unwrap();
    // SAFETY: flock on a descriptor we own.
    assert_eq!(
        unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let limits = Limits {
        retain_ns: None,
        retain_bytes: Some(size(&old) + size(&cur)),
    };
    let mut r = Retention::new(d.path(), ID, 1);
    let p = r.prune(&[&cur], T0 + 66 * S, limits, 0).unwrap();
    assert!(p.removed.is_empty(), "{p:?}");
    assert!(old.exists() && held.exists());
    // once it is free it counts: the oldest goes, and it too (it is
    // larger than the oldest was)
    drop(lock);
    let p = r.prune(&[&cur], T0 + 66 * S, limits, 0).unwrap();
    let why = "beyond --retain-size";
    assert_eq!(p.removed, vec![(old.clone(), why), (held.clone(), why)]);
}
