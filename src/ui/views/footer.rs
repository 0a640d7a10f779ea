//! The bottom line: htop-style key hints, or the filter prompt while typing.
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::ui::app::{AppState, View};
use crate::ui::format::escape_name;
use crate::ui::theme;

/// (key, label, rank): the highest rank is left out first when the line
/// is too narrow.
fn hints(app: &AppState) -> Vec<(&'static str, &'static str, u8)> {
    match app.view {
        View::Cpus => {
            return vec![
                ("F1", "Help", 0),
                ("Esc", "Back", 0),
                ("n", "NUMA", 3),
                ("Up/Dn", "Scroll", 4),
                ("Spc", if app.paused { "Resume" } else { "Pause" }, 1),
                ("+-", "Interval", 5),
                ("q", "Quit", 0),
            ]
        }
        View::Cgroups => {
            return vec![
                ("F1", "Help", 0),
                ("Esc", "Back", 0),
                ("Enter", "Detail", 2),
                ("<>", "Sort", 3),
                ("Lt/Rt", "Fold", 4),
                ("/", "Filter", 5),
                ("Spc", if app.paused { "Resume" } else { "Pause" }, 1),
                ("q", "Quit", 0),
            ]
        }
        View::Findings => {
            return vec![
                ("F1", "Help", 0),
                ("Esc", "Back", 0),
                ("Enter", "Evidence", 1),
                ("Up/Dn", "Select", 3),
                ("Spc", if app.paused { "Resume" } else { "Pause" }, 2),
                ("q", "Quit", 0),
            ]
        }
        View::Numa => {
            return vec![
                ("F1", "Help", 0),
                ("Esc", "Back", 0),
                ("m", if app.numa_matrix { "Map" } else { "Matrix" }, 2),
                ("c", "CPUs", 3),
                ("Up/Dn", "Thread", 4),
                ("Spc", if app.paused { "Resume" } else { "Pause" }, 1),
                ("+-", "Interval", 5),
                ("q", "Quit", 0),
            ]
        }
        View::Threads | View::Processes => {}
    }
    vec![
        ("F1", "Help", 0),
        ("/", "Filter", 2),
        ("F6", "Sort", 3),
        ("I", "Invert", 7),
        (
            "H",
            match app.table_view {
                View::Processes => "Threads",
                _ => "Procs",
            },
            4,
        ),
        ("c", "CPUs", 9),
        ("n", "NUMA", 9),
        ("g", "Cgroups", 9),
        ("y", "Findings", 9),
        ("Enter", "Detail", 5),
        ("F", "Follow", 8),
        ("T", "Rewind", 7),
        ("Spc", if app.paused { "Resume" } else { "Pause" }, 1),
        ("+-", if app.tree_shown() { "Fold" } else { "Interval" }, 6),
        ("q", "Quit", 0),
    ]
}

/// The hints that fit in `width`, in their order.
fn fitting(app: &AppState, width: u16) -> Vec<(&'static str, &'static str, u8)> {
    let mut h = hints(app);
    super::key_hints::drop_to_fit(&mut h, width);
    h
}

/// The key hints where `render` draws them on a line `width` wide: (first
/// cell, cells, key); none when the line shows something else (a prompt,
/// a message, the replay's own hints).
pub fn hint_cells(app: &AppState, width: u16) -> Vec<(u16, u16, &'static str)> {
    if super::timeline::footer(app, width).is_some() || app.status.is_some() || app.filter_editing {
        return Vec::new();
    }
    let mut x = 0u16;
    let mut out = Vec::new();
    for (k, l, _) in fitting(app, width) {
        // keys and labels are ASCII: one cell per byte
        let w = (k.len() + l.len()) as u16;
        out.push((x, w, k));
        x = x.saturating_add(w + 1);
    }
    out
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    // replay: the jump prompt, else (below a message) its own key hints
    let line = if let Some(l) = super::timeline::footer(app, area.width) {
        l
    } else if let (Some(st), false) = (&app.status, app.filter_editing) {
        st.line()
    } else if app.filter_editing {
        Line::from(vec![
            Span::styled("Filter: ", theme::footer_key()),
            Span::styled(format!("{}_", escape_name(&app.filter)), theme::warning()),
            Span::raw("  "),
            Span::styled("Enter", theme::footer_key()),
            Span::styled("Done", theme::footer_label()),
            Span::raw(" "),
            Span::styled("Esc", theme::footer_key()),
            Span::styled("Clear", theme::footer_label()),
        ])
    } else {
        let mut s = Vec::new();
        for (k, l, _) in fitting(app, area.width) {
            s.push(Span::styled(k, theme::footer_key()));
            s.push(Span::styled(l, theme::footer_label()));
            s.push(Span::raw(" "));
        }
        Line::from(s)
    };
    f.render_widget(Paragraph::new(line), area);
}
