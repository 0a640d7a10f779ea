//! The nice value end to end: threads set their own nice with
//! setpriority(2); the kernel's answer (getpriority) is what the procfs and
//! BPF sources must report, and the value must reach the table's NI column,
//! the JSON and CSV output and a recording (format 2) unchanged.
use crate::common;

use std::sync::mpsc;

use schedtop::collect::procfs::ProcfsReader;
use schedtop::export::dump::{dump, DumpOptions, Format};
use schedtop::export::json::interval_record;
use schedtop::model::{Sample, ThreadSample};
use schedtop::record::{Reader, WriteOptions, Writer};
use schedtop::ui::action::Action;
use schedtop::ui::render::{buffer_text, render_to_buffer};
use schedtop::ui::{AppState, Mode};

/// Threads that set their nice to each of `nices` and wait until dropped.
struct Niced {
    tids: Vec<u32>,
    stop: Vec<mpsc::Sender<()>>,
    joins: Vec<std::thread::JoinHandle<()>>,
}

impl Niced {
    fn start(nices: &[i32]) -> Niced {
        let (mut tids, mut stop, mut joins) = (Vec::new(), Vec::new(), Vec::new());
        for &n in nices {
            let (tid_tx, tid_rx) = mpsc::channel();
            let (stop_tx, stop_rx) = mpsc::channel::<()>();
            joins.push(std::thread::spawn(move || {
                let tid = common::gettid();
                // SAFETY: setpriority on our own thread id (Linux: per thread)
                let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, n) };
                assert_eq!(r, 0, "setpriority({n})");
                tid_tx.send(tid).unwrap();
                let _ = stop_rx.recv();
            }));
            tids.push(tid_rx.recv().unwrap());
            stop.push(stop_tx);
        }
        Niced { tids, stop, joins }
    }
}

impl Drop for Niced {
    fn drop(&mut self) {
        self.stop.clear();
        for j in self.joins.drain(..) {
            let _ = j.join();
        }
    }
}

/// What the kernel says a thread's nice is.
fn kernel_nice(tid: u32) -> i64 {
    // SAFETY: getpriority has no memory preconditions; errno is cleared
    // first because -1 is also a valid answer.
    unsafe {
        *libc::__errno_location() = 0;
        let v = libc::getpriority(libc::PRIO_PROCESS, tid);
        assert_eq!(*libc::__errno_location(), 0, "getpriority({tid})");
        i64::from(v)
    }
}

fn thread(s: &Sample, tid: u32) -> &ThreadSample {
    s.threads
        .iter()
        .find(|t| t.tid == tid)
        .unwrap_or_else(|| panic!("thread {tid} not in the Sample"))
}

const NICES: [i32; 2] = [7, 13];

#[test]
fn procfs_reports_the_kernels_nice() {
    let _serial = common::serial();
    let n = Niced::start(&NICES);
    let mut r = ProcfsReader::new("/proc", vec![common::getpid()]);
    let s = r.read().unwrap();
    for (&tid, &want) in n.tids.iter().zip(&NICES) {
        assert_eq!(kernel_nice(tid), i64::from(want));
        assert_eq!(thread(&s, tid).attrs.nice, Some(want as i8), "tid {tid}");
    }
}

#[test]
fn bpf_reports_the_kernels_nice() {
    let _serial = common::serial();
    let n = Niced::start(&NICES);
    let Some(mut src) = common::bpf_source(vec![common::getpid()]) else {
        return;
    };
    let s = src.sample().unwrap();
    for (&tid, &want) in n.tids.iter().zip(&NICES) {
        assert_eq!(kernel_nice(tid), i64::from(want));
        assert_eq!(thread(&s, tid).attrs.nice, Some(want as i8), "tid {tid}");
    }
}

/// Two procfs Samples of the niced threads, a second apart in their clocks.
fn two_samples(n: &Niced) -> (schedtop::model::HostInfo, Sample, Sample) {
    let opts = schedtop::collect::LiveOptions {
        interval_ns: 1_000_000_000,
        pid_filter: vec![common::getpid()],
        force_procfs: true,
        require_bpf: false,
        run_delay_waits: false,
        threads: Default::default(),
    };
    let mut src = schedtop::collect::LiveSource::open(&opts).unwrap();
    let a = src.sample().unwrap();
    let mut b = src.sample().unwrap();
    b.time_ns = a.time_ns + 1_000_000_000;
    b.mono_ns = a.mono_ns + 1_000_000_000;
    for &tid in &n.tids {
        thread(&b, tid);
    }
    (src.host().clone(), a, b)
}

