//! The UI's shell around `AppState`: what the event loop owns besides the
//! state. Each Sample fans out here to the sinks (the `R` recording, the
//! live history) and to the state, side by side; a replay's recording, and
//! the live history while rewound, are seekable sources this drives (the
//! state holds only the cursor). In the live view the collector thread
//! keeps the history and runs the incident watch (keeper.rs); the session
//! reads the shared history. `AppState` itself does no I/O. A `Session` reads as its `AppState` (Deref) for rendering.
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use super::action::{Action, Effect, SettingsEffect};
use super::app::{AppState, Mode};
use super::history::History;
use super::keeper::{lock, SharedHistory};
use super::recording::{self, Recording};
use super::replay::ReplayAction;
use super::replay::{self, Recorded};
use super::rewind;
use super::rewind::rewound;
use super::status::Status;
use crate::collect::Seekable;
use crate::export::incident::{describe, Event, Watch};
use crate::model::shared_interval::{Deriver, Interval};
use crate::model::Sample;

pub struct Session {
    pub app: AppState,
    /// live: the recording `R` started (a sink next to the state)
    pub recording: Option<Recording>,
    /// replay: the recording the cursor moves through
    replay_source: Option<Box<dyn Seekable + Send>>,
    /// live: the kept Samples `T` / `j` rewind through (`--history`)
    history: Option<SharedHistory>,
    /// the collector thread pushes into the history (keeper.rs): the
    /// session only reads it
    kept_by_feed: bool,
    /// the history's drop count when the last Sample arrived
    dropped_seen: u64,
    rewind_saved: rewind::Saved,
    /// live: `--trigger`, SIGUSR1 and `i` make incident bundles from the
    /// kept history (a sink beside the others)
    incidents: Option<Watch>,
    /// where the setup screen saves the settings (None: `--no-config`)
    pub config: Option<super::config_file::ConfigStore>,
    /// `--refresh`: a new Sample is drawn at most this often (keys still
    /// redraw at once); None: each Sample
    pub redraw_every: Option<std::time::Duration>,
    /// derives the Samples pushed here (a feed that sends Samples, not
    /// Intervals: tests, fakes)
    deriver: Option<Deriver>,
}

impl Session {
    /// A live session (no recording yet).
    pub fn live(app: AppState) -> Session {
        Session {
            app,
            recording: None,
            replay_source: None,
            history: None,
            kept_by_feed: false,
            dropped_seen: 0,
            rewind_saved: rewind::Saved::default(),
            incidents: None,
            config: None,
            redraw_every: None,
            deriver: None,
        }
    }

    /// A live session keeping `history` for rewinding.
    pub fn live_with_history(app: AppState, history: History) -> Session {
        let mut s = Session::live(app);
        s.history = Some(Arc::new(Mutex::new(history)));
        s
    }

    /// A live session reading `history`, which the collector thread keeps
    /// (and with it any incident watch: keeper.rs).
    pub fn live_with_shared_history(app: AppState, history: SharedHistory) -> Session {
        let mut s = Session::live(app);
        s.history = Some(history);
        s.kept_by_feed = true;
        s
    }

    /// Make incident bundles with `watch` (needs the history).
    pub fn with_incidents(mut self, watch: Watch) -> Session {
        self.incidents = Some(watch);
        self
    }

