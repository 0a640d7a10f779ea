//! The findings on screen: the header's line for the top one, the findings
//! view (`y`) and Enter to the view that shows the evidence, on fixture
//! Samples whose trouble is known (16 spinners in a half-CPU quota on a
//! 2-CPU box: fixtures/quota.rs) and on the usual fixture, where nothing
//! waits long enough to be named. A replay of a recording of the quota
//! fixture shows the findings computed from the recorded Samples, and
//! `dump --format json` of it carries them.
// keys through the live key map, screens as text
use crate::common::ui_kit::{press as key, screen};
use ratatui::crossterm::event::KeyCode;
use schedtop::export::dump::{dump, DumpOptions, Format};
use schedtop::model::findings::{of_samples, Scope};
use schedtop::model::interval::RowKey;
use schedtop::model::SourceKind;
use schedtop::record::{Reader, WriteOptions, Writer};
use schedtop::ui::fixtures::{self, QUOTA_CGROUP, QUOTA_PID};
use schedtop::ui::replay::Replay;
use schedtop::ui::{AppState, Session, View};

fn quota_app(w: u16, h: u16) -> AppState {
    fixtures::app_with(fixtures::quota_host(), fixtures::quota_samples(), w, h)
}

fn pool(w: u16, h: u16) -> AppState {
    let host = fixtures::host(SourceKind::Bpf);
    fixtures::app_with(host, fixtures::worker_pool_samples(), w, h)
}

/// The header: the lines above the view's info line.
fn header(s: &str, info: &str) -> String {
    s.lines()
        .take_while(|l| !l.starts_with(info))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_header_names_the_quota_and_a_healthy_box_names_nothing() {
    let s = screen(&quota_app(80, 24), 80, 24);
    let h = header(&s, "Threads");
    // 16 threads x 31.25 ms a second in a 0.5-CPU quota, 9 of 10 periods
    // throttled, while 1.5 of 2 CPUs sat idle
    assert!(
        h.contains(
            "warning: cpu_quota (+1, y) cgroup api.service is held at its CPU quota of 0.50"
        ),
        "{h}"
    );
    // 24 workers of one server, each with about 35 ms of CPU a second on
    // a 4-CPU box and waits of tens of microseconds: nothing to name
    let healthy = pool(80, 24);
    assert!(
        healthy.findings.list.is_empty(),
        "{:?}",
        healthy.findings.list
    );
    let s = screen(&healthy, 80, 24);
    assert!(!header(&s, "Threads").contains("warning:"), "{s}");
}

#[test]
fn findings_view_snapshots() {
    for (w, h) in [(80, 24), (200, 50)] {
        let mut app = quota_app(w, h);
        key(&mut app, KeyCode::Char('y'));
        assert_eq!(app.view, View::Findings);
        let s = screen(&app, w, h);
        insta::assert_snapshot!(format!("findings_{w}x{h}"), s);
        // ranked: the quota (the cause) before the threads that run into it
        let quota = s.find("cpu_quota").unwrap();
        let threads = s.find("too_many_threads").unwrap();
        assert!(quota < threads, "{s}");
        // impact: 15.5 s waited of 16 s runnable
        assert!(s.contains("97%  cgroup api.service"), "{s}");
        assert!(s.contains("quota_cpus") && s.contains("throttled_periods_pct"));
        assert!(s.contains("Findings 2  warnings 2"), "{s}");
    }
    // the healthy fixture's findings view says so
    let mut app = pool(80, 24);
    key(&mut app, KeyCode::Char('y'));
    assert!(screen(&app, 80, 24).contains("Nothing found"));
}

#[test]
fn enter_opens_the_view_that_shows_the_evidence() {
    let mut app = quota_app(120, 40);
    key(&mut app, KeyCode::Char('y'));
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.view, View::Cgroups);
    assert_eq!(app.cgroups.selected_path.as_deref(), Some(QUOTA_CGROUP));
    // the second finding is the process: its detail pane
    key(&mut app, KeyCode::Char('y'));
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.view, View::Processes);
    assert!(app.detail);
    assert_eq!(
        app.selected_row().map(|r| r.key),
        Some(RowKey::Process { pid: QUOTA_PID })
    );
    assert!(screen(&app, 120, 40).contains("api"));
    // y again, then y: back where it was
    key(&mut app, KeyCode::Char('y'));
    key(&mut app, KeyCode::Char('y'));
    assert_eq!(app.view, View::Processes);
}

#[test]
fn a_replay_shows_the_findings_of_its_moment_and_dump_json_carries_them() {
    let host = fixtures::quota_host();
    let samples = fixtures::quota_samples();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quota.schedtop");
    let mut w = Writer::open(&path, &host, WriteOptions::default()).unwrap();
    for s in &samples {
        w.write_sample(s).unwrap();
    }
    w.finish().unwrap();
    // the rules run on the Samples as written, independently of the UI
    let expected = of_samples(&host.topology, &samples[1], &samples[2], &Scope::default());
    assert_eq!(expected[0].kind.key(), "cpu_quota");

    let mut app = Session::replay_at(Replay::open(&path).unwrap(), 2, false);
    app.apply(schedtop::ui::action::Action::Resize(80, 24));
    assert_eq!(app.findings.list, expected);
    let s = screen(&app, 80, 24);
    assert!(s.contains("warning: cpu_quota"), "{s}");
    // the first Sample has no interval: nothing to find, nothing shown
    let app = Session::replay_at(Replay::open(&path).unwrap(), 0, false);
    assert!(app.findings.list.is_empty());
    assert!(!screen(&app, 80, 24).contains("warning:"));

    let opts = DumpOptions {
        format: Format::Json,
        from: None,
        to: None,
        pids: vec![],
    };
    let mut out = Vec::new();
    dump(&mut Reader::open(&path).unwrap(), &opts, &mut out).unwrap();
    let last: serde_json::Value =
        serde_json::from_str(String::from_utf8(out).unwrap().lines().last().unwrap()).unwrap();
    let f = &last["findings"][0];
    assert_eq!(f["kind"], "cpu_quota");
    assert_eq!(f["severity"], "warning");
    assert_eq!(f["subject"]["type"], "cgroup");
    assert_eq!(f["subject"]["id"], QUOTA_CGROUP);
    assert_eq!(f["subject"]["name"], "api.service");
    assert_eq!(f["evidence"]["quota_cpus"], 0.5);
    assert_eq!(f["evidence"]["throttled_periods_pct"], 90.0);
    assert_eq!(f["impact"], 15.5 / 16.0);
    assert!(f["text"].as_str().unwrap().contains("api.service"));
}

#[test]
fn the_header_names_an_enabled_sched_ext_scheduler_and_escapes_it() {
    let mut host = fixtures::host(SourceKind::Bpf);
    let plain = fixtures::app_with(host.clone(), fixtures::worker_pool_samples(), 200, 50);
    assert!(!screen(&plain, 200, 50).contains("sched_ext"));
    host.sched_ext = Some("bpfland\x1b[2J".into());
    let app = fixtures::app_with(host, fixtures::worker_pool_samples(), 200, 50);
    let s = screen(&app, 200, 50);
    let h = header(&s, "Threads");
    // the escape shown as text (^[), never sent to the terminal
    assert!(h.contains("sched_ext bpfland^[[2J"), "{h}");
    assert!(!h.contains('\x1b'), "{h}");
}
