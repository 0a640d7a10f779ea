//! The setup screen and config.toml: snapshots of the screen, its keys
//! through the event loop, every setting through a save and a load, a
//! file edited by hand meanwhile never overwritten, a broken file one line
//! and the defaults, --no-config. Files live in temp dirs (XDG_CONFIG_HOME
//! and HOME pointed there for the binary): the real ~/.config is never read.
use crate::common;

use std::process::{Command, Stdio};

use common::ui_kit::{keys, run_script, ScriptedFeed, Step};
use ratatui::crossterm::event::KeyCode;

use schedtop::model::SourceKind;
use schedtop::ui::config_file::{self, Loaded};
use schedtop::ui::settings::{ColumnChoice, Settings, Theme};
use schedtop::ui::state_types::HistScope;
use schedtop::ui::{fixtures, AppState, Mode, Session, View};

fn session(loaded: Loaded) -> Session {
    let mut app = AppState::new(fixtures::host(SourceKind::Bpf), Mode::Live);
    app.start_with(loaded.settings);
    let mut s = Session::live(app);
    s.config = loaded.store;
    s
}

fn play(s: &mut Session, steps: Vec<Step>, w: u16, h: u16) -> String {
    let host = s.host.clone();
    let samples = fixtures::samples(host.source);
    let mut all = vec![Step::Frame];
    all.extend(steps);
    run_script(s, &mut ScriptedFeed::all_at_once(host, samples), all, w, h)
}

fn k(c: KeyCode) -> Step {
    Step::Key(c)
}

/// Every setting away from its default.
fn unusual() -> Settings {
    Settings {
        view: "processes".into(),
        tree: true,
        sort: "cpu_pct".into(),
        sort_inverted: true,
        interval_ms: 5000,
        hist_octaves: true,
        hist_since_start: true,
        theme: Theme::HighContrast,
        mouse: false,
        exact_figures: true,
        columns: ColumnChoice {
            threads: vec!["comm".into(), "nvcsw".into(), "tid".into()],
            processes: vec!["cpu_pct".into(), "comm".into()],
        },
    }
}

#[test]
fn the_setup_screen_as_drawn() {
    let mut s = session(Loaded::defaults());
    let screen = play(&mut s, keys("S"), 100, 40);
    insta::assert_snapshot!("setup_100x40", screen);
    // every column of the threads table (from the metric table) has its
    // line, and the settings their values
    for c in schedtop::ui::columns::columns_of(View::Threads) {
        let line = format!("[x] {:<12}{}", c.title().trim(), c.0);
        assert!(screen.contains(&line), "{line}\n{screen}");
    }
    assert!(screen.contains("Interval           1.00s"), "{screen}");
    let mut s = session(Loaded::defaults());
    let screen = play(&mut s, keys("S"), 80, 24);
    insta::assert_snapshot!("setup_80x24", screen);
    // at the end of the list: scrolled, the cursor line in sight
    let mut s = session(Loaded::defaults());
    let screen = play(&mut s, vec![k(KeyCode::F(2)), k(KeyCode::End)], 80, 24);
    insta::assert_snapshot!("setup_end_80x24", screen);
    let last = schedtop::ui::columns::columns_of(View::Processes)
        .last()
        .unwrap();
    assert!(
        screen.contains(&format!("> [x] {:<12}{}", last.title().trim(), last.0)),
        "{screen}"
    );
}

#[test]
fn every_setting_survives_a_save_and_a_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/config.toml");
    let mut store = config_file::load(&path).store.unwrap();
    store.save(&unusual()).unwrap();
    let back = config_file::load(&path);
    assert_eq!(back.warning, None);
    assert_eq!(back.settings, unusual());
    assert!(back.theme_chosen);
    // and the defaults too
    let mut store = back.store.unwrap();
    store.save(&Settings::default()).unwrap();
    assert_eq!(config_file::load(&path).settings, Settings::default());
}

