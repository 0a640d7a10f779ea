//! The whole event loop on ratatui's TestBackend: Samples in through a feed,
//! keys in through a scripted event source, screens out. No terminal needed;
//! what only a real terminal shows (resize, signals, restore) stays in the
//! tmux tests.
use crate::common;

use common::ui_kit::{keys, run_script, ScriptedFeed, Step};
use ratatui::crossterm::event::KeyCode;

use schedtop::model::SourceKind;
use schedtop::ui::feed::NoFeed;
use schedtop::ui::{fixtures, AppState, Mode, Session};

/// Run the loop on `session` fed the fixture Samples (or nothing), play
/// `steps`, draw a last frame and quit: the screen it left.
fn run(mut session: Session, feed_samples: bool, steps: Vec<Step>, w: u16, h: u16) -> String {
    let host = session.host.clone();
    if feed_samples {
        let samples = fixtures::samples(host.source);
        run_script(
            &mut session,
            &mut ScriptedFeed::all_at_once(host, samples),
            steps,
            w,
            h,
        )
    } else {
        run_script(&mut session, &mut NoFeed::new(host), steps, w, h)
    }
}

fn live() -> Session {
    Session::live(AppState::new(fixtures::host(SourceKind::Bpf), Mode::Live))
}

#[test]
fn samples_in_screen_out() {
    let s = run(live(), true, vec![], 120, 30);
    insta::assert_snapshot!("loop_threads_120x30", s);
    // the newest fixture Sample's rates (the feed went through the state)
    assert!(s.contains("ffmpeg:enc0"), "{s}");
    assert!(s.contains("sort NVCSW/s"), "{s}");
}

#[test]
fn keys_move_through_views() {
    // processes, then the detail pane of the second row
    let mut steps = keys("H");
    steps.push(Step::Frame);
    steps.push(Step::Key(KeyCode::Down));
    steps.push(Step::Key(KeyCode::Enter));
    let s = run(live(), true, steps, 120, 30);
    insta::assert_snapshot!("loop_processes_detail_120x30", s);
    assert!(s.contains("Processes"), "{s}");
    assert!(s.contains("THR"), "{s}");

    // the CPU view and back: the table as it was
    let mut steps = keys("c");
    steps.push(Step::Frame);
    steps.push(Step::Key(KeyCode::Esc));
    let back = run(live(), true, steps, 120, 30);
    assert_eq!(back, run(live(), true, vec![], 120, 30));
}

#[test]
fn a_filter_typed_in_the_loop() {
    let mut steps = keys("/pg");
    steps.push(Step::Key(KeyCode::Enter));
    let s = run(live(), true, steps, 100, 20);
    insta::assert_snapshot!("loop_filter_pg_100x20", s);
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("812")).collect();
    assert!(!rows.is_empty() && s.contains("pg-worker"), "{s}");
    assert!(!s.contains("ffmpeg"), "{s}");
}

#[test]
fn replay_steps_through_its_recording_in_the_loop() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1.schedtop");
    let rp = schedtop::ui::replay::Replay::open(&path).unwrap();
    let session = schedtop::ui::Session::replay_at(rp, 5, false);
    let s = run(session, false, keys("tt"), 120, 30);
    insta::assert_snapshot!("loop_replay_v1_step2_120x30", s);
    // paused at Sample 5, two steps: the 8th of 14
    assert!(s.contains("sample 8/14"), "{s}");
    assert!(s.contains("PAUSE"), "{s}");
}

/// The status line's message goes after `status::SHOWN_FOR` (6 s) on the
/// loop's clock: the script's, where a frame is one loop turn with no
/// input, lasting the loop's own timeout (50-100 ms) but at least 60 ms.
#[test]
fn a_status_message_goes_after_six_seconds_of_frames() {
    use common::ui_kit::{frames, ScriptedFeed};
    use schedtop::ui::feed::FeedEvent;
    let screen_after = |n: usize| {
        let mut session = live();
        let host = session.host.clone();
        let mut first: Vec<FeedEvent> = fixtures::samples(host.source)
            .into_iter()
            .map(|s| FeedEvent::Sample(s.into()))
            .collect();
        first.push(FeedEvent::Status("bundle written to /x".into(), false));
        let mut feed = ScriptedFeed::events_per_turn(host, vec![first]);
        run_script(&mut session, &mut feed, frames(n), 120, 30)
    };
    assert_eq!(schedtop::ui::status::SHOWN_FOR.as_secs(), 6);
    // 50 frames: at most 5 s
    let s = screen_after(50);
    assert!(s.contains("bundle written to /x"), "{s}");
    // 110 frames: at least 6.6 s
    let s = screen_after(110);
    assert!(!s.contains("bundle written to /x"), "{s}");
}
