//! Key handling on the app state alone (no terminal): keys go through the
//! same mapping as the live UI (`keys::map_event`), then `AppState::apply`.
use crate::common;

use common::ui_kit::{press, press_event, typed};
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

use schedtop::model::interval::RowKey;
use schedtop::model::{Sample, SourceKind};
use schedtop::ui::action::{Action, Effect};
use schedtop::ui::app::{HistScope, WaitView};
use schedtop::ui::columns::Column;
use schedtop::ui::fixtures;
use schedtop::ui::{keys, AppState, View};

fn app() -> AppState {
    fixtures::app(SourceKind::Bpf, 120, 40)
}

fn comms(app: &AppState) -> Vec<String> {
    app.rows().iter().map(|r| r.comm.to_string()).collect()
}

/// A Sample one second after the fixture's last in which `tid` does a lot
/// of involuntary switching, so it moves to the top by NVCSW/s.
fn next_sample_with_burst(app: &AppState, tid: u32) -> Sample {
    let mut s = app.current().unwrap().clone();
    s.time_ns += 1_000_000_000;
    s.mono_ns += 1_000_000_000;
    for t in &mut s.threads {
        t.voluntary += 10;
        t.involuntary += if t.tid == tid { 100_000 } else { 10 };
    }
    s
}

#[test]
fn default_sort_is_involuntary_switches_descending_unknown_last() {
    let app = app();
    assert_eq!(app.sort, Column::NVCSW);
    let v: Vec<Option<f64>> = app.rows().iter().map(|r| r.nvcsw_s.get()).collect();
    let known: Vec<f64> = v.iter().flatten().copied().collect();
    assert!(known.windows(2).all(|w| w[0] >= w[1]), "{known:?}");
    assert_eq!(v.last(), Some(&None), "thread without a rate sorts last");
    assert_eq!(app.rows()[0].comm.as_ref(), "ffmpeg:enc0");
}

#[test]
fn sort_column_moves_and_inverts() {
    let mut app = app();
    press(&mut app, KeyCode::Char('>'));
    assert_eq!(app.sort, Column::CPU_PCT);
    assert_eq!(app.rows()[0].comm.as_ref(), "spin");
    press(&mut app, KeyCode::Char('I'));
    assert!(app.sort_inverted);
    let v: Vec<Option<f64>> = app.rows().iter().map(|r| r.cpu_pct.get()).collect();
    let known: Vec<f64> = v.iter().flatten().copied().collect();
    assert!(
        known.windows(2).all(|w| w[0] <= w[1]),
        "ascending: {known:?}"
    );
    assert_eq!(v.last(), Some(&None), "unknown still last when inverted");
    press(&mut app, KeyCode::F(6));
    assert_eq!(app.sort, Column::AVG_SLICE);
    press(&mut app, KeyCode::Char('P'));
    assert_eq!(app.sort, Column::CPU_PCT, "P sorts by CPU% as in htop");
    press(&mut app, KeyCode::Char('>'));
    assert!(
        !app.sort_inverted,
        "a new column starts in its own direction"
    );
    press(&mut app, KeyCode::Char('<'));
    press(&mut app, KeyCode::Char('<'));
    press(&mut app, KeyCode::Char('<'));
    assert_eq!(app.sort, Column::VCSW);
    assert_eq!(app.rows()[0].comm.as_ref(), "kworker/1:2");
    // by name: alphabetical
    press(&mut app, KeyCode::Char('<'));
    press(&mut app, KeyCode::Char('<'));
    assert_eq!(app.sort, Column::COMM);
    let names = comms(&app);
    let mut sorted = names.clone();
    sorted.sort_by_key(|s| s.to_lowercase());
    assert_eq!(names, sorted);
    // at 80 columns PID is not shown, so it is not a sort choice
    schedtop::ui::layout::apply(&mut app, Action::Resize(80, 24));
    press(&mut app, KeyCode::Char('<'));
    assert_eq!(app.sort, Column::TID);
    press(&mut app, KeyCode::Char('<'));
    assert_eq!(app.sort, Column::MIGR, "wraps around");
}

