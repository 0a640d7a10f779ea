//! Replay mode: a recording shown in the live views, with a cursor the
//! user moves (`t` / `T` a Sample, `j` a time, Home / End the ends) and
//! playback at x1, x10 or x100 (space, `x`, `+` / `-`).
//!
//! The cursor is Sample `i` of the file. The screen at `i` is what live
//! showed then: the state is rebuilt by pushing Samples `..=i` of the same
//! segment into the app exactly as the live feed pushes them, so rates for
//! `i` come from `prev_of(i)` and `i` (`rows::derive`, the live code), and a
//! new segment (another boot or recorder run) starts without rates instead
//! of comparing counters across a restart. Stepping forward pushes one
//! Sample, as live does; any other move reloads a short run of Samples
//! before the cursor so the sparklines have a history.
use std::path::Path;

use anyhow::{bail, Result};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use super::app::AppState;
use super::first_sample::FirstSample;
use super::status::Status;
use crate::collect::Seekable;
use crate::model::cpus::CpuHistory;
use crate::model::{HostInfo, Sample};
use crate::record::timeexpr::parse_time;
use crate::record::{Reader, RecordingSource};

/// Playback speeds `x` cycles through.
pub const SPEEDS: [f64; 3] = [1.0, 10.0, 100.0];
/// Recorded gaps longer than this (a recorder that was stopped) play as
/// this long.
pub const MAX_GAP_NS: u64 = 10_000_000_000;
/// Samples loaded before the cursor on a jump (sparkline history).
pub const PRELOAD: usize = 32;
/// Threads times Samples a jump decodes and derives at most before the
/// cursor: at 50,000 threads 32 Samples took over a second to rebuild (a
/// `T` press in the live view), so big Samples get a shorter sparkline
/// history, which stepping forward fills again.
const PRELOAD_THREADS: usize = 100_000;

/// How many Samples to load before the cursor when the screen has
/// `threads` threads (the next Sample's count is not known before it is
/// decoded; the one on screen is a close guess).
fn preload_for(threads: usize) -> usize {
    (PRELOAD_THREADS / threads.max(1)).clamp(1, PRELOAD)
}
/// Samples pushed one by one per tick before playback jumps instead.
const CATCH_UP: usize = 64;
/// Longest jump expression typed.
const PROMPT_MAX: usize = 40;

pub use super::action::ReplayAction;

pub use super::format::datetime_utc;
pub use super::replay_cursor::Replay;

/// A recording opened for replay: the cursor state and the source.
pub struct Recorded {
    pub cursor: Replay,
    pub source: Box<dyn Seekable + Send>,
}

impl Replay {
    /// Open a recording (with at least one Sample).
    pub fn open(path: &Path) -> Result<Recorded> {
        Replay::from_reader(Reader::open(path)?, path)
    }

    pub fn from_reader(reader: Reader, path: &Path) -> Result<Recorded> {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        Replay::from_source(Box::new(RecordingSource::new(reader)), name)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    }

    /// Any seekable source (a recording, fixtures) under `name`.
    pub fn from_source(source: Box<dyn Seekable + Send>, name: String) -> Result<Recorded> {
        let Some(cursor) = Replay::over(source.as_ref(), name) else {
            bail!("the recording has no Samples");
        };
        Ok(Recorded { cursor, source })
    }

    /// A cursor (on no Sample yet) over `src`; None when it holds none.
    pub fn over(src: &dyn Seekable, name: String) -> Option<Replay> {
        let n = src.len();
        let times = (0..n).filter_map(|i| src.time_of(i));
        let (Some(first_ns), Some(last_ns)) = (times.clone().min(), times.max()) else {
            return None;
        };
        Some(Replay {
            len: n,
            name,
            first_ns,
            last_ns,
            index: None,
            playing: false,
            speed: 1.0,
            prompt: None,
            due_ns: None,
            first_of: None,
        })
    }

    /// `src` grew at the end and lost `dropped` Samples at the front (the
    /// live history): the cursor stays on the same Sample (the oldest kept
    /// one if its own went).
    pub fn follow(&mut self, src: &dyn Seekable, dropped: usize) {
        self.len = src.len();
        self.first_ns = src.time_of(0).unwrap_or(self.first_ns);
        self.last_ns = src
            .time_of(self.len.saturating_sub(1))
            .unwrap_or(self.last_ns);
        self.index = self.index.map(|i| i.saturating_sub(dropped));
        if dropped > 0 {
            // the segment's first Sample is another one now
            self.first_of = None;
        }
    }

