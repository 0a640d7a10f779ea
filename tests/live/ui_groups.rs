//! `G`: thread groups, processes and cgroups as rows. A group's switch
//! counts are its threads' sums and its p99 wait comes from the merged
//! histogram, checked on a fixture that obeys physics (24 pool workers whose
//! waits' tails differ) and on 64 real threads named worker-0..63.
use crate::common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::ui_kit::{press, press_char, screen};
use ratatui::crossterm::event::KeyCode;
use schedtop::model::interval::{Row, RowKey};
use schedtop::model::physics::check_all;
use schedtop::model::{Log2Hist, Sample, SourceKind};
use schedtop::ui::app::grouping::Grouping;
use schedtop::ui::app::{AppState, Mode};
use schedtop::ui::fixtures;

fn group_row(app: &AppState, name: &str) -> Row {
    app.rows()
        .iter()
        .find(|r| matches!(r.key, RowKey::Group { .. }) && &*r.comm == name)
        .unwrap_or_else(|| panic!("no group row {name}"))
        .clone()
}

/// The wait histogram of thread `tid` over the interval `prev` -> `cur`,
/// straight from the Samples.
fn wait_delta(prev: &Sample, cur: &Sample, tid: u32) -> Log2Hist {
    let now = cur.threads.iter().find(|t| t.tid == tid).unwrap();
    let before = prev.threads.iter().find(|t| t.tid == tid).unwrap();
    now.wait_hist
        .as_ref()
        .unwrap()
        .since(before.wait_hist.as_ref().unwrap())
}

#[test]
fn a_worker_pool_is_one_row_with_summed_switches_and_the_merged_p99() {
    let samples = fixtures::worker_pool_samples();
    let v = check_all(&samples);
    assert!(v.is_empty(), "fixture breaks physics:\n{}", v.join("\n"));
    let (prev, cur) = (&samples[samples.len() - 2], &samples[samples.len() - 1]);
    let mut app = fixtures::app_with(fixtures::host(SourceKind::Bpf), samples.clone(), 200, 50);
    press_char(&mut app, 'G');
    assert_eq!(app.grouping(), Grouping::ThreadGroups);
    let g = group_row(&app, "worker-*");
    assert_eq!(g.threads, fixtures::WORKERS);
    // counts from the Sample itself, not from the thread rows
    let workers: Vec<_> = cur.threads.iter().filter(|t| t.pid == 5000).collect();
    assert_eq!(workers.len(), fixtures::WORKERS as usize);
    let vol: u64 = workers.iter().map(|t| t.voluntary).sum();
    let invol: u64 = workers.iter().map(|t| t.involuntary).sum();
    assert_eq!((g.voluntary, g.involuntary), (vol, invol));
    let mut merged = Log2Hist::new();
    let mut p99s = Vec::new();
    for t in &workers {
        let h = wait_delta(prev, cur, t.tid);
        p99s.push(h.quantile_us(0.99).unwrap());
        merged.merge(&h);
    }
    let want = merged.quantile_us(0.99).unwrap();
    assert_eq!(u64::from(g.p99_wait_us.unwrap()), want);
    // each worker's tail is its own, so the mean of the p99s is another figure
    let mean = p99s.iter().sum::<u64>() / p99s.len() as u64;
    assert_ne!(want, mean, "the fixture cannot tell merged from averaged");
    insta::assert_snapshot!("groups_worker_pool_200x50", screen(&app, 200, 50));

    // Enter opens the group into its 24 threads, Left closes it again
    while app.selected_row().map(|r| r.key) != Some(g.key) {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Enter);
    assert!(!app.rows().iter().any(|r| r.key == g.key));
    let opened = app
        .rows()
        .iter()
        .filter(|r| r.comm.starts_with("worker-"))
        .count();
    assert_eq!(opened, fixtures::WORKERS as usize);
    assert!(
        !app.detail,
        "Enter on a group opens it, not the detail pane"
    );
    press(&mut app, KeyCode::Left);
    assert_eq!(app.selected_row().map(|r| r.key), Some(g.key));
}

#[test]
fn g_cycles_threads_groups_processes_cgroups() {
    let mut app = fixtures::app(SourceKind::Bpf, 80, 24);
    let threads = app.rows().len();
    let mut seen = Vec::new();
    for _ in 0..4 {
        press_char(&mut app, 'G');
        seen.push((app.grouping(), app.rows().len()));
    }
    let kinds: Vec<Grouping> = seen.iter().map(|s| s.0).collect();
    assert_eq!(
        kinds,
        [
            Grouping::ThreadGroups,
            Grouping::Processes,
            Grouping::Cgroups,
            Grouping::Threads
        ]
    );
    // the four ffmpeg encoders (enc0..enc3 and enc4) are one row
    assert!(seen[0].1 < threads, "{seen:?} vs {threads} threads");
    assert_eq!(seen[3].1, threads);
    press_char(&mut app, 'G');
    let enc = group_row(&app, "ffmpeg:enc*");
    let encs: Vec<&Row> = app
        .derived
        .threads
        .iter()
        .map(|r| &**r)
        .filter(|r| r.comm.starts_with("ffmpeg:enc"))
        .collect();
    assert_eq!(enc.threads as usize, encs.len());
    let sum: f64 = encs.iter().filter_map(|r| r.cpu_pct.get()).sum();
    assert!((enc.cpu_pct.get().unwrap() - sum).abs() < 1e-9);
    for _ in 0..2 {
        press_char(&mut app, 'G');
    }
    assert_eq!(app.grouping(), Grouping::Cgroups);
    let s = screen(&app, 80, 24);
    assert!(s.contains("cgroups as rows"), "{s}");
    insta::assert_snapshot!("groups_cgroup_rows_80x24", s);
}

