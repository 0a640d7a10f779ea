//! `--refresh`: Samples arriving faster than the drawing pace wait for it
//! (the screen keeps the one drawn), a key still redraws at once, and once
//! the pace has passed the newest Sample is drawn.
use crate::common;

use std::time::Duration;

use common::ui_kit::{frames, keys, run_script, ScriptedFeed, Step};
use schedtop::model::SourceKind;
use schedtop::ui::{fixtures, AppState, Mode, Session};

fn session(every: Option<Duration>) -> Session {
    let mut s = Session::live(AppState::new(fixtures::host(SourceKind::Bpf), Mode::Live));
    s.redraw_every = every;
    s
}

/// The fixture's Samples one per loop turn, `turns` frames of 60 ms, and
/// the screen the terminal was left with.
fn run(every: Option<Duration>, turns: usize) -> String {
    run_steps(every, frames(turns))
}

fn run_steps(every: Option<Duration>, steps: Vec<Step>) -> String {
    let samples = fixtures::samples(SourceKind::Bpf);
    let groups = samples.into_iter().map(|s| vec![s]).collect();
    let mut feed = ScriptedFeed::per_turn(fixtures::host(SourceKind::Bpf), groups);
    run_script(&mut session(every), &mut feed, steps, 120, 30)
}

fn switches_line(s: &str) -> String {
    s.lines()
        .find(|l| l.contains("switches/s"))
        .unwrap()
        .to_string()
}

#[test]
fn samples_wait_for_the_pace_and_then_show() {
    let n = fixtures::samples(SourceKind::Bpf).len();
    // n turns of 60 ms stay inside 2 s
    assert!(n * 60 < 2000, "{n} Samples");
    let every_sample = run(None, n + 2);
    let paced = run(Some(Duration::from_secs(2)), n + 2);
    // every Sample drawn: the newest one's figures; paced: an earlier one
    // (the first paint has no rates yet, the next Samples wait for 2 s)
    assert_ne!(switches_line(&every_sample), switches_line(&paced));
    // with a pace shorter than the script's frames every Sample shows
    let fast = run(Some(Duration::from_millis(10)), n + 2);
    assert_eq!(switches_line(&every_sample), switches_line(&fast));
    // 40 frames of 60 ms pass 2 s: the newest Sample shows in the end
    let late = run(Some(Duration::from_secs(2)), n + 40);
    assert_eq!(switches_line(&every_sample), switches_line(&late));
    // a key redraws at once, with the newest Sample
    let mut steps = frames(n + 2);
    steps.extend(keys("I"));
    let keyed = run_steps(Some(Duration::from_secs(2)), steps);
    assert_eq!(switches_line(&every_sample), switches_line(&keyed));
}

/// TestBackend that counts the frames the loop drew (one flush each).
struct Counting(
    ratatui::backend::TestBackend,
    std::rc::Rc<std::cell::Cell<usize>>,
);

impl ratatui::backend::Backend for Counting {
    type Error = <ratatui::backend::TestBackend as ratatui::backend::Backend>::Error;
    fn draw<'a, I: Iterator<Item = (u16, u16, &'a ratatui::buffer::Cell)>>(
        &mut self,
        c: I,
    ) -> Result<(), Self::Error> {
        self.0.draw(c)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<ratatui::layout::Position, Self::Error> {
        self.0.get_cursor_position()
    }
    fn set_cursor_position<P: Into<ratatui::layout::Position>>(
        &mut self,
        p: P,
    ) -> Result<(), Self::Error> {
        self.0.set_cursor_position(p)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.0.clear()
    }
    fn clear_region(&mut self, t: ratatui::backend::ClearType) -> Result<(), Self::Error> {
        self.0.clear_region(t)
    }
    fn size(&self) -> Result<ratatui::layout::Size, Self::Error> {
        self.0.size()
    }
    fn window_size(&mut self) -> Result<ratatui::backend::WindowSize, Self::Error> {
        self.0.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.1.set(self.1.get() + 1);
        self.0.flush()
    }
}

/// The fixture's Samples one a second (every 10th loop turn: an idle turn
/// waits 100 ms for input, which a scripted frame takes as passed), then
/// 5 s without one, drawn at `every`: (frames drawn, the screen left,
/// the mono time of the Sample the session holds at the end).
fn one_a_second(every: Option<Duration>) -> (usize, String, u64) {
    use common::ui_kit::{Script, ScriptClock};
    let samples = fixtures::samples(SourceKind::Bpf);
    let n = samples.len();
    let mut groups: Vec<Vec<schedtop::model::Sample>> = Vec::new();
    for s in samples {
        groups.push(vec![s]);
        groups.extend(std::iter::repeat_with(Vec::new).take(9));
    }
    let mut feed = ScriptedFeed::per_turn(fixtures::host(SourceKind::Bpf), groups);
    let mut steps = frames(n * 10 + 50);
    steps.push(Step::Key(ratatui::crossterm::event::KeyCode::Char('q')));
    let clock = ScriptClock::new();
    let drawn = std::rc::Rc::new(std::cell::Cell::new(0));
    let backend = Counting(ratatui::backend::TestBackend::new(120, 30), drawn.clone());
    let mut term = ratatui::Terminal::new(backend).unwrap();
    let mut s = session(every);
    schedtop::ui::run::run_loop_clocked(
        &mut term,
        &mut Script::new(steps, clock.clone()),
        &mut s,
        &mut feed,
        &schedtop::ui::screenshot_key::ScreenshotConfig::default(),
        None,
        &clock,
    )
    .unwrap();
    let text = schedtop::ui::render::buffer_text(term.backend().0.buffer());
    (drawn.get(), text, s.derived.sample.mono_ns)
}

#[test]
fn sampled_every_second_drawn_every_two() {
    // `-i 1 --refresh 2`: a Sample a second, a frame at most every 2 s
    let n = fixtures::samples(SourceKind::Bpf).len();
    let last_mono = fixtures::samples(SourceKind::Bpf).last().unwrap().mono_ns;
    assert!(n >= 6, "{n} Samples are too few to tell 1 s from 2 s");
    let (each, each_screen, each_mono) = one_a_second(None);
    let (paced, paced_screen, paced_mono) = one_a_second(Some(Duration::from_secs(2)));
    // every Sample reached the session both ways (sampling is not slowed):
    // it holds the last one, and the last screen shows its figures
    assert_eq!((each_mono, paced_mono), (last_mono, last_mono));
    assert_eq!(switches_line(&each_screen), switches_line(&paced_screen));
    // a frame per Sample, and about one per two Samples (each frame after
    // the first waits 2 s, the Samples arrive every 1 s; the quit key
    // draws no frame of its own)
    assert!(each >= n, "{each} frames for {n} Samples");
    assert!(
        paced <= n.div_ceil(2) + 2 && paced >= n / 2,
        "{paced} frames for {n} Samples a second apart at --refresh 2 ({each} unpaced)"
    );
}
