//! The mouse through the whole event loop: crossterm mouse events from the
//! scripted event source, clicks placed where the drawn screen shows the
//! thing clicked (found in the screen's text, not computed from the
//! layout), effects read back from the screen and the state.
use crate::common;

use common::ui_kit::{run_script, ScriptedFeed, Step};
use ratatui::crossterm::event::{
    Event, KeyCode, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use schedtop::model::SourceKind;
use schedtop::ui::{fixtures, AppState, Mode, Session, View};

const W: u16 = 120;
const H: u16 = 30;

fn mouse(kind: MouseEventKind, x: u16, y: u16) -> Step {
    Step::Event(Event::Mouse(MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }))
}

fn click(at: (u16, u16)) -> Step {
    mouse(MouseEventKind::Down(MouseButton::Left), at.0, at.1)
}

fn wheel(down: bool) -> Step {
    let kind = if down {
        MouseEventKind::ScrollDown
    } else {
        MouseEventKind::ScrollUp
    };
    mouse(kind, 10, 10)
}

fn live() -> Session {
    Session::live(AppState::new(fixtures::host(SourceKind::Bpf), Mode::Live))
}

/// Play `steps` (after a first frame that brings the Samples and draws)
/// on `session`: the screen left.
fn play(session: &mut Session, steps: Vec<Step>) -> String {
    let host = session.host.clone();
    let samples = fixtures::samples(host.source);
    let mut all = vec![Step::Frame];
    for s in steps {
        all.push(s);
        all.push(Step::Frame);
    }
    run_script(
        session,
        &mut ScriptedFeed::all_at_once(host, samples),
        all,
        W,
        H,
    )
}

/// Where `needle` is drawn: (column, row) of its first cell, searched from
/// line `from` on.
fn find_from(screen: &str, needle: &str, from: usize) -> (u16, u16) {
    for (y, line) in screen.lines().enumerate().skip(from) {
        if let Some(i) = line.find(needle) {
            return (line[..i].chars().count() as u16, y as u16);
        }
    }
    panic!("{needle:?} not on screen:\n{screen}");
}

fn find(screen: &str, needle: &str) -> (u16, u16) {
    find_from(screen, needle, 0)
}

