//! Rewind while live, through the whole event loop on TestBackend: Samples
//! keep arriving one per loop turn while `T` steps back through the kept
//! history; the header says `REWIND −Ns` next to the moving live clock,
//! and `End` returns to live. `R` while rewound records the whole history.
use crate::common;

use common::ui_kit::{frames, run_script, ScriptedFeed, Step};
use ratatui::crossterm::event::KeyCode;

use schedtop::model::{HostInfo, Sample};
use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
use schedtop::record::Reader;
use schedtop::ui::action::Action;
use schedtop::ui::history::{History, DEFAULT_BYTE_CAP, DEFAULT_WINDOW_NS};
use schedtop::ui::replay::ReplayAction;
use schedtop::ui::{AppState, Mode, Session};

const FIRST: usize = 30;

fn synth() -> (HostInfo, Vec<Sample>) {
    let o = SynthOptions {
        threads: 12,
        samples: 60,
        cpus: 4,
        ..Default::default()
    };
    (synthetic_host(&o), synthetic_samples(&o))
}

fn session(host: &HostInfo) -> Session {
    let h = History::new(host.clone(), DEFAULT_WINDOW_NS, DEFAULT_BYTE_CAP);
    Session::live_with_history(AppState::new(host.clone(), Mode::Live), h)
}

/// Run the loop: FIRST Samples in the first turn, one more per later turn
/// (as a live feed hands them over). The screen it left, and the session.
fn run(steps: Vec<Step>, w: u16, h: u16) -> (String, Session) {
    let (host, samples) = synth();
    let mut groups = vec![samples[..FIRST].to_vec()];
    groups.extend(samples[FIRST..].iter().map(|s| vec![s.clone()]));
    let mut feed = ScriptedFeed::per_turn(host.clone(), groups);
    let mut session = session(&host);
    let s = run_script(&mut session, &mut feed, steps, w, h);
    (s, session)
}

/// The header's `live HH:MM:SS` and `REWIND −Ns`, as numbers.
fn header_figures(s: &str) -> (Option<String>, Option<u64>) {
    let live = s
        .split("live ")
        .nth(1)
        .map(|r| r.chars().take(8).collect::<String>());
    let back = s.split("REWIND \u{2212}").nth(1).and_then(|r| {
        r.split('s')
            .next()
            .and_then(|n| n.trim().parse::<u64>().ok())
    });
    (live, back)
}

#[test]
fn t_steps_back_while_samples_keep_arriving_and_end_returns_live() {
    // turn 0: 30 Samples (23:00:00..23:00:29); turn 1: the 31st and T x3
    let mut steps = frames(1);
    steps.extend([KeyCode::Char('T'); 3].map(Step::Key));
    steps.extend(frames(4));
    let (s, session) = run(steps, 140, 20);
    insta::assert_snapshot!("rewind_three_back_140x20", s);
    // the cursor is on the 28th Sample (23:00:27), where the three steps left it
    assert!(s.contains("at 23:00:27 UTC"), "{s}");
    let (live, back) = header_figures(&s);
    // collection went on: later Samples arrived into the history
    let kept = session
        .history()
        .map(|h| schedtop::collect::Seekable::len(&*h));
    let kept = kept.unwrap();
    assert!(kept > FIRST + 1, "{kept} kept");
    let newest_s = kept - 1; // 1 s per Sample from 23:00:00
    assert_eq!(
        live.as_deref(),
        Some(format!("23:00:{newest_s:02}").as_str())
    );
    assert_eq!(back, Some(newest_s as u64 - 27), "{s}");
    assert!(s.contains(&format!("sample 28/{kept}")), "{s}");

    // End: live again, the newest Sample on screen, no rewind mark
    let mut steps = frames(1);
    steps.extend([KeyCode::Char('T'); 3].map(Step::Key));
    steps.extend(frames(2));
    steps.push(Step::Key(KeyCode::End));
    steps.extend(frames(2));
    let (s, session) = run(steps, 140, 20);
    insta::assert_snapshot!("rewind_end_live_140x20", s);
    assert!(!s.contains("REWIND"), "{s}");
    let kept = session
        .history()
        .map(|h| schedtop::collect::Seekable::len(&*h));
    let newest_s = kept.unwrap() - 1;
    assert!(s.contains(&format!("at 23:00:{newest_s:02} UTC")), "{s}");
    assert_eq!(
        session.current().map(|c| c.time_ns),
        session
            .history()
            .and_then(|h| schedtop::collect::Seekable::time_of(&*h, newest_s))
    );
}

#[test]
fn t_while_live_is_the_process_tree_not_a_step() {
    // live, `t` is htop's tree key (nothing is newer than live to step to)
    let mut steps = frames(1);
    steps.push(Step::Key(KeyCode::Char('t')));
    let (s, _) = run(steps, 140, 20);
    assert!(s.contains("Process tree"), "{s}");
    assert!(!s.contains("REWIND"), "{s}");
}

