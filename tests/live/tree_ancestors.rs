//! The process tree (`t`) under a collection filter: a real tree — this
//! test → a shell → a shell → a program with three threads — filtered with
//! `-p <grandchild>`, and with `-u nobody` where the grandchild runs as
//! nobody under root's shells. The filter keeps only the grandchild's
//! threads; the Sample names the processes above it (pid, parent, name,
//! as /proc says and as this test made them), and the tree draws them
//! dimmed with no figures, counted nowhere. The real binary in tmux
//! under `-u nobody` names the filter in its header and draws the same
//! tree.
use crate::common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::tmux::{have_tmux, Tmux};
use common::ui_kit::{press, press_char, screen};
use ratatui::crossterm::event::KeyCode;
use schedtop::collect::{LiveOptions, LiveSource, Source, ThreadFilter};
use schedtop::model::interval::RowKey;
use schedtop::record::reader::Reader;
use schedtop::ui::action::Action;
use schedtop::ui::replay::Replay;
use schedtop::ui::Session;
use schedtop::ui::{AppState, Mode};

/// tests/workloads/why_load.c built once, reachable as `tree_load` (the
/// name the process and its threads take).
fn workload() -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    let bin = BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tree_ancestors");
        std::fs::create_dir_all(&dir).ok()?;
        let out = dir.join("tree_load");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workloads/why_load.c");
        let ok = Command::new("cc")
            .args(["-O2", "-pthread", "-o"])
            .arg(&out)
            .arg(&src)
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(out)
    });
    if bin.is_none() {
        common::cannot_run("no C compiler (cc) to build the workload");
    }
    bin.clone()
}

/// The parent shell, its process group (every process below it) killed
/// when dropped.
struct Family(Child);

impl Family {
    /// sh → sh → `prefix` tree_load sleep 3 (three threads sleeping 10 ms
    /// in turns, the main thread waiting for them).
    fn start(prefix: &str) -> Option<Family> {
        let bin = workload()?;
        let inner = format!("{prefix} {} sleep 3 & wait", bin.display());
        let child = Command::new("sh")
            .args(["-c", &format!("sh -c '{inner}' & wait")])
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Some(Family(child))
    }
}

impl Drop for Family {
    fn drop(&mut self) {
        // SAFETY: kill of the process group this test made.
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
        let _ = self.0.wait();
    }
}

/// (comm, ppid) of `pid` from /proc/<pid>/stat.
fn stat(pid: u32) -> Option<(String, u32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (open, close) = (s.find('(')?, s.rfind(')')?);
    let ppid = s[close + 1..].split_whitespace().nth(1)?.parse().ok()?;
    Some((s[open + 1..close].to_string(), ppid))
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&p| stat(p).is_some_and(|(_, pp)| pp == pid))
        .collect()
}

