//! The why figures through a recording and `dump --format csv`, checked
//! against what is known without schedtop: figures worked out by hand from
//! two hand-written Samples, and threads whose every voluntary switch is
//! known (one only ever sleeps in nanosleep, one only ever reads a pipe),
//! counted by the kernel in /proc. "other" is what the probe could not
//! attribute; for those threads it must be 0, so the causes cannot be made
//! to add up by pouring the rest into it.
use crate::common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{getpid, hand_samples, proc_switches};
use schedtop::collect::bpf::BpfSource;
use schedtop::export::dump::{dump, DumpOptions, Format};
use schedtop::model::{HostInfo, Sample, SourceKind};
use schedtop::record::{Reader, WriteOptions, Writer};

/// `dump --format csv` of `samples`: the header's names and each row's
/// fields at the last Sample's time, by tid (names hold no commas here).
fn csv_rows(host: &HostInfo, samples: &[Sample]) -> Vec<Vec<(String, String)>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.schedtop");
    let mut w = Writer::open(&path, host, WriteOptions::default()).unwrap();
    for s in samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    let opts = DumpOptions {
        format: Format::Csv,
        from: None,
        to: None,
        pids: vec![],
    };
    let mut out = Vec::new();
    dump(&mut Reader::open(&path).unwrap(), &opts, &mut out).unwrap();
    let csv = String::from_utf8(out).unwrap();
    let mut lines = csv.lines();
    let head: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let last = samples.last().unwrap().time_ns.to_string();
    lines
        .map(|l| l.split(',').map(String::from).collect::<Vec<_>>())
        .filter(|f| f[1] == last)
        .map(|f| {
            assert_eq!(f.len(), head.len(), "{f:?}");
            head.iter().cloned().zip(f).collect()
        })
        .collect()
}

fn field<'a>(rows: &'a [Vec<(String, String)>], tid: u32, name: &str) -> &'a str {
    let row = rows
        .iter()
        .find(|r| r.iter().any(|(k, v)| k == "tid" && *v == tid.to_string()))
        .unwrap_or_else(|| panic!("no row for tid {tid}"));
    &row.iter().find(|(k, _)| k == name).unwrap().1
}

const MIG: [&str; 5] = [
    "mig_wakeup",
    "mig_load_balance",
    "mig_numa_balance",
    "mig_affinity",
    "mig_other",
];
const BLOCKED: [&str; 9] = [
    "blocked_futex",
    "blocked_sleep",
    "blocked_poll",
    "blocked_pipe",
    "blocked_socket",
    "blocked_disk_io",
    "blocked_page_fault",
    "blocked_child",
    "blocked_other",
];

fn columns(rows: &[Vec<(String, String)>], tid: u32, names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| field(rows, tid, n).to_string())
        .collect()
}

#[test]
fn csv_why_columns_hold_the_figures_worked_out_by_hand() {
    // tests/common/hand_samples.rs derives each figure
    let rows = csv_rows(
        &hand_samples::host(),
        &[hand_samples::sample_a(), hand_samples::sample_b()],
    );
    // 6 migrations: wakeup 2, balance 1 counted, 3 not attributed
    assert_eq!(columns(&rows, 100, &MIG), ["2", "1", "0", "0", "3"]);
    // 600 voluntary: futex 300, sleep 150, 10 the probe called other and
    // 140 it did not attribute at all
    assert_eq!(
        columns(&rows, 100, &BLOCKED),
        ["300", "150", "0", "0", "0", "0", "0", "0", "150"]
    );
    assert_eq!(field(&rows, 100, "voluntary"), "1600");
    // no why figures: empty, never 0
    assert_eq!(columns(&rows, 101, &MIG), ["", "", "", "", ""]);
    assert_eq!(field(&rows, 101, "blocked_other"), "");
    // 8 voluntary switches, 9 sleeps counted by the probe: shown as
    // counted, nothing taken from "other" (it has none) or invented
    assert_eq!(
        columns(&rows, 102, &BLOCKED),
        ["0", "9", "0", "0", "0", "0", "0", "0", "0"]
    );
    assert_eq!(columns(&rows, 102, &MIG), ["0", "0", "0", "0", "0"]);
}

/// The thread's scheduler state letter from /proc (R, S, D, ...).
fn state(tid: u32) -> char {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).unwrap();
    // the name is in parentheses and may hold anything: the state follows
    // the last ')'
    s[s.rfind(')').unwrap() + 1..]
        .trim_start()
        .chars()
        .next()
        .unwrap()
}

