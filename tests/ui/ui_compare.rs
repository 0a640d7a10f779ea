//! The comparison screens (`schedtop diff BEFORE AFTER` on a terminal, and
//! `snapshot --diff`) on the compare fixture (ui/fixtures/compare.rs): four
//! spinners pinned to one CPU in BEFORE's 10 s, spread over two in
//! AFTER's 30 s (other pids), a database that stopped crossing nodes, a
//! backup only before and a stress job only after. The figures the
//! screens must show are computed here from the fixture's Samples.
use std::path::{Path, PathBuf};
use std::process::Command;

use ratatui::crossterm::event::KeyCode;
use schedtop::model::compare::compare;
use schedtop::model::physics::check_all;
use schedtop::model::{Log2Hist, Sample};
use schedtop::record::{WriteOptions, Writer};
use schedtop::ui::compare_ui::{self, comparing};
use schedtop::ui::feed::NoFeed;
use schedtop::ui::fixtures;
use schedtop::ui::{AppState, Session, View};

use crate::common;
use common::ui_kit::{press, press_char, run_script, screen, Step};

use crate::svg_grid;
use svg_grid::svg_screen;

fn app(w: u16, h: u16) -> AppState {
    let (b, a) = fixtures::compare_windows();
    let all = compare(&b, &a, &[]).unwrap();
    let mut app = comparing(&b, &a, all);
    schedtop::ui::layout::apply(&mut app, schedtop::ui::action::Action::Resize(w, h));
    app
}

/// The merged wait histogram of every `comm` thread between a side's
/// first and last Sample (counters are cumulative from zero).
fn waits(samples: &[Sample], comm: &str) -> Log2Hist {
    let last = samples.last().unwrap();
    let mut h = Log2Hist::new();
    for t in last.threads.iter().filter(|t| &*t.comm == comm) {
        h.merge(t.wait_hist.as_ref().unwrap());
    }
    h
}

/// The first line that starts with `what`, else the first holding it.
fn line_of<'a>(screen: &'a str, what: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.starts_with(what))
        .or_else(|| screen.lines().find(|l| l.contains(what)))
        .unwrap_or_else(|| panic!("no line with {what:?} in\n{screen}"))
}

#[test]
fn the_fixture_obeys_physics() {
    let (b, a) = fixtures::compare_samples();
    for (name, s) in [("before", &b), ("after", &a)] {
        let v = check_all(s);
        assert!(v.is_empty(), "{name}:\n{}", v.join("\n"));
    }
}

