//! The comparison screen's header: what is compared (each side's source
//! and window, and which one is this machine now), then the summary line:
//! the largest improvements and regressions (model/compare.rs
//! `highlights`), then each side's top finding.
use ratatui::text::{Line, Span};

use crate::model::findings::Finding;
use crate::ui::app::AppState;
use crate::ui::compare_columns::CompareColumn;
use crate::ui::compare_ui::{CompareUi, Noted, Side};
use crate::ui::format;
use crate::ui::theme;

fn side(what: &'static str, s: &Side) -> Vec<Span<'static>> {
    let source = if s.live {
        "this machine now (live)".to_string()
    } else {
        format::escape_name(&s.label)
    };
    vec![
        Span::styled(what, theme::label()),
        Span::raw(" "),
        Span::styled(source, theme::value()),
        Span::raw(format!(" ({:.1} s)", s.seconds)),
    ]
}

/// A change as the table writes it, with its figure's title.
fn noted(n: &Noted) -> String {
    let title = CompareColumn::Figure(n.figure).title();
    let col = CompareColumn::Figure(n.figure);
    let e = crate::ui::compare_columns::fmt_change(col, n.change);
    let more = if n.count > 1 {
        format!(" (and {} more like it)", n.count - 1)
    } else {
        String::new()
    };
    format!(
        "{} {title} {e} ({:+.0}%){more}",
        format::escape_name(&n.who),
        n.relative * 100.0 * n.change.signum()
    )
}

fn summary(
    label: &'static str,
    list: &[Noted],
    style: ratatui::style::Style,
) -> Vec<Span<'static>> {
    let mut s = vec![Span::styled(label, style)];
    if list.is_empty() {
        s.push(Span::raw(" none"));
    }
    for (i, n) in list.iter().enumerate() {
        s.push(Span::raw(if i == 0 { " " } else { ", " }));
        s.push(Span::raw(noted(n)));
    }
    s
}

fn finding(what: &'static str, list: &[Finding]) -> Vec<Span<'static>> {
    let mut s = vec![Span::styled(what, theme::label()), Span::raw(" ")];
    match list.first() {
        Some(f) => {
            s.push(Span::styled(f.kind.key(), theme::label()));
            s.push(Span::raw(" "));
            s.push(Span::raw(format::escape_name(&f.text)));
        }
        None => s.push(Span::raw("no finding")),
    }
    s
}

/// The header's lines (wrapped by the terminal's width in the live header's
/// way: each line is cut, not wrapped, here).
pub fn lines(app: &AppState, c: &CompareUi) -> Vec<Line<'static>> {
    let mut first = vec![
        Span::styled("schedtop diff", theme::title()),
        Span::raw("  "),
        Span::raw(format::escape_name(&app.host.hostname)),
        Span::raw("  "),
    ];
    first.extend(side("BEFORE", &c.before));
    first.push(Span::raw("  ->  "));
    first.extend(side("AFTER", &c.after));
    first.push(Span::raw("  rates per second of each window"));
    let better = theme::better();
    let worse = theme::worse();
    let mut out = vec![
        Line::from(first),
        Line::from(summary("better:", &c.better, better)),
        Line::from(summary("worse:", &c.worse, worse)),
    ];
    out.push(Line::from(finding("findings before:", &c.before.findings)));
    out.push(Line::from(finding("findings after: ", &c.after.findings)));
    out
}
