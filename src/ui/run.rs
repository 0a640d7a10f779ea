//! The event loop: input and Samples change the state, the state is drawn
//! at a bounded frame rate (ratatui diffs frames: no full clears).
use std::io::{self, IsTerminal};
use std::time::Duration;

use anyhow::{bail, Result};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::crossterm::event;
use ratatui::Terminal;

use crate::collect::flight::FlightOptions;
use crate::collect::LiveOptions;
use crate::export::flight_ring::{self, FlightRecorder};

use super::action::{Action, Effect};
use super::app::{AppState, Mode};
use super::feed::{Feed, FeedEvent, KeepSpec, LiveFeed};
use super::flight_key::{self, FlightLink};
use super::history;
use super::keys;
use super::render::render;
use super::screenshot_key::{self, ScreenshotConfig};
use super::session::Session;
use super::status;
use super::terminal::{self, TerminalGuard};
use super::tty;

/// At most one frame per this (slow links: 20 frames/s at most, and only
/// when something changed).
const FRAME: Duration = Duration::from_millis(50);
/// How often the loop looks at the feed and signals when nothing happens.
const TICK: Duration = Duration::from_millis(100);

/// `schedtop` with no arguments: the live view of this machine.
pub fn run_live(opts: &LiveOptions) -> Result<()> {
    run_live_with(opts, &ScreenshotConfig::default())
}

/// `run_live`, with the `s` key saving screenshots as `shots` says.
pub fn run_live_with(opts: &LiveOptions, shots: &ScreenshotConfig) -> Result<()> {
    run_live_flight(opts, shots, None)
}

/// `run_live_with`, and with `flight` (`--flight SECS`) the flight recorder
/// keeping that much of the scheduler's events for the `W` key.
pub fn run_live_flight(
    opts: &LiveOptions,
    shots: &ScreenshotConfig,
    flight: Option<Duration>,
) -> Result<()> {
    run_live_history(opts, shots, flight, super::history::DEFAULT_WINDOW_NS)
}

/// `run_live_flight`, keeping `history_ns` of Samples for rewinding (0:
/// none; `--history`).
pub fn run_live_history(
    opts: &LiveOptions,
    shots: &ScreenshotConfig,
    flight: Option<Duration>,
    history_ns: u64,
) -> Result<()> {
    run_live_watched(opts, shots, flight, history_ns, None, None)
}

/// `run_live_history`, and with `watch` incident bundles from the kept
/// history (`--trigger`, SIGUSR1, the `i` key).
pub fn run_live_watched(
    opts: &LiveOptions,
    shots: &ScreenshotConfig,
    flight: Option<Duration>,
    history_ns: u64,
    watch: Option<crate::export::incident::Watch>,
    refresh: Option<Duration>,
) -> Result<()> {
    let prefs = super::config_file::Loaded::defaults();
    run_live_configured(opts, shots, flight, history_ns, watch, prefs, refresh)
}

/// `run_live_watched` starting with `prefs` (the config file's settings,
/// saved back there from the setup screen).
pub fn run_live_configured(
    opts: &LiveOptions,
    shots: &ScreenshotConfig,
    flight: Option<Duration>,
    history_ns: u64,
    watch: Option<crate::export::incident::Watch>,
    prefs: super::config_file::Loaded,
    refresh: Option<Duration>,
) -> Result<()> {
    if watch.is_some() && history_ns == 0 {
        bail!("incident bundles record the kept history: --trigger needs --history above 0");
    }
    if !io::stdout().is_terminal() {
        bail!("stdout is not a terminal; use --batch for JSON lines");
    }
    // start the recorder and open the source before taking the terminal, so
    // their errors print plainly
    let recorder = match flight {
        Some(window) => {
            if std::env::var_os("SCHEDTOP_BPF_DEBUG").is_none() {
                libbpf_rs::set_print(None);
            }
            Some(FlightRecorder::start(
                window,
                FlightOptions::default(),
                flight_ring::DEFAULT_BYTE_CAP,
            )?)
        }
        None => None,
    };
    // the history and the incident watch live on the collector thread
    // (keeper.rs): encoding a Sample and writing a bundle never hold up
    // the screen
    let watch = watch.map(|w| {
        crate::util::signals::catch_usr1();
        // the bundle holds the flight recorder's trace when it runs
        match recorder.as_ref() {
            Some(r) => w.with_flight(r.requests()),
            None => w,
        }
    });
    let keep = (history_ns > 0).then(|| KeepSpec {
        window_ns: history_ns,
        byte_cap: history::DEFAULT_BYTE_CAP,
        watch,
    });
    let (feed, kept) = LiveFeed::start_keeping(opts, keep)?;
    let mut state = AppState::new(feed.host().clone(), Mode::Live);
    state.start_with(prefs.settings);
    state.status = prefs.warning.map(status::Status::error);
    state.listing.filters = opts.threads.describe();
    let mut app = match kept {
        Some(h) => Session::live_with_shared_history(state, h),
        None => Session::live(state),
    };
    app.config = prefs.store;
    app.redraw_every = refresh;
    let mut link = recorder
        .as_ref()
        .map(|r| FlightLink::to(r, shots.dir.clone()));
    let result = run_with_flight(app, feed, shots, link.as_mut());
    // stops the recorder (and waits for a trace being written)
    drop(recorder);
    result
}

