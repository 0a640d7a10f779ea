//! The process tree (`t`, as htop's): processes under the parent pid the
//! kernel reports (getppid, a child we spawn), threads under their process,
//! siblings in the sort order, folds, a filter keeping ancestors dimmed,
//! the same tree in a replay of a recording, and older recordings (no
//! parent pid) shown flat.
use crate::common;

use std::collections::HashMap;
use std::os::unix::process::CommandExt;

use common::ui_kit::{press, press_char, screen, typed};
use ratatui::crossterm::event::KeyModifiers;
use ratatui::crossterm::event::{Event, KeyCode, MouseButton, MouseEvent, MouseEventKind};
use schedtop::collect::procfs::ProcfsReader;
use schedtop::model::interval::RowKey;
use schedtop::model::physics::check_all;
use schedtop::model::{Sample, SourceKind};
use schedtop::record::{WriteOptions, Writer};
use schedtop::ui::fixtures::{self, TREE_THREADS};
use schedtop::ui::process_tree::Fold;
use schedtop::ui::replay::Replay;
use schedtop::ui::{AppState, Session};

/// The fixture's app with the tree on.
fn tree_app(w: u16, h: u16) -> AppState {
    let s = fixtures::tree_samples();
    let mut app = fixtures::app_with(fixtures::host(SourceKind::Bpf), s, w, h);
    press_char(&mut app, 't');
    assert!(app.tree_shown());
    app
}

/// The tree as (row key, depth, dim) in screen order; depth from the
/// drawn prefix (3 cells a level).
fn lines(app: &AppState) -> Vec<(RowKey, usize, bool)> {
    let rows = app.rows();
    app.listing
        .tree
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let depth = if l.prefix.is_empty() || l.prefix == "+ " {
                0
            } else {
                l.prefix.chars().count() / 3
            };
            (rows[i].key, depth, l.dim)
        })
        .collect()
}

/// The parent of each process and the process of each thread, from the
/// fixture's table (what /proc would say).
fn parents() -> HashMap<u32, u32> {
    TREE_THREADS.iter().map(|t| (t.1, t.2)).collect()
}

/// Depth of process `pid` by walking the fixture's parent pids.
fn depth_of(pid: u32, ppid: &HashMap<u32, u32>) -> usize {
    let mut d = 0;
    let mut p = pid;
    while let Some(&pp) = ppid.get(&p).filter(|&&pp| ppid.contains_key(&pp)) {
        d += 1;
        p = pp;
    }
    d
}

#[test]
fn the_tree_fixture_obeys_physics() {
    let v = check_all(&fixtures::tree_samples());
    assert!(v.is_empty(), "{}", v.join("\n"));
}

#[test]
fn every_process_sits_under_its_parent_and_threads_under_their_process() {
    let app = tree_app(120, 40);
    let ppid = parents();
    let l = lines(&app);
    // 10 processes (as many as distinct pids) + 4 threads of the server
    let procs = ppid.len();
    assert_eq!(procs, 10);
    assert_eq!(l.len(), procs + 4, "{l:?}");
    let mut stack: Vec<RowKey> = Vec::new();
    for &(key, depth, dim) in &l {
        assert!(!dim, "no filter: nothing dimmed");
        stack.truncate(depth);
        match key {
            RowKey::Process { pid } => {
                assert_eq!(depth, depth_of(pid, &ppid), "pid {pid}");
                if depth > 0 {
                    assert_eq!(stack[depth - 1], RowKey::Process { pid: ppid[&pid] });
                }
            }
            RowKey::Thread { tid, .. } => {
                let pid = TREE_THREADS.iter().find(|t| t.0 == tid).unwrap().1;
                assert_eq!(stack[depth - 1], RowKey::Process { pid }, "tid {tid}");
            }
            k => panic!("{k:?} in the tree"),
        }
        stack.push(key);
    }
}

