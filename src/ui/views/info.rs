//! The line above the table: which view, how many rows, sort, filter, follow.
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::ui::app::{AppState, View};
use crate::ui::format::escape_name;
use crate::ui::theme;

pub fn view_name(view: View) -> &'static str {
    match view {
        View::Threads => "Threads",
        View::Processes => "Processes",
        View::Cpus => "CPUs",
        View::Numa => "NUMA",
        View::Cgroups => "cgroups",
        View::Findings => "Findings",
    }
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    match app.view {
        View::Cpus => return super::cpus::render_info(app, f, area),
        View::Numa => return super::numa::render_info(app, f, area),
        View::Cgroups => return super::cgroups::render_info(app, f, area),
        View::Findings => return super::findings::render_info(app, f, area),
        View::Threads | View::Processes => {}
    }
    let arrow = if app.sort.descending_by_default() != app.sort_inverted {
        "▼"
    } else {
        "▲"
    };
    let mut s = vec![
        Span::styled(
            if app.tree_shown() {
                "Process tree"
            } else {
                app.grouping().title()
            },
            theme::title(),
        ),
        Span::raw(" "),
        Span::styled(
            if app.filter.is_empty() {
                format!("{}", app.rows().len())
            } else {
                format!("{}/{}", app.rows().len(), app.total_rows())
            },
            theme::value(),
        ),
        Span::raw("  "),
        Span::styled("sort", theme::label()),
        Span::raw(" "),
        Span::styled(format!("{}{arrow}", app.sort.title()), theme::value()),
    ];
    if !app.filter.is_empty() || app.filter_editing {
        s.push(Span::raw("  "));
        s.push(Span::styled("filter", theme::label()));
        s.push(Span::raw(" "));
        s.push(Span::styled(
            format!("\"{}\"", escape_name(&app.filter)),
            theme::warning(),
        ));
    }
    if app.follow {
        s.push(Span::raw("  "));
        s.push(Span::styled("FOLLOW", theme::warning()));
    }
    f.render_widget(Paragraph::new(Line::from(s)), area);
}