#[test]
fn processes_table_shows_after_with_the_change_largest_first() {
    let app = app(160, 30);
    assert_eq!(app.view, View::Processes);
    let s = screen(&app, 160, 30);
    // the spinners: p99 wait from each side's own Samples; per process
    // each spinner's own (one thread each)
    let (sb, sa) = fixtures::compare_samples();
    let p99 = |s: &[Sample]| {
        let last = s.last().unwrap();
        let t = last.threads.iter().find(|t| &*t.comm == "spin").unwrap();
        t.wait_hist.as_ref().unwrap().quantile_us(0.99).unwrap()
    };
    let (b99, a99) = (p99(&sb), p99(&sa));
    assert!(b99 > 2 * a99, "{b99} {a99}");
    let spin = line_of(&s, "spin ");
    let fmt = schedtop::ui::format::duration_us;
    assert!(spin.contains(&fmt(a99)), "{spin}");
    assert!(
        spin.contains(&format!("-{}", fmt(b99 - a99))),
        "{spin}: the change of p99 wait"
    );
    // 245 ms/s of CPU before, 490 after: +100 %
    assert!(spin.contains("+100%"), "{spin}");
    // one side only: marked
    assert!(line_of(&s, "backup ").contains("only before"));
    assert!(line_of(&s, "stress ").contains("only after"));
    // largest change first, weighted by CPU: stress (new, 120 % of a
    // CPU), then the spinners (-69 % p99 wait at 49 %), postgres last
    // (only its cross-node moves changed, at 15 %)
    let body: Vec<&str> = s.lines().skip_while(|l| !l.starts_with("NAME")).collect();
    assert!(body[1].starts_with("stress"), "{}", body[1]);
    assert!(body[2].starts_with("spin"), "{}", body[2]);
    assert!(body[7].starts_with("postgres"), "{}", body[7]);
    // the header: both sides, the summary line
    assert!(s.contains("BEFORE before.schedtop (10.0 s)"), "{s}");
    assert!(s.contains("AFTER after.schedtop (30.0 s)"), "{s}");
    // the spinners' service's median wait, from the Samples
    let p50 = |s: &[Sample]| waits(s, "spin").quantile_us(0.5).unwrap();
    let (b50, a50) = (p50(&sb), p50(&sa));
    let better = line_of(&s, "better:");
    assert!(
        better.contains(&format!("spin.service P50WAIT -{}", fmt(b50 - a50))),
        "{better} {b50} {a50}"
    );
    // first the spinners' service: 2 of 10 periods throttled a second,
    // 100 ms each, before; never after
    assert!(
        better.starts_with("better: /system.slice/spin.service THROTms/s -200.0 (-100%)"),
        "{better}"
    );
    assert!(line_of(&s, "worse:").contains("none"));
    // each side's findings: the quota held the spinners before (2 of 10
    // periods, 200 ms/s over 10 s), nothing after
    let f = line_of(&s, "findings before:");
    assert!(f.contains("cpu_quota cgroup spin.service"), "{f}");
    assert!(
        f.contains("throttled in 20% of its periods (2.00 s throttled"),
        "{f}"
    );
    assert!(line_of(&s, "findings after:")
        .trim_end()
        .ends_with("no finding"));
    // postgres crossed nodes 40 + 10 times a second, now 2
    let pg = line_of(&s, "postgres ");
    assert!(line_of(&s, "NAME").contains("XNODE/s"));
    assert!(pg.ends_with(" 2.0     -48  -96%"), "{pg}");
    // colours: a shorter wait and fewer cross-node moves are better
    // (green), more CPU is neither
    let buf = schedtop::ui::render::render_to_buffer(&app, 160, 30);
    let style_of = |line: &str, text: &str| {
        let y = s.lines().position(|l| l == line).unwrap() as u16;
        let x = line.find(text).unwrap() as u16;
        buf[(x + 1, y)].fg
    };
    use ratatui::style::Color;
    assert_eq!(
        style_of(spin, &format!("-{}", fmt(b99 - a99))),
        Color::Green
    );
    assert_eq!(style_of(pg, "-48"), Color::Green);
    assert_eq!(style_of(spin, "+24.5"), Color::Reset);
    insta::assert_snapshot!("compare_processes", s);
}

#[test]
fn histogram_overlay_shows_both_sides_as_rates() {
    let mut app = app(160, 50);
    // the top row is stress (only after, the most CPU): the next a spinner
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert!(app.detail);
    let s = screen(&app, 160, 50);
    let c = app.compare.as_deref().unwrap();
    let sel = compare_ui::selected(&app, c).unwrap();
    assert_eq!(compare_ui::name(sel), "spin");
    // the first spinner's waits: per second of each window
    let (sb, sa) = fixtures::compare_samples();
    let (hb, ha) = (waits(&sb[..], "spin"), waits(&sa[..], "spin"));
    // four spinners on each side: the process is one of them
    let q = |h: &Log2Hist, p| schedtop::ui::format::duration_us(h.quantile_us(p).unwrap());
    let wait_title = line_of(&s, "run-queue latency (us), events/s");
    assert!(!wait_title.is_empty());
    // the slice block's quantiles, then the wait block's, on one line
    let quant = line_of(&s, "before p50");
    let quant = &quant[quant.rfind("before p50").unwrap()..];
    assert!(
        quant.contains(&format!("before p50 {} p99 {}", q(&hb, 0.5), q(&hb, 0.99))),
        "{quant}"
    );
    assert!(
        quant.contains(&format!("after p50 {} p99 {}", q(&ha, 0.5), q(&ha, 0.99))),
        "{quant}"
    );
    // 60 preemptions a second before, 120 after: the densest bucket holds
    // half of each (spread_at: 50 % at the centre)
    assert!(s.contains(" 30 |"), "{s}");
    assert!(s.contains(" 60 |"), "{s}");
    insta::assert_snapshot!("compare_hist_overlay", s);
}