#[test]
fn siblings_follow_the_sort_key_and_invert_with_it() {
    for invert in [false, true] {
        let mut app = tree_app(120, 40);
        if invert {
            press_char(&mut app, 'I');
        }
        let l = lines(&app);
        let rows = app.rows();
        let metric = app.sort.metric();
        let vcsw = |i: usize| metric.value(&rows[i]).number().unwrap();
        // siblings: same depth, same parent (no shallower line between)
        for i in 0..l.len() {
            let next = (i + 1..l.len())
                .take_while(|&j| l[j].1 >= l[i].1)
                .find(|&j| l[j].1 == l[i].1);
            if let Some(j) = next {
                let (a, b) = (vcsw(i), vcsw(j));
                let sorted = if app.sort.descending_by_default() != invert {
                    a >= b
                } else {
                    a <= b
                };
                assert!(sorted, "{:?} {a} then {:?} {b}", l[i].0, l[j].0);
            }
        }
        // the two kernel workers under kthreadd, by their rates 410 and 95
        let names: Vec<String> = (0..l.len()).map(|i| rows[i].comm.to_string()).collect();
        let (a, b) = (
            names.iter().position(|n| n == "kworker/0:1").unwrap(),
            names.iter().position(|n| n == "kworker/1:0").unwrap(),
        );
        assert_eq!(a < b, !invert, "{names:?}");
    }
}

#[test]
fn minus_folds_the_selected_process_and_plus_opens_it() {
    let mut app = tree_app(120, 40);
    let all = lines(&app).len();
    // select the server's row
    let at = |app: &AppState, key: RowKey| app.rows().iter().position(|r| r.key == key);
    let server = RowKey::Process { pid: 5000 };
    while app.selected != at(&app, server).unwrap() {
        press(&mut app, KeyCode::Down);
    }
    press_char(&mut app, '-');
    assert_eq!(lines(&app).len(), all - 4, "its 4 threads hidden");
    let i = at(&app, server).unwrap();
    assert_eq!(app.listing.tree.lines[i].fold, Fold::Folded);
    assert!(app.listing.tree.lines[i].prefix.ends_with("└+ "));
    assert_eq!(app.selected, i, "the selection stays on the server");
    press_char(&mut app, '+');
    assert_eq!(lines(&app).len(), all);
    // from a thread, `-` folds its process and selects it
    press(&mut app, KeyCode::Down);
    assert!(matches!(
        app.selected_row().unwrap().key,
        RowKey::Thread { .. }
    ));
    press_char(&mut app, '-');
    assert_eq!(app.selected_row().unwrap().key, server);
    assert_eq!(lines(&app).len(), all - 4);
    // folding systemd hides everything under it: 1 + 3 (kthreadd's) left
    press(&mut app, KeyCode::Home);
    let systemd = RowKey::Process { pid: 1 };
    while app.selected_row().unwrap().key != systemd {
        press(&mut app, KeyCode::Down);
    }
    press_char(&mut app, '-');
    assert_eq!(lines(&app).len(), 4, "{:?}", lines(&app));
    // `t` again: the plain processes list, `+` is the interval key again
    press_char(&mut app, 't');
    assert!(!app.tree_shown() && app.listing.tree.lines.is_empty());
    assert_eq!(app.rows().len(), 10);
}

#[test]
fn a_filter_keeps_the_ancestors_dimmed() {
    let mut app = tree_app(120, 40);
    press_char(&mut app, '/');
    typed(&mut app, "worker-1");
    let l = lines(&app);
    let rows = app.rows();
    let shown: Vec<(String, bool)> = (0..l.len())
        .map(|i| (rows[i].comm.to_string(), l[i].2))
        .collect();
    // the chain from systemd down to the server, dimmed; the thread itself
    let want: Vec<(String, bool)> = [
        ("systemd", true),
        ("sshd", true),
        ("sshd", true),
        ("bash", true),
        ("server", true),
        ("worker-1", false),
    ]
    .iter()
    .map(|&(n, d)| (n.to_string(), d))
    .collect();
    assert_eq!(shown, want);
    // a matching process shows all its threads, none dimmed
    press(&mut app, KeyCode::Esc);
    press_char(&mut app, '/');
    typed(&mut app, "5000");
    let l = lines(&app);
    assert_eq!(l.len(), 5 + 4, "{l:?}");
    assert_eq!(
        l.iter().filter(|x| x.2).count(),
        4,
        "systemd, sshd x2, bash"
    );
}

#[test]
fn snapshots_of_the_tree() {
    for (w, h) in [(80, 24), (200, 50)] {
        let app = tree_app(w, h);
        insta::assert_snapshot!(format!("tree_{w}x{h}"), screen(&app, w, h));
    }
    let mut app = tree_app(100, 20);
    press_char(&mut app, '/');
    typed(&mut app, "worker-1");
    press(&mut app, KeyCode::Enter);
    insta::assert_snapshot!("tree_filtered_100x20", screen(&app, 100, 20));
    // a tiny terminal does not panic
    let app = tree_app(20, 5);
    let _ = screen(&app, 20, 5);
}

