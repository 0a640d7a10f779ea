//! Replay mode on the app state: the timeline in the header, the keys
//! (space, t/T, j, x/+/-, Home/End), playback on a given clock, and that a
//! replayed moment shows exactly the rows live showed for it.
use std::path::{Path, PathBuf};

use crate::common;
use common::hand_samples;
// keys as the terminal sends them (Shift on upper-case letters), screens as text
use common::ui_kit::{press as key, screen, typed};

use ratatui::crossterm::event::KeyCode;

use schedtop::model::{Sample, ThreadSample};
use schedtop::record::Reader;
use schedtop::ui::action::Effect;
use schedtop::ui::replay::{Replay, MAX_GAP_NS};
use schedtop::ui::{AppState, Mode, Session};

const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(name)
}

fn v1() -> PathBuf {
    fixture("tests/fixtures/v1.schedtop")
}

fn demo() -> PathBuf {
    fixture("assets/demo.schedtop")
}

/// A replay of `path` at Sample `i`, paused, at `w` x `h`.
fn at(path: &Path, i: usize, w: u16, h: u16) -> Session {
    let mut app = Session::replay_at(Replay::open(path).unwrap(), i, false);
    app.apply(schedtop::ui::action::Action::Resize(w, h));
    app
}

fn index(app: &AppState) -> usize {
    app.replay.as_ref().unwrap().index.unwrap()
}

fn status(app: &AppState) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

#[test]
fn timeline_snapshots_of_the_fixture_recording() {
    for (w, h) in SIZES {
        // Sample 5 of 14: 23:00:05 UTC, the first segment
        let app = at(&v1(), 5, w, h);
        let s = screen(&app, w, h);
        insta::assert_snapshot!(format!("v1_at_5_paused_{w}x{h}"), s);
        assert!(s.contains("source replay"), "{s}");
        assert!(s.contains("PAUSE"), "{s}");
        assert!(s.contains("x1"), "{s}");
        assert!(s.contains("2026-11-21 23:00:00"), "start: {s}");
        assert!(s.contains("sample 6/14"), "{s}");
        assert!(s.contains("at 23:00:05 UTC"), "{s}");
        assert!(s.contains('●'), "cursor on the bar: {s}");
        assert!(s.contains("worker-4"), "the threads table: {s}");
        assert!(s.lines().all(|l| l.chars().count() == usize::from(w)));
    }
}

#[test]
fn timeline_snapshots_of_the_demo_recording_playing() {
    for (w, h) in SIZES {
        let mut app = at(&demo(), 0, w, h);
        // jump to 15 s after the start, play at x10
        key(&mut app, KeyCode::Char('j'));
        typed(&mut app, "+15s");
        key(&mut app, KeyCode::Enter);
        key(&mut app, KeyCode::Char('x'));
        key(&mut app, KeyCode::Char(' '));
        let r = app.replay.as_ref().unwrap();
        assert!(r.playing);
        assert_eq!(r.speed, 10.0);
        let s = screen(&app, w, h);
        insta::assert_snapshot!(format!("demo_plus15s_playing_{w}x{h}"), s);
        assert!(s.contains("PLAY"), "{s}");
        assert!(s.contains("x10"), "{s}");
        assert!(s.contains("+15s of"), "{s}");
        assert!(s.contains("spin"), "the demo's spinners: {s}");
    }
}

#[test]
fn jump_prompt_is_shown_on_the_bottom_line() {
    let mut app = at(&v1(), 3, 80, 24);
    key(&mut app, KeyCode::Char('j'));
    typed(&mut app, "23:00:07");
    let s = screen(&app, 80, 24);
    let last = s.lines().last().unwrap();
    assert!(last.starts_with("Jump to: 23:00:07_"), "{last}");
    insta::assert_snapshot!("v1_jump_prompt_80x24", s);
}

