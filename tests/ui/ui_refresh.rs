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
