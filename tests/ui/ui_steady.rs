//! Figures that hold still in the live view (ui/steady.rs): a rate that
//! moved by 1 % keeps the figure drawn a second ago, one that moved by 18 %
//! shows at once, and a replay draws every figure exactly.
use crate::common;

use common::ui_kit::{press, press_char, screen};
use ratatui::crossterm::event::KeyCode;
use schedtop::model::{Sample, SourceKind};
use schedtop::ui::fixtures::{self, TREE_THREADS};
use schedtop::ui::settings::Settings;
use schedtop::ui::setup::{Field, FIELDS};
use schedtop::ui::{AppState, Mode};

/// The fixture's next second, with worker-0 waking 828 times (820 the
/// seconds before: +1 %) and worker-1 900 times (760: +18 %).
fn next_second(last: &Sample) -> Sample {
    let mut s = last.clone();
    s.time_ns += 1_000_000_000;
    s.mono_ns += 1_000_000_000;
    let mut threads = s.threads.to_vec();
    for t in &mut threads {
        let &(_, _, _, _, _, vol, invol, cpu_us) =
            TREE_THREADS.iter().find(|x| x.0 == t.tid).unwrap();
        let vol = match t.tid {
            5001 => 828,
            5002 => 900,
            _ => vol,
        };
        t.voluntary += vol;
        t.involuntary += invol;
        t.oncpu_ns += cpu_us * 1000;
        t.baseline = None;
    }
    s.threads = threads.into();
    s
}

/// The VCSW/s cell of `name`'s line.
fn vcsw(text: &str, name: &str) -> String {
    let head = text.lines().find(|l| l.contains(" COMM ")).unwrap();
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(name))
        .unwrap_or_else(|| panic!("{name}:\n{text}"));
    let end = head.find("VCSW/s").unwrap() + "VCSW/s".len();
    line[..end].split_whitespace().last().unwrap().to_string()
}

fn app(mode: Mode) -> AppState {
    app_with(mode, Settings::default())
}

fn app_with(mode: Mode, settings: Settings) -> AppState {
    let mut samples = fixtures::tree_samples();
    samples.push(next_second(samples.last().unwrap()));
    let mut app = AppState::new(fixtures::host(SourceKind::Bpf), mode);
    app.start_with(settings);
    schedtop::ui::layout::apply(&mut app, schedtop::ui::action::Action::Resize(120, 40));
    for s in samples {
        app.push_sample(s);
    }
    app
}

#[test]
fn a_small_move_keeps_its_figure_and_a_big_one_shows() {
    let live = screen(&app(Mode::Live), 120, 40);
    assert_eq!(
        vcsw(&live, "worker-0"),
        "820",
        "828 is 1 % from 820:\n{live}"
    );
    assert_eq!(vcsw(&live, "worker-1"), "900", "18 % shows:\n{live}");
    // a replay is exact
    let replay = screen(&app(Mode::Replay), 120, 40);
    assert_eq!(vcsw(&replay, "worker-0"), "828");
    assert_eq!(vcsw(&replay, "worker-1"), "900");
}

#[test]
fn exact_figures_draw_every_move_live() {
    // the setting (config.toml's exact_figures, --exact) from the start
    let exact = Settings {
        exact_figures: true,
        ..Default::default()
    };
    let live = screen(&app_with(Mode::Live, exact), 120, 40);
    assert_eq!(vcsw(&live, "worker-0"), "828", "exact:\n{live}");
    assert_eq!(vcsw(&live, "worker-1"), "900");
    // turned on in the setup screen (its "Figures" line, Esc: use now),
    // the held 820 gives way to 828 at once, without a new Sample
    let mut app = app(Mode::Live);
    assert_eq!(vcsw(&screen(&app, 120, 40), "worker-0"), "820");
    press_char(&mut app, 'S');
    let at = FIELDS
        .iter()
        .position(|&f| f == Field::ExactFigures)
        .unwrap();
    for _ in 0..at {
        press(&mut app, KeyCode::Down);
    }
    let setup = screen(&app, 120, 40);
    assert!(
        setup.contains("> Figures") && setup.contains("steady (hold moves of 5 % or less)"),
        "{setup}"
    );
    press_char(&mut app, ' ');
    assert!(screen(&app, 120, 40).contains("exact at each refresh"));
    press(&mut app, KeyCode::Esc);
    assert!(app.view_model.settings.exact_figures);
    let now = screen(&app, 120, 40);
    assert_eq!(vcsw(&now, "worker-0"), "828", "{now}");
}
