//! The one place where terminal input becomes `Action`s (htop's keys where
//! htop has one). The help overlay (views/help.rs) lists the same keys.
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::action::{Action, TreeAction};
use super::app::AppState;
use super::columns::Column;
use super::replay::ReplayAction;

/// The action for one input event in the app's current state, if any.
pub fn map_event(ev: &Event, app: &AppState) -> Option<Action> {
    match ev {
        Event::Resize(w, h) => Some(Action::Resize(*w, *h)),
        Event::Key(k) if k.kind != KeyEventKind::Release => map_key(k, app),
        _ => None,
    }
}

/// The action for one key press.
pub fn map_key(k: &KeyEvent, app: &AppState) -> Option<Action> {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    let alt = k.modifiers.contains(KeyModifiers::ALT);
    if ctrl && matches!(k.code, KeyCode::Char('c') | KeyCode::Char('C')) {
        return Some(Action::Quit);
    }
    // the setup screen and the question at quit take every key
    if let Some(a) = super::setup_keys::map_key(k, app) {
        return a;
    }
    if app.help {
        // like htop: any key leaves the help screen, except the ones that
        // scroll it (it can be longer than a small terminal)
        return Some(match k.code {
            KeyCode::Up => Action::HelpScroll(-1),
            KeyCode::Down => Action::HelpScroll(1),
            KeyCode::PageUp => Action::HelpScroll(-10),
            KeyCode::PageDown => Action::HelpScroll(10),
            KeyCode::Home => Action::HelpScroll(-1000),
            KeyCode::End => Action::HelpScroll(1000),
            _ => Action::CloseHelp,
        });
    }
    // the tree's `+` `-` fold, as htop's (before replay's speed keys)
    if let Some(a) = tree_fold_key(k, app) {
        return Some(a);
    }
    // replay: space plays, Home/End go to the ends, the jump prompt
    if let Some(a) = super::replay::map_key(k, app) {
        return Some(a);
    }
    if super::replay::prompt_open(app) {
        return None;
    }
    if let Some(a) = navigation(k.code) {
        return Some(a);
    }
    if app.filter_editing {
        return match k.code {
            KeyCode::Esc => Some(Action::FilterClear),
            KeyCode::Enter => Some(Action::FilterDone),
            KeyCode::Backspace => Some(Action::FilterBackspace),
            KeyCode::Char(c) if !ctrl && !alt => Some(Action::FilterChar(c)),
            _ => None,
        };
    }
    if ctrl || alt {
        return None;
    }
    let a = match k.code {
        KeyCode::Char('q') | KeyCode::F(10) => Action::Quit,
        KeyCode::Char('?') | KeyCode::Char('h') | KeyCode::F(1) => Action::ToggleHelp,
        KeyCode::Char('/') | KeyCode::F(4) => Action::FilterStart,
        KeyCode::Esc => Action::Escape,
        KeyCode::Char('<') | KeyCode::Char(',') => Action::SortPrev,
        KeyCode::Char('>') | KeyCode::Char('.') | KeyCode::F(6) => Action::SortNext,
        KeyCode::Char('I') => Action::SortInvert,
        KeyCode::Char('P') => Action::SortBy(Column::CPU_PCT),
        KeyCode::Char('H') => Action::ToggleProcesses,
        KeyCode::Char('G') => Action::CycleGrouping,
        KeyCode::Char(' ') | KeyCode::Char('Z') => Action::TogglePause,
        KeyCode::Char('+') | KeyCode::Char('=') => Action::IntervalUp,
        KeyCode::Char('-') => Action::IntervalDown,
        KeyCode::Enter => Action::ToggleDetail,
        KeyCode::Char('a') => Action::ToggleHistScope,
        KeyCode::Char('o') => Action::ToggleOctaves,
        KeyCode::Char('w') => Action::CycleWaitView,
        KeyCode::Char('F') => Action::ToggleFollow,
        KeyCode::Char('c') => Action::ShowCpus,
        KeyCode::Char('n') => Action::ShowNuma,
        KeyCode::Char('g') => Action::ShowCgroups,
        KeyCode::Char('y') => Action::ShowFindings,
        KeyCode::Left => Action::CgroupFold(true),
        KeyCode::Right => Action::CgroupFold(false),
        KeyCode::Char('m') => Action::ToggleMatrix,
        KeyCode::Char('M') => Action::CycleMigCause,
        KeyCode::Char('s') => Action::Screenshot,
        KeyCode::Char('R') => Action::ToggleRecord,
        KeyCode::Char('W') => Action::WriteFlight,
        KeyCode::Char('i') => Action::FireIncident,
        KeyCode::F(2) | KeyCode::Char('S') => Action::Prefs(super::action::Prefs::OpenSetup),
        // htop's tree keys (in a replay `t` steps: F5 there)
        KeyCode::Char('t') | KeyCode::F(5) => Action::Tree(TreeAction::Toggle),
        // live: rewind through the kept history (once rewound, the replay
        // mapping above has every key, End returns to live)
        KeyCode::Char('T') => Action::Replay(ReplayAction::StepBack),
        KeyCode::Char('j') => Action::Replay(ReplayAction::JumpStart),
        _ => return None,
    };
    Some(a)
}