    /// The Sample a time expression means (the one whose interval holds
    /// that moment), or a one-line error.
    pub fn resolve(&self, r: &dyn Seekable, expr: &str) -> Result<usize, String> {
        let t = parse_time(expr)?.resolve(self.first_ns, self.last_ns);
        if t > self.last_ns {
            return Err(format!(
                "{} is after the end of the recording ({} UTC)",
                expr.trim(),
                datetime_utc(self.last_ns)
            ));
        }
        let first_interval = r.host_of(0).interval_ns;
        if t.saturating_add(first_interval) < self.first_ns {
            return Err(format!(
                "{} is before the start of the recording ({} UTC)",
                expr.trim(),
                datetime_utc(self.first_ns)
            ));
        }
        r.index_from_time(t)
            .ok_or_else(|| format!("{} is after the end of the recording", expr.trim()))
    }
}

/// Replay keys (None: not a replay, or a key replay leaves to the rest).
/// Called before the other mappings: in a replay, space plays, Home / End
/// go to the ends, and the jump prompt takes every key while open.
pub fn map_key(k: &KeyEvent, app: &AppState) -> Option<Action> {
    let r = app.replay.as_ref()?;
    if app.filter_editing || app.help {
        return None;
    }
    let plain = !k
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    let a = if r.prompt.is_some() {
        match k.code {
            KeyCode::Esc => ReplayAction::JumpCancel,
            KeyCode::Enter => ReplayAction::JumpDone,
            KeyCode::Backspace => ReplayAction::JumpBackspace,
            KeyCode::Char(c) if plain => ReplayAction::JumpChar(c),
            // the prompt owns the keyboard until Enter or Esc
            _ => return None,
        }
    } else {
        if !plain {
            return None;
        }
        match k.code {
            KeyCode::Char(' ') | KeyCode::Char('Z') => ReplayAction::PlayPause,
            KeyCode::Char('t') => ReplayAction::StepForward,
            KeyCode::Char('T') => ReplayAction::StepBack,
            KeyCode::Char('j') => ReplayAction::JumpStart,
            KeyCode::Char('x') => ReplayAction::CycleSpeed,
            KeyCode::Char('+') | KeyCode::Char('=') => ReplayAction::Faster,
            KeyCode::Char('-') => ReplayAction::Slower,
            KeyCode::Home => ReplayAction::First,
            KeyCode::End => ReplayAction::Last,
            _ => return None,
        }
    };
    Some(Action::Replay(a))
}

/// Whether the jump prompt is open (the key mapping must not act on keys
/// the replay mapping declined while it is).
pub fn prompt_open(app: &AppState) -> bool {
    app.replay.as_ref().is_some_and(|r| r.prompt.is_some())
}

fn say(app: &mut AppState, s: Status) {
    app.status = Some(s);
}