#[test]
fn nice_reaches_the_column_json_csv_and_the_recording() {
    let _serial = common::serial();
    let n = Niced::start(&NICES);
    let (host, a, b) = two_samples(&n);

    // the table's NI column on a wide screen
    let mut app = AppState::new(host.clone(), Mode::Live);
    schedtop::ui::layout::apply(&mut app, Action::Resize(200, 40));
    app.push_sample(a.clone());
    app.push_sample(b.clone());
    let text = buffer_text(&render_to_buffer(&app, 200, 40));
    let head = text.lines().find(|l| l.contains("TID")).unwrap();
    let ni = head
        .split_whitespace()
        .position(|w| w == "NI")
        .unwrap_or_else(|| panic!("no NI column: {head}"));
    for (&tid, &want) in n.tids.iter().zip(&NICES) {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&tid.to_string()))
            .unwrap_or_else(|| panic!("no row for {tid}:\n{text}"));
        assert_eq!(
            line.split_whitespace().nth(ni),
            Some(&*want.to_string()),
            "{line}"
        );
    }

    // JSON (the --batch record)
    let rec = serde_json::to_value(interval_record(&host, Some(&a), &b)).unwrap();
    for (&tid, &want) in n.tids.iter().zip(&NICES) {
        let t = rec["threads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tid"] == tid)
            .unwrap();
        assert_eq!(t["nice"], want, "{t}");
    }

    // a recording, read back, and its CSV
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.schedtop");
    let mut w = Writer::open(&path, &host, WriteOptions::default()).unwrap();
    w.write_sample(&a).unwrap();
    w.write_sample(&b).unwrap();
    w.finish().unwrap();
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(
        r.header().format_version,
        schedtop::record::format::FORMAT_VERSION
    );
    // the attributes, and the processes above the kept ones that a
    // filtered source lists for the tree (docs/filters.md)
    assert!(!b.ancestors.is_empty(), "a -p source lists its ancestors");
    assert_eq!(
        r.sample(1).unwrap(),
        b,
        "the format keeps the attributes and the ancestors"
    );
    let mut out = Vec::new();
    let opts = DumpOptions {
        format: Format::Csv,
        from: None,
        to: None,
        pids: vec![],
    };
    dump(&mut r, &opts, &mut out).unwrap();
    let csv = String::from_utf8(out).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let (tid_col, nice_col) = (
        header.iter().position(|&h| h == "tid").unwrap(),
        header.iter().position(|&h| h == "nice").unwrap(),
    );
    for (&tid, &want) in n.tids.iter().zip(&NICES) {
        let row: Vec<&str> = lines
            .clone()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[tid_col] == tid.to_string())
            .unwrap();
        assert_eq!(row[nice_col], want.to_string());
    }
}

#[test]
fn format_1_recordings_read_with_nice_unknown() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1.schedtop");
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.header().format_version, 1);
    let s = r.sample(r.len() - 1).unwrap();
    assert!(!s.threads.is_empty());
    assert!(s.threads.iter().all(|t| t.attrs.nice.is_none()));
}

#[test]
fn the_format_2_fixture_reads_with_every_later_version() {
    // written by examples/record_fixture_v2.rs; never regenerated
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v2.schedtop");
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.header().format_version, 2);
    assert_eq!(r.len(), 6);
    assert!(r.damage().is_empty());
    let mut seen_1003 = 0;
    for i in 0..r.len() {
        let s = r.sample(i).unwrap();
        assert!(s.threads.len() >= 8, "Sample {i}");
        for t in &s.threads {
            let want = if t.tid == 1003 && i >= 4 {
                seen_1003 += 1;
                10
            } else {
                (t.tid % 40) as i8 - 20
            };
            assert_eq!(t.attrs.nice, Some(want), "Sample {i} tid {}", t.tid);
        }
    }
    // Samples 4 and 5 are delta frames (key frames every 3): the change
    // travelled as a delta
    assert_eq!(seen_1003, 2, "the reniced thread in the last two Samples");
}