#[test]
fn settings_at_start_reach_the_screen() {
    let mut s = session(Loaded {
        settings: unusual(),
        ..Loaded::defaults()
    });
    let screen = play(&mut s, vec![], 120, 30);
    assert_eq!(s.view, View::Processes);
    assert_eq!((s.sort.0, s.sort_inverted), ("cpu_pct", true));
    assert!(s.hist_octaves && s.hist_scope == HistScope::SinceStart);
    assert_eq!(s.interval_ns, 5_000_000_000);
    // the processes table shows CPU% then COMM, nothing else
    let title = screen.lines().find(|l| l.contains("COMM")).unwrap();
    assert_eq!(
        title.split_whitespace().collect::<Vec<_>>(),
        ["CPU%", "COMM"],
        "{screen}"
    );
    // H: the threads table's chosen columns, in their order
    let mut s = session(Loaded {
        settings: unusual(),
        ..Loaded::defaults()
    });
    let screen = play(&mut s, keys("H"), 120, 30);
    let title = screen.lines().find(|l| l.contains("COMM")).unwrap();
    let words: Vec<&str> = title.split_whitespace().collect();
    assert_eq!(words, ["COMM", "NVCSW/s", "TID"], "{screen}");
}

#[test]
fn enter_on_the_setup_screen_saves_and_uses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let mut s = session(config_file::load(&path));
    // S, down to Interval (the 4th line), one step longer, Enter
    let mut steps = keys("S");
    steps.extend([k(KeyCode::Down), k(KeyCode::Down), k(KeyCode::Down)]);
    steps.extend([k(KeyCode::Right), k(KeyCode::Enter), Step::Frame]);
    let screen = play(&mut s, steps, 120, 30);
    assert!(screen.contains("settings saved to"), "{screen}");
    assert_eq!(s.interval_ns, 2_000_000_000);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("interval_ms = 2000"), "{text}");
    assert_eq!(config_file::load(&path).settings.interval_ms, 2000);
}

#[test]
fn quit_asks_before_forgetting_settings_used_but_not_saved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    // Esc uses the change for this run; q asks; s saves and quits
    let mut steps = keys("S");
    steps.extend([
        k(KeyCode::Down),
        k(KeyCode::Right),
        k(KeyCode::Esc),
        Step::Frame,
    ]);
    steps.extend(keys("q"));
    steps.push(Step::Frame);
    let mut asked = session(config_file::load(&path));
    let screen = play(&mut asked, steps.clone(), 140, 30);
    assert!(screen.contains("s saves them and quits"), "{screen}");
    assert!(!path.exists());
    steps.extend(keys("s"));
    // after the save the loop has quit: this key is never read
    steps.extend(keys("H"));
    let mut s = session(config_file::load(&path));
    play(&mut s, steps.clone(), 140, 30);
    assert_eq!(s.view, View::Threads);
    let saved = config_file::load(&path).settings;
    assert_ne!(saved.sort, Settings::default().sort);
    assert_eq!(saved.sort, s.sort.0);
    // q at the question: quit, nothing written
    let path2 = dir.path().join("other.toml");
    let mut steps2 = steps[..steps.len() - 2].to_vec();
    steps2.extend(keys("q"));
    let mut s = session(config_file::load(&path2));
    play(&mut s, steps2, 140, 30);
    assert!(!path2.exists());
}

#[test]
fn a_file_edited_by_hand_meanwhile_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "interval_ms = 2000\n").unwrap();
    let loaded = config_file::load(&path);
    assert_eq!(loaded.settings.interval_ms, 2000);
    let hand = "interval_ms = 500 # edited in vi while schedtop ran\n";
    std::fs::write(&path, hand).unwrap();
    // through the setup screen: Enter says so, the file stays theirs
    let mut s = session(loaded);
    let mut steps = keys("S");
    steps.extend([
        k(KeyCode::Down),
        k(KeyCode::Right),
        k(KeyCode::Enter),
        Step::Frame,
    ]);
    let screen = play(&mut s, steps, 120, 30);
    assert!(screen.contains("changed on disk"), "{screen}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), hand);
    // the same file read again can be saved
    let mut store = config_file::load(&path).store.unwrap();
    store.save(&unusual()).unwrap();
    assert_eq!(config_file::load(&path).settings, unusual());
}