/// Waits until `tid` is asleep (S): blocked where the workload blocks it.
fn until_blocked(tid: u32) {
    let t = Instant::now();
    while state(tid) != 'S' {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "thread {tid} never blocked"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn source() -> Option<BpfSource> {
    let topology =
        schedtop::collect::topology::read_topology(std::path::Path::new("/sys")).unwrap();
    match BpfSource::start(topology, vec![getpid()], false, false) {
        Ok(s) => Some(s),
        Err(e) => {
            common::skip::bpf_unavailable(&format!("BPF cannot load here: {e:#}"));
            None
        }
    }
}

/// A drain that lists every one of `tids` (a thread first seen in a torn
/// read is left to the next drain).
fn drain_listing(src: &mut BpfSource, tids: &[u32]) -> Sample {
    for _ in 0..50 {
        let s = src.drain().unwrap();
        if tids.iter().all(|&t| s.thread(t).is_some()) {
            return s;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("threads {tids:?} never listed");
}

const SLEEPS: u64 = 100;
const PIPE_READS: u64 = 100;

#[test]
fn a_sleeper_blocks_only_on_sleep_and_a_pipe_reader_only_on_pipe() {
    let _g = common::serial();
    let Some(mut src) = source() else { return };

    // the sleeper: on each word from `go`, SLEEPS nanosleeps of 1 ms, then
    // says so and waits for the next word (a futex wait)
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    // one channel per thread: which starts first is the scheduler's choice
    let (tid_tx, tid_rx) = mpsc::channel();
    let (reader_tid_tx, reader_tid_rx) = mpsc::channel();
    let sleeper = std::thread::spawn(move || {
        tid_tx.send(common::gettid()).unwrap();
        while go_rx.recv().is_ok() {
            for _ in 0..SLEEPS {
                let ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 1_000_000,
                };
                // SAFETY: a valid timespec; the remainder is not wanted.
                unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
            }
            done_tx.send(()).unwrap();
        }
    });
    // the reader: reads a pipe one byte at a time until end of file
    let mut fds = [0i32; 2];
    // SAFETY: pipe fills two fds.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (rd, wr) = (fds[0], fds[1]);
    let reader = std::thread::spawn(move || {
        reader_tid_tx.send(common::gettid()).unwrap();
        let mut b = [0u8; 1];
        // SAFETY: reading one byte into a valid buffer from our pipe.
        while unsafe { libc::read(rd, b.as_mut_ptr().cast(), 1) } == 1 {}
    });
    let (sleeper_tid, reader_tid) = (tid_rx.recv().unwrap(), reader_tid_rx.recv().unwrap());
    let tids = [sleeper_tid, reader_tid];
    until_blocked(sleeper_tid);
    until_blocked(reader_tid);

    // both blocked: their counters stand still while they are read
    let a = drain_listing(&mut src, &tids);
    let (sleeper_before, _) = proc_switches(sleeper_tid);
    let (reader_before, _) = proc_switches(reader_tid);

    go_tx.send(()).unwrap();
    for _ in 0..PIPE_READS {
        // SAFETY: writing one byte from a valid buffer to our pipe.
        assert_eq!(unsafe { libc::write(wr, [7u8].as_ptr().cast(), 1) }, 1);
        // the write made the reader runnable; asleep again means it read
        // the byte and blocked on the empty pipe once more
        until_blocked(reader_tid);
    }
    done_rx.recv().unwrap();
    until_blocked(sleeper_tid);

    let b = drain_listing(&mut src, &tids);
    let (sleeper_after, _) = proc_switches(sleeper_tid);
    let (reader_after, _) = proc_switches(reader_tid);

    // end the workload before any assertion can fail
    drop(go_tx);
    // SAFETY: closing our own pipe's write end: the reader sees end of file.
    unsafe { libc::close(wr) };
    sleeper.join().unwrap();
    reader.join().unwrap();
    // SAFETY: closing our own pipe's read end.
    unsafe { libc::close(rd) };

    let topology =
        schedtop::collect::topology::read_topology(std::path::Path::new("/sys")).unwrap();
    let host = HostInfo {
        hostname: "test".into(),
        kernel: String::new(),
        topology,
        source: SourceKind::Bpf,
        degraded_reason: None,
        sched_ext: None,
        interval_ns: 1_000_000_000,
    };
    let rows = csv_rows(&host, &[a, b]);
    let n = |tid: u32, name: &str| -> u64 {
        field(&rows, tid, name)
            .parse()
            .unwrap_or_else(|_| panic!("tid {tid} {name}: {rows:?}"))
    };
    let sum = |tid: u32| BLOCKED.iter().map(|c| n(tid, c)).sum::<u64>();

    // the sleeper: one voluntary switch per nanosleep, and the futex wait
    // for the next word after saying it was done
    let kernel = sleeper_after - sleeper_before;
    eprintln!(
        "sleeper: kernel {kernel} voluntary; csv {:?}",
        columns(&rows, sleeper_tid, &BLOCKED)
    );
    assert_eq!(n(sleeper_tid, "voluntary"), sleeper_after, "cumulative");
    assert_eq!(n(sleeper_tid, "blocked_sleep"), SLEEPS);
    assert_eq!(n(sleeper_tid, "blocked_other"), 0);
    assert!(n(sleeper_tid, "blocked_futex") >= 1);
    assert_eq!(sum(sleeper_tid), kernel, "reasons vs the kernel's count");

    // the reader: one block on the empty pipe per byte, nothing else
    let kernel = reader_after - reader_before;
    eprintln!(
        "reader: kernel {kernel} voluntary; csv {:?}",
        columns(&rows, reader_tid, &BLOCKED)
    );
    assert_eq!(kernel, PIPE_READS, "the kernel's own count");
    assert_eq!(n(reader_tid, "voluntary"), reader_after, "cumulative");
    assert_eq!(n(reader_tid, "blocked_pipe"), PIPE_READS);
    assert_eq!(n(reader_tid, "blocked_other"), 0);
    assert_eq!(sum(reader_tid), PIPE_READS);
}