#[test]
fn step_keys_move_one_sample_and_pause() {
    let mut app = at(&v1(), 2, 120, 40);
    key(&mut app, KeyCode::Char(' '));
    assert!(app.replay.as_ref().unwrap().playing);
    key(&mut app, KeyCode::Char('t'));
    assert_eq!(index(&app), 3);
    assert!(!app.replay.as_ref().unwrap().playing, "stepping pauses");
    key(&mut app, KeyCode::Char('t'));
    key(&mut app, KeyCode::Char('t'));
    assert_eq!(index(&app), 5);
    key(&mut app, KeyCode::Char('T'));
    assert_eq!(index(&app), 4);
    let mut r = Reader::open(&v1()).unwrap();
    assert_eq!(app.current(), Some(&r.sample(4).unwrap()));
    // at the ends: a message, no move
    key(&mut app, KeyCode::Home);
    assert_eq!(index(&app), 0);
    key(&mut app, KeyCode::Char('T'));
    assert_eq!(index(&app), 0);
    assert_eq!(status(&app), "start of the recording");
    key(&mut app, KeyCode::End);
    assert_eq!(index(&app), 13);
    assert_eq!(app.current(), Some(&r.sample(13).unwrap()));
    key(&mut app, KeyCode::Char('t'));
    assert_eq!(index(&app), 13);
    assert_eq!(status(&app), "end of the recording");
}

#[test]
fn arrows_still_move_the_selection_in_a_replay() {
    let mut app = at(&v1(), 5, 120, 40);
    assert_eq!(app.selected, 0);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    assert_eq!(app.selected, 2);
    key(&mut app, KeyCode::PageDown);
    assert!(app.selected > 2);
    assert_eq!(index(&app), 5, "arrows do not move the cursor");
}

#[test]
fn speed_keys() {
    let mut app = at(&v1(), 0, 120, 40);
    let speed = |a: &AppState| a.replay.as_ref().unwrap().speed;
    assert_eq!(speed(&app), 1.0);
    key(&mut app, KeyCode::Char('x'));
    assert_eq!(speed(&app), 10.0);
    key(&mut app, KeyCode::Char('x'));
    assert_eq!(speed(&app), 100.0);
    key(&mut app, KeyCode::Char('x'));
    assert_eq!(speed(&app), 1.0);
    key(&mut app, KeyCode::Char('+'));
    key(&mut app, KeyCode::Char('+'));
    key(&mut app, KeyCode::Char('+'));
    assert_eq!(speed(&app), 100.0);
    assert_eq!(
        key(&mut app, KeyCode::Char('-')),
        Effect::None,
        "- is speed in a replay, not the live interval"
    );
    assert_eq!(speed(&app), 10.0);
    let before = app.interval_ns;
    key(&mut app, KeyCode::Char('-'));
    key(&mut app, KeyCode::Char('-'));
    assert_eq!(speed(&app), 1.0);
    assert_eq!(app.interval_ns, before);
}

#[test]
fn jump_accepts_clock_absolute_relative_and_offset_times() {
    let mut r = Reader::open(&v1()).unwrap();
    let mut app = at(&v1(), 0, 120, 40);
    let jump = |app: &mut Session, t: &str| {
        key(app, KeyCode::Char('j'));
        typed(app, t);
        key(app, KeyCode::Enter);
    };
    // the Sample whose interval holds the moment: first at or after it
    jump(&mut app, "23:00:05Z");
    let t5 = r.time_of(5).unwrap();
    assert!(r.time_of(4).unwrap() < 1_795_302_005_000_000_000 && t5 >= 1_795_302_005_000_000_000);
    assert_eq!(index(&app), 5, "{}", status(&app));
    jump(&mut app, "2026-11-21T23:00:02Z");
    assert_eq!(index(&app), 2);
    jump(&mut app, "+7s");
    assert_eq!(
        index(&app),
        r.index_from_time(r.first_time().unwrap() + 7_000_000_000)
            .unwrap()
    );
    jump(&mut app, "-0s");
    assert_eq!(index(&app), 13);
    jump(&mut app, "23:00:00Z");
    assert_eq!(index(&app), 0);
    assert_eq!(app.current(), Some(&r.sample(0).unwrap()));
    assert!(app.status.is_none(), "{}", status(&app));
}