#[test]
fn a_click_on_a_fold_mark_folds_and_opens() {
    let mut app = tree_app(120, 40);
    let click = |app: &mut AppState, text: &str, mark: &str| {
        schedtop::ui::mouse::remember(app, ratatui::layout::Rect::new(0, 0, 120, 40));
        let (y, line) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(mark))
            .unwrap_or_else(|| panic!("{mark} on screen:\n{text}"));
        // the mark: the cell after the corner
        let b = line.find(mark).unwrap();
        let x = line[..b].chars().count() + 1;
        let down = Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: x as u16,
            row: y as u16,
            modifiers: KeyModifiers::NONE,
        });
        let mut clicks = schedtop::ui::mouse::Clicks::default();
        let a = clicks.map(&down, app, 0).expect("a click on the mark acts");
        schedtop::ui::layout::apply(app, a);
    };
    let before = lines(&app).len();
    let text = screen(&app, 120, 40);
    click(&mut app, &text, "└─ server");
    assert_eq!(lines(&app).len(), before - 4);
    let text = screen(&app, 120, 40);
    assert!(text.contains("└+ server"), "{text}");
    click(&mut app, &text, "└+ server");
    assert_eq!(lines(&app).len(), before);
}

/// The fixture recorded, then replayed with the tree on.
#[test]
fn a_replay_shows_the_same_tree_and_older_files_show_it_flat() {
    let samples = fixtures::tree_samples();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tree.schedtop");
    let host = fixtures::host(SourceKind::Bpf);
    let mut w = Writer::open(&path, &host, WriteOptions::default()).unwrap();
    for s in &samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    let live = tree_app(120, 40);
    let mut replay = Session::replay_at(Replay::open(&path).unwrap(), samples.len() - 1, false);
    replay.apply(schedtop::ui::action::Action::Resize(120, 40));
    // `t` steps in a replay; F5 is the tree there
    press(&mut replay, KeyCode::F(5));
    assert!(replay.tree_shown());
    assert_eq!(lines(&replay), lines(&live));
    assert_eq!(
        screen(&replay, 120, 40)
            .lines()
            .skip(4)
            .collect::<Vec<_>>()
            .len(),
        36
    );

    // a recording made before the parent pid was kept: every process a root
    let old = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v2.schedtop");
    let mut r = Session::replay_at(Replay::open(&old).unwrap(), 5, false);
    r.apply(schedtop::ui::action::Action::Resize(120, 40));
    press(&mut r, KeyCode::F(5));
    let l = lines(&r);
    assert!(!l.is_empty());
    assert!(
        l.iter()
            .all(|x| matches!(x.0, RowKey::Process { .. }) == (x.1 == 0)),
        "processes at the root, threads one level down: {l:?}"
    );
}

fn kill_group(child: &mut std::process::Child) {
    // SAFETY: kill(2) on the group we created for the child
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
}

/// Our own threads' parent is our parent (getppid); a child we spawn has
/// us as its parent.
fn check_parents(s: &Sample, me: u32, child: u32) {
    // SAFETY: getppid has no preconditions
    let our_parent = unsafe { libc::getppid() } as u32;
    let ours: Vec<_> = s.threads.iter().filter(|t| t.pid == me).collect();
    assert!(ours.len() >= 2, "the test's threads");
    for t in ours {
        assert_eq!(t.attrs.ppid, Some(our_parent), "tid {}", t.tid);
    }
    let c = s
        .threads
        .iter()
        .find(|t| t.pid == child)
        .expect("the child");
    assert_eq!(c.attrs.ppid, Some(me));
}

fn spawn_child() -> std::process::Child {
    std::process::Command::new("sleep")
        .arg("30")
        .process_group(0)
        .spawn()
        .unwrap()
}

#[test]
fn procfs_reads_the_parent_pid() {
    let me = common::getpid();
    let mut child = spawn_child();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let t = std::thread::spawn(move || rx.recv());
    let mut r = ProcfsReader::new("/proc", vec![me, child.id()]);
    let s = r.read();
    drop(tx);
    let _ = t.join();
    let s = s.unwrap();
    check_parents(&s, me, child.id());
    kill_group(&mut child);
}

#[test]
fn the_probes_read_the_parent_pid() {
    let _serial = common::serial();
    let me = common::getpid();
    let mut child = spawn_child();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let t = std::thread::spawn(move || rx.recv());
    let src = common::bpf_source(vec![me, child.id()]);
    let s = src.map(|mut src| src.sample().unwrap());
    drop(tx);
    let _ = t.join();
    if let Some(s) = s {
        check_parents(&s, me, child.id());
    }
    kill_group(&mut child);
}
