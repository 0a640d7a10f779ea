//! The help overlay (`?`, `h`, F1): every key, and what the columns mean.
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::ui::keys::HELP;
use crate::ui::theme;

const NOTES: &[&str] = &[
    "VCSW/s voluntary (blocked, slept, yielded); NVCSW/s involuntary (preempted)",
    "P99 columns: upper bound of the log2 bucket holding the 99th percentile",
    "P99WAIT: run-queue latency, runnable but waiting for a CPU",
    "header vol/invol: the threads' own counters summed (idle task excluded)",
];

pub fn render(f: &mut Frame, area: Rect) {
    let key_w = HELP.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 2;
    let mut lines: Vec<Line> = HELP
        .iter()
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(format!(" {k:<key_w$}"), theme::label()),
                Span::raw(*d),
            ])
        })
        .collect();
    lines.push(Line::raw(""));
    lines.extend(
        NOTES
            .iter()
            .map(|n| Line::styled(format!(" {n}"), theme::exited())),
    );
    let content_w = lines.iter().map(|l| l.width()).max().unwrap_or(0) as u16 + 3;
    // nearly as wide as the screen: take all of it rather than leave a sliver
    let w = if content_w + 6 >= area.width {
        area.width
    } else {
        content_w
    };
    let h = (lines.len() as u16 + 2).min(area.height);
    let x = area.x + (area.width - w) / 2;
    let y = area.y + (area.height - h) / 2;
    let r = Rect::new(x, y, w, h);
    f.render_widget(Clear, r);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(theme::border())
                .title(Span::styled(" schedtop keys ", theme::title())),
        ),
        r,
    );
}