#[test]
fn a_bad_jump_says_so_and_changes_nothing() {
    let mut app = at(&v1(), 4, 120, 40);
    let before_rows = app.rows().to_vec();
    for bad in ["yesterday", "25:00", "+1h", "2026-11-20T00:00:00Z", "-3x"] {
        key(&mut app, KeyCode::Char('j'));
        typed(&mut app, bad);
        key(&mut app, KeyCode::Enter);
        let st = app.status.clone().expect("an error on the status line");
        assert!(st.error, "{bad}: {st:?}");
        assert!(!st.text.contains('\n'), "one line: {}", st.text);
        assert_eq!(index(&app), 4, "{bad} moved the cursor");
        assert_eq!(app.rows().to_vec(), before_rows);
        assert!(app.replay.as_ref().unwrap().prompt.is_none());
        let s = screen(&app, 120, 40);
        let last = s.lines().last().unwrap();
        assert!(
            last.starts_with(st.text.chars().take(40).collect::<String>().as_str()),
            "{last}"
        );
    }
    // Esc leaves the prompt without moving; typed keys do not act
    key(&mut app, KeyCode::Char('j'));
    typed(&mut app, "q/tH");
    assert_eq!(app.replay.as_ref().unwrap().prompt.as_deref(), Some("q/tH"));
    key(&mut app, KeyCode::Backspace);
    assert_eq!(app.replay.as_ref().unwrap().prompt.as_deref(), Some("q/t"));
    assert_eq!(key(&mut app, KeyCode::Esc), Effect::None);
    assert!(app.replay.as_ref().unwrap().prompt.is_none());
    assert!(app.filter.is_empty());
    assert_eq!(index(&app), 4);
}

/// What live showed for Sample `i`: a live app fed the Samples in order.
fn live_rows(path: &Path, upto: usize, w: u16, h: u16) -> AppState {
    let mut r = Reader::open(path).unwrap();
    let mut app = AppState::new(r.host_of(upto).clone(), Mode::Live);
    schedtop::ui::layout::apply(&mut app, schedtop::ui::action::Action::Resize(w, h));
    let mut from = upto;
    while let Some(p) = r.prev_of(from) {
        from = p;
    }
    for j in from..=upto {
        app.push_sample(r.sample(j).unwrap());
    }
    app
}

/// A thread's rates over an interval, computed here from the Samples' raw
/// counters: as docs/metrics.md defines them (per second of the monotonic clock
/// between the Samples; a thread new in `cur`, or any thread of a
/// segment's first Sample, counts from its baseline over the nominal
/// interval, and has no rates without one), written again for the test.
fn rates_by_hand(
    prev: Option<&Sample>,
    cur: &Sample,
    nominal_s: f64,
    t: &ThreadSample,
) -> Option<(f64, f64, f64)> {
    let dt = prev.map_or(nominal_s, |p| (cur.mono_ns - p.mono_ns) as f64 / 1e9);
    let before = prev.and_then(|p| {
        p.threads
            .iter()
            .find(|p| p.tid == t.tid && p.start_time_ns == t.start_time_ns)
    });
    let (v, n, on) = match before {
        Some(p) => (p.voluntary, p.involuntary, p.oncpu_ns),
        None => {
            let b = t.baseline.as_deref()?;
            (b.voluntary, b.involuntary, b.oncpu_ns)
        }
    };
    let d = |now: u64, then: u64| now.saturating_sub(then) as f64;
    Some((
        d(t.voluntary, v) / dt,
        d(t.involuntary, n) / dt,
        d(t.oncpu_ns, on) / 1e9 / dt * 100.0,
    ))
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0))
}

/// The rows of `app` (at Sample `i` of `path`) against `rates_by_hand`;
/// the number of rows with rates.
fn check_rates(app: &AppState, prev: Option<&Sample>, cur: &Sample, what: &str) -> usize {
    assert_eq!(app.derived.threads.len(), cur.threads.len(), "{what}");
    let mut checked = 0;
    for t in cur.threads.iter() {
        let row = app
            .derived
            .threads
            .iter()
            .find(|r| r.id == t.tid && r.pid == t.pid)
            .unwrap_or_else(|| panic!("{what}: no row for {}", t.tid));
        let what = format!("{what} tid {}: {row:?}", t.tid);
        let nominal = app.interval_ns as f64 / 1e9;
        match rates_by_hand(prev, cur, nominal, t) {
            Some((v, n, cpu)) => {
                assert!(close(row.vcsw_s.get(), v), "vcsw {v}: {what}");
                assert!(close(row.nvcsw_s.get(), n), "nvcsw {n}: {what}");
                assert!(close(row.cpu_pct.get(), cpu), "cpu {cpu}: {what}");
                checked += 1;
            }
            None => assert!(row.vcsw_s.get().is_none(), "{what}"),
        }
    }
    checked
}

