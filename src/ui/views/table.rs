//! The table shared by the threads and processes views: the columns that
//! fit, the sort column marked, the selection as a reverse-video bar.
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::Text;
use ratatui::widgets::{Cell, Row as TableRow, Table, TableState};
use ratatui::Frame;

use crate::model::interval::{Row, RowKey};
use crate::ui::app::AppState;
use crate::ui::columns::{self, Column};
use crate::ui::format;
use crate::ui::process_tree::{is_ancestor, shown_prefix, TreeLine};
use crate::ui::steady::Steady;
use crate::ui::theme;

fn cell(col: Column, width: u16, text: String) -> Cell<'static> {
    let text = format::truncate(&text, usize::from(width));
    let t = Text::from(text);
    Cell::from(if col.right_aligned() {
        t.alignment(Alignment::Right)
    } else {
        t
    })
}

/// One row; on the process tree, the name after the tree's lines and an
/// ancestor kept only for a filter dimmed.
fn line(
    cols: &[(Column, u16)],
    r: &Row,
    tree: Option<&TreeLine>,
    steady: &Steady,
) -> TableRow<'static> {
    let thread = matches!(r.key, RowKey::Thread { .. });
    let text = |c: Column, w: u16| match tree {
        Some(t) if c == Column::COMM => {
            let name = c.cell(r);
            let n = name.chars().count();
            format!("{}{name}", shown_prefix(&t.prefix, n, usize::from(w)))
        }
        // as htop's tree: a thread's line shows its own id
        Some(_) if c == Column::PID && thread => r.id.to_string(),
        // a process above the filtered ones: no figures were taken
        Some(_) if c != Column::PID && is_ancestor(r) => String::new(),
        _ => steady.cell(c, r),
    };
    let row = TableRow::new(cols.iter().map(|&(c, w)| cell(c, w, text(c, w))));
    if r.exited || tree.is_some_and(|t| t.dim) {
        row.style(theme::exited())
    } else {
        row
    }
}

/// The first visible row: the app's offset, moved just enough to show the
/// selection in `height` rows (the app computes the same at its own size).
pub fn visible_offset(app: &AppState, height: usize) -> usize {
    let h = height.max(1);
    let mut off = app.offset.min(app.rows().len().saturating_sub(h));
    if app.selected < off {
        off = app.selected;
    } else if app.selected >= off + h {
        off = app.selected + 1 - h;
    }
    off
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let cols = columns::fit_cols(app.view_model.columns(app.table_view), area.width);
    let header = TableRow::new(cols.iter().map(|&(c, w)| {
        let t = format::truncate(c.title(), usize::from(w));
        let style = if c == app.sort {
            theme::sort_header()
        } else {
            theme::table_header()
        };
        cell(c, w, t).style(style)
    }))
    .style(theme::table_header());
    let height = usize::from(area.height.saturating_sub(1));
    let off = visible_offset(app, height);
    let rows = app.rows();
    let end = off.saturating_add(height).min(rows.len());
    let tree = &app.listing.tree.lines;
    let body: Vec<TableRow> = rows
        .range(off, end)
        .enumerate()
        .map(|(k, r)| line(&cols, r, tree.get(off + k), &app.steady))
        .collect();
    let widths: Vec<Constraint> = cols.iter().map(|&(_, w)| Constraint::Length(w)).collect();
    let table = Table::new(body, widths)
        .header(header)
        .column_spacing(columns::GAP)
        .row_highlight_style(theme::selected());
    let mut state = TableState::default();
    if !rows.is_empty() && app.selected >= off {
        state.select(Some(app.selected - off));
    }
    f.render_stateful_widget(table, area, &mut state);
}
