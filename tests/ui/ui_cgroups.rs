//! The cgroups view (`g`) on the fixture host: a Kubernetes container
//! limited to 2.1 CPUs and throttled, a systemd service, a session scope
//! whose cpu.stat vanished ('-', not 0). Snapshots at 80x24 and 200x50,
//! the detail pane, folding, sorting and the filter.
use crate::common;

use common::ui_kit::screen;
use schedtop::model::SourceKind;
use schedtop::ui::action::Action;
use schedtop::ui::app::{AppState, View};
use schedtop::ui::fixtures;

fn cgroups_app(w: u16, h: u16) -> AppState {
    let mut app = fixtures::app(SourceKind::Bpf, w, h);
    schedtop::ui::layout::apply(&mut app, Action::ShowCgroups);
    assert_eq!(app.view, View::Cgroups);
    app
}

#[test]
fn cgroups_view_at_two_sizes() {
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let app = cgroups_app(w, h);
        let s = screen(&app, w, h);
        insta::assert_snapshot!(format!("cgroups_{w}x{h}"), s);
        // the throttled container, by its short name, with its quota
        // (the header's finding names it too)
        let row = |l: &&str| l.contains("ctr 9b1c2d3e4f5a") && !l.starts_with("warning:");
        let ctr = s.lines().find(row).unwrap();
        assert!(ctr.contains("2.1/4"), "{ctr}");
        // the session scope whose cpu.stat vanished shows '-', not 0
        let sess = s.lines().find(|l| l.contains("session-3.scope")).unwrap();
        assert!(sess.contains(" - "), "{sess}");
    }
}

#[test]
fn enter_opens_the_detail_with_histograms_sparkline_and_threads() {
    let mut app = cgroups_app(200, 50);
    // the busiest cgroup after the root is the container (sorted by CPU%)
    while app
        .cgroups
        .selected_path
        .as_deref()
        .is_some_and(|p| !p.contains("cri-containerd"))
    {
        schedtop::ui::layout::apply(&mut app, Action::Down);
    }
    schedtop::ui::layout::apply(&mut app, Action::ToggleDetail);
    let s = screen(&app, 200, 50);
    insta::assert_snapshot!("cgroups_detail_200x50", s);
    assert!(s.contains("run-queue wait") && s.contains("throttled ms/s"));
    assert!(s.contains("ffmpeg:enc"), "its threads are listed");
    assert!(!s.contains("postgres "), "only its own threads");
}

#[test]
fn fold_sort_and_filter() {
    let mut app = cgroups_app(200, 50);
    let n = |app: &AppState| app.cgroups.rows(&app.derived.cgroups, &app.filter).len();
    assert_eq!(n(&app), 10);
    // fold the root: only it remains
    schedtop::ui::layout::apply(&mut app, Action::Home);
    schedtop::ui::layout::apply(&mut app, Action::CgroupFold(true));
    assert_eq!(n(&app), 1);
    schedtop::ui::layout::apply(&mut app, Action::CgroupFold(false));
    assert_eq!(n(&app), 10);
    // sort by throttled ms/s: the container's branch first under the root
    while app.cgroups.sort.figure().key != "throttled_ms_per_s" {
        schedtop::ui::layout::apply(&mut app, Action::SortNext);
    }
    let rows = app.cgroups.rows(&app.derived.cgroups, &app.filter);
    assert_eq!(app.derived.cgroups[rows[1]].path, "/kubepods.slice");
    // the filter matches short names and keeps the ancestors
    for c in "postgresql".chars() {
        schedtop::ui::layout::apply(&mut app, Action::FilterStart);
        schedtop::ui::layout::apply(&mut app, Action::FilterChar(c));
        schedtop::ui::layout::apply(&mut app, Action::FilterDone);
    }
    app.cgroups.refresh(&app.derived.cgroups, &app.filter);
    let rows = app.cgroups.rows(&app.derived.cgroups, &app.filter);
    let paths: Vec<&str> = rows
        .iter()
        .map(|&i| app.derived.cgroups[i].path.as_str())
        .collect();
    assert_eq!(
        paths,
        ["/", "/system.slice", "/system.slice/postgresql.service"]
    );
    // Esc goes back to the table
    schedtop::ui::layout::apply(&mut app, Action::Escape);
    assert!(app.view.is_table());
}

/// cgroup directories are named by whoever creates them (a container
/// runtime, a user with delegation): a name with a screen clear, a bell, a
/// C1 CSI, a bidi override and a newline must be shown escaped, in its own
/// row, without moving anything else.
#[test]
fn hostile_cgroup_names_are_escaped_in_the_tree() {
    let evil = "/evil\x1b[2J\x07.slice";
    let child = format!("{evil}/rtl\u{202e}gnp.exe\u{9b}31m\nnext-line.scope");
    let mut samples = fixtures::hostile_samples();
    for s in &mut samples {
        let first = s.cgroups.len() as u32;
        for path in [evil.to_string(), child.clone()] {
            s.cgroups.push(schedtop::model::CgroupSample {
                path,
                cpuset_cpus: Some(4),
                ..Default::default()
            });
        }
        for t in &mut s.threads {
            match t.tid {
                6666 => t.cgroup = Some(first),
                6667 => t.cgroup = Some(first + 1),
                _ => {}
            }
        }
    }
    let mut app = fixtures::app_with(fixtures::host(SourceKind::Bpf), samples, 100, 24);
    schedtop::ui::layout::apply(&mut app, Action::ShowCgroups);
    let s = screen(&app, 100, 24);
    insta::assert_snapshot!("cgroups_hostile_100x24", s);
    assert!(
        !s.chars().any(|c| c.is_control() && c != '\n'),
        "a control character reached the screen"
    );
    assert!(
        !s.contains('\u{202e}'),
        "a bidi override reached the screen"
    );
    // 24 lines, each 100 columns wide: the newline in the name did not
    // start a line of its own
    assert_eq!(s.lines().count(), 24);
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("evil")).collect();
    assert_eq!(rows.len(), 1, "{s}");
    // the child's row shows the override escaped; its name runs out of
    // column before the newline, which therefore shows nowhere
    assert!(s.contains("rtl\\u{202e}gnp.exe"), "{s}");
    assert!(
        !s.lines().any(|l| l.trim_start().starts_with("next-line")),
        "{s}"
    );
}