    /// The live history, when kept.
    pub fn history(&self) -> Option<MutexGuard<'_, History>> {
        self.history.as_ref().map(lock)
    }

    /// A replay of `source`; `app.replay` holds the cursor.
    pub fn replay(app: AppState, source: Box<dyn Seekable + Send>) -> Session {
        Session {
            app,
            recording: None,
            replay_source: Some(source),
            history: None,
            kept_by_feed: false,
            dropped_seen: 0,
            rewind_saved: rewind::Saved::default(),
            incidents: None,
            config: None,
            redraw_every: None,
            deriver: None,
        }
    }

    /// A Sample from the feed, derived here once for every sink.
    pub fn push_sample(&mut self, s: impl Into<Arc<Sample>>) {
        let host = &self.app.host;
        let d = self
            .deriver
            .get_or_insert_with(|| Deriver::new(host.clone()));
        let iv = d.next(s);
        self.push_interval(iv);
    }

    /// An Interval from the feed: its Sample to the recording and the
    /// history, the Interval to the incident watch and the state.
    pub fn push_interval(&mut self, iv: Arc<Interval>) {
        let s = &iv.sample;
        // recorded as it arrives, paused or not
        recording::on_sample(&mut self.app, &mut self.recording, s);
        if let Some(shared) = self.history.clone() {
            let mut h = lock(&shared);
            let dropped = if self.kept_by_feed {
                h.dropped().saturating_sub(self.dropped_seen) as usize
            } else {
                h.push_shared(s)
            };
            self.dropped_seen = h.dropped();
            if let Some(w) = self.incidents.as_mut() {
                if crate::util::signals::take_usr1() {
                    w.request("SIGUSR1");
                }
                let host = self.app.host.clone();
                for e in w.on_interval(&iv, &host, &mut *h, super::incident_screens::render) {
                    self.app.status = Some(incident_status(&e));
                }
            }
            if rewound(&self.app) {
                // the screen stays on the chosen moment
                if let Some(r) = self.app.replay.as_mut() {
                    r.follow(&*h, dropped);
                }
                return;
            }
            // `End` may have shown a kept Sample before it reached the
            // session (the collector keeps it first): not twice
            if self.kept_by_feed && self.app.current().is_some_and(|c| c.time_ns >= s.time_ns) {
                return;
            }
        }
        self.app.push_interval(iv);
    }

    /// Apply one user action; what the state cannot do alone (replay
    /// moves, recording) happens here, and the rest goes to the loop.
    pub fn apply(&mut self, a: Action) -> Effect {
        match super::layout::apply(&mut self.app, a) {
            Effect::Replay(r) => {
                if let Some(src) = self.replay_source.as_deref_mut() {
                    replay::apply(&mut self.app, src, r);
                } else if let Some(h) = self.history.clone() {
                    rewind::apply(&mut self.app, &mut lock(&h), &mut self.rewind_saved, r);
                } else if !matches!(r, ReplayAction::Last | ReplayAction::First) {
                    self.app.status = Some(Status::info("rewind is off (--history 0)"));
                }
                Effect::None
            }
            Effect::ToggleRecord => {
                self.toggle_recording_in(Path::new("."));
                Effect::None
            }
            Effect::Settings(e) if e.save => {
                let (line, saved) = super::config_file::save_to(self.config.as_mut(), &self.app);
                self.app.status = Some(line);
                Effect::Settings(SettingsEffect {
                    quit: e.quit && saved,
                    ..e
                })
            }
            Effect::FireIncident => match self.incidents.as_mut() {
                Some(w) => {
                    w.request("the i key");
                    self.app.status = Some(Status::info("incident bundle at the next Sample"));
                    Effect::None
                }
                // the watch runs beside the collector: the loop asks the feed
                None => Effect::FireIncident,
            },
            e => e,
        }
    }

    /// Time passes (replay playback). True when the screen changed.
    pub fn tick(&mut self, now_ns: u64) -> bool {
        match (self.replay_source.as_deref_mut(), self.history.clone()) {
            (Some(src), _) => replay::advance(&mut self.app, src, now_ns),
            (None, Some(h)) => {
                rewind::advance(&mut self.app, &mut lock(&h), &self.rewind_saved, now_ns)
            }
            (None, None) => false,
        }
    }

    /// `R`: start recording into `dir` (the key: the current directory), or
    /// stop. While rewound the kept history is written first, so the file
    /// starts before the moment on screen.
    pub fn toggle_recording_in(&mut self, dir: &Path) {
        let backlog: Option<SharedHistory> = if rewound(&self.app) {
            self.history.clone()
        } else {
            None
        };
        let mut kept = backlog.as_ref().map(lock);
        recording::toggle(&mut self.app, &mut self.recording, kept.as_deref_mut(), dir);
    }

    /// A replay of `rec`: the recording's host at Sample `start`,
    /// positioned there, playing or not.
    pub fn replay_at(rec: Recorded, start: usize, playing: bool) -> Session {
        let Recorded { cursor, mut source } = rec;
        let start = start.min(cursor.len.saturating_sub(1));
        let mut app = AppState::new(source.host_of(start), Mode::Replay);
        app.replay = Some(cursor);
        replay::seek(&mut app, source.as_mut(), start);
        if let Some(r) = &mut app.replay {
            r.playing = playing;
        }
        Session::replay(app, source)
    }
}

/// What the status line says of an incident event.
fn incident_status(e: &Event) -> Status {
    let line = describe(e);
    match e {
        Event::Failed(_) | Event::Trace(Err(_)) => Status::error(line),
        _ => Status::info(line),
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // a bundle's recording still in its --after gets its closing index
        if let Some(w) = self.incidents.as_mut() {
            w.finish();
        }
    }
}

impl Deref for Session {
    type Target = AppState;
    fn deref(&self) -> &AppState {
        &self.app
    }
}

impl DerefMut for Session {
    fn deref_mut(&mut self) -> &mut AppState {
        &mut self.app
    }
}