/// Run the UI on `feed` until the user quits or a signal arrives.
pub fn run(app: Session, feed: impl Feed) -> Result<()> {
    run_with(app, feed, &ScreenshotConfig::default())
}

/// `run`, with the `s` key saving screenshots as `shots` says.
pub fn run_with(app: Session, feed: impl Feed, shots: &ScreenshotConfig) -> Result<()> {
    run_with_flight(app, feed, shots, None)
}

/// `run_with`, and the `W` key asking `flight` for a trace.
pub fn run_with_flight(
    mut app: Session,
    mut feed: impl Feed,
    shots: &ScreenshotConfig,
    flight: Option<&mut FlightLink>,
) -> Result<()> {
    terminal::catch_signals();
    super::suspend::catch();
    terminal::set_mouse(app.view_model.settings.mouse);
    let result = match TerminalGuard::enter() {
        Ok(_guard) => event_loop(&mut app, &mut feed, shots, flight),
        Err(e) => Err(e.into()),
    }; // the guard has restored the terminal here
    drop(feed);
    // a recording started with R gets its closing index, even on a signal
    drop(app);
    if let Some(sig) = terminal::pending_signal() {
        terminal::die_by(sig);
    }
    result
}

/// Where the event loop's input comes from: the terminal (crossterm), or a
/// script in tests.
pub trait EventSource {
    /// Whether an event is ready within `timeout`.
    fn poll(&mut self, timeout: Duration) -> io::Result<bool>;
    fn read(&mut self) -> io::Result<event::Event>;
}

/// The terminal's own input.
pub struct TerminalEvents;

impl EventSource for TerminalEvents {
    fn poll(&mut self, timeout: Duration) -> io::Result<bool> {
        event::poll(timeout)
    }

    fn read(&mut self) -> io::Result<event::Event> {
        event::read()
    }
}

/// Where the event loop reads the time (frame pacing, how long the status
/// line's message stays, replay playback): CLOCK_MONOTONIC, or in tests a
/// clock that moves only when their script says time passed.
pub trait LoopClock {
    /// Nanoseconds on CLOCK_MONOTONIC, or the test's stand-in for it.
    fn now_ns(&self) -> u64;
}

/// The real clock.
pub struct MonotonicClock;

impl LoopClock for MonotonicClock {
    fn now_ns(&self) -> u64 {
        crate::util::clock::monotonic_ns()
    }
}

fn event_loop(
    app: &mut Session,
    feed: &mut impl Feed,
    shots: &ScreenshotConfig,
    flight: Option<&mut FlightLink>,
) -> Result<()> {
    let mut term = Terminal::new(super::lean_backend::LeanBackend::new(
        CrosstermBackend::new(io::stdout()),
    ))?;
    tty::exit_on_hangup();
    run_loop(&mut term, &mut TerminalEvents, app, feed, shots, flight)
}

/// The loop itself on any backend and event source (tests drive it with
/// ratatui's TestBackend and scripted keys): until a key quits or a signal
/// arrives.
pub fn run_loop<B: Backend>(
    term: &mut Terminal<B>,
    events: &mut impl EventSource,
    app: &mut Session,
    feed: &mut impl Feed,
    shots: &ScreenshotConfig,
    flight: Option<&mut FlightLink>,
) -> Result<()>
where
    B::Error: Send + Sync + 'static,
{
    run_loop_clocked(term, events, app, feed, shots, flight, &MonotonicClock)
}

