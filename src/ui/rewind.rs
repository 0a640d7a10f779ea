//! Rewind while live: the replay cursor (replay.rs) moving through the
//! live history (history.rs) while collection goes on. `T` (one Sample
//! back) or `j` (jump) leaves live; then every replay key works (`t`/`T`,
//! `j`, Home, space, `x`, `+`/`-`) and `End` returns to live. New Samples
//! keep arriving into the history meanwhile; the screen stays on the
//! chosen moment and the header says how far back it is (`REWIND −42s`)
//! next to the live clock.

use super::app::AppState;
use super::history::History;
use super::replay::{self, Replay, ReplayAction};
use super::status::Status;
use crate::collect::Seekable;

/// What live had before rewinding, given back by `End`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Saved {
    interval_ns: u64,
}

/// Whether the live view is showing an earlier moment.
pub fn rewound(app: &AppState) -> bool {
    app.rewound()
}

/// A replay action in the live view: `T` / `j` / Home rewind, and once
/// rewound every action moves the cursor; `End` returns to live.
pub fn apply(app: &mut AppState, h: &mut History, saved: &mut Saved, a: ReplayAction) {
    if !rewound(app) {
        match a {
            ReplayAction::StepBack | ReplayAction::JumpStart | ReplayAction::First => {}
            ReplayAction::StepForward => {
                app.status = Some(Status::info("live: nothing newer (T steps back)"));
                return;
            }
            _ => return,
        }
        let Some(mut cursor) = Replay::over(h, "live history".into()) else {
            app.status = Some(Status::info("nothing kept yet to rewind to"));
            return;
        };
        if a == ReplayAction::StepBack && h.len() < 2 {
            app.status = Some(Status::info("nothing kept yet to rewind to"));
            return;
        }
        // the screen is the newest kept Sample until the cursor moves
        cursor.index = Some(h.len() - 1);
        saved.interval_ns = app.interval_ns;
        app.replay = Some(cursor);
    }
    if a == ReplayAction::Last && app.replay.as_ref().is_some_and(|r| r.prompt.is_none()) {
        back_to_live(app, h, saved);
        return;
    }
    replay::apply(app, h, a);
    // `j` from live, then Esc: nothing moved, so live again
    let at_newest = app.replay.as_ref().is_some_and(|r| {
        r.prompt.is_none() && r.index == Some(h.len().saturating_sub(1)) && !r.playing
    });
    if a == ReplayAction::JumpCancel && at_newest {
        back_to_live(app, h, saved);
    }
}

/// `End`: the newest kept Sample on screen, and live again.
pub fn back_to_live(app: &mut AppState, h: &mut History, saved: &Saved) {
    let newest = h.len().saturating_sub(1);
    replay::seek(app, h, newest);
    app.replay = None;
    app.interval_ns = saved.interval_ns;
    app.status = Some(Status::info("live"));
}

/// Playback while rewound (space): the cursor follows the clock; at the
/// newest kept Sample the view is live again.
pub fn advance(app: &mut AppState, h: &mut History, saved: &Saved, now_ns: u64) -> bool {
    let was_playing = app.replay.as_ref().is_some_and(|r| r.playing);
    if !rewound(app) || !was_playing {
        return false;
    }
    let changed = replay::advance(app, h, now_ns);
    let caught_up = app
        .replay
        .as_ref()
        .is_some_and(|r| !r.playing && r.index == Some(h.len().saturating_sub(1)));
    if caught_up {
        // played up to the newest kept Sample: live again
        back_to_live(app, h, saved);
        return true;
    }
    changed
}
