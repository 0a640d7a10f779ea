//! The UI tests' kit: keys as the terminal sends them (one Shift mapping),
//! screens as text, a scripted event source for the whole event loop, feeds
//! that hand over Samples turn by turn, and a clock that moves only when the
//! script says a frame passed (a scripted frame takes no real time).
use std::cell::Cell;
use std::collections::VecDeque;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

use schedtop::model::{HostInfo, Sample};
use schedtop::ui::action::{Action, Effect};
use schedtop::ui::feed::{Feed, FeedEvent};
use schedtop::ui::render::{buffer_text, render_to_buffer};
use schedtop::ui::run::{run_loop_clocked, EventSource, LoopClock};
use schedtop::ui::screenshot_key::ScreenshotConfig;
use schedtop::ui::{keys, AppState, Session};

/// The key event a terminal sends for `code`: an upper-case letter comes
/// with Shift, as crossterm reports it.
pub fn key_event(code: KeyCode) -> KeyEvent {
    let mods = match code {
        KeyCode::Char(c) if c.is_ascii_uppercase() => KeyModifiers::SHIFT,
        _ => KeyModifiers::NONE,
    };
    KeyEvent::new(code, mods)
}

/// What keys act on: the app state alone, or a session (which also
/// replays, rewinds and records).
pub trait Keyed {
    fn state(&self) -> &AppState;
    fn act(&mut self, a: Action) -> Effect;
}

impl Keyed for AppState {
    fn state(&self) -> &AppState {
        self
    }
    fn act(&mut self, a: Action) -> Effect {
        schedtop::ui::layout::apply(self, a)
    }
}

impl Keyed for Session {
    fn state(&self) -> &AppState {
        self
    }
    fn act(&mut self, a: Action) -> Effect {
        self.apply(a)
    }
}

/// A key event through the live UI's mapping (`keys::map_event`), then
/// applied: what the event loop does with it.
pub fn press_event(app: &mut impl Keyed, k: KeyEvent) -> Effect {
    match keys::map_event(&Event::Key(k), app.state()) {
        Some(a) => app.act(a),
        None => Effect::None,
    }
}

/// `press_event` for `code`, with Shift on upper-case letters.
pub fn press(app: &mut impl Keyed, code: KeyCode) -> Effect {
    press_event(app, key_event(code))
}

/// `press` for one character.
pub fn press_char(app: &mut impl Keyed, c: char) -> Effect {
    press(app, KeyCode::Char(c))
}

/// Each character of `s` pressed in turn.
pub fn typed(app: &mut impl Keyed, s: &str) {
    for c in s.chars() {
        press_char(app, c);
    }
}

/// The screen `app` draws at `w` x `h`, as text.
pub fn screen(app: &AppState, w: u16, h: u16) -> String {
    buffer_text(&render_to_buffer(app, w, h))
}

/// A clock for the event loop that stands still until the script moves
/// it. Clones share the time.
#[derive(Clone)]
pub struct ScriptClock(Rc<Cell<u64>>);

impl ScriptClock {
    /// Starts at the real monotonic time, so a session's own timestamps
    /// (taken from the real clock) are not in its future.
    pub fn new() -> ScriptClock {
        ScriptClock(Rc::new(Cell::new(schedtop::util::clock::monotonic_ns())))
    }

    pub fn advance(&self, d: Duration) {
        self.0.set(self.0.get() + d.as_nanos() as u64);
    }
}

impl Default for ScriptClock {
    fn default() -> Self {
        ScriptClock::new()
    }
}

impl LoopClock for ScriptClock {
    fn now_ns(&self) -> u64 {
        self.0.get()
    }
}

/// One step of a script.
#[derive(Clone, Debug)]
pub enum Step {
    /// a key (Shift on upper-case letters)
    Key(KeyCode),
    /// any terminal event as it is (a key with other modifiers, a mouse
    /// event)
    Event(Event),
    /// the terminal changed size
    Resize(u16, u16),
    /// no input for one loop turn, long enough for the loop to draw what
    /// came before (the feed hands over its next group)
    Frame,
}