#[test]
fn r_while_rewound_records_the_whole_history_then_what_follows() {
    let (host, samples) = synth();
    let mut s = session(&host);
    for x in &samples[..FIRST] {
        s.push_sample(x.clone());
    }
    for _ in 0..5 {
        s.apply(Action::Replay(ReplayAction::StepBack));
    }
    let dir = tempfile::tempdir().unwrap();
    s.toggle_recording_in(dir.path());
    for x in &samples[FIRST..FIRST + 3] {
        s.push_sample(x.clone());
    }
    let path = s.recording.as_ref().unwrap().path.clone();
    // still rewound: the screen did not move on
    assert!(s.replay.is_some());
    drop(s); // the closing index
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let mut r = Reader::open(&path).unwrap();
    assert_eq!(r.len(), FIRST + 3);
    // the file starts with the oldest kept Sample, before the moment shown
    assert_eq!(r.time_of(0), Some(samples[0].time_ns));
    assert_eq!(r.sample(FIRST + 2).unwrap(), samples[FIRST + 2]);
    assert_eq!(r.sample(7).unwrap(), samples[7]);
}

/// A session fed FIRST Samples directly (no loop).
fn fed() -> (Session, Vec<Sample>) {
    let (host, samples) = synth();
    let mut s = session(&host);
    for x in &samples[..FIRST] {
        s.push_sample(x.clone());
    }
    (s, samples)
}

#[test]
fn j_then_esc_from_live_stays_live_and_a_jump_rewinds() {
    let (mut s, samples) = fed();
    s.apply(Action::Replay(ReplayAction::JumpStart));
    assert!(s.replay.as_ref().is_some_and(|r| r.prompt.is_some()));
    s.apply(Action::Replay(ReplayAction::JumpCancel));
    assert!(s.replay.is_none(), "Esc with nothing moved is live again");
    // j -10s: ten seconds before the newest kept Sample
    s.apply(Action::Replay(ReplayAction::JumpStart));
    for c in "-10s".chars() {
        s.apply(Action::Replay(ReplayAction::JumpChar(c)));
    }
    s.apply(Action::Replay(ReplayAction::JumpDone));
    let shown = s.current().map(|c| c.time_ns);
    // the Sample whose interval holds that moment: the first at or after it
    let t = samples[FIRST - 1].time_ns - 10_000_000_000;
    let want = samples[..FIRST].iter().find(|x| x.time_ns >= t);
    assert_eq!(shown, want.map(|x| x.time_ns));
    assert!(schedtop::ui::rewind::rewound(&s));
    // a live Sample arrives: the screen stays, the history grows
    s.push_sample(samples[FIRST].clone());
    assert_eq!(s.current().map(|c| c.time_ns), shown);
    assert_eq!(
        s.history().map(|h| schedtop::collect::Seekable::len(&*h)),
        Some(FIRST + 1)
    );
    // End: the newest, live
    s.apply(Action::Replay(ReplayAction::Last));
    assert!(s.replay.is_none());
    assert_eq!(s.current().map(|c| c.time_ns), Some(samples[FIRST].time_ns));
    s.push_sample(samples[FIRST + 1].clone());
    assert_eq!(
        s.current().map(|c| c.time_ns),
        Some(samples[FIRST + 1].time_ns)
    );
}

#[test]
fn playing_up_to_the_newest_sample_is_live_again() {
    let (mut s, _) = fed();
    for _ in 0..2 {
        s.apply(Action::Replay(ReplayAction::StepBack));
    }
    s.apply(Action::Replay(ReplayAction::CycleSpeed)); // x10
    s.apply(Action::Replay(ReplayAction::PlayPause));
    let mut now = 1_000_000_000u64;
    for _ in 0..20 {
        s.tick(now);
        now += 200_000_000;
    }
    assert!(s.replay.is_none(), "still rewound after playing to the end");
}

#[test]
fn without_history_t_says_rewind_is_off() {
    let (host, samples) = synth();
    let mut s = Session::live(AppState::new(host, Mode::Live));
    for x in &samples[..3] {
        s.push_sample(x.clone());
    }
    s.apply(Action::Replay(ReplayAction::StepBack));
    assert!(s.replay.is_none());
    let st = format!("{:?}", s.status);
    assert!(st.contains("rewind is off"), "{st}");
}

#[test]
fn the_history_flag_parses_durations_and_refuses_the_rest() {
    use clap::Parser;
    use schedtop::cli::Cli;
    let ns = |a: &[&str]| Cli::try_parse_from(a).map(|c| c.history);
    assert_eq!(ns(&["schedtop"]).unwrap(), 600_000_000_000);
    assert_eq!(
        ns(&["schedtop", "--history", "90s"]).unwrap(),
        90_000_000_000
    );
    assert_eq!(ns(&["schedtop", "--history", "0"]).unwrap(), 0);
    let e = ns(&["schedtop", "--history", "soon"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad duration \"soon\""), "{e}");
    let e = ns(&["schedtop", "--history", "2d"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most a day"), "{e}");
}

#[test]
fn batch_mode_is_not_refused_for_the_default_history() {
    use clap::Parser;
    use schedtop::cli::Cli;
    assert!(Cli::try_parse_from(["schedtop", "--batch"]).is_ok());
    let e = Cli::try_parse_from(["schedtop", "--batch", "--history", "5m"]).unwrap_err();
    assert!(e.to_string().contains("--history"), "{e}");
}
