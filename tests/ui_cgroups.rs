//! The cgroups view (`g`) on the fixture host: a Kubernetes container
//! limited to 2.1 CPUs and throttled, a systemd service, a session scope
//! whose cpu.stat vanished ('-', not 0). Snapshots at 80x24 and 200x50,
//! the detail pane, folding, sorting and the filter.
use schedtop::model::SourceKind;
use schedtop::ui::action::Action;
use schedtop::ui::app::{AppState, View};
use schedtop::ui::fixtures;
use schedtop::ui::render::{buffer_text, render_to_buffer};

fn screen(app: &AppState, w: u16, h: u16) -> String {
    buffer_text(&render_to_buffer(app, w, h))
}

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
        let ctr = s.lines().find(|l| l.contains("ctr 9b1c2d3e4f5a")).unwrap();
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
    while app.cgroups.sort != schedtop::ui::cgroup_tree::CgSort::ThrottledMs {
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
