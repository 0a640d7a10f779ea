//! The help overlay (`?`, `h`, F1): every key, and what the columns mean.
//! Taller than the terminal, it goes to two columns when they fit side by
//! side, else it scrolls (arrows, PgUp/PgDn, Home/End).
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::ui::app::AppState;
use crate::ui::keys::HELP;
use crate::ui::theme;

/// Notes after the columns' own (those come from the metric table).
const NOTES: &[&str] = &[
    "NUMA view: a thread's flows are those of the nodes it was last seen on",
    "header vol/invol: the threads' own counters summed (idle task excluded)",
];

/// The key lines, padded to one width so two columns line up.
fn key_lines() -> Vec<Line<'static>> {
    let key_w = HELP.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 2;
    let desc_w = HELP.iter().map(|(_, d)| d.len()).max().unwrap_or(0);
    HELP.iter()
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(format!(" {k:<key_w$}"), theme::label()),
                Span::raw(format!("{d:<desc_w$}")),
            ])
        })
        .collect()
}

/// Every line of the overlay for a box of `width` x `height` (with borders).
fn content(width: u16, height: u16) -> Vec<Line<'static>> {
    let keys = key_lines();
    let notes: Vec<Line> = crate::ui::columns::help_notes()
        .chain(NOTES.iter().copied())
        .map(|n| Line::styled(format!(" {n}"), theme::exited()))
        .collect();
    let one_col = keys.len() + 1 + notes.len() + 2;
    let col_w = keys.iter().map(Line::width).max().unwrap_or(0);
    let mut lines: Vec<Line> =
        if one_col > usize::from(height) && 2 * col_w + 4 <= usize::from(width) {
            let half = keys.len().div_ceil(2);
            (0..half)
                .map(|i| {
                    let mut l = keys[i].clone();
                    if let Some(r) = keys.get(i + half) {
                        l.spans.push(Span::raw("  "));
                        l.spans.extend(r.spans.iter().cloned());
                    }
                    l
                })
                .collect()
        } else {
            keys
        };
    lines.push(Line::raw(""));
    lines.extend(notes);
    lines
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let lines = content(area.width, area.height);
    let content_w = lines.iter().map(|l| l.width()).max().unwrap_or(0) as u16 + 3;
    // nearly as wide as the screen: take all of it rather than leave a sliver
    let w = if content_w + 6 >= area.width {
        area.width
    } else {
        content_w
    };
    let total = lines.len();
    let h = (total as u16 + 2).min(area.height);
    let shown = usize::from(h.saturating_sub(2));
    let skip = usize::from(app.help_scroll).min(total.saturating_sub(shown));
    let x = area.x + (area.width - w) / 2;
    let y = area.y + (area.height - h) / 2;
    let r = Rect::new(x, y, w, h);
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme::border())
        .title(Span::styled(" schedtop keys ", theme::title()));
    if shown < total {
        block = block.title_bottom(
            Line::styled(
                format!(
                    " lines {}-{} of {total}, Up/Down scroll ",
                    skip + 1,
                    (skip + shown).min(total)
                ),
                theme::warning(),
            )
            .right_aligned(),
        );
    }
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()).block(block),
        r,
    );
}