/// Apply a replay action to the app (nothing outside a replay), reading
/// the recording `src`.
pub fn apply(app: &mut AppState, src: &mut dyn Seekable, a: ReplayAction) {
    let Some(r) = app.replay.as_mut() else {
        return;
    };
    let len = r.len;
    let index = r.index.unwrap_or(0);
    match a {
        ReplayAction::PlayPause => {
            r.playing = !r.playing;
            r.due_ns = None;
            if r.playing && index + 1 >= len {
                // at the end: play from the start again
                seek(app, src, 0);
            }
        }
        ReplayAction::StepForward => {
            r.playing = false;
            if index + 1 >= len {
                say(app, Status::info("end of the recording"));
            } else {
                step_forward(app, src);
            }
        }
        ReplayAction::StepBack => {
            r.playing = false;
            if index == 0 {
                say(app, Status::info("start of the recording"));
            } else {
                seek(app, src, index - 1);
            }
        }
        ReplayAction::First => seek(app, src, 0),
        ReplayAction::Last => seek(app, src, len.saturating_sub(1)),
        ReplayAction::CycleSpeed => {
            let i = SPEEDS.iter().position(|&s| s == r.speed);
            r.speed = SPEEDS[i.map_or(0, |i| (i + 1) % SPEEDS.len())];
            r.due_ns = None;
        }
        ReplayAction::Faster => {
            r.speed = SPEEDS
                .iter()
                .copied()
                .find(|&s| s > r.speed)
                .unwrap_or(r.speed);
            r.due_ns = None;
        }
        ReplayAction::Slower => {
            r.speed = SPEEDS
                .iter()
                .rev()
                .copied()
                .find(|&s| s < r.speed)
                .unwrap_or(r.speed);
            r.due_ns = None;
        }
        ReplayAction::JumpStart => r.prompt = Some(String::new()),
        ReplayAction::JumpChar(c) => {
            if let Some(p) = &mut r.prompt {
                if !c.is_control() && p.chars().count() < PROMPT_MAX {
                    p.push(c);
                }
            }
        }
        ReplayAction::JumpBackspace => {
            if let Some(p) = &mut r.prompt {
                p.pop();
            }
        }
        ReplayAction::JumpCancel => r.prompt = None,
        ReplayAction::JumpDone => {
            let Some(text) = r.prompt.take() else {
                return;
            };
            if text.trim().is_empty() {
                return;
            }
            match r.resolve(src, &text) {
                Ok(i) => {
                    r.due_ns = None;
                    seek(app, src, i);
                }
                Err(e) => say(app, Status::error(e)),
            }
        }
    }
}

/// `tick` on the state and the recording it shows.
pub fn advance(app: &mut AppState, src: &mut dyn Seekable, now_ns: u64) -> bool {
    let Some(r) = app.replay.as_mut() else {
        return false;
    };
    if !r.playing {
        return false;
    }
    let speed = r.speed;
    let Some(mut due) = r.due_ns else {
        let gap = gap_after(src, r.index.unwrap_or(0), speed);
        r.due_ns = Some(now_ns + gap);
        return false;
    };
    let mut changed = false;
    let mut steps = 0;
    while now_ns >= due {
        let Some(r) = app.replay.as_ref() else {
            return changed;
        };
        let i = r.index.unwrap_or(0);
        if i + 1 >= r.len {
            if let Some(r) = app.replay.as_mut() {
                r.playing = false;
                r.due_ns = None;
            }
            say(app, Status::info("end of the recording"));
            return true;
        }
        if steps >= CATCH_UP {
            // far behind (x100 on a short interval): jump to where the
            // clock says playback is
            let behind = ((now_ns - due) as f64 * speed) as u64;
            let t = src.time_of(i).unwrap_or(0).saturating_add(behind);
            let target = src.index_at_time(t).unwrap_or(i).max(i + 1).min(r.len - 1);
            seek(app, src, target);
            due = now_ns;
        } else {
            step_forward(app, src);
            steps += 1;
        }
        changed = true;
        let Some(r) = app.replay.as_ref() else {
            return changed;
        };
        due += gap_after(src, r.index.unwrap_or(0), speed).max(1);
    }
    if let Some(r) = app.replay.as_mut() {
        r.due_ns = Some(due);
    }
    changed
}

/// Monotonic ns until the Sample after `i` is due at `speed`.
fn gap_after(rd: &dyn Seekable, i: usize, speed: f64) -> u64 {
    match (rd.time_of(i), rd.time_of(i + 1)) {
        (Some(a), Some(b)) => (b.saturating_sub(a).min(MAX_GAP_NS) as f64 / speed) as u64,
        _ => 0,
    }
}

/// One Sample forward: pushed onto the state like live pushes it when it
/// follows the one on screen, else a full load.
fn step_forward(app: &mut AppState, src: &mut dyn Seekable) {
    let Some(r) = app.replay.as_ref() else {
        return;
    };
    let Some(i) = r.index else {
        seek(app, src, 0);
        return;
    };
    let next = i + 1;
    if next >= r.len {
        return;
    }
    if src.prev_of(next) != Some(i) {
        seek(app, src, next);
        return;
    }
    let s = src.sample(next);
    match s {
        Ok(s) => {
            push(app, s);
            if let Some(r) = app.replay.as_mut() {
                r.index = Some(next);
            }
        }
        Err(e) => {
            // a damaged Sample: show the next one that reads
            say(app, Status::error(format!("{e:#}")));
            seek(app, src, next);
        }
    }
}

