//! The cgroups view (`g`): the cgroup tree with each cgroup's limit,
//! throttling, CPU pressure, switch rates and its threads' run-queue waits
//! and slices; Enter adds the selected cgroup's histograms, a throttling
//! sparkline over the kept history and its busiest threads.
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline};
use ratatui::Frame;

use super::hist;
use crate::model::cgroup_metrics::{by_key, columns, Cell, CgroupFigure, Column};
use crate::model::cgroup_name::short_name;
use crate::model::metrics::Value;
use crate::model::CgroupRow;
use crate::ui::app::AppState;
use crate::ui::format::{self, escape_name};
use crate::ui::theme;

const NAME_MIN: usize = 24;
const NAME_MAX: usize = 44;

fn dash() -> String {
    "-".into()
}

fn opt_rate(v: Option<f64>) -> String {
    v.map_or_else(dash, format::rate)
}

fn opt_us(v: Option<u64>) -> String {
    v.map_or_else(dash, format::duration_us)
}

fn one_decimal(v: Option<f64>) -> String {
    v.map_or_else(dash, |v| format!("{v:.1}"))
}

/// The text of a column's cell for `fig` in `r`.
pub fn cell(fig: &CgroupFigure, c: &Column, r: &CgroupRow) -> String {
    let v = fig.value(r);
    let other = |key: &str| by_key(key).map_or(Value::None, |o| o.value(r));
    match c.cell {
        Cell::Count => v.number().map_or_else(dash, |n| format!("{n}")),
        Cell::Percent => v.number().map_or_else(dash, format::percent),
        Cell::Rate => opt_rate(v.number()),
        Cell::OneDecimal => one_decimal(v.number()),
        Cell::Duration => opt_us(v.number().map(|n| n as u64)),
        Cell::Limit { cpuset } => match (v.number(), other(cpuset).number()) {
            (Some(q), Some(c)) => format!("{q:.1}/{c}"),
            (Some(q), None) => format!("{q:.1}"),
            (None, Some(c)) => format!("-/{c}"),
            (None, None) => dash(),
        },
        Cell::SlashPair { other: o } => match (v.number(), other(o).number()) {
            (None, None) => dash(),
            (s, f) => format!("{}/{}", one_decimal(s), one_decimal(f)),
        },
    }
}

/// Every column's cell for `r`, left to right.
pub fn cells(r: &CgroupRow) -> Vec<String> {
    columns().iter().map(|(f, c)| cell(f, c, r)).collect()
}

/// How many columns fit next to the name column in `width`.
fn fitting(width: usize) -> usize {
    let mut used = NAME_MIN;
    let mut n = 0;
    for (_, c) in columns() {
        if used + 1 + c.width > width {
            break;
        }
        used += 1 + c.width;
        n += 1;
    }
    n
}

fn line(name: String, values: &[String], ncols: usize, name_w: usize) -> String {
    let mut s = format::truncate(&name, name_w);
    let pad = name_w.saturating_sub(unicode_width(&s));
    s.push_str(&" ".repeat(pad));
    for (v, (_, c)) in values.iter().zip(columns()).take(ncols) {
        s.push(' ');
        s.push_str(&format!("{v:>w$}", w = c.width));
    }
    s
}

fn unicode_width(s: &str) -> usize {
    Span::raw(s).width()
}

