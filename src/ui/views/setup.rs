//! The setup screen (`F2`, `S`; setup.rs holds its state): the settings
//! with their values, then each table's columns, shown ones first in their
//! order. Over the whole screen, scrolled to keep the cursor in sight.
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::ui::app::AppState;
use crate::ui::setup::{self, Item, SetupDraft, TABLES};
use crate::ui::theme;

const HELP: [&str; 2] = [
    "Up/Dn move  Lt/Rt change  Space show/hide a column  [ ] move it",
    "Enter save  Esc use for this run only  x forget the changes",
];

/// Every line of the screen: the item it shows, if any, and the line.
pub fn lines(d: &SetupDraft) -> Vec<(Option<usize>, Line<'static>)> {
    let items = setup::items(&d.settings);
    let label_w = setup::FIELDS
        .iter()
        .map(|f| setup::label(*f).len())
        .max()
        .unwrap_or(0);
    let mut out: Vec<(Option<usize>, Line<'static>)> = HELP
        .iter()
        .map(|h| (None, Line::styled(format!(" {h}"), theme::exited())))
        .collect();
    out.push((None, Line::raw("")));
    let mut table = None;
    for (i, it) in items.iter().enumerate() {
        let cursor = i == d.cursor;
        let mark = if cursor { ">" } else { " " };
        let line = match *it {
            Item::Field(f) => Line::from(vec![
                Span::raw(format!("{mark} ")),
                Span::styled(format!("{:<label_w$}  ", setup::label(f)), theme::label()),
                Span::styled(setup::value(&d.settings, f), theme::value()),
            ]),
            Item::Column {
                view,
                column,
                shown,
            } => {
                if table != Some(view) {
                    table = Some(view);
                    let title = TABLES.iter().find(|(v, _)| *v == view).map_or("", |t| t.1);
                    out.push((None, Line::raw("")));
                    out.push((None, Line::styled(format!(" {title}"), theme::title())));
                }
                let check = if shown { "[x]" } else { "[ ]" };
                Line::from(vec![
                    Span::raw(format!("{mark} {check} ")),
                    Span::styled(format!("{:<12}", column.title().trim()), theme::value()),
                    Span::styled(column.0.to_string(), theme::exited()),
                ])
            }
        };
        let line = if cursor {
            line.style(theme::selected())
        } else {
            line
        };
        out.push((Some(i), line));
    }
    out
}

/// The box's inside on `area` and the first line shown: the cursor's line
/// stays in sight.
pub fn frame(area: Rect, d: &SetupDraft) -> (Rect, usize) {
    let inner = Rect::new(
        area.x.saturating_add(1),
        area.y.saturating_add(1),
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    let all = lines(d);
    let at = all
        .iter()
        .position(|(i, _)| *i == Some(d.cursor))
        .unwrap_or(0);
    let h = usize::from(inner.height).max(1);
    let skip = (at + 1).saturating_sub(h).min(all.len().saturating_sub(h));
    (inner, skip)
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    let Some(d) = &app.view_model.setup else {
        return;
    };
    if area.width < 3 || area.height < 3 {
        return;
    }
    let (_, skip) = frame(area, d);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme::border())
        .title(Span::styled(" schedtop setup ", theme::title()));
    let shown: Vec<Line> = lines(d).into_iter().skip(skip).map(|(_, l)| l).collect();
    f.render_widget(Clear, area);
    f.render_widget(Paragraph::new(shown).block(block), area);
}