/// Put Sample `i` on screen: the state is rebuilt from up to PRELOAD
/// (fewer for big Samples, `preload_for`) Samples before it in its segment (fewer if one of them is damaged). A
/// damaged Sample `i` moves on to the next that decodes; if none does, the
/// state is left as it was and the status line says why.
pub fn seek(app: &mut AppState, src: &mut dyn Seekable, i: usize) {
    let Some(r) = app.replay.as_ref() else {
        return;
    };
    let len = r.len;
    let mut err = None;
    let mut loaded = None;
    let kept = r.first_of.filter(|_| app.first.is_some());
    let preload = preload_for(app.derived.threads.len());
    for target in i.min(len.saturating_sub(1))..len {
        match load(src, target, kept, preload) {
            Ok(l) => {
                loaded = Some((target, l));
                break;
            }
            Err(e) => {
                err.get_or_insert(e);
                if target > i + 64 {
                    break;
                }
            }
        }
    }
    let Some((target, l)) = loaded else {
        if let Some(e) = err {
            say(app, Status::error(format!("{e:#}")));
        }
        return;
    };
    let host = src.host_of(target);
    if let Some(e) = err {
        say(app, Status::error(format!("{e:#}")));
    }
    let first = match l.first {
        First::Kept => app.first.take(),
        First::Decoded(s) => Some(FirstSample::keep(&s)),
        First::InRun => None,
    };
    reset(app, host);
    // pushing sets `first` when it is None: the run starts the segment
    app.first = first;
    for s in l.run {
        push(app, s);
    }
    if let Some(r) = app.replay.as_mut() {
        r.index = Some(target);
        r.first_of = Some(l.seg_start);
    }
}

/// The segment's first Sample (the "since start" histograms' base).
enum First {
    /// the app already has it
    Kept,
    Decoded(Box<Sample>),
    /// the run starts with it
    InRun,
}

struct Loaded {
    /// Samples up to and including the target, oldest first
    run: Vec<Sample>,
    seg_start: usize,
    first: First,
}

/// Decode what `seek` needs for Sample `i`, with up to `preload` Samples
/// before it. `kept`: the segment start whose Sample the app holds as
/// `first`.
fn load(rd: &mut dyn Seekable, i: usize, kept: Option<usize>, preload: usize) -> Result<Loaded> {
    // back along the segment (index only, nothing decoded)
    let mut from = i;
    let mut seg_start = i;
    while let Some(p) = rd.prev_of(seg_start) {
        seg_start = p;
        if i - p <= preload {
            from = p;
        }
    }
    // the segment's first before the run, so the reader's cache ends on
    // the cursor (the next step decodes one delta)
    let first = if from == seg_start {
        First::InRun
    } else if kept == Some(seg_start) {
        First::Kept
    } else {
        match rd.sample(seg_start) {
            Ok(s) => First::Decoded(Box::new(s)),
            Err(_) => First::InRun,
        }
    };
    let mut run = Vec::with_capacity(i - from + 1);
    for j in from..=i {
        match rd.sample(j) {
            Ok(s) => run.push(s),
            // a damaged one before the cursor: the run starts after it
            Err(_) if j < i => run.clear(),
            Err(e) => return Err(e),
        }
    }
    Ok(Loaded {
        run,
        seg_start,
        first,
    })
}

/// Forget every Sample (a new position; possibly a new segment's host).
fn reset(app: &mut AppState, host: HostInfo) {
    app.interval_ns = host.interval_ns;
    app.host = host;
    app.history.clear();
    app.pending.clear();
    app.paused = false;
    app.first = None;
    app.series.clear();
    app.cgroup_throttle.clear();
    app.derived = Default::default();
    app.cpu = None;
    app.cpu_history = CpuHistory::default();
    app.since_start = None;
}

fn push(app: &mut AppState, s: Sample) {
    // replay never pauses the app (space plays instead)
    app.paused = false;
    app.push_sample(s);
}

#[cfg(test)]
mod tests {
    use super::preload_for;

    #[test]
    fn big_samples_get_a_shorter_preload() {
        assert_eq!(preload_for(0), super::PRELOAD);
        assert_eq!(preload_for(3_000), super::PRELOAD);
        assert_eq!(preload_for(10_000), 10);
        assert_eq!(preload_for(50_000), 2);
        assert_eq!(preload_for(1_000_000), 1);
    }
}