/// Keys for each character of `s`.
pub fn keys(s: &str) -> Vec<Step> {
    s.chars().map(|c| Step::Key(KeyCode::Char(c))).collect()
}

/// `n` frames.
pub fn frames(n: usize) -> Vec<Step> {
    vec![Step::Frame; n]
}

/// How long a scripted frame lasts on the script's clock: more than the
/// loop's frame interval (50 ms), so a frame always draws.
pub const FRAME: Duration = Duration::from_millis(60);

/// The event loop's input from a script. A frame moves the script's clock
/// instead of sleeping; an exhausted script quits (`q`), so a test cannot
/// hang.
pub struct Script {
    steps: VecDeque<Step>,
    clock: ScriptClock,
}

impl Script {
    pub fn new(steps: Vec<Step>, clock: ScriptClock) -> Script {
        Script {
            steps: steps.into(),
            clock,
        }
    }
}

impl EventSource for Script {
    fn poll(&mut self, timeout: Duration) -> io::Result<bool> {
        match self.steps.front() {
            Some(Step::Frame) => {
                self.steps.pop_front();
                self.clock.advance(timeout.max(FRAME));
                Ok(false)
            }
            _ => Ok(true),
        }
    }

    fn read(&mut self) -> io::Result<Event> {
        Ok(match self.steps.pop_front() {
            Some(Step::Key(c)) => Event::Key(key_event(c)),
            Some(Step::Event(e)) => e,
            Some(Step::Resize(w, h)) => Event::Resize(w, h),
            Some(Step::Frame) | None => Event::Key(key_event(KeyCode::Char('q'))),
        })
    }
}

/// A feed that hands over one group of events per loop turn (the loop
/// drains the feed once a turn); after the last group, nothing.
pub struct ScriptedFeed {
    host: HostInfo,
    groups: VecDeque<VecDeque<FeedEvent>>,
    /// the group being handed over this turn
    cur: Option<VecDeque<FeedEvent>>,
}

impl ScriptedFeed {
    /// Every Sample at the first look.
    pub fn all_at_once(host: HostInfo, samples: Vec<Sample>) -> ScriptedFeed {
        ScriptedFeed::per_turn(host, vec![samples])
    }

    /// Group k of Samples in loop turn k.
    pub fn per_turn(host: HostInfo, groups: Vec<Vec<Sample>>) -> ScriptedFeed {
        let groups = groups
            .into_iter()
            .map(|g| g.into_iter().map(|s| FeedEvent::Sample(s.into())).collect())
            .collect();
        ScriptedFeed::events_per_turn(host, groups)
    }

    /// Any feed events (errors, status lines), group k in loop turn k.
    pub fn events_per_turn(host: HostInfo, groups: Vec<Vec<FeedEvent>>) -> ScriptedFeed {
        ScriptedFeed {
            host,
            groups: groups.into_iter().map(VecDeque::from).collect(),
            cur: None,
        }
    }
}

impl Feed for ScriptedFeed {
    fn host(&self) -> &HostInfo {
        &self.host
    }

    fn poll(&mut self) -> Option<FeedEvent> {
        let g = self
            .cur
            .get_or_insert_with(|| self.groups.pop_front().unwrap_or_default());
        match g.pop_front() {
            Some(e) => Some(e),
            None => {
                // the turn's group is done: the next turn takes the next one
                self.cur = None;
                None
            }
        }
    }

    fn set_interval(&mut self, ns: u64) {
        self.host.interval_ns = ns;
    }
}

/// Run the whole event loop on a `w` x `h` TestBackend: `session` fed by
/// `feed`, `steps` played, then a last frame and `q`. The screen it left.
pub fn run_script(
    session: &mut Session,
    feed: &mut impl Feed,
    steps: Vec<Step>,
    w: u16,
    h: u16,
) -> String {
    let clock = ScriptClock::new();
    let mut steps = steps;
    steps.push(Step::Frame);
    steps.push(Step::Key(KeyCode::Char('q')));
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    run_loop_clocked(
        &mut term,
        &mut Script::new(steps, clock.clone()),
        session,
        feed,
        &ScreenshotConfig::default(),
        None,
        &clock,
    )
    .unwrap();
    buffer_text(term.backend().buffer())
}
