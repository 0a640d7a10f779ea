//! The header's line for the top finding of the moment on screen (live,
//! rewound or replayed alike): its severity, kind, and its sentence, cut
//! to the line; `y` lists them all. Nothing when nothing is found.
use ratatui::text::{Line, Span};

use crate::model::findings::Severity;
use crate::ui::app::AppState;
use crate::ui::format::escape_name;
use crate::ui::theme;

pub fn line(app: &AppState) -> Option<Line<'static>> {
    let f = app.findings.top()?;
    let style = match f.severity {
        Severity::Warning => theme::warning(),
        Severity::Info => theme::label(),
    };
    let mut spans = vec![
        Span::styled(format!("{}:", f.severity.key()), style),
        Span::raw(" "),
        Span::styled(f.kind.key(), theme::label()),
        Span::raw(" "),
    ];
    let more = app.findings.list.len() - 1;
    if more > 0 {
        spans.push(Span::styled(format!("(+{more}, y) "), theme::label()));
    }
    // the sentence names threads and cgroups: hostile, escaped
    spans.push(Span::styled(escape_name(&f.text), theme::value()));
    Some(Line::from(spans))
}