/// `+` and `-` on the process tree: open and fold the selected process.
fn tree_fold_key(k: &KeyEvent, app: &AppState) -> Option<Action> {
    let plain = !k
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    if !plain || !app.tree_shown() || app.view != super::app::View::Processes {
        return None;
    }
    if app.filter_editing || super::replay::prompt_open(app) {
        return None;
    }
    match k.code {
        KeyCode::Char('+') | KeyCode::Char('=') => Some(Action::Tree(TreeAction::Fold(false))),
        KeyCode::Char('-') => Some(Action::Tree(TreeAction::Fold(true))),
        _ => None,
    }
}

fn navigation(code: KeyCode) -> Option<Action> {
    Some(match code {
        KeyCode::Up => Action::Up,
        KeyCode::Down => Action::Down,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Home => Action::Home,
        KeyCode::End => Action::End,
        _ => return None,
    })
}

/// Every key, for the help overlay: (keys, what they do).
pub const HELP: &[(&str, &str)] = &[
    ("q  Ctrl-C  F10", "quit"),
    (
        "F2  S",
        "setup: columns, sort, interval, colours, mouse (saved)",
    ),
    (
        "mouse",
        "title: sort (again: invert); row: select (twice: detail)",
    ),
    ("", "wheel: scroll; key hints act; Shift+drag selects text"),
    ("Ctrl-Z", "suspend to the shell (fg resumes)"),
    (
        "?  h  F1",
        "this help (arrows scroll, any other key closes)",
    ),
    (
        "/  F4",
        "filter by name or pid (Enter keeps it, Esc clears)",
    ),
    ("<  >  F6", "sort by the column left / right"),
    ("I", "invert the sort order"),
    ("P", "sort by CPU%"),
    ("H", "threads <-> processes"),
    ("t  F5", "process tree: each process under its parent"),
    ("+  - in the tree", "open / fold the selected process"),
    ("G", "rows: threads, thread groups, processes, cgroups"),
    ("Enter Right  Left", "thread groups: open / close a group"),
    ("Enter", "detail pane: histograms and switch-rate sparkline"),
    ("a", "detail: last interval <-> since start"),
    (
        "o",
        "detail: whole octaves, as bpftrace hist() <-> sub-buckets",
    ),
    (
        "w",
        "detail: waits all / after a wakeup / after a preemption",
    ),
    ("F", "follow the selected row across re-sorts"),
    ("space  Z", "pause the screen (collection continues)"),
    ("+  -", "longer / shorter interval (in the tree: fold)"),
    ("Up Down PgUp PgDn", "move the selection"),
    ("Home  End", "first / last row"),
    ("c", "CPU view: run queues per CPU, grouped by node"),
    ("n", "NUMA view: migrations between nodes"),
    ("g", "cgroups view: throttling, pressure, waits per cgroup"),
    (
        "y",
        "findings: what is wrong, ranked (Enter: show the evidence)",
    ),
    (
        "Left  Right in g",
        "cgroups view: fold / unfold the selected cgroup",
    ),
    ("m", "NUMA view: node x node matrix <-> map"),
    ("M", "CPU, NUMA views: migrations of one cause (cycles)"),
    (
        "Up Down in c, n",
        "CPU view: scroll; NUMA view: pick the highlighted thread",
    ),
    ("Esc", "back to the table; else clear filter / close detail"),
    ("s", "save a screenshot (see --screenshot-format)"),
    (
        "R",
        "live: start / stop recording (./schedtop-HOST-*.schedtop)",
    ),
    (
        "W",
        "live: save the last --flight SECS of events (.pftrace)",
    ),
    ("i", "live: write an incident bundle now (--incident-dir)"),
    (
        "live: T  j",
        "rewind: one sample back / jump (kept --history)",
    ),
    (
        "rewound: End",
        "back to live (the replay keys below move while rewound)",
    ),
    ("rewound: R", "record, starting with the whole kept history"),
    ("replay: space  Z", "play / pause"),
    ("replay: t  T", "one sample forward / back (F5: tree)"),
    (
        "replay: j",
        "jump to a time: 23:15:00, -5m (from end), +90s",
    ),
    (
        "replay: x  +  -",
        "speed: cycle x1 x10 x100 / faster / slower",
    ),
    ("replay: Home  End", "first / last sample"),
];