#[test]
fn filter_matches_the_cgroup_path_and_short_name() {
    let mut app = app();
    press(&mut app, KeyCode::Char('/'));
    // the short name of the container ("ctr 9b1c2d3e4f5a"), not in its path
    typed(&mut app, "ctr 9b1c");
    press(&mut app, KeyCode::Enter);
    let mut pids: Vec<u32> = app.rows().iter().map(|r| r.pid).collect();
    pids.dedup();
    assert_eq!(pids, [2210], "ffmpeg's container only");
    press(&mut app, KeyCode::Esc);
    // a path component: the postgres service
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "postgresql.service");
    press(&mut app, KeyCode::Enter);
    assert!(!app.rows().is_empty());
    assert!(app.rows().iter().all(|r| r.pid == 812));
}

#[test]
fn filter_by_name_or_pid_and_esc_clears() {
    let mut app = app();
    press(&mut app, KeyCode::Char('/'));
    assert!(app.filter_editing);
    typed(&mut app, "ENC");
    assert_eq!(app.rows().len(), 5);
    assert!(comms(&app).iter().all(|c| c.contains("enc")));
    // while typing, q is text, not quit
    assert_eq!(press(&mut app, KeyCode::Char('q')), Effect::None);
    assert_eq!(app.filter, "ENCq");
    assert!(app.rows().is_empty());
    press(&mut app, KeyCode::Backspace);
    press(&mut app, KeyCode::Enter);
    assert!(!app.filter_editing);
    assert_eq!(app.rows().len(), 5, "the filter stays after Enter");
    press(&mut app, KeyCode::Esc);
    assert!(app.filter.is_empty());
    assert_eq!(app.rows().len(), app.total_rows());
    // a pid selects its threads
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "812");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.rows().len(), 4);
    assert!(app.rows().iter().all(|r| r.pid == 812));
    // Esc while typing clears too
    press(&mut app, KeyCode::Char('/'));
    press(&mut app, KeyCode::Esc);
    assert!(app.filter.is_empty() && !app.filter_editing);
}

#[test]
fn follow_keeps_the_selected_thread_across_resorts() {
    let mut app = app();
    // select "spin" (5th by NVCSW/s)
    while app.selected_row().unwrap().comm.as_ref() != "spin" {
        press(&mut app, KeyCode::Down);
    }
    let at = app.selected;
    assert_eq!(at, 4);

    // without F the selection stays at the same position (htop)
    let mut plain = app.clone();
    let s = next_sample_with_burst(&plain, 3001);
    plain.push_sample(s);
    assert_eq!(
        plain.rows()[0].comm.as_ref(),
        "spin",
        "spin moved to the top"
    );
    assert_eq!(plain.selected, at);
    assert_ne!(plain.selected_row().unwrap().comm.as_ref(), "spin");

    // with F it moves with the thread
    press(&mut app, KeyCode::Char('F'));
    assert!(app.follow);
    let s = next_sample_with_burst(&app, 3001);
    app.push_sample(s);
    assert_eq!(app.selected, 0);
    assert_eq!(app.selected_row().unwrap().comm.as_ref(), "spin");
    press(&mut app, KeyCode::Char('F'));
    assert!(!app.follow);
}

#[test]
fn processes_aggregate_threads_and_toggle_back() {
    let mut app = app();
    // select ffmpeg:enc2 (pid 2210)
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.selected_row().unwrap().comm.as_ref(), "ffmpeg:enc2");
    let threads: Vec<_> = app
        .derived
        .threads
        .iter()
        .filter(|r| r.pid == 2210)
        .cloned()
        .collect();
    press(&mut app, KeyCode::Char('H'));
    assert_eq!(app.view, View::Processes);
    assert_eq!(app.rows().len(), 5);
    let p = app.selected_row().unwrap();
    assert_eq!(
        p.key,
        RowKey::Process { pid: 2210 },
        "selection moves to the thread's process"
    );
    assert_eq!(p.threads, 6);
    let sum: f64 = threads.iter().filter_map(|r| r.nvcsw_s.get()).sum();
    assert!((p.nvcsw_s.get().unwrap() - sum).abs() < 1e-6);
    let cpu: f64 = threads.iter().filter_map(|r| r.cpu_pct.get()).sum();
    assert!((p.cpu_pct.get().unwrap() - cpu).abs() < 1e-6);
    let slices: u64 = threads
        .iter()
        .filter_map(|r| r.slice_hist())
        .map(|h| h.total())
        .sum();
    assert_eq!(p.slice_hist().unwrap().total(), slices);
    // and back: the process's main thread
    press(&mut app, KeyCode::Char('H'));
    assert_eq!(app.view, View::Threads);
    assert_eq!(app.selected_row().unwrap().id, 2210);
}

