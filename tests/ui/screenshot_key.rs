//! The `s` key on the app state alone: it maps to a screenshot, the files
//! hold exactly the screen the state renders at the terminal's size, names
//! carry host and time, and the status line says where they went (or why
//! not) until the next key.
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common;

use common::ui_kit::{press_char, screen};

use schedtop::export::screenshot::Format;
use schedtop::model::SourceKind;
use schedtop::ui::action::{Action, Effect};
use schedtop::ui::screenshot_key::{self, ScreenshotConfig};
use schedtop::ui::{fixtures, AppState};

/// 2026-11-21 23:15:00 UTC
fn at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_795_302_900)
}

/// What the event loop does for the key: the effect, then the save.
fn press_s(app: &mut AppState, cfg: &ScreenshotConfig, now: SystemTime) -> Vec<std::path::PathBuf> {
    assert_eq!(press_char(app, 's'), Effect::Screenshot);
    screenshot_key::take(app, cfg, now)
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn s_saves_the_screen_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = ScreenshotConfig::new(&[Format::Svg, Format::Txt], dir.path()).unwrap();
    let mut app = fixtures::app(SourceKind::Bpf, 100, 30);
    let host = app.host.hostname.clone();
    // the screen before the key: what the file must hold
    let before = screen(&app, 100, 30);

    let saved = press_s(&mut app, &cfg, at());
    let stem = format!("schedtop-{host}-20261121-231500");
    assert_eq!(
        names(dir.path()),
        [format!("{stem}.svg"), format!("{stem}.txt")]
    );
    assert_eq!(saved.len(), 2);
    assert_eq!(saved[0], dir.path().join(format!("{stem}.svg")));

    let txt = std::fs::read_to_string(dir.path().join(format!("{stem}.txt"))).unwrap();
    let want: Vec<&str> = before.lines().map(str::trim_end).collect();
    let got: Vec<&str> = txt.lines().collect();
    assert_eq!(got, want, "the text file is the screen");
    let svg = std::fs::read_to_string(&saved[0]).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert_eq!(doc.root_element().attribute("width"), Some("840"));
    assert_eq!(doc.root_element().attribute("height"), Some("480"));

    let st = app.status.clone().expect("a status message");
    assert!(!st.error);
    assert_eq!(
        st.text,
        format!(
            "saved {}, .txt",
            dir.path().join(format!("{stem}.svg")).display()
        )
    );
    // on the bottom line of the next frame, in place of the key hints
    let screen = screen(&app, 100, 30);
    let last = screen.lines().last().unwrap();
    assert!(last.starts_with("saved "), "{last}");
    assert!(!last.contains("F1Help"), "{last}");

    // the same second again: new names, nothing overwritten
    press_s(&mut app, &cfg, at());
    assert_eq!(
        names(dir.path()),
        [
            format!("{stem}-2.svg"),
            format!("{stem}-2.txt"),
            format!("{stem}.svg"),
            format!("{stem}.txt"),
        ]
    );
    // the key itself clears the last message: the second screenshot shows
    // the key hints, not a stale "saved …"
    let txt2 = std::fs::read_to_string(dir.path().join(format!("{stem}-2.txt"))).unwrap();
    assert!(txt2.lines().last().unwrap().starts_with("F1Help"), "{txt2}");
    assert_eq!(txt2, txt);

    // any other key clears the message; a resize does not
    schedtop::ui::layout::apply(&mut app, Action::Resize(90, 30));
    assert!(app.status.is_some());
    press_char(&mut app, 'I');
    assert!(app.status.is_none());
}

#[test]
fn the_screen_is_saved_at_the_terminal_size_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = ScreenshotConfig::new(&Format::ALL, dir.path()).unwrap();
    let mut app = fixtures::app(SourceKind::Bpf, 100, 30);
    schedtop::ui::layout::apply(&mut app, Action::Resize(61, 17));
    press_char(&mut app, 'c'); // the CPU view
    let saved = press_s(&mut app, &cfg, at());
    let exts: Vec<String> = saved
        .iter()
        .map(|p| p.extension().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(exts, ["txt", "ansi", "html", "svg"]);
    let txt = std::fs::read_to_string(&saved[0]).unwrap();
    assert_eq!(txt.lines().count(), 17);
    assert!(txt.lines().all(|l| l.chars().count() <= 61));
    assert!(txt.contains("CPU"), "{txt}");
    let ansi = std::fs::read_to_string(&saved[1]).unwrap();
    assert!(ansi.contains("\x1b["), "ANSI keeps the colours");
    assert_eq!(app.status.as_ref().unwrap().text.matches(", .").count(), 3);
}

