//! The whole event loop on ratatui's TestBackend: Samples in through a feed,
//! keys in through a scripted event source, screens out. No terminal needed;
//! what only a real terminal shows (resize, signals, restore) stays in the
//! tmux tests.
use std::collections::VecDeque;
use std::io;
use std::time::Duration;

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

use schedtop::model::{HostInfo, SourceKind};
use schedtop::ui::feed::{Feed, FeedEvent};
use schedtop::ui::render::buffer_text;
use schedtop::ui::run::{run_loop, EventSource};
use schedtop::ui::screenshot_key::ScreenshotConfig;
use schedtop::ui::{fixtures, AppState, Mode, Session};

enum Step {
    Key(KeyCode),
    /// no input for a frame: the loop draws what the keys did
    Frame,
}

struct Script(VecDeque<Step>);

impl EventSource for Script {
    fn poll(&mut self, timeout: Duration) -> io::Result<bool> {
        match self.0.front() {
            Some(Step::Frame) => {
                self.0.pop_front();
                std::thread::sleep(timeout.max(Duration::from_millis(60)));
                Ok(false)
            }
            _ => Ok(true),
        }
    }

    fn read(&mut self) -> io::Result<Event> {
        // an exhausted script quits, so a test cannot hang
        let code = match self.0.pop_front() {
            Some(Step::Key(c)) => c,
            _ => KeyCode::Char('q'),
        };
        let mods = match code {
            KeyCode::Char(c) if c.is_ascii_uppercase() => KeyModifiers::SHIFT,
            _ => KeyModifiers::NONE,
        };
        Ok(Event::Key(KeyEvent::new(code, mods)))
    }
}

/// A feed that hands over fixed Samples, all at the first look.
struct Fixed {
    host: HostInfo,
    events: VecDeque<FeedEvent>,
}

impl Feed for Fixed {
    fn host(&self) -> &HostInfo {
        &self.host
    }
    fn poll(&mut self) -> Option<FeedEvent> {
        self.events.pop_front()
    }
    fn set_interval(&mut self, ns: u64) {
        self.host.interval_ns = ns;
    }
}

fn keys(s: &str) -> Vec<Step> {
    s.chars().map(|c| Step::Key(KeyCode::Char(c))).collect()
}

/// Run the loop on `session` fed the fixture Samples, play `steps`, draw a
/// last frame and quit: the screen it left.
fn run(mut session: Session, feed_samples: bool, steps: Vec<Step>, w: u16, h: u16) -> String {
    let host = session.host.clone();
    let events = if feed_samples {
        fixtures::samples(host.source)
            .into_iter()
            .map(|s| FeedEvent::Sample(s.into()))
            .collect()
    } else {
        VecDeque::new()
    };
    let mut feed = Fixed { host, events };
    let mut script: VecDeque<Step> = steps.into();
    script.push_back(Step::Frame);
    script.push_back(Step::Key(KeyCode::Char('q')));
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    run_loop(
        &mut term,
        &mut Script(script),
        &mut session,
        &mut feed,
        &ScreenshotConfig::default(),
        None,
    )
    .unwrap();
    buffer_text(term.backend().buffer())
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
