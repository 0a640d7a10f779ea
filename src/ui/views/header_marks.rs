//! The header's marks for what the session is doing beside showing
//! Samples: `REC <file> <size>` while recording, `REWIND −42s  live
//! 12:03:04 UTC` while rewound.
use ratatui::style::Modifier;
use ratatui::text::Span;

use crate::ui::app::AppState;
use crate::ui::format::{bytes, clock_utc, escape_name};
use crate::ui::theme;
use crate::ui::views::timeline::span;

/// The header's `REC <file> <size>` (None when not recording).
pub fn header_segment(app: &AppState) -> Option<Vec<Span<'static>>> {
    let r = app.recording.as_ref()?;
    let name = r.path.file_name().map_or_else(
        || r.path.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    Some(vec![
        Span::styled(" REC ", theme::error().add_modifier(Modifier::REVERSED)),
        Span::raw(" "),
        Span::styled(escape_name(&name), theme::value()),
        Span::raw(" "),
        Span::styled(bytes(r.size), theme::value()),
    ])
}

/// The header's `REWIND −42s  live 12:03:04 UTC` while rewound.
pub fn header_segments(app: &AppState) -> Vec<Vec<Span<'static>>> {
    let (true, Some(r)) = (app.rewound(), app.replay.as_ref()) else {
        return Vec::new();
    };
    let shown = app.current().map_or(r.last_ns, |s| s.time_ns);
    vec![
        vec![Span::styled(
            format!(" REWIND \u{2212}{} ", span(r.last_ns.saturating_sub(shown))),
            theme::paused(),
        )],
        vec![
            Span::styled("live", theme::label()),
            Span::raw(" "),
            Span::styled(format!("{} UTC", clock_utc(r.last_ns)), theme::value()),
        ],
    ]
}