/// 64 threads named worker-0..63 that sleep and spin in turns, until
/// `stop`; they park (blocked, not switching) while `park` is set.
struct Pool {
    stop: Arc<AtomicBool>,
    park: Arc<AtomicBool>,
    parked: Arc<AtomicUsize>,
    handles: Vec<std::thread::JoinHandle<()>>,
    tids: Vec<u32>,
}

impl Pool {
    fn start(n: usize) -> Pool {
        let stop = Arc::new(AtomicBool::new(false));
        let park = Arc::new(AtomicBool::new(false));
        let parked = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = std::sync::mpsc::channel();
        let handles = (0..n)
            .map(|i| {
                let (stop, park, parked, tx) =
                    (stop.clone(), park.clone(), parked.clone(), tx.clone());
                std::thread::Builder::new()
                    .name(format!("worker-{i}"))
                    .spawn(move || {
                        tx.send(common::gettid()).unwrap();
                        while !stop.load(Ordering::Relaxed) {
                            if park.load(Ordering::Relaxed) {
                                parked.fetch_add(1, Ordering::SeqCst);
                                while park.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed)
                                {
                                    std::thread::sleep(Duration::from_millis(20));
                                }
                                parked.fetch_sub(1, Ordering::SeqCst);
                            }
                            let t = Instant::now();
                            while t.elapsed() < Duration::from_micros(200) {
                                std::hint::spin_loop();
                            }
                            std::thread::sleep(Duration::from_millis(3));
                        }
                    })
                    .unwrap()
            })
            .collect();
        let tids = (0..n).map(|_| rx.recv().unwrap()).collect();
        Pool {
            stop,
            park,
            parked,
            handles,
            tids,
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

#[test]
fn sixty_four_real_workers_are_one_group_of_their_sums() {
    let _g = common::serial();
    let Some(mut src) = common::bpf_source(vec![common::getpid()]) else {
        return;
    };
    let pool = Pool::start(64);
    std::thread::sleep(Duration::from_millis(300));
    let a = src.sample().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let b = src.sample().unwrap();
    pool.park.store(true, Ordering::Relaxed);
    let mut app = AppState::new(src.host().clone(), Mode::Live);
    schedtop::ui::layout::apply(&mut app, schedtop::ui::action::Action::Resize(200, 50));
    app.push_sample(a.clone());
    app.push_sample(b.clone());
    press_char(&mut app, 'G');
    let g = group_row(&app, "worker-*");
    assert_eq!(g.threads, 64);
    // the kernel's own counters agree with the Sample's (1 % or 2)
    let mine: Vec<_> = b
        .threads
        .iter()
        .filter(|t| pool.tids.contains(&t.tid))
        .collect();
    assert_eq!(mine.len(), 64, "every worker is in the Sample");
    let vol: u64 = mine.iter().map(|t| t.voluntary).sum();
    let invol: u64 = mine.iter().map(|t| t.involuntary).sum();
    assert_eq!((g.voluntary, g.involuntary), (vol, invol));
    let rate: f64 = app
        .derived
        .threads
        .iter()
        .filter(|r| pool.tids.contains(&r.id))
        .filter_map(|r| r.switches_s())
        .sum();
    let got = g.switches_s().unwrap();
    assert!((got - rate).abs() < 1e-6 * rate.max(1.0), "{got} vs {rate}");
    // ~300 switches a second each on a quiet machine; a shared one starves them
    assert!(got > 64.0 * 5.0, "the workers barely switched: {got}/s");
    let mut merged = Log2Hist::new();
    for &tid in &pool.tids {
        merged.merge(&wait_delta(&a, &b, tid));
    }
    assert!(merged.total() > 64 * 5, "{} waits", merged.total());
    let want = u32::try_from(merged.quantile_us(0.99).unwrap()).unwrap();
    assert_eq!(g.p99_wait_us, Some(want));
    // parked, the workers stop switching: /proc's counts are final and sum
    // to what the kernel's BPF counters say now
    let t = Instant::now();
    while pool.parked.load(Ordering::SeqCst) < 64 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let c = src.sample().unwrap();
    let proc: u64 = pool
        .tids
        .iter()
        .map(|&tid| common::proc_switches(tid))
        .map(|(v, n)| v + n)
        .sum();
    app.push_sample(c);
    let g2 = group_row(&app, "worker-*");
    let ours = g2.voluntary + g2.involuntary;
    assert!(
        ours.abs_diff(proc) <= (proc / 100).max(2 * 64),
        "schedtop {ours}, /proc {proc}"
    );
    drop(pool);
}
