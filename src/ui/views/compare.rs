//! The comparison screen (ui/compare_ui.rs): the same areas as the live
//! screen (layout.rs), the header saying what is compared with the summary
//! line, and in the body the compared table, both sides' CPU and NUMA
//! figures, or both sides' findings; the detail pane overlays the two
//! sides' histograms.
use ratatui::layout::{Alignment, Constraint, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Cell, Paragraph, Row as TableRow, Table, TableState};
use ratatui::Frame;

use crate::model::compare::{Compared, Match};
use crate::ui::app::{AppState, View};
use crate::ui::compare_columns::{self as cols, CompareColumn};
use crate::ui::compare_ui::{self, CompareUi};
use crate::ui::format;
use crate::ui::layout::Areas;
use crate::ui::theme;

/// The whole screen in comparison mode (`app.compare` set).
pub fn render(app: &AppState, f: &mut Frame, a: &Areas) {
    let Some(c) = app.compare.as_deref() else {
        return;
    };
    super::header::render(app, f, a.header);
    info(app, c, f, a.info);
    match app.view {
        View::Threads | View::Processes | View::Cgroups => table(app, c, f, a.table),
        View::Cpus | View::Numa => super::compare_cpus::render(app, c, f, a.table),
        View::Findings => super::compare_cpus::findings(c, f, a.table),
    }
    if let Some(d) = a.detail {
        super::compare_hist::render(app, c, f, d);
    }
    super::footer::render(app, f, a.footer);
    if app.help {
        super::help::render(app, f, f.area());
    }
}

fn info(app: &AppState, c: &CompareUi, f: &mut Frame, area: Rect) {
    if compare_ui::level_of(app.view).is_none() {
        let t = format!(
            " {} compared: BEFORE's {:.1} s and AFTER's {:.1} s, per second of each ",
            super::info::view_name(app.view),
            c.before.seconds,
            c.after.seconds
        );
        f.render_widget(Paragraph::new(Line::styled(t, theme::title())), area);
        return;
    }
    let rows = compare_ui::rows(app, c);
    let count = |m: Match| rows.iter().filter(|e| e.matched == m).count();
    let sort = match c.sort {
        Some(s) => cols::CompareColumn::Figure(s).title(),
        None => "largest change",
    };
    let mut s = vec![
        Span::styled(
            format!(" {} compared ", super::info::view_name(app.view)),
            theme::title(),
        ),
        Span::raw(format!(
            "{} rows: {} on both sides, {} only before, {} only after   ",
            rows.len(),
            count(Match::Both),
            count(Match::OnlyBefore),
            count(Match::OnlyAfter)
        )),
        Span::styled("sort: ", theme::label()),
        Span::raw(format!(
            "{sort}{}",
            if c.inverted { " (inverted)" } else { "" }
        )),
    ];
    if !app.filter.is_empty() || app.filter_editing {
        s.push(Span::styled("   filter: ", theme::label()));
        s.push(Span::raw(format::escape_name(&app.filter)));
    }
    f.render_widget(Paragraph::new(Line::from(s)), area);
}

fn right(t: String) -> Text<'static> {
    Text::from(t).alignment(Alignment::Right)
}

fn figure_cell(e: &Compared, col: CompareColumn) -> Cell<'static> {
    let (value, abs, rel) = cols::cell(e, col);
    let (vw, cw, rw) = cols::parts(col);
    let style = col
        .figure()
        .and_then(|fig| cols::change(e, fig).map(|(d, _)| cols::change_style(e, fig, d)))
        .unwrap_or_default();
    let clip = |s: String, w: usize| format::truncate(&s, w);
    Cell::from(Line::from(vec![
        Span::raw(format!("{:>vw$}", clip(value, vw))),
        Span::styled(format!(" {:>w$}", clip(abs, cw - 1), w = cw - 1), style),
        Span::styled(format!(" {:>w$}", clip(rel, rw - 1), w = rw - 1), style),
    ]))
}

/// The name in `w` cells: a cgroup path keeps its end (the service), the
/// rest their start.
fn fit_name(e: &Compared, w: usize) -> String {
    let n = format::escape_name(&compare_ui::name(e));
    let len = n.chars().count();
    if e.level != crate::model::compare::Level::Cgroup || len <= w || w < 2 {
        return format::truncate(&n, w);
    }
    let tail: String = n.chars().skip(len + 1 - w).collect();
    format!("…{tail}")
}

fn line(e: &Compared, fit: &[(CompareColumn, u16)]) -> TableRow<'static> {
    let cells = fit.iter().map(|&(col, w)| match col {
        CompareColumn::Name => Cell::from(fit_name(e, usize::from(w))),
        CompareColumn::Side => Cell::from(match e.matched {
            Match::Both => "",
            Match::OnlyBefore => "only before",
            Match::OnlyAfter => "only after",
        }),
        CompareColumn::Figure(_) => figure_cell(e, col),
    });
    let row = TableRow::new(cells);
    if e.matched == Match::OnlyBefore {
        // gone: what it was is in the change
        row.style(theme::exited())
    } else {
        row
    }
}

fn table(app: &AppState, c: &CompareUi, f: &mut Frame, area: Rect) {
    let Some(level) = compare_ui::level_of(app.view) else {
        return;
    };
    if area.height == 0 || area.width == 0 {
        return;
    }
    let fit = cols::fit(level, area.width);
    let header = TableRow::new(fit.iter().map(|&(col, w)| {
        let sorted = col.figure().map(|x| x.name) == c.sort && c.sort.is_some();
        let style = if sorted {
            theme::sort_header()
        } else {
            theme::table_header()
        };
        let t = match col {
            CompareColumn::Figure(_) => {
                let (vw, cw, rw) = cols::parts(col);
                right(format!("{:>vw$}{:>w$}", col.title(), "change", w = cw + rw))
            }
            _ => Text::from(format::truncate(col.title(), usize::from(w))),
        };
        Cell::from(t).style(style)
    }))
    .style(theme::table_header());
    let rows = compare_ui::rows(app, c);
    let i = match level {
        crate::model::compare::Level::Process => 0,
        crate::model::compare::Level::Thread => 1,
        _ => 2,
    };
    let height = usize::from(area.height.saturating_sub(1)).max(1);
    let sel = c.selected[i].min(rows.len().saturating_sub(1));
    let mut off = c.offset[i].min(rows.len().saturating_sub(height));
    if sel < off {
        off = sel;
    } else if sel >= off + height {
        off = sel + 1 - height;
    }
    let end = (off + height).min(rows.len());
    let body: Vec<TableRow> = rows[off..end].iter().map(|e| line(e, &fit)).collect();
    let widths: Vec<Constraint> = fit.iter().map(|&(_, w)| Constraint::Length(w)).collect();
    let table = Table::new(body, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(theme::selected());
    let mut state = TableState::default();
    if !rows.is_empty() {
        state.select(Some(sel - off));
    }
    f.render_stateful_widget(table, area, &mut state);
}