#[test]
fn unknown_keys_and_comments_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let text = "# my settings\nfuture_option = [1, 2]\ntheme = \"monochrome\"\n\n[columns]\nthreads = [\"comm\", \"nvcsw\"]\nwidths = { comm = 30 }\n\n[plugin.x]\nenabled = true\n";
    std::fs::write(&path, text).unwrap();
    let loaded = config_file::load(&path);
    assert_eq!(loaded.settings.theme, Theme::Monochrome);
    let mut store = loaded.store.unwrap();
    store.save(&unusual()).unwrap();
    let out = std::fs::read_to_string(&path).unwrap();
    for kept in [
        "# my settings",
        "future_option = [1, 2]",
        "widths = { comm = 30 }",
        "[plugin.x]\nenabled = true",
    ] {
        assert!(out.contains(kept), "{kept:?} lost:\n{out}");
    }
    assert_eq!(config_file::load(&path).settings, unusual());
}

#[test]
fn a_broken_file_is_one_line_and_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    for (text, says) in [
        ("interval_ms = \"fast\"\n", "line 1"),
        ("view = \"threads\"\n[columns\n", "line 2"),
        ("sort = \"nope\"\n", "nope"),
        ("interval_ms = 0\n", "interval_ms"),
        ("\u{0}\u{1}garbage", "line 1"),
    ] {
        std::fs::write(&path, text).unwrap();
        let l = config_file::load(&path);
        let w = l.warning.clone().unwrap();
        assert!(!w.contains('\n') && w.contains(says), "{text:?}: {w}");
        assert!(
            w.contains("config.toml") && w.contains("default settings"),
            "{w}"
        );
        assert_eq!(l.settings, Settings::default());
        // and never written over
        assert!(l.store.unwrap().save(&unusual()).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}

/// `schedtop ARGS` with XDG_CONFIG_HOME and HOME in `dir`, stdout not a
/// terminal (the live view stops right after reading its settings): stderr.
fn schedtop_stderr(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(args)
        .env("XDG_CONFIG_HOME", dir)
        .env("HOME", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_binary_reads_xdg_config_home_and_no_config_ignores_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("schedtop/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "mouse = maybe\n").unwrap();
    let err = schedtop_stderr(dir.path(), &[]);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with(&format!("schedtop: {}: line 1:", file.display())),
        "{err}"
    );
    assert!(lines[1].contains("not a terminal"), "{err}");
    // --no-config: not a word about it
    let err = schedtop_stderr(dir.path(), &["--no-config"]);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("config.toml"), "{err}");
    // --config FILE reads that one instead
    let other = dir.path().join("other.toml");
    std::fs::write(&other, "view = 3\n").unwrap();
    let err = schedtop_stderr(dir.path(), &["--config", other.to_str().unwrap()]);
    assert!(
        err.starts_with(&format!("schedtop: {}: line 1:", other.display())),
        "{err}"
    );
    // the broken files are as they were
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mouse = maybe\n");
}

#[test]
fn flags_override_the_file_and_are_not_saved_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, "interval_ms = 2000\ntheme = \"high-contrast\"\n").unwrap();
    let args = schedtop::prefs_cli::PrefsArgs {
        config: Some(path.clone()),
        no_config: false,
        no_mouse: true,
        exact: true,
    };
    let l = schedtop::prefs_cli::load(&args, Some(250_000_000));
    assert!(!l.settings.mouse);
    assert!(l.settings.exact_figures);
    assert_eq!(l.settings.interval_ms, 250);
    assert_eq!(l.settings.theme, Theme::HighContrast);
    // a save that changed only the sort keeps the file's interval and mouse
    let mut s = l.settings.clone();
    s.sort = "cpu_pct".into();
    l.store.unwrap().save(&s).unwrap();
    let back = config_file::load(&path).settings;
    assert_eq!((back.interval_ms, back.mouse), (2000, true));
    assert!(!back.exact_figures, "--exact once is not exact for ever");
    assert_eq!(back.sort, "cpu_pct");
    // --no-config: the defaults, nothing to save to
    let none = schedtop::prefs_cli::load(
        &schedtop::prefs_cli::PrefsArgs {
            config: Some(path),
            no_config: true,
            no_mouse: false,
            exact: false,
        },
        None,
    );
    assert!(none.store.is_none());
    assert_eq!(none.settings.interval_ms, Settings::default().interval_ms);
}

