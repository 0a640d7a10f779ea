//! `M` in the NUMA view with a thread selected: its flows stay highlighted
//! only under a cause it migrated by in the interval.
use ratatui::style::Color;

use schedtop::model::why::{MigCause, WhySample};
use schedtop::ui::action::Action;
use schedtop::ui::fixtures;
use schedtop::ui::render::{buffer_text, render_to_buffer};
use schedtop::ui::AppState;

/// The 16-node fixture where every move of a wandering thread is NUMA
/// balancing, while the CPU->CPU flows are there under every cause (so a
/// flow of the thread's nodes is drawn whatever `M` picks); the wanderer of
/// node 5 selected.
fn numa_balanced_wanderer() -> AppState {
    let t = fixtures::numa_topology(16, 8);
    let mut samples = fixtures::numa_samples(&t);
    for s in &mut samples {
        for th in &mut s.threads {
            if let Some(m) = th.migrations {
                let mut why = WhySample::default();
                why.migrations_by_cause[MigCause::NumaBalance as usize] = m;
                th.why = Some(why.into());
            }
        }
        s.system.migrations_by_cause = vec![s.migrations.clone(); MigCause::ALL.len()];
    }
    let mut app = fixtures::app_with(fixtures::numa_host(t), samples, 200, 50);
    let mut keys = vec![Action::FilterStart];
    keys.extend("10041".chars().map(Action::FilterChar));
    keys.extend([Action::FilterDone, Action::ShowNuma]);
    for a in keys {
        schedtop::ui::layout::apply(&mut app, a);
    }
    assert_eq!(app.selected_row().unwrap().id, 10041);
    app
}

/// The selection line and how many cells below it (the map and the
/// matrix) are drawn highlighted.
fn look(app: &AppState) -> (String, usize) {
    let buf = render_to_buffer(app, 200, 50);
    let text = buffer_text(&buf);
    let y = text
        .lines()
        .position(|l| l.starts_with("thread 10041"))
        .unwrap();
    let line = text.lines().nth(y).unwrap().trim_end().to_string();
    let lit = (y as u16 + 1..50)
        .flat_map(|y| (0..200u16).map(move |x| (x, y)))
        .filter(|&p| buf[p].bg == Color::Magenta)
        .count();
    (line, lit)
}

#[test]
fn a_threads_flows_follow_the_cause_filter() {
    let mut app = numa_balanced_wanderer();
    let (line, lit_all) = look(&app);
    assert!(line.contains("flows of node 5 highlighted"), "{line}");
    assert!(
        !line.contains("of its moves"),
        "no filter, no per-cause note: {line}"
    );
    assert!(lit_all > 0);
    let mut seen = Vec::new();
    for &cause in &MigCause::ALL {
        schedtop::ui::layout::apply(&mut app, Action::CycleMigCause);
        assert_eq!(app.mig_cause, Some(cause));
        let (line, lit) = look(&app);
        if cause == MigCause::NumaBalance {
            // 2 moves in the interval, both NUMA balancing: the same cells
            assert!(
                line.ends_with("flows of node 5 highlighted (2 of its moves were numa_balance)  (Up/Down: another thread)"),
                "{line}"
            );
            assert_eq!(lit, lit_all);
        } else {
            assert!(
                line.contains(&format!(
                    "no {} migrations in the last interval",
                    cause.key()
                )),
                "{line}"
            );
            // the same flows are drawn, none lit: the thread made no such move
            assert_eq!(lit, 0, "nothing of the thread's is {cause:?}");
        }
        seen.push(cause);
    }
    assert_eq!(seen.len(), MigCause::ALL.len());
    // back to all causes: lit again
    schedtop::ui::layout::apply(&mut app, Action::CycleMigCause);
    assert_eq!(app.mig_cause, None);
    assert_eq!(look(&app).1, lit_all);
}