pub fn render_info(app: &AppState, f: &mut Frame, area: Rect) {
    let ui = &app.cgroups;
    let n = ui.rows(&app.derived.cgroups, &app.filter).len();
    let arrow = if ui.inverted { "▲" } else { "▼" };
    let mut s = vec![
        Span::styled("cgroups", theme::title()),
        Span::raw(" "),
        Span::styled(n.to_string(), theme::value()),
        Span::raw("  "),
        Span::styled("sort", theme::label()),
        Span::raw(" "),
        Span::styled(format!("{}{arrow}", ui.sort.title()), theme::value()),
    ];
    if !app.filter.is_empty() {
        s.push(Span::raw("  "));
        s.push(Span::styled("filter", theme::label()));
        s.push(Span::raw(" "));
        s.push(Span::styled(
            format!("\"{}\"", escape_name(&app.filter)),
            theme::value(),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(s)), area);
}

/// The tree's part of the view's `area` and the detail pane's, if open:
/// where the renderer draws and a click lands (mouse.rs).
pub fn tree_area(app: &AppState, area: Rect) -> (Rect, Option<Rect>) {
    if app.cgroups.detail && area.height >= 16 {
        let [t, d] =
            Layout::vertical([Constraint::Min(4), Constraint::Length(area.height / 2)]).areas(area);
        (t, Some(d))
    } else {
        (area, None)
    }
}

/// The first row the tree in `table` shows (the selection on its last line
/// at most).
pub fn first_row(app: &AppState, table: Rect) -> usize {
    let body_h = usize::from(table.height).saturating_sub(1);
    app.cgroups
        .selected
        .saturating_sub(body_h.saturating_sub(1))
}

/// Cells before a cgroup's fold mark: two per level of depth.
pub fn mark_x(depth: u32) -> u16 {
    2 * depth.min(16) as u16
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let all = &app.derived.cgroups;
    if all.is_empty() {
        f.render_widget(
            Paragraph::new(Line::styled(
                "no cgroups: none could be read here (see schedtop doctor)",
                theme::exited(),
            )),
            area,
        );
        return;
    }
    let ui = &app.cgroups;
    let (table, detail) = tree_area(app, area);
    let w = usize::from(table.width);
    let ncols = fitting(w);
    let fixed: usize = columns().iter().take(ncols).map(|(_, c)| c.width + 1).sum();
    // the figures sit next to the names, not across a wide screen
    let name_w = w.saturating_sub(fixed).clamp(NAME_MIN.min(w), NAME_MAX);
    let titles: Vec<String> = columns().iter().map(|(_, c)| c.title.to_string()).collect();
    let mut lines = vec![Line::styled(
        line("CGROUP".into(), &titles, ncols, name_w),
        theme::table_header(),
    )];
    let rows = ui.rows(all, &app.filter);
    let body_h = usize::from(table.height).saturating_sub(1);
    let first = first_row(app, table);
    for (pos, &i) in rows.iter().enumerate().skip(first).take(body_h) {
        let r = &all[i];
        let mark = if !super::super::cgroup_tree::CgroupsUi::has_children(all, i) {
            "  "
        } else if ui.collapsed.contains(&r.path) {
            // ASCII: some terminals draw the triangles two cells wide
            "> "
        } else {
            "v "
        };
        let indent = "  ".repeat(r.depth.min(16) as usize);
        let name = format!("{indent}{mark}{}", escape_name(&short_name(&r.path)));
        let text = line(name, &cells(r), ncols, name_w);
        let style = if pos == ui.selected {
            theme::selected()
        } else {
            theme::value()
        };
        lines.push(Line::styled(text, style));
    }
    f.render_widget(Paragraph::new(lines), table);
    if let (Some(d), Some(&i)) = (detail, rows.get(ui.selected)) {
        render_detail(app, f, d, &all[i]);
    }
}

fn render_detail(app: &AppState, f: &mut Frame, area: Rect, r: &CgroupRow) {
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme::border())
        .title(Span::styled(
            format!(" {} ", escape_name(&r.path)),
            theme::title(),
        ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [left, mid, right] = Layout::horizontal([
        Constraint::Percentage(33),
        Constraint::Percentage(33),
        Constraint::Percentage(34),
    ])
    .areas(inner);
    let rows = usize::from(inner.height).saturating_sub(1);
    for (area, title, h) in [
        (left, "run-queue wait", &r.wait_hist),
        (mid, "slice", &r.slice_hist),
    ] {
        let mut lines = vec![Line::styled(title, theme::label())];
        match h {
            Some(h) => lines.extend(hist::lines(h, app.hist_octaves, area.width, rows)),
            None => lines.push(Line::styled("- (no histograms)", theme::exited())),
        }
        f.render_widget(Paragraph::new(lines), area);
    }
    let [spark_title, spark, top] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(3),
        Constraint::Min(1),
    ])
    .areas(right);
    let series: Vec<u64> = app
        .cgroup_throttle
        .get(&r.path)
        .map_or_else(Vec::new, |s| s.iter().copied().collect());
    let last = r
        .throttled_ms_per_s
        .map_or_else(dash, |v| format!("{v:.1}"));
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled("throttled ms/s ", theme::label()),
            Span::styled(last, theme::value()),
        ])),
        spark_title,
    );
    let tail = series.len().saturating_sub(usize::from(spark.width));
    f.render_widget(
        Sparkline::default()
            .data(&series[tail..])
            .style(theme::sparkline()),
        spark,
    );
    // its busiest threads (the subtree's)
    let mut threads: Vec<_> = app
        .derived
        .threads
        .iter()
        .filter(|t| {
            t.cgroup.as_deref().is_some_and(|p| {
                p == r.path || r.path == "/" || p.starts_with(&format!("{}/", r.path))
            })
        })
        .collect();
    threads.sort_by(|a, b| {
        b.cpu_pct
            .get()
            .unwrap_or(-1.0)
            .total_cmp(&a.cpu_pct.get().unwrap_or(-1.0))
            .then(a.id.cmp(&b.id))
    });
    let mut lines = vec![Line::styled("top threads  CPU%  P99WAIT", theme::label())];
    for t in threads
        .iter()
        .take(usize::from(top.height).saturating_sub(1))
    {
        lines.push(Line::raw(format!(
            "{:>7} {:<12} {:>5} {:>7}",
            t.id,
            format::truncate(&escape_name(&t.comm), 12),
            t.cpu_pct.get().map_or_else(dash, format::percent),
            opt_us(t.p99_wait_us.map(u64::from))
        )));
    }
    f.render_widget(Paragraph::new(lines), top);
}
