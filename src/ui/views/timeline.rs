//! Replay's timeline in the header (play state, speed, start, a progress
//! bar with the cursor, end, cursor time and position) and its bottom line
//! (the jump prompt, or replay's key hints).
use ratatui::text::{Line, Span};

use crate::ui::app::AppState;
use crate::ui::format::{clock_utc, datetime_utc, escape_name};
use crate::ui::replay_cursor::Replay;
use crate::ui::theme;

/// Narrowest progress bar drawn on the timeline's own line.
const MIN_BAR: usize = 24;

/// `x1`, `x10`, `x100`, `x2.5`.
pub fn speed(v: f64) -> String {
    let t = format!("{v:.3}");
    format!("x{}", t.trim_end_matches('0').trim_end_matches('.'))
}

/// `42s`, `12m03s`, `1h02m03s`, `3d04h` (whole seconds).
pub fn span(ns: u64) -> String {
    let s = ns / 1_000_000_000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        3600..=86_399 => format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60),
        _ => format!("{}d{:02}h", s / 86_400, s / 3600 % 24),
    }
}

/// `width` cells: done `━`, the cursor `●`, to come `─`.
pub fn bar(r: &Replay, cursor_ns: u64, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let total = r.last_ns.saturating_sub(r.first_ns);
    let pos = if total == 0 {
        width - 1
    } else {
        let done = cursor_ns.clamp(r.first_ns, r.last_ns) - r.first_ns;
        ((done as f64 / total as f64) * (width - 1) as f64).round() as usize
    };
    let mut s = "━".repeat(pos);
    s.push('●');
    s.push_str(&"─".repeat(width - 1 - pos));
    s
}

fn state_span(r: &Replay) -> Span<'static> {
    if r.playing {
        Span::styled(" ▶ PLAY ", theme::footer_label())
    } else {
        Span::styled(" ‖ PAUSE ", theme::paused())
    }
}

/// The header's timeline lines (none outside a replay): one line when the
/// bar gets at least MIN_BAR cells, else the figures and then the bar.
pub fn lines(app: &AppState, width: u16) -> Vec<Line<'static>> {
    let Some(r) = &app.replay else {
        return Vec::new();
    };
    let width = usize::from(width);
    let cursor = app.current().map_or(r.first_ns, |s| s.time_ns);
    let same_day = r.first_ns / 86_400_000_000_000 == r.last_ns / 86_400_000_000_000;
    let start = datetime_utc(r.first_ns);
    let end = if same_day {
        clock_utc(r.last_ns)
    } else {
        datetime_utc(r.last_ns)
    };
    let pos = r.index.map_or(0, |i| i + 1);
    let head: Vec<Span<'static>> = vec![
        state_span(r),
        Span::raw(" "),
        Span::styled(speed(r.speed), theme::value()),
    ];
    let figures: Vec<Span<'static>> = vec![
        Span::styled("at", theme::label()),
        Span::raw(" "),
        Span::styled(format!("{} UTC", clock_utc(cursor)), theme::value()),
        Span::raw(" "),
        Span::styled(
            format!(
                "+{} of {}",
                span(cursor.saturating_sub(r.first_ns)),
                span(r.last_ns.saturating_sub(r.first_ns))
            ),
            theme::label(),
        ),
        Span::raw("  "),
        Span::styled("sample", theme::label()),
        Span::raw(" "),
        Span::styled(format!("{pos}/{}", r.len), theme::value()),
    ];
    let w = |v: &[Span]| v.iter().map(Span::width).sum::<usize>();
    // head  start bar end  figures
    let fixed = w(&head) + 2 + start.len() + 2 + end.len() + 2 + w(&figures);
    let one_line_bar = width.saturating_sub(fixed);
    let bar_line = |bar_w: usize| -> Vec<Span<'static>> {
        vec![
            Span::styled(start.clone(), theme::value()),
            Span::raw(" "),
            Span::styled(bar(r, cursor, bar_w), theme::bar()),
            Span::raw(" "),
            Span::styled(end.clone(), theme::value()),
        ]
    };
    if one_line_bar >= MIN_BAR {
        let mut l = head;
        l.push(Span::raw("  "));
        l.extend(bar_line(one_line_bar));
        l.push(Span::raw("  "));
        l.extend(figures);
        return vec![Line::from(l)];
    }
    let mut first = head;
    first.push(Span::raw("  "));
    first.extend(figures);
    let bar_w = width.saturating_sub(start.len() + end.len() + 2);
    vec![Line::from(first), Line::from(bar_line(bar_w))]
}

/// Replay's bottom line: the jump prompt while it is open, else the keys
/// (None outside a replay, or while a status message or the filter
/// prompt has the line).
pub fn footer(app: &AppState, width: u16) -> Option<Line<'static>> {
    let r = app.replay.as_ref()?;
    if let Some(p) = &r.prompt {
        return Some(Line::from(vec![
            Span::styled("Jump to: ", theme::footer_key()),
            Span::styled(format!("{}_", escape_name(p)), theme::warning()),
            Span::raw("  "),
            Span::styled(
                "23:15:00, 2026-11-21T23:15:00Z, -5m (before the end), +90s (after the start)",
                theme::label(),
            ),
            Span::raw("  "),
            Span::styled("Enter", theme::footer_key()),
            Span::styled("Go", theme::footer_label()),
            Span::raw(" "),
            Span::styled("Esc", theme::footer_key()),
            Span::styled("Cancel", theme::footer_label()),
        ]));
    }
    if app.status.is_some() || app.filter_editing {
        return None;
    }
    // (key, label, rank): the highest rank goes first when it is narrow
    let mut hints: Vec<(&str, &str, u8)> = vec![
        ("F1", "Help", 0),
        ("Spc", if r.playing { "Pause" } else { "Play" }, 0),
        ("t/T", "Step", 1),
        ("j", "Jump", 1),
        ("x", "Speed", 2),
        ("Home/End", "Ends", 5),
        ("/", "Filter", 3),
        ("F6", "Sort", 4),
        ("H", "Procs", 6),
        ("c", "CPUs", 7),
        ("n", "NUMA", 7),
        ("Enter", "Detail", 6),
        ("q", "Quit", 0),
    ];
    if app.rewound() {
        // rewound live: End is the way back, R records from the history
        hints.retain(|h| h.0 != "Home/End");
        hints.insert(1, ("End", "Live", 0));
        hints.insert(5, ("R", "Record", 2));
    }
    super::key_hints::drop_to_fit(&mut hints, width);
    let mut s = Vec::new();
    for (k, l, _) in hints {
        s.push(Span::styled(k, theme::footer_key()));
        s.push(Span::styled(l, theme::footer_label()));
        s.push(Span::raw(" "));
    }
    Some(Line::from(s))
}