#[test]
fn cpu_and_numa_views_show_both_sides_and_the_change_in_flows() {
    let mut app = app(160, 40);
    press_char(&mut app, 'n');
    assert_eq!(app.view, View::Numa);
    let s = screen(&app, 160, 40);
    // postgres (cpu 2 and 3) crossed 40 + 10 a second before, 2 after;
    // the flows from node 1 to node 0
    let n1 = s
        .lines()
        .find(|l| l.starts_with("n1"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(n1.contains("50") && n1.contains("-48"), "{n1}");
    assert!(s.contains("cross-node/s 50 -> 2.0"), "{s}");
    press_char(&mut app, 'c');
    let s = screen(&app, 160, 40);
    // CPU 0: four spinners of 245 ms/s plus 10 ms/s of the kernel's own
    assert!(line_of(&s, "cpu0").contains("99.0    99.0"), "{s}");
    // CPU 1: 40 ms/s of backup-io before, two spinners after
    assert!(line_of(&s, "cpu1").contains("5.0    99.0   +94.0"), "{s}");
    press_char(&mut app, 'y');
    let s = screen(&app, 160, 40);
    assert!(s.contains("before:") && s.contains("after:"), "{s}");
}

#[test]
fn scripted_session_sorts_and_opens_the_detail_pane() {
    let app = app(160, 45);
    let host = app.host.clone();
    let mut session = Session::live(app);
    let mut feed = NoFeed::new(host);
    // '>' sorts by the first figure on screen (CPU%), Enter opens the
    // overlay on the top row, 'H' goes to the threads
    let mut steps = vec![Step::Key(KeyCode::Char('>')), Step::Frame];
    steps.push(Step::Key(KeyCode::Enter));
    steps.push(Step::Frame);
    let s = run_script(&mut session, &mut feed, steps, 160, 45);
    let c = session.compare.as_deref().unwrap();
    assert_eq!(c.sort, Some("cpu_pct"));
    assert!(session.detail);
    assert!(s.contains("sort: CPU%"), "{s}");
    // the largest CPU% change: stress appeared with 120 % (two threads of
    // 600 ms/s)
    let sel = compare_ui::selected(&session, c).unwrap();
    assert_eq!(compare_ui::name(sel), "stress");
    assert!(s.contains("process stress (only after)"), "{s}");
    let s = run_script(
        &mut session,
        &mut feed,
        vec![Step::Key(KeyCode::Char('H'))],
        160,
        45,
    );
    assert_eq!(session.view, View::Threads);
    assert!(s.contains("postgres/pg-wal"), "{s}");
}

fn recording(dir: &Path, name: &str, samples: &[Sample]) -> PathBuf {
    let path = dir.join(name);
    let host = fixtures::host(schedtop::model::SourceKind::Bpf);
    let mut w = Writer::open(&path, &host, WriteOptions::default()).unwrap();
    for s in samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    path
}

#[test]
fn snapshot_diff_renders_the_comparison_as_svg() {
    let dir = tempfile::tempdir().unwrap();
    let (sb, sa) = fixtures::compare_samples();
    let b = recording(dir.path(), "before.schedtop", &sb);
    let a = recording(dir.path(), "after.schedtop", &sa);
    let out = dir.path().join("diff.svg");
    let o = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(["snapshot", "--diff"])
        .args([&b, &a])
        .args(["--view", "processes", "--size", "160x30", "-o"])
        .arg(&out)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    let lines = svg_screen(&svg);
    assert_eq!(lines.len(), 30);
    // the screen the state renders from the same windows
    let mut app = app(160, 30);
    schedtop::ui::layout::apply(&mut app, schedtop::ui::action::Action::Resize(160, 30));
    let want = screen(&app, 160, 30);
    let want: Vec<&str> = want.lines().map(str::trim_end).collect();
    let paths = |l: &str| {
        l.replace(b.to_str().unwrap(), "before.schedtop")
            .replace(a.to_str().unwrap(), "after.schedtop")
    };
    let got: Vec<String> = lines.iter().map(|l| paths(l)).collect();
    assert_eq!(
        got[1..],
        want[1..].iter().map(|s| s.to_string()).collect::<Vec<_>>()[..]
    );
    assert!(got.iter().any(|l| l.contains("only after")));
}

#[test]
fn screenshot_key_saves_the_comparison_screen() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(160, 30);
    let shots = schedtop::ui::screenshot_key::ScreenshotConfig {
        formats: vec![schedtop::export::screenshot::Format::Txt],
        dir: dir.path().to_path_buf(),
    };
    let effect = press_char(&mut app, 's');
    assert_eq!(effect, schedtop::ui::action::Effect::Screenshot);
    let saved = schedtop::ui::screenshot_key::take(&mut app, &shots, std::time::SystemTime::now());
    assert_eq!(saved.len(), 1);
    let txt = std::fs::read_to_string(&saved[0]).unwrap();
    assert!(
        txt.contains("schedtop diff") && txt.contains("only before"),
        "{txt}"
    );
}

#[test]
fn a_live_side_is_named_in_the_header() {
    let (b, mut a) = fixtures::compare_windows();
    a.live = true;
    a.label = "-".into();
    let all = compare(&b, &a, &[]).unwrap();
    let mut app = comparing(&b, &a, all);
    schedtop::ui::layout::apply(&mut app, schedtop::ui::action::Action::Resize(160, 30));
    let s = screen(&app, 160, 30);
    let head = line_of(&s, "schedtop diff");
    assert!(
        head.contains(
            "BEFORE before.schedtop (10.0 s)  ->  AFTER this machine now (live) (30.0 s)"
        ),
        "{head}"
    );
    // keys a still comparison has no use for do nothing
    press_char(&mut app, ' ');
    assert!(!app.paused);
}

#[test]
fn every_view_draws_at_every_size_within_the_screen() {
    for (w, h) in [(40, 8), (60, 12), (80, 24), (120, 30), (220, 60)] {
        let mut app = app(w, h);
        for keys in ["", "\n", "H", "H\n", "g", "c", "n", "y", "?"] {
            for k in keys.chars() {
                if k == '\n' {
                    press(&mut app, KeyCode::Enter);
                } else {
                    press_char(&mut app, k);
                }
            }
            for k in [KeyCode::End, KeyCode::PageDown, KeyCode::Up] {
                press(&mut app, k);
            }
            let s = screen(&app, w, h);
            assert_eq!(s.lines().count(), usize::from(h));
            assert!(s.lines().all(|l| l.chars().count() == usize::from(w)));
            // back to the processes table for the next keys
            press(&mut app, KeyCode::Esc);
            press(&mut app, KeyCode::Esc);
            if app.view == View::Threads {
                press_char(&mut app, 'H');
            }
        }
    }
}

#[test]
fn cgroups_table_compares_throttling() {
    let mut app = app(160, 30);
    press_char(&mut app, 'g');
    assert_eq!(app.view, View::Cgroups);
    let s = screen(&app, 160, 30);
    // 2 of 10 periods throttled a second, 100 ms each: 200 ms/s before,
    // none after (quota one CPU, then two)
    // the path keeps its end
    let spin = line_of(&s, "…ice/spin.service");
    assert!(spin.contains("0.0  -200.0 -100%"), "{spin}\n{s}");
    let buf = schedtop::ui::render::render_to_buffer(&app, 160, 30);
    let y = s.lines().position(|l| l == spin).unwrap() as u16;
    let x = spin.find("-200.0").unwrap() as u16;
    assert_eq!(buf[(x + 1, y)].fg, ratatui::style::Color::Green);
    // postgres's service: the same CPU
    let pg = line_of(&s, "…postgres.service");
    assert!(pg.contains("15.0       0"), "{pg}");
}
