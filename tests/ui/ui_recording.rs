//! Recording from the live view (`R`) on the app state: the file gets every
//! Sample pushed (paused or not) and reads back equal, the header says
//! `REC <file> <size>`, a second `R` stops, and a file that cannot be
//! created is a one-line message, not a crash.
use crate::common;

use std::os::unix::fs::PermissionsExt;

use schedtop::model::SourceKind;
use schedtop::record::Reader;
use schedtop::ui::action::Action;
use schedtop::ui::fixtures;
use schedtop::ui::recording::default_name;
use schedtop::ui::Session;

fn app() -> Session {
    Session::live(fixtures::app(SourceKind::Bpf, 120, 40))
}

fn next(app: &Session) -> schedtop::model::Sample {
    let mut s = app
        .pending
        .back()
        .map(|iv| &*iv.sample)
        .or(app.current())
        .unwrap()
        .clone();
    s.time_ns += 1_000_000_000;
    s.mono_ns += 1_000_000_000;
    for t in &mut s.threads {
        t.voluntary += 3;
        t.involuntary += 1;
    }
    s
}

#[test]
fn default_names_are_safe_and_dated() {
    assert_eq!(
        default_name("db-1.example", fixtures::T0_NS),
        "schedtop-db-1.example-20261121-231500.schedtop"
    );
    assert_eq!(
        default_name("../evil/\u{1b}[2J", 0),
        "schedtop-_._evil___2J-19700101-000000.schedtop"
    );
    assert_eq!(
        default_name("", 0),
        "schedtop-unknown-19700101-000000.schedtop"
    );
    assert!(!default_name(&"x/".repeat(500), 0).contains('/'));
}

#[test]
fn r_records_every_sample_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app();
    app.toggle_recording_in(dir.path());
    let rec = app.recording.clone().expect("recording");
    assert!(rec.path.starts_with(dir.path()));
    let name = rec.path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("schedtop-"), "{name}");
    assert!(name.ends_with(".schedtop"), "{name}");
    let mode = std::fs::metadata(&rec.path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // the newest Sample went in at once
    assert_eq!(rec.samples, 1);
    let mut written = vec![app.current().unwrap().clone()];
    // paused: the screen waits, the recording does not
    app.apply(Action::TogglePause);
    for _ in 0..3 {
        let s = next(&app);
        written.push(s.clone());
        app.push_sample(s);
    }
    app.apply(Action::TogglePause);
    let s = next(&app);
    written.push(s.clone());
    app.push_sample(s);
    let rec = app.recording.clone().unwrap();
    assert_eq!(rec.samples, 5);
    let screen = common::ui_kit::screen(&app, 120, 40);
    let size = schedtop::ui::format::bytes(rec.size);
    assert!(
        screen.contains(&format!("REC  {name} {size}")),
        "header: {screen}"
    );
    drop(rec);
    app.apply(Action::ToggleRecord);
    assert!(app.recording.is_none());
    let st = app.status.clone().unwrap();
    assert!(st.text.starts_with("recorded 5 samples"), "{}", st.text);
    assert!(!st.error);
    let mut r = Reader::open(&dir.path().join(&name)).unwrap();
    assert_eq!(r.len(), 5);
    assert!(r.damage().is_empty(), "{:?}", r.damage());
    for (i, want) in written.iter().enumerate() {
        assert_eq!(&r.sample(i).unwrap(), want, "Sample {i}");
    }
    assert_eq!(r.host().hostname, app.host.hostname);
    // a Sample after stopping goes nowhere
    let s = next(&app);
    app.push_sample(s);
    assert_eq!(Reader::open(&dir.path().join(&name)).unwrap().len(), 5);
}

#[test]
fn a_file_that_cannot_be_created_is_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o500)).unwrap();
    let mut app = app();
    // root writes anywhere: use a missing directory instead then
    let target = if nix_root() { ro.join("missing") } else { ro };
    app.toggle_recording_in(&target);
    assert!(app.recording.is_none());
    let st = app.status.clone().expect("a message");
    assert!(st.error);
    assert!(st.text.starts_with("cannot record: "), "{}", st.text);
    assert!(!st.text.contains('\n'));
    assert!(!st.text.contains("os error"), "{}", st.text);
}

/// A symlink planted under the recording's name is never followed: `R`
/// records under the next free name, as `s` and `W` do.
#[test]
fn a_symlink_with_the_name_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let mut app = app();
    // plant links under the names of this second and the next two
    let now = schedtop::record::writer::now_ns();
    let mut planted = Vec::new();
    for k in 0..3 {
        let n = default_name(&app.host.hostname, now + k * 1_000_000_000);
        let link = dir.path().join(n);
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        planted.push(link);
    }
    app.toggle_recording_in(dir.path());
    let rec = app.recording.clone().expect("R records under another name");
    assert!(!planted.contains(&rec.path), "{}", rec.path.display());
    let m = std::fs::symlink_metadata(&rec.path).unwrap();
    assert!(m.is_file(), "{}", rec.path.display());
    app.toggle_recording_in(dir.path());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    for link in &planted {
        assert!(std::fs::symlink_metadata(link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
}

#[test]
fn replay_cannot_record() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1.schedtop");
    let mut app = schedtop::ui::Session::replay_at(
        schedtop::ui::replay::Replay::open(&path).unwrap(),
        2,
        false,
    );
    app.apply(Action::ToggleRecord);
    assert!(app.recording.is_none());
    assert!(app.status.as_ref().unwrap().error);
}

fn nix_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