#[test]
fn pause_freezes_the_screen_but_keeps_collecting() {
    let mut app = app();
    let before = app.rows().to_vec();
    let t_before = app.current().unwrap().time_ns;
    press(&mut app, KeyCode::Char(' '));
    assert!(app.paused);
    let s = next_sample_with_burst(&app, 3001);
    app.push_sample(s.clone());
    assert_eq!(app.rows().to_vec(), before, "paused: rows unchanged");
    assert_eq!(app.current().unwrap().time_ns, t_before);
    assert_eq!(app.pending.len(), 1);
    // navigation still works while paused
    press(&mut app, KeyCode::Down);
    assert_eq!(app.selected, 1);
    press(&mut app, KeyCode::Char('Z'));
    assert!(!app.paused, "Z toggles pause too (htop)");
    assert!(app.pending.is_empty());
    assert_eq!(app.current().unwrap().time_ns, s.time_ns);
    assert_eq!(app.rows()[0].comm.as_ref(), "spin");
}

#[test]
fn interval_keys_step_and_report() {
    let mut app = app();
    assert_eq!(
        press(&mut app, KeyCode::Char('+')),
        Effect::SetInterval(2_000_000_000)
    );
    assert_eq!(app.interval_ns, 2_000_000_000);
    press(&mut app, KeyCode::Char('-'));
    assert_eq!(
        press(&mut app, KeyCode::Char('-')),
        Effect::SetInterval(500_000_000)
    );
    for _ in 0..10 {
        press(&mut app, KeyCode::Char('-'));
    }
    assert_eq!(app.interval_ns, 100_000_000);
    assert_eq!(
        press(&mut app, KeyCode::Char('-')),
        Effect::None,
        "no step below the last"
    );
}

#[test]
fn navigation_clamps_and_scrolls() {
    let mut app = fixtures::app(SourceKind::Bpf, 80, 12);
    let page = app.page();
    assert!(page > 0 && page < app.rows().len(), "page {page}");
    press(&mut app, KeyCode::End);
    assert_eq!(app.selected, app.rows().len() - 1);
    assert_eq!(app.offset, app.rows().len() - page);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.selected, app.rows().len() - 1);
    press(&mut app, KeyCode::Home);
    assert_eq!((app.selected, app.offset), (0, 0));
    press(&mut app, KeyCode::Up);
    assert_eq!(app.selected, 0);
    press(&mut app, KeyCode::PageDown);
    assert_eq!(app.selected, page);
    assert!(app.offset <= app.selected && app.selected < app.offset + page);
    press(&mut app, KeyCode::PageUp);
    assert_eq!(app.selected, 0);
}