#[test]
fn replayed_rows_have_the_rates_of_the_recorded_pair() {
    for path in [v1(), demo()] {
        let mut r = Reader::open(&path).unwrap();
        let mut stepped = at(&path, 0, 200, 50);
        let mut checked = 0;
        for i in 1..r.len() {
            key(&mut stepped, KeyCode::Char('t'));
            assert_eq!(index(&stepped), i);
            // a segment's first Sample has no previous one
            let prev = r.prev_of(i).map(|p| r.sample(p).unwrap());
            let cur = r.sample(i).unwrap();
            let what = format!("{path:?} {i} stepped");
            checked += check_rates(&stepped, prev.as_ref(), &cur, &what);
            // jumped to, at every 5th (a jump loads the Samples before it
            // for the sparklines, and a live app is fed from the segment's
            // start: the whole recording each time is seconds)
            if i % 5 != 1 && i + 1 != r.len() && prev.is_some() {
                continue;
            }
            let app = at(&path, i, 200, 50);
            check_rates(&app, prev.as_ref(), &cur, &format!("{path:?} {i} jumped"));
            // and the same screen as a live app fed the same Samples
            let live = live_rows(&path, i, 200, 50);
            assert_eq!(app.rows().to_vec(), live.rows().to_vec(), "{path:?} {i}");
            assert_eq!(app.cpu, live.cpu, "{path:?} {i}");
        }
        assert!(checked >= 20, "{path:?}: {checked} rows checked");
    }
}

#[test]
fn a_replayed_moment_shows_the_figures_worked_out_by_hand() {
    // tests/common/hand_samples.rs derives each figure
    let dir = tempfile::tempdir().unwrap();
    let path = hand_samples::recording(dir.path());
    let app = at(&path, 1, 200, 50);
    let thread = |tid: u32| {
        app.derived
            .threads
            .iter()
            .find(|r| r.id == tid)
            .unwrap_or_else(|| panic!("no row for {tid}"))
    };
    let s = thread(100);
    assert!(close(s.vcsw_s.get(), 300.0), "{s:?}");
    assert!(close(s.nvcsw_s.get(), 20.0), "{s:?}");
    assert!(close(s.cpu_pct.get(), 75.0), "{s:?}");
    // 6 and 1 migrations in 2.0 s
    assert!(
        close(s.migr_s.get(), 3.0)
            && close(s.counter_per_s(&schedtop::model::counters::CROSS_NODE), 0.5),
        "{s:?}"
    );
    // 1.5 s on CPU over the 35 slices of the histogram's interval
    assert!(close(s.avg_slice_ns.get(), 1.5e9 / 35.0), "{s:?}");
    let w = thread(101);
    assert!(
        close(w.vcsw_s.get(), 10.0) && close(w.cpu_pct.get(), 10.0),
        "{w:?}"
    );
    assert!(close(thread(102).vcsw_s.get(), 4.0));
    assert!(
        thread(103).vcsw_s.get().is_none(),
        "a reused tid, no baseline"
    );
    let process = app
        .derived
        .processes
        .iter()
        .find(|r| r.id == 100)
        .expect("process 100");
    assert_eq!(process.threads, 2);
    assert!(close(process.vcsw_s.get(), 310.0), "{process:?}");
    assert!(close(process.nvcsw_s.get(), 21.0), "{process:?}");
    assert!(close(process.cpu_pct.get(), 85.0), "{process:?}");
    let system = app.system().unwrap();
    assert!(close(Some(system.interval_s), 2.0), "{system:?}");
    assert!(close(system.switches_s, 450.0), "{system:?}");
}

#[test]
fn stepping_forward_matches_live_including_sparklines() {
    let mut app = at(&v1(), 0, 200, 50);
    for _ in 0..8 {
        key(&mut app, KeyCode::Char('t'));
    }
    assert_eq!(index(&app), 8);
    let live = live_rows(&v1(), 8, 200, 50);
    assert_eq!(app.rows().to_vec(), live.rows().to_vec());
    assert_eq!(app.series, live.series);
    assert_eq!(app.first, live.first, "since start: the segment's first");
}

