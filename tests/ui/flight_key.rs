//! The `W` key on the app state alone: without --flight it says how to turn
//! the flight recorder on; with it, the key sends a dump request (to a
//! channel the test holds, standing in for the recorder thread) and the
//! answer lands on the status line; a real dump of a ring of synthetic
//! events is written 0600 under the screenshot name, never over an
//! existing file or through a symlink.
use std::os::unix::fs::PermissionsExt;
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::common;

use common::ui_kit::{key_event, press_char};
use ratatui::crossterm::event::{Event, KeyCode};

use schedtop::collect::flight::{EventKind, FlightEvent, COMM_LEN};
use schedtop::export::flight_ring::{
    write_dump, DumpOutcome, DumpRequest, DumpSummary, Ring, DEFAULT_BYTE_CAP,
};
use schedtop::export::perfetto::ClockSnapshot;
use schedtop::model::SourceKind;
use schedtop::ui::action::{Action, Effect};
use schedtop::ui::flight_key::{self, FlightLink, OFF};
use schedtop::ui::{fixtures, keys, AppState};

/// 2026-11-21 23:15:00 UTC
fn at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_795_302_900)
}

/// What the event loop does for W.
fn press_w(app: &mut AppState, link: Option<&mut FlightLink>) -> bool {
    assert_eq!(press_char(app, 'W'), Effect::WriteFlight);
    flight_key::request(app, link, at())
}

#[test]
fn w_maps_to_write_flight() {
    let app = fixtures::app(SourceKind::Bpf, 100, 30);
    let k = key_event(KeyCode::Char('W'));
    assert_eq!(
        keys::map_event(&Event::Key(k), &app),
        Some(Action::WriteFlight)
    );
    assert!(keys::HELP
        .iter()
        .any(|(k, d)| *k == "W" && d.contains("flight")));
}

#[test]
fn w_without_flight_says_how_to_turn_it_on() {
    let mut app = fixtures::app(SourceKind::Bpf, 100, 30);
    assert!(!press_w(&mut app, None));
    let st = app.status.clone().unwrap();
    assert_eq!(st.text, OFF);
    assert_eq!(
        st.text,
        "flight recorder off: start schedtop with --flight SECS"
    );
    // the next key clears it
    press_char(&mut app, 'P');
    assert!(app.status.is_none());
}

#[test]
fn w_with_flight_sends_a_request_and_shows_the_answer() {
    let mut app = fixtures::app(SourceKind::Bpf, 100, 30);
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = mpsc::channel::<DumpRequest>();
    let mut link = FlightLink::new(tx, dir.path().to_path_buf(), Duration::from_secs(10));

    assert!(press_w(&mut app, Some(&mut link)));
    let req = rx.try_recv().expect("one request sent");
    assert!(rx.try_recv().is_err(), "only one");
    assert_eq!(req.dir, dir.path());
    assert_eq!(req.host, app.host.hostname);
    assert_eq!(req.time, at());
    assert_eq!(link.pending, 1);
    let st = app.status.clone().unwrap();
    assert!(
        st.text
            .starts_with("flight recorder: writing the last 10 s"),
        "{st:?}"
    );
    // nothing arrived yet: the status stays
    assert!(!flight_key::poll(&mut app, &mut link));

    let path = dir.path().join("schedtop-x-20261121-231500.pftrace");
    req.reply
        .send(Ok(DumpSummary {
            path: path.clone(),
            events: 4321,
            span: Duration::from_millis(9_960),
            dropped: 3,
        }))
        .unwrap();
    assert!(flight_key::poll(&mut app, &mut link));
    assert_eq!(link.pending, 0);
    let st = app.status.clone().unwrap();
    assert!(!st.error);
    assert_eq!(
        st.text,
        format!(
            "flight recorder: wrote {} (4321 events, last 10 s, 3 dropped)",
            path.display()
        )
    );

    // an error is one line, shown as an error
    assert!(press_w(&mut app, Some(&mut link)));
    let req = rx.try_recv().unwrap();
    let err: DumpOutcome = Err("cannot create x: Permission denied (os error 13)".into());
    req.reply.send(err).unwrap();
    assert!(flight_key::poll(&mut app, &mut link));
    let st = app.status.clone().unwrap();
    assert!(st.error);
    assert_eq!(
        st.text,
        "flight recorder: cannot create x: Permission denied (os error 13)"
    );

    // the recorder has gone: the key says so
    drop(rx);
    assert!(!press_w(&mut app, Some(&mut link)));
    assert!(app.status.clone().unwrap().error);
}

fn event(ts: u64, cpu: u32, pid: i32) -> FlightEvent {
    let mut comm = [0u8; COMM_LEN];
    comm[..6].copy_from_slice(b"worker");
    FlightEvent {
        ts,
        kind: EventKind::Switch,
        cpu,
        common_pid: pid as u32,
        pid,
        tgid: pid,
        prio: 120,
        comm,
        next_pid: 0,
        next_tgid: 0,
        next_prio: 120,
        next_comm: [0; COMM_LEN],
        prev_state: 1,
        target_cpu: 0,
        orig_cpu: 0,
    }
}

#[test]
fn a_dump_is_0600_named_like_screenshots_and_never_clobbers() {
    let dir = tempfile::tempdir().unwrap();
    let mut ring = Ring::new(Duration::from_secs(5), DEFAULT_BYTE_CAP, 0);
    for i in 0..5000u64 {
        ring.push(&event(i * 1_000_000, (i % 2) as u32, 77));
    }
    let snap = ring.snapshot(5_000_000_000, 7);
    let clocks = ClockSnapshot {
        boottime: 5_000_000_000,
        monotonic: 1,
        realtime: 2,
    };
    // a symlink planted at the first name is not followed
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let first = dir.path().join("schedtop-h-20261121-231500.pftrace");
    std::os::unix::fs::symlink(&victim, &first).unwrap();
    let s = write_dump(&snap, clocks, dir.path(), "h", at()).unwrap();
    assert_eq!(
        s.path,
        dir.path().join("schedtop-h-20261121-231500-2.pftrace")
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(s.events, 5000);
    assert_eq!(s.dropped, 7);
    assert_eq!(s.span, Duration::from_secs(5));
    let m = std::fs::metadata(&s.path).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
    assert!(m.len() > 5000 * 20);
    // the next one does not overwrite it
    let s2 = write_dump(&snap, clocks, dir.path(), "h", at()).unwrap();
    assert_ne!(s2.path, s.path);
}