#[test]
fn help_detail_and_quit() {
    let mut app = app();
    assert_eq!(press(&mut app, KeyCode::Char('q')), Effect::Quit);
    press(&mut app, KeyCode::Char('?'));
    assert!(app.help);
    // any key closes help and does nothing else
    assert_eq!(press(&mut app, KeyCode::Char('q')), Effect::None);
    assert!(!app.help);
    press(&mut app, KeyCode::F(1));
    assert!(app.help);
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(
        press_event(&mut app, ctrl_c),
        Effect::Quit,
        "Ctrl-C quits from help"
    );
    press(&mut app, KeyCode::Char('h'));
    assert!(!app.help);

    press(&mut app, KeyCode::Enter);
    assert!(app.detail);
    press(&mut app, KeyCode::Char('a'));
    assert_eq!(app.hist_scope, HistScope::SinceStart);
    let since = app.since_start.clone().unwrap();
    let row = app.selected_row().unwrap().clone();
    let interval = row.slice_hist().cloned().unwrap();
    assert!(
        since.slice_hist.unwrap().total() > interval.total(),
        "since start holds more than one interval"
    );
    // the split waits add up to all waits, since start as in the interval
    let total = |h: &Option<schedtop::model::Log2Hist>| h.as_ref().map_or(0, |h| h.total());
    assert_eq!(
        total(&since.wakeup_wait_hist) + total(&since.preempt_wait_hist),
        total(&since.wait_hist)
    );
    assert!(total(&since.wait_hist) > total(&row.wait_hist().cloned()));
    // and the whys since start hold at least the interval's
    if let (Some(s), Some(i)) = (&since.why, &row.why) {
        let sum = |b: &[u64]| b.iter().sum::<u64>();
        assert!(sum(&s.blocked_on) >= sum(&i.blocked_on));
        assert!(s.preempted_by.is_empty(), "preemptors are per interval");
    }
    assert_eq!(app.wait_view, WaitView::All);
    press(&mut app, KeyCode::Char('w'));
    assert_eq!(app.wait_view, WaitView::AfterWakeup);
    press(&mut app, KeyCode::Char('w'));
    press(&mut app, KeyCode::Char('w'));
    assert_eq!(app.wait_view, WaitView::All, "w cycles through three");
    press(&mut app, KeyCode::Esc);
    assert!(!app.detail, "Esc closes the detail pane");
    assert_eq!(press(&mut app, KeyCode::F(10)), Effect::Quit);
}

#[test]
fn resize_keeps_selection_visible() {
    let mut app = app();
    press(&mut app, KeyCode::End);
    let sel = app.selected;
    assert_eq!(
        keys::map_event(&Event::Resize(80, 10), &app),
        Some(Action::Resize(80, 10))
    );
    schedtop::ui::layout::apply(&mut app, Action::Resize(80, 10));
    let page = app.page();
    assert!(app.offset <= sel && sel < app.offset + page.max(1));
    schedtop::ui::layout::apply(&mut app, Action::Resize(1, 1));
    schedtop::ui::layout::apply(&mut app, Action::Down);
    assert_eq!(app.selected, sel);
}

#[test]
fn cpu_and_numa_views_and_back() {
    let mut app = app();
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    let sel = app.selected_key;
    assert!(sel.is_some());
    // c shows the CPU view; c again goes back to the table
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(app.view, View::Cpus);
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(app.view, View::Threads);
    // n shows NUMA, keeping the selected thread; Esc goes back
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(app.view, View::Numa);
    assert_eq!(
        app.selected_key, sel,
        "the selection is kept for the NUMA view"
    );
    assert_eq!(
        app.highlighted_thread().map(|(r, _)| r.key),
        sel,
        "the NUMA view highlights the selected thread"
    );
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.view, View::Threads);
    assert_eq!(app.selected_key, sel);
    // m toggles the matrix in the NUMA view, and opens it from elsewhere
    press(&mut app, KeyCode::Char('m'));
    assert_eq!((app.view, app.numa_matrix), (View::Numa, true));
    press(&mut app, KeyCode::Char('m'));
    assert_eq!((app.view, app.numa_matrix), (View::Numa, false));
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(app.view, View::Threads);
    // c from n, then n from c: straight across, back to the table at the end
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(app.view, View::Cpus);
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(app.view, View::Numa);
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.view, View::Threads);
    // from the processes table, back goes to processes
    press(&mut app, KeyCode::Char('H'));
    press(&mut app, KeyCode::Char('c'));
    assert_eq!(app.view, View::Cpus);
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.view, View::Processes);
    // H from the CPU view shows the other table
    press(&mut app, KeyCode::Char('c'));
    press(&mut app, KeyCode::Char('H'));
    assert_eq!(app.view, View::Threads);
}

#[test]
fn esc_in_the_cpu_view_keeps_the_filter() {
    let mut app = app();
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "enc");
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('c'));
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.view, View::Threads);
    assert_eq!(app.filter, "enc", "the first Esc only leaves the view");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.filter, "");
}