/// The family's (child shell, grandchild) once the grandchild runs
/// tree_load with its three threads.
fn wait_for_grandchild(f: &Family) -> (u32, u32) {
    let t = Instant::now();
    loop {
        for c in children(f.0.id()) {
            for g in children(c) {
                let threads = std::fs::read_dir(format!("/proc/{g}/task")).map_or(0, |d| d.count());
                if stat(g).is_some_and(|(comm, _)| comm == "tree_load") && threads == 4 {
                    return (c, g);
                }
            }
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no grandchild");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn open(pids: Vec<u32>, threads: ThreadFilter) -> LiveSource {
    LiveSource::open(&LiveOptions {
        interval_ns: 1_000_000_000,
        pid_filter: pids,
        force_procfs: false,
        require_bpf: false,
        run_delay_waits: false,
        threads,
    })
    .unwrap()
}

/// Two Samples a second apart into a live view at 160x40 with `t` on.
fn tree_of(src: &mut LiveSource) -> AppState {
    let a = src.next_sample().unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let b = src.next_sample().unwrap();
    let mut app = AppState::new(src.host().clone(), Mode::Live);
    schedtop::ui::layout::apply(&mut app, schedtop::ui::action::Action::Resize(160, 40));
    app.push_sample(a);
    app.push_sample(b);
    press_char(&mut app, 't');
    assert!(app.tree_shown());
    app
}

/// Check the tree of `app` for the family (`me` → `sh` → `child` →
/// `grandchild` and its threads) and return its lines from `me` down,
/// pids by role, for the snapshot: "dim" where dimmed, the drawn name
/// column, and whether the figures are blank.
fn check_tree(app: &AppState, me: u32, sh: u32, child: u32, grandchild: u32) -> String {
    let s = app.derived.sample.clone();
    // the Sample lists the grandchild's threads only; its ancestors are
    // named, with the parents this test gave them
    assert!(
        s.threads.iter().all(|t| t.pid == grandchild),
        "{:?}",
        s.threads
    );
    assert_eq!(s.threads.len(), 4);
    let anc = |pid: u32| {
        s.ancestors
            .iter()
            .find(|a| a.pid == pid)
            .map(|a| (a.ppid, &*a.comm))
    };
    assert_eq!(anc(child), Some((sh, "sh")));
    assert_eq!(anc(sh).map(|a| a.0), Some(me));
    assert_eq!(anc(me).map(|a| a.0), Some(stat(me).unwrap().1));
    assert_eq!(
        anc(1).map(|a| a.0),
        Some(0),
        "the chain ends at the first process"
    );
    assert!(anc(grandchild).is_none());
    // the tables' rows (and so every sum) hold the grandchild only
    assert_eq!(app.derived.processes.len(), 1);
    assert_eq!(app.derived.threads.len(), 4);

    let rows = app.rows();
    let lines = &app.listing.tree.lines;
    assert_eq!(lines.len(), rows.len());
    let at = |key: RowKey| {
        (0..rows.len())
            .find(|&i| rows[i].key == key)
            .unwrap_or_else(|| panic!("{key:?} not in the tree"))
    };
    let (i_me, i_sh, i_child, i_gc) = (
        at(RowKey::Process { pid: me }),
        at(RowKey::Process { pid: sh }),
        at(RowKey::Process { pid: child }),
        at(RowKey::Process { pid: grandchild }),
    );
    // each directly under the one before, one level (3 cells) deeper
    assert_eq!((i_sh, i_child, i_gc), (i_me + 1, i_me + 2, i_me + 3));
    let depth = |i: usize| lines[i].prefix.chars().count();
    assert_eq!(depth(i_sh), depth(i_me) + 3);
    assert_eq!(depth(i_child), depth(i_sh) + 3);
    assert_eq!(depth(i_gc), depth(i_child) + 3);
    // ancestors dimmed, the grandchild and its threads not
    for i in 0..rows.len() {
        let measured = rows[i].pid == grandchild;
        assert_eq!(lines[i].dim, !measured, "line {i}: {:?}", rows[i].key);
    }
    let text = screen(app, 160, 40);
    let screen_lines: Vec<&str> = text.lines().collect();
    let head = screen_lines
        .iter()
        .position(|l| l.contains(" COMM "))
        .unwrap();
    let name_at = screen_lines[head].find("COMM").unwrap();
    let thr_at = screen_lines[head].find(" THR").unwrap() + 1;
    let role = |pid: u32| match pid {
        p if p == me => "ME".to_string(),
        p if p == sh => "SH".into(),
        p if p == child => "CHILD".into(),
        p if p == grandchild => "GRANDCHILD".into(),
        _ => "TID".into(),
    };
    // the main thread is one of the grandchild's 4 thread lines
    let threads: Vec<u32> = (i_gc + 1..rows.len()).map(|i| rows[i].id).collect();
    assert_eq!(threads.len(), 4);
    assert!(threads.contains(&grandchild), "{threads:?}");
    let mut out = Vec::new();
    for (k, i) in (i_me..rows.len()).enumerate() {
        let l = screen_lines[head + 1 + i];
        let drawn: String = l.chars().skip(name_at).take(thr_at - name_at).collect();
        // the name follows its indent; a line deeper than the column
        // allows keeps the indent and cuts the name (…), so how much of it
        // shows depends on how deep this test was started
        let name: String = rows[i].comm.chars().take(5).collect();
        assert!(drawn.contains(&name), "{l}");
        // the tree's lines below this test's own (whose depth depends on
        // how the test was started)
        let prefix: String = lines[i].prefix.chars().skip(depth(i_me)).collect();
        let comm = if k == 0 { "<test>" } else { &*rows[i].comm };
        let figures: String = l.chars().skip(thr_at).collect();
        let blank = figures.trim().is_empty();
        out.push(format!(
            "{:>10} {} {prefix}{comm} {}",
            match rows[i].key {
                // the threads' order is their sort order, which moves
                RowKey::Thread { .. } => "thread".to_string(),
                _ if k == 0 => role(me),
                _ => role(rows[i].id),
            },
            if lines[i].dim { "dim" } else { "   " },
            if blank { "(no figures)" } else { "(figures)" }
        ));
    }
    out.join("\n")
}

#[test]
fn p_grandchild_keeps_its_ancestors_dimmed() {
    let _g = common::serial();
    let Some(f) = Family::start("") else { return };
    let (child, gc) = wait_for_grandchild(&f);
    let mut src = open(vec![gc], ThreadFilter::default());
    let app = tree_of(&mut src);
    let me = common::getpid();
    let lines = check_tree(&app, me, f.0.id(), child, gc);
    insta::assert_snapshot!("tree_ancestors_p_grandchild", lines);
}

/// `schedtop record -p <grandchild>` and the recording replayed: every
/// Sample names the processes /proc shows above the grandchild, and the
/// replay draws the tree the live view draws (the same snapshot).
#[test]
fn a_recording_under_p_replays_the_same_tree() {
    let _g = common::serial();
    let Some(f) = Family::start("") else { return };
    let (child, gc) = wait_for_grandchild(&f);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.schedtop");
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(["record", "-i", "0.5", "--duration", "2s", "-p"])
        .arg(gc.to_string())
        .arg("-o")
        .arg(&file)
        .process_group(0)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // the chain as /proc shows it, from the grandchild's parent to pid 1
    let mut want = Vec::new();
    let mut pid = child;
    while pid != 0 {
        let (comm, ppid) = stat(pid).unwrap();
        want.push((pid, ppid, comm));
        pid = ppid;
    }
    want.sort();
    assert!(want.len() >= 4, "{want:?}");
    let mut r = Reader::open(&file).unwrap();
    assert!(r.len() >= 3, "{} Samples", r.len());
    for i in 0..r.len() {
        let s = r.sample(i).unwrap();
        let got: Vec<(u32, u32, String)> = s
            .ancestors
            .iter()
            .map(|a| (a.pid, a.ppid, a.comm.to_string()))
            .collect();
        assert_eq!(got, want, "Sample {i}");
    }
    let last = r.len() - 1;
    let mut replay = Session::replay_at(Replay::open(&file).unwrap(), last, false);
    replay.apply(Action::Resize(160, 40));
    // in a replay `t` steps; F5 is the tree
    press(&mut replay, KeyCode::F(5));
    assert!(replay.tree_shown());
    let lines = check_tree(&replay, common::getpid(), f.0.id(), child, gc);
    insta::assert_snapshot!("tree_ancestors_p_grandchild", lines);
}

#[test]
fn u_nobody_keeps_roots_shells_dimmed() {
    let _g = common::serial();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return common::skip::skip("starting a workload as nobody needs root");
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        return common::skip::skip("setpriv is not installed");
    }
    let Some(f) = Family::start("setpriv --reuid=nobody --regid=nogroup --clear-groups --") else {
        return;
    };
    let (child, gc) = wait_for_grandchild(&f);
    let mut src = open(
        vec![],
        ThreadFilter::parse(&["nobody".into()], None).unwrap(),
    );
    let app = tree_of(&mut src);
    let me = common::getpid();
    let lines = check_tree(&app, me, f.0.id(), child, gc);
    insta::assert_snapshot!("tree_ancestors_u_nobody", lines);
}

/// The line of the screen whose first word is `pid`.
fn line_of(screen: &str, pid: u32) -> &str {
    let id = pid.to_string();
    screen
        .lines()
        .find(|l| l.split_whitespace().next() == Some(id.as_str()))
        .unwrap_or_else(|| panic!("no line for {pid}:\n{screen}"))
}

#[test]
fn the_binary_under_u_nobody_names_the_filter_and_draws_the_ancestors() {
    let _g = common::serial();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return common::skip::skip("starting a workload as nobody needs root");
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        return common::skip::skip("setpriv is not installed");
    }
    if !have_tmux() {
        return;
    }
    let Some(f) = Family::start("setpriv --reuid=nobody --regid=nogroup --clear-groups --") else {
        return;
    };
    let (child, gc) = wait_for_grandchild(&f);
    let tmux = Tmux::start("tree-ancestors", 160, 40, None);
    tmux.run_schedtop("--no-config -u nobody -i 0.5");
    tmux.send(&["t"]);
    let s = tmux.wait_for("the tree with the workload's threads", 20, |s| {
        s.contains("Process tree") && s.matches("tree_load").count() >= 5
    });
    assert!(s.contains("only: user nobody"), "{s}");
    // the grandchild measured (4 threads), its shells listed without figures
    let g = line_of(&s, gc);
    assert!(g.contains("tree_load"), "{g}");
    let words: Vec<&str> = g.split_whitespace().collect();
    let name = words.iter().position(|w| *w == "tree_load").unwrap();
    assert_eq!(
        words.get(name + 1),
        Some(&"4"),
        "THR of the grandchild: {g}"
    );
    for (pid, name) in [(child, "sh"), (f.0.id(), "sh")] {
        let l = line_of(&s, pid);
        assert_eq!(l.split_whitespace().last(), Some(name), "{l}");
    }
    // the child shell's line is above the grandchild's, and nothing root
    // runs is measured: every line with figures is the grandchild's
    let at = |pid: u32| s.lines().position(|l| l == line_of(&s, pid)).unwrap();
    assert!(at(child) < at(gc));
    tmux.send(&["q"]);
    tmux.assert_restored("0");
}