#[test]
fn a_failure_is_one_line_on_the_status_line() {
    let dir = tempfile::tempdir().unwrap();
    let shots = dir.path().join("shots");
    std::fs::create_dir(&shots).unwrap();
    let cfg = ScreenshotConfig::new(&[Format::Svg], &shots).unwrap();
    std::fs::remove_dir(&shots).unwrap();
    let mut app = fixtures::app(SourceKind::Bpf, 100, 30);
    assert!(press_s(&mut app, &cfg, at()).is_empty());
    let st = app.status.clone().unwrap();
    assert!(st.error);
    assert!(
        st.text
            .starts_with("screenshot failed: creating screenshot"),
        "{}",
        st.text
    );
    assert!(st.text.contains("No such file"), "{}", st.text);
    let screen = screen(&app, 100, 30);
    assert!(screen
        .lines()
        .last()
        .unwrap()
        .starts_with("screenshot failed"));
}

#[test]
fn a_planted_symlink_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = ScreenshotConfig::new(&[Format::Txt], dir.path()).unwrap();
    let mut app = fixtures::app(SourceKind::Bpf, 100, 30);
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let name = format!("schedtop-{}-20261121-231500.txt", app.host.hostname);
    std::os::unix::fs::symlink(&victim, dir.path().join(&name)).unwrap();
    let saved = press_s(&mut app, &cfg, at());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert_eq!(saved.len(), 1);
    assert!(
        saved[0].to_string_lossy().ends_with("-231500-2.txt"),
        "{saved:?}"
    );
}

#[test]
fn s_is_text_while_typing_a_filter_and_closes_help() {
    let mut app = fixtures::app(SourceKind::Bpf, 100, 30);
    press_char(&mut app, '/');
    assert_eq!(press_char(&mut app, 's'), Effect::None);
    assert_eq!(app.filter, "s");
    let mut app = fixtures::app(SourceKind::Bpf, 100, 30);
    press_char(&mut app, '?');
    assert_eq!(press_char(&mut app, 's'), Effect::None);
    assert!(!app.help);
    assert_eq!(press_char(&mut app, 's'), Effect::Screenshot);
}

#[test]
fn flags_are_checked_before_the_terminal_is_taken() {
    let bin = env!("CARGO_BIN_EXE_schedtop");
    let o = std::process::Command::new(bin)
        .args(["--screenshot-dir", "/nonexistent/shots"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err.trim_end(),
        "schedtop: --screenshot-dir /nonexistent/shots: No such file or directory (os error 2)"
    );
    let o = std::process::Command::new(bin)
        .args(["--screenshot-format", "svg,png"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown screenshot format \"png\""), "{err}");
}

#[test]
fn formats_repeat_or_come_as_a_list() {
    use clap::Parser;
    use schedtop::cli::{Cli, Command};
    let parse = |args: &[&str]| Cli::try_parse_from(args).unwrap();
    let c = parse(&["schedtop"]);
    assert_eq!(c.screenshot.screenshot_formats, [Format::Svg, Format::Txt]);
    assert_eq!(c.screenshot.screenshot_dir, Path::new("."));
    let c = parse(&[
        "schedtop",
        "--screenshot-format",
        "html",
        "--screenshot-format",
        "ansi,TXT",
        "--screenshot-dir",
        "/tmp",
    ]);
    assert_eq!(
        c.screenshot.screenshot_formats,
        [Format::Html, Format::Ansi, Format::Txt]
    );
    assert_eq!(c.screenshot.screenshot_dir, Path::new("/tmp"));
    let c = parse(&[
        "schedtop",
        "replay",
        "x.schedtop",
        "--screenshot-format",
        "svg",
    ]);
    match c.command {
        Some(Command::Replay(r)) => assert_eq!(r.screenshot.screenshot_formats, [Format::Svg]),
        other => panic!("{other:?}"),
    }
}