#[test]
fn arrows_scroll_the_cpu_list_not_the_selection() {
    let topology = fixtures::numa_topology(16, 8);
    let mut app = fixtures::numa_app(topology, 80, 40);
    let sel = app.selected_key;
    press(&mut app, KeyCode::Char('c'));
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.cpu_scroll, 2);
    assert_eq!(app.selected_key, sel);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.cpu_scroll, 1);
    press(&mut app, KeyCode::End);
    // 128 CPU lines and 16 node titles
    assert_eq!(app.cpu_scroll, 128 + 16 - 1);
    press(&mut app, KeyCode::PageDown);
    assert_eq!(app.cpu_scroll, 128 + 16 - 1, "clamped");
    press(&mut app, KeyCode::Home);
    assert_eq!(app.cpu_scroll, 0);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.cpu_scroll, 0);
    // Enter opens no detail pane over the CPU view
    press(&mut app, KeyCode::Enter);
    assert!(!app.detail);
    // in the NUMA view the arrows pick another thread to highlight
    press(&mut app, KeyCode::Char('n'));
    press(&mut app, KeyCode::Down);
    assert_ne!(app.selected_key, sel);
    assert_eq!(app.selected, 1);
}

#[test]
fn help_scrolls_with_arrows_and_closes_on_other_keys() {
    let mut app = app();
    press(&mut app, KeyCode::Char('?'));
    assert_eq!(app.help_scroll, 0);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    assert!(app.help, "arrows scroll, they do not close");
    assert_eq!(app.help_scroll, 2);
    press(&mut app, KeyCode::PageUp);
    assert_eq!(app.help_scroll, 0);
    press(&mut app, KeyCode::End);
    assert!(app.help_scroll > 20);
    let sel = app.selected;
    press(&mut app, KeyCode::Char('c'));
    assert!(!app.help);
    assert_eq!(app.view, View::Threads, "the closing key does nothing else");
    assert_eq!(app.selected, sel);
    // reopened, it starts at the top
    press(&mut app, KeyCode::F(1));
    assert_eq!(app.help_scroll, 0);
}

#[test]
fn a_big_table_sorts_each_page_like_a_full_sort() {
    use schedtop::record::testdata::{synthetic_host, synthetic_samples, SynthOptions};
    let o = SynthOptions {
        threads: 12_000,
        samples: 3,
        seed: 9,
        ..Default::default()
    };
    let samples = synthetic_samples(&o);
    let mut app = fixtures::app_with(synthetic_host(&o), samples.clone(), 120, 40);
    // the expected order, by a plain full sort: NVCSW/s descending, unknown
    // last, ties by tid
    let mut want: Vec<(Option<f64>, u32)> = app
        .derived
        .threads
        .iter()
        .map(|r| (r.nvcsw_s.get(), r.id))
        .collect();
    want.sort_by(|a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => y.total_cmp(&x).then(a.1.cmp(&b.1)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.1.cmp(&b.1),
    });
    let window = |app: &AppState| -> Vec<u32> {
        let page = app.page();
        app.rows()
            .range(app.offset, app.offset + page)
            .map(|r| r.id)
            .collect()
    };
    let wanted = |app: &AppState, want: &[(Option<f64>, u32)]| -> Vec<u32> {
        want[app.offset..(app.offset + app.page()).min(want.len())]
            .iter()
            .map(|w| w.1)
            .collect()
    };
    assert_eq!(app.rows().len(), want.len());
    assert_eq!(window(&app), wanted(&app, &want), "first page");
    for _ in 0..3 {
        press(&mut app, KeyCode::PageDown);
    }
    assert!(app.offset > 0);
    assert_eq!(window(&app), wanted(&app, &want), "fourth page");
    press(&mut app, KeyCode::End);
    assert_eq!(window(&app), wanted(&app, &want), "last page");
    // follow a row from the middle through a re-sort
    press(&mut app, KeyCode::Home);
    for _ in 0..2 {
        press(&mut app, KeyCode::PageDown);
    }
    let followed = app.selected_row().unwrap().key;
    press(&mut app, KeyCode::Char('F'));
    press(&mut app, KeyCode::Char('I'));
    assert_eq!(app.selected_row().unwrap().key, followed);
    // inverted: ascending, unknown still last, ties still by tid
    want.sort_by(|a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => x.total_cmp(&y).then(a.1.cmp(&b.1)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.1.cmp(&b.1),
    });
    let RowKey::Thread { tid, .. } = followed else {
        panic!("a thread row")
    };
    assert_eq!(want[app.selected].1, tid, "the followed row at its rank");
    assert_eq!(window(&app), wanted(&app, &want), "its page, inverted");
}