#[test]
fn a_new_segment_starts_without_rates() {
    let r = Reader::open(&v1()).unwrap();
    assert_eq!(r.prev_of(11), None, "Sample 11 starts the second segment");
    let mut app = at(&v1(), 10, 200, 50);
    assert_eq!(app.interval_ns, 1_000_000_000);
    key(&mut app, KeyCode::Char('t'));
    assert_eq!(index(&app), 11);
    assert_eq!(app.interval_ns, 2_000_000_000, "the segment's own host");
    assert!(app.system().unwrap().switches_s.is_none());
    // computed from Sample 11 alone, as live did when that recorder
    // started, not against Sample 10 of the other boot
    assert_eq!(
        app.rows().to_vec(),
        live_rows(&v1(), 11, 200, 50).rows().to_vec()
    );
    key(&mut app, KeyCode::Char('t'));
    assert!(app.rows().iter().any(|r| r.nvcsw_s.get().is_some()));
    key(&mut app, KeyCode::Char('T'));
    key(&mut app, KeyCode::Char('T'));
    assert_eq!(index(&app), 10);
    assert_eq!(app.interval_ns, 1_000_000_000);
    assert!(app.rows().iter().any(|r| r.nvcsw_s.get().is_some()));
}

#[test]
fn playback_follows_the_clock_at_each_speed() {
    let r = Reader::open(&v1()).unwrap();
    let gap = |i: usize| (r.time_of(i + 1).unwrap() - r.time_of(i).unwrap()).min(MAX_GAP_NS);
    let mut app = at(&v1(), 0, 120, 40);
    key(&mut app, KeyCode::Char(' '));
    let mut now = 1_000_000_000_000u64;
    // the first tick starts the clock
    assert!(!app.tick(now));
    assert!(!app.tick(now + gap(0) - 1_000));
    assert_eq!(index(&app), 0);
    now += gap(0);
    assert!(app.tick(now));
    assert_eq!(index(&app), 1);
    // x10: the next Sample after a tenth of the recorded gap
    key(&mut app, KeyCode::Char('x'));
    assert!(!app.tick(now));
    assert!(app.tick(now + gap(1) / 10 + 1));
    assert_eq!(index(&app), 2);
    // paused: time passes, nothing moves
    key(&mut app, KeyCode::Char(' '));
    assert!(!app.tick(now + 100 * MAX_GAP_NS));
    assert_eq!(index(&app), 2);
    // x100 to the end: stops there and says so
    key(&mut app, KeyCode::Char('x'));
    key(&mut app, KeyCode::Char(' '));
    app.tick(now);
    assert!(app.tick(now + 1000 * MAX_GAP_NS));
    assert_eq!(index(&app), 13);
    assert!(!app.replay.as_ref().unwrap().playing);
    assert_eq!(status(&app), "end of the recording");
    // play at the end starts over
    key(&mut app, KeyCode::Char(' '));
    assert_eq!(index(&app), 0);
}

#[test]
fn replay_needs_no_live_keys() {
    // R in a replay says what it is for; the interval keys do not reach a feed
    let mut app = at(&v1(), 3, 120, 40);
    key(&mut app, KeyCode::Char('R'));
    assert!(app.recording.is_none());
    assert!(status(&app).contains("live"), "{}", status(&app));
    assert_eq!(key(&mut app, KeyCode::Char('+')), Effect::None);
}

#[test]
fn damaged_and_hostile_inputs_do_not_panic() {
    // every truncation of the fixture that still opens replays and renders
    let bytes = std::fs::read(v1()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cut in (64..bytes.len()).step_by(997) {
        let p = dir.path().join(format!("cut{cut}.schedtop"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let Ok(rp) = Replay::open(&p) else { continue };
        let mut app = Session::replay_at(rp, usize::MAX, false);
        for k in [
            KeyCode::End,
            KeyCode::Char('T'),
            KeyCode::Home,
            KeyCode::Char('t'),
        ] {
            key(&mut app, k);
            let _ = screen(&app, 80, 24);
        }
        key(&mut app, KeyCode::Char('j'));
        typed(&mut app, "\u{1b}[2J-99999999999d");
        key(&mut app, KeyCode::Enter);
        let _ = screen(&app, 40, 8);
        let _ = screen(&app, 10, 3);
    }
}