/// The table's title line and the TIDs of its rows, top to bottom.
fn tids(screen: &str) -> Vec<u64> {
    let (_, title) = find(screen, "COMM");
    screen
        .lines()
        .skip(usize::from(title) + 1)
        .map_while(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn a_title_click_sorts_and_a_second_inverts() {
    let before = play(&mut live(), vec![]);
    assert!(before.contains("sort NVCSW/s▼"), "{before}");
    let tid = find(&before, "TID");
    let mut s = live();
    let once = play(&mut s, vec![click(tid)]);
    assert!(once.contains("sort TID▲"), "{once}");
    let t = tids(&once);
    assert!(t.len() > 5, "{once}");
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    assert_eq!(s.sort.0, "tid");
    insta::assert_snapshot!("mouse_title_click_sorts_by_tid", once);

    let mut s = live();
    let twice = play(&mut s, vec![click(tid), click(tid)]);
    assert!(twice.contains("sort TID▼"), "{twice}");
    let t = tids(&twice);
    assert!(t.windows(2).all(|w| w[0] > w[1]), "{t:?}");
    assert!(s.sort_inverted);
}

#[test]
fn a_row_click_selects_it_and_a_second_opens_the_detail() {
    let before = play(&mut live(), vec![]);
    let (_, title) = find(&before, "COMM");
    let y = title + 4; // the fourth row
    let line = before.lines().nth(usize::from(y)).unwrap();
    let tid: u64 = line.split_whitespace().next().unwrap().parse().unwrap();
    let mut s = live();
    play(&mut s, vec![click((30, y))]);
    let r = s.selected_row().unwrap();
    assert_eq!(u64::from(r.id), tid, "{line}");
    assert_eq!(s.selected, 3);
    assert!(!s.detail);

    let mut s = live();
    let screen = play(&mut s, vec![click((30, y)), click((30, y))]);
    assert!(s.detail, "{screen}");
    assert!(screen.contains("run-queue latency"), "{screen}");
    insta::assert_snapshot!("mouse_double_click_opens_the_detail", screen);
    // another row's click is a click, not the second of a double click
    let mut s = live();
    play(&mut s, vec![click((30, y)), click((30, y + 1))]);
    assert!(!s.detail);
    assert_eq!(s.selected, 4);
}

#[test]
fn the_wheel_scrolls_three_lines_a_notch() {
    let mut s = live();
    play(&mut s, vec![wheel(true), wheel(true)]);
    assert_eq!(s.selected, 6);
    let mut s = live();
    play(&mut s, vec![wheel(true), wheel(true), wheel(false)]);
    assert_eq!(s.selected, 3);
    // far past the end: on the last row, scrolled so it shows
    let mut s = live();
    let n = {
        let mut probe = live();
        play(&mut probe, vec![]);
        probe.rows().len()
    };
    play(&mut s, vec![wheel(true); n]);
    assert_eq!(s.selected, n - 1);
    assert!(s.offset + s.table_rows >= n);
    assert_eq!(s.offset > 0, n > s.table_rows, "{n} rows");
}

#[test]
fn footer_hints_and_the_view_name_act_as_their_keys() {
    let before = play(&mut live(), vec![]);
    let footer = usize::from(H) - 1;
    // threads -> processes by the footer's H hint
    let procs = find_from(&before, "Procs", footer);
    let mut s = live();
    let screen = play(&mut s, vec![click(procs)]);
    assert_eq!(s.view, View::Processes, "{screen}");
    assert!(screen.contains("THR"), "{screen}");
    insta::assert_snapshot!("mouse_footer_hint_shows_processes", screen);
    // the view hints are the tabs: CPUs, cgroups
    for (hint, view) in [("CPUs", View::Cpus), ("Cgroups", View::Cgroups)] {
        let mut s = live();
        play(&mut s, vec![click(find_from(&before, hint, footer))]);
        assert_eq!(s.view, view, "{hint}");
    }
    // Help opens the help overlay; any click closes it
    let mut s = live();
    let screen = play(&mut s, vec![click(find_from(&before, "Help", footer))]);
    // (the loop's closing q closes the overlay before it quits)
    assert!(screen.contains("schedtop keys"), "{screen}");
    let mut s = live();
    let screen = play(
        &mut s,
        vec![click(find_from(&before, "Help", footer)), click((5, 5))],
    );
    assert!(!screen.contains("schedtop keys"), "{screen}");
    // the view's name above the table flips threads and processes
    let mut s = live();
    play(&mut s, vec![click(find(&before, "Threads"))]);
    assert_eq!(s.view, View::Processes);
    // Quit quits: the key after it is never read
    let mut s = live();
    play(
        &mut s,
        vec![
            click(find_from(&before, "Quit", footer)),
            Step::Key(KeyCode::Char('H')),
        ],
    );
    assert_eq!(s.view, View::Threads);
}

#[test]
fn a_click_on_a_fold_mark_folds_the_cgroup_tree() {
    let mut probe = live();
    let tree = play(&mut probe, vec![Step::Key(KeyCode::Char('g'))]);
    let rows_before = probe.cgroups.rows(&probe.derived.cgroups, "").len();
    // the first unfolded cgroup with children
    let (x, y) = find(&tree, "v ");
    let mut s = live();
    let folded = play(&mut s, vec![Step::Key(KeyCode::Char('g')), click((x, y))]);
    let rows_after = s.cgroups.rows(&s.derived.cgroups, "").len();
    assert!(rows_after < rows_before, "{folded}");
    assert_eq!(s.cgroups.collapsed.len(), 1);
    let line = folded.lines().nth(usize::from(y)).unwrap();
    assert!(line[..].contains("> "), "{line}");
    // and a second click on it unfolds
    let mut s = live();
    play(
        &mut s,
        vec![Step::Key(KeyCode::Char('g')), click((x, y)), click((x, y))],
    );
    assert!(s.cgroups.collapsed.is_empty());
    // a click on the name selects without folding
    let mut s = live();
    play(
        &mut s,
        vec![Step::Key(KeyCode::Char('g')), click((x + 6, y + 1))],
    );
    assert!(s.cgroups.collapsed.is_empty());
    assert_eq!(
        s.cgroups.selected,
        usize::from(y + 1 - find(&tree, "CGROUP").1 - 1)
    );
}

#[test]
fn mouse_off_ignores_clicks() {
    let before = play(&mut live(), vec![]);
    let tid = find(&before, "TID");
    let mut s = live();
    s.app.start_with(schedtop::ui::settings::Settings {
        mouse: false,
        ..Default::default()
    });
    play(&mut s, vec![click(tid), wheel(true)]);
    assert_eq!(s.sort.0, "nvcsw");
    assert_eq!(s.selected, 0);
}