#[test]
fn themes_recolour_the_whole_screen() {
    use ratatui::style::{Color, Modifier};
    let base = || {
        let mut s = session(Loaded::defaults());
        play(&mut s, vec![], 120, 30);
        s
    };
    let s = base();
    let default = schedtop::ui::render_to_buffer(&s, 120, 30);
    let colours = |b: &ratatui::buffer::Buffer| {
        b.content
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count()
    };
    assert!(colours(&default) > 100);
    let mut s = base();
    s.app.start_with(Settings {
        theme: Theme::Monochrome,
        ..Default::default()
    });
    let mono = schedtop::ui::render_to_buffer(&s, 120, 30);
    assert_eq!(colours(&mono), 0);
    // the same text; the table's title bar still stands out
    assert_eq!(
        schedtop::ui::render::buffer_text(&mono),
        schedtop::ui::render::buffer_text(&default)
    );
    let title_y = schedtop::ui::render::buffer_text(&mono)
        .lines()
        .position(|l| l.contains("COMM"))
        .unwrap() as u16;
    assert!(mono[(0, title_y)].modifier.contains(Modifier::REVERSED));
    let mut s = base();
    s.app.start_with(Settings {
        theme: Theme::HighContrast,
        ..Default::default()
    });
    let hc = schedtop::ui::render_to_buffer(&s, 120, 30);
    assert_eq!(hc[(0, title_y)].bg, Color::White);
    assert!(!hc.content.iter().any(|c| c.fg == Color::DarkGray));
}

#[test]
fn a_click_on_the_setup_screen_moves_its_cursor_and_the_wheel_too() {
    use ratatui::crossterm::event::{Event, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let m = |kind, y| {
        Step::Event(Event::Mouse(MouseEvent {
            kind,
            column: 10,
            row: y,
            modifiers: KeyModifiers::NONE,
        }))
    };
    let mut probe = session(Loaded::defaults());
    let screen = play(&mut probe, keys("S"), 100, 40);
    let y = screen
        .lines()
        .position(|l| l.contains("  Colours  "))
        .unwrap() as u16;
    let mut s = session(Loaded::defaults());
    let mut steps = keys("S");
    steps.extend([
        Step::Frame,
        m(MouseEventKind::Down(MouseButton::Left), y),
        Step::Frame,
    ]);
    // Right on the clicked line: the theme changes, Enter-less Esc uses it
    steps.extend([k(KeyCode::Right), k(KeyCode::Esc)]);
    play(&mut s, steps, 100, 40);
    assert_eq!(s.view_model.settings.theme, Theme::Monochrome);
    let mut s = session(Loaded::defaults());
    let mut steps = keys("S");
    steps.extend([Step::Frame, m(MouseEventKind::ScrollDown, 5), Step::Frame]);
    steps.extend([k(KeyCode::Right), k(KeyCode::Esc)]);
    play(&mut s, steps, 100, 40);
    // the wheel moved the cursor one line: to the sort
    assert_ne!(s.sort.0, Settings::default().sort);
}