/// `run_loop` reading the time from `clock` (a test's scripted clock: its
/// frames take no real time).
pub fn run_loop_clocked<B: Backend>(
    term: &mut Terminal<B>,
    events: &mut impl EventSource,
    app: &mut Session,
    feed: &mut impl Feed,
    shots: &ScreenshotConfig,
    mut flight: Option<&mut FlightLink>,
    clock: &impl LoopClock,
) -> Result<()>
where
    B::Error: Send + Sync + 'static,
{
    let size = term.size()?;
    app.apply(Action::Resize(size.width, size.height));
    let mut dirty = true;
    // Samples not drawn yet (`--refresh`)
    let mut held = false;
    let mut last_draw: Option<u64> = None;
    // lets the end-to-end test check that a panic restores the terminal
    let panic_for_test = std::env::var_os("SCHEDTOP_TEST_PANIC").is_some();
    // when the status line's message appeared (it goes after a while)
    let mut status_since: Option<u64> = None;
    // the last click, for double clicks (mouse.rs)
    let mut clicks = super::mouse::Clicks::default();
    loop {
        if terminal::pending_signal().is_some() {
            return Ok(());
        }
        if super::suspend::service()? {
            term.clear()?; // everything again: the shell drew over it
            dirty = true;
        }
        match (&app.status, status_since) {
            (None, _) => status_since = None,
            (Some(_), None) => status_since = Some(clock.now_ns()),
            (Some(_), Some(t)) if elapsed(clock, t) >= status::SHOWN_FOR => {
                app.status = None;
                status_since = None;
                dirty = true;
            }
            _ => {}
        }
        while let Some(ev) = feed.poll() {
            let paced = matches!(ev, FeedEvent::Sample(_) | FeedEvent::Interval(_))
                && app.redraw_every.is_some();
            match ev {
                FeedEvent::Sample(s) => app.push_sample(s),
                FeedEvent::Interval(iv) => app.push_interval(iv),
                FeedEvent::Error(e) => app.set_error(Some(e)),
                FeedEvent::Status(line, error) => {
                    app.status = Some(if error {
                        status::Status::error(line)
                    } else {
                        status::Status::info(line)
                    });
                    status_since = Some(clock.now_ns());
                }
            }
            held |= paced;
            dirty |= !paced;
        }
        // the flight recorder's answer to W
        if let Some(link) = flight.as_deref_mut() {
            if flight_key::poll(&mut app.app, link) {
                status_since = Some(clock.now_ns());
                dirty = true;
            }
        }
        // replay: playback moves the cursor as time passes
        if app.tick(clock.now_ns()) {
            dirty = true;
        }
        let since = last_draw.map(|t| elapsed(clock, t));
        if held && since.is_none_or(|s| s >= app.redraw_every.unwrap_or_default()) {
            dirty = true;
        }
        if dirty && since.is_none_or(|s| s >= FRAME) {
            // new rows or a wrapped header move the table: page size first
            super::layout::refresh(&mut app.app);
            let area = term.draw(|f| render(app, f))?.area;
            // what a click hits is what this frame drew
            super::mouse::remember(&mut app.app, area);
            last_draw = Some(clock.now_ns());
            (dirty, held) = (false, false);
            if panic_for_test && app.current().is_some() {
                panic!("SCHEDTOP_TEST_PANIC is set: panicking to test terminal restore");
            }
        }
        let timeout = match (dirty, since) {
            (true, Some(s)) => FRAME.saturating_sub(s).min(TICK),
            _ => TICK,
        };
        if !events.poll(timeout)? {
            continue;
        }
        loop {
            let ev = events.read()?;
            if super::suspend::note_key(&ev) {
                break; // suspended at the top of the loop
            }
            let action = clicks.map(&ev, app, clock.now_ns());
            if let Some(a) = action.or_else(|| keys::map_event(&ev, app)) {
                match app.apply(a) {
                    Effect::Quit => return Ok(()),
                    Effect::SetInterval(ns) => feed.set_interval(ns),
                    Effect::Screenshot => {
                        screenshot_key::take(&mut app.app, shots, std::time::SystemTime::now());
                        status_since = Some(clock.now_ns());
                    }
                    Effect::WriteFlight => {
                        flight_key::request(
                            &mut app.app,
                            flight.as_deref_mut(),
                            std::time::SystemTime::now(),
                        );
                        status_since = Some(clock.now_ns());
                    }
                    // the watch beside the collector (keeper.rs)
                    Effect::FireIncident => {
                        app.status = Some(if feed.fire_incident() {
                            status::Status::info("incident bundle at the next Sample")
                        } else {
                            status::Status::info(
                                "incident bundles are off (--history 0, or no usable --incident-dir)",
                            )
                        });
                        status_since = Some(clock.now_ns());
                    }
                    Effect::Settings(e) => {
                        if e.quit {
                            return Ok(());
                        }
                        if let Some(ns) = e.interval_ns {
                            feed.set_interval(ns);
                        }
                        terminal::set_mouse(e.mouse);
                    }
                    // the session handled these
                    Effect::None | Effect::Replay(_) | Effect::ToggleRecord => {}
                }
                dirty = true;
            }
            if !events.poll(Duration::ZERO)? {
                break;
            }
        }
    }
}

/// Time since `since` (ns on `clock`).
fn elapsed(clock: &impl LoopClock, since: u64) -> Duration {
    Duration::from_nanos(clock.now_ns().saturating_sub(since))
}
