//! The detail pane (Enter) for the selected thread or process: its figures,
//! its whys, a sparkline of its switch rate, and its on-CPU slice and
//! run-queue latency histograms (all waits, or those after a wakeup or a
//! preemption: `w`) for the last interval or since start (`a`).
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline};
use ratatui::Frame;

use crate::model::counters::{CounterDesc, CounterUnit, COUNTERS};
use crate::model::interval::{Row, RowKey};
use crate::model::Log2Hist;
use crate::ui::app::{AppState, HistScope, WaitView};
use crate::ui::format::{self, escape_name};
use crate::ui::theme;

use super::hist;

const SPARK_ROWS: u16 = 2;

fn title(r: &Row) -> String {
    match r.key {
        RowKey::Thread { .. } => format!(
            " thread {} {} (process {} {}) ",
            r.id,
            escape_name(&r.comm),
            r.pid,
            escape_name(&r.process_comm)
        ),
        RowKey::Group { .. } => format!(
            " thread group {} in process {} {} ({} threads) ",
            escape_name(&r.comm),
            r.pid,
            escape_name(&r.process_comm),
            r.threads
        ),
        RowKey::Cgroup { .. } => format!(
            " cgroup {} ({} threads) ",
            escape_name(r.cgroup.as_deref().unwrap_or("?")),
            r.threads
        ),
        RowKey::Process { .. } => format!(
            " process {} {} ({} thread{}) ",
            r.pid,
            escape_name(&r.comm),
            r.threads,
            if r.threads == 1 { "" } else { "s" }
        ),
    }
}

fn figures(r: &Row, series: &[u64]) -> Line<'static> {
    let dash = || "-".to_string();
    let mut s = Vec::new();
    let mut pair = |l: &'static str, v: String| {
        s.push(Span::styled(l, theme::label()));
        s.push(Span::raw(" "));
        s.push(Span::styled(v, theme::value()));
        s.push(Span::raw("  "));
    };
    pair("switches/s", r.switches_s().map_or_else(dash, format::rate));
    let max = series.iter().copied().max();
    pair("max", max.map_or_else(dash, |m| format::rate(m as f64)));
    pair("vol", r.vcsw_s.get().map_or_else(dash, format::rate));
    pair("invol", r.nvcsw_s.get().map_or_else(dash, format::rate));
    pair("CPU%", r.cpu_pct.get().map_or_else(dash, format::percent));
    pair(
        "avg slice",
        r.avg_slice_ns.get().map_or_else(dash, format::duration_ns),
    );
    // the per-thread counters (model/counters.rs) that counted something
    for (label, v) in counter_figures(r) {
        pair(label, v);
    }
    Line::from(s)
}

/// Each counter with a non-zero interval total, as its descriptor says: a
/// time as a share of the interval, a count per second; a family with its
/// largest label values after it.
fn counter_figures(r: &Row) -> Vec<(&'static str, String)> {
    let show = |d: &CounterDesc, n: u64| match d.unit {
        CounterUnit::Ns if r.interval_s > 0.0 => {
            format::percent(n as f64 / 1e9 / r.interval_s * 100.0)
        }
        _ if r.interval_s > 0.0 => format!("{}/s", format::rate(n as f64 / r.interval_s)),
        _ => n.to_string(),
    };
    COUNTERS
        .iter()
        .filter_map(|d| {
            let total = r.counter(d).filter(|&n| n > 0)?;
            let mut text = show(d, total);
            if d.family.is_some() {
                let mut by = d.by_label(&r.counters).unwrap_or_default();
                by.retain(|&(_, n)| n > 0);
                by.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
                let top: Vec<String> = by
                    .iter()
                    .take(3)
                    .map(|&(k, n)| format!("{k} {}", show(d, n)))
                    .collect();
                text = format!("{text} ({})", top.join(", "));
            }
            Some((d.detail, text))
        })
        .collect()
}

fn hist_block(
    f: &mut Frame,
    area: Rect,
    name: &str,
    h: Option<&Log2Hist>,
    (fold, why_none): (bool, &'static str),
) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let unit = if fold { "us, octaves" } else { "us" };
    let mut lines = vec![Line::styled(format!("{name} ({unit})"), theme::title())];
    let rows = usize::from(area.height.saturating_sub(1));
    match h {
        Some(h) => lines.extend(hist::lines(h, fold, area.width, rows)),
        None => lines.push(Line::styled(why_none, theme::exited())),
    }
    f.render_widget(Paragraph::new(lines), area);
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    let scope = match app.hist_scope {
        HistScope::Interval => " last interval (a: since start) ",
        HistScope::SinceStart => " since start (a: last interval) ",
    };
    let Some(r) = app.selected_row() else {
        let block = Block::default()
            .borders(Borders::TOP)
            .border_style(theme::border())
            .title(" nothing selected ");
        f.render_widget(block, area);
        return;
    };
    let block = Block::default()
        .borders(Borders::TOP)
        .border_style(theme::border())
        .title(Span::styled(title(r), theme::title()))
        .title(Line::styled(scope, theme::label()).right_aligned());
    let inner = block.inner(area);
    f.render_widget(block, area);
    if inner.height == 0 {
        return;
    }
    let series: Vec<u64> = app
        .series
        .get(&r.key)
        .map(|s| s.iter().copied().collect())
        .unwrap_or_default();
    let line = |y: u16, h: u16| Rect::new(inner.x, y, inner.width, h);
    f.render_widget(Paragraph::new(figures(r, &series)), line(inner.y, 1));
    let bottom = inner.y + inner.height;
    let why_h = super::why::height(r).min(bottom - inner.y - 1);
    let since = match (app.hist_scope, &app.since_start) {
        (HistScope::SinceStart, Some(s)) => s.why.as_ref(),
        _ => None,
    };
    f.render_widget(
        Paragraph::new(super::why::lines(r, since, &app.derived.threads)),
        line(inner.y + 1, why_h),
    );
    let mut y = inner.y + 1 + why_h;
    let spark_h = if inner.height >= 4 { SPARK_ROWS } else { 1 };
    if y + spark_h <= bottom {
        let w = usize::from(inner.width);
        let tail = &series[series.len().saturating_sub(w)..];
        f.render_widget(
            Sparkline::default().data(tail).style(theme::sparkline()),
            line(y, spark_h),
        );
        y += spark_h;
    }
    if y >= bottom {
        return;
    }
    let (slice, wait) = hists(app, r);
    let h = bottom - y;
    if !source_has_hists(app) {
        f.render_widget(
            Paragraph::new(Line::styled(
                "no histograms: /proc has none (the BPF source needs root)",
                theme::exited(),
            )),
            line(y, h),
        );
        return;
    }
    let why_none = "no data for this interval yet";
    let half = inner.width / 2;
    hist_block(
        f,
        Rect::new(inner.x, y, half.saturating_sub(1), h),
        "on-CPU slice",
        slice,
        (app.hist_octaves, why_none),
    );
    hist_block(
        f,
        Rect::new(inner.x + half, y, inner.width - half, h),
        app.wait_view.title(),
        wait,
        (app.hist_octaves, why_none),
    );
}

/// The histograms the pane shows for `r` (slice, the chosen waits): the
/// interval's or since start.
fn hists<'a>(app: &'a AppState, r: &'a Row) -> (Option<&'a Log2Hist>, Option<&'a Log2Hist>) {
    let (slice, all, wakeup, preempt) = match (app.hist_scope, &app.since_start) {
        (HistScope::SinceStart, Some(s)) => (
            s.slice_hist.as_ref(),
            s.wait_hist.as_ref(),
            s.wakeup_wait_hist.as_ref(),
            s.preempt_wait_hist.as_ref(),
        ),
        _ => (
            r.slice_hist(),
            r.wait_hist(),
            r.wakeup_wait_hist(),
            r.preempt_wait_hist(),
        ),
    };
    let wait = match app.wait_view {
        WaitView::All => all,
        WaitView::AfterWakeup => wakeup,
        WaitView::AfterPreemption => preempt,
    };
    (slice, wait)
}

/// A source without histograms (procfs) leaves them None for every thread.
fn source_has_hists(app: &AppState) -> bool {
    app.current()
        .is_some_and(|c| c.threads.iter().any(|t| t.slice_hist.is_some()))
}

/// Lines the pane needs to show everything: border, figures, sparkline,
/// then the taller histogram.
pub fn wanted_height(app: &AppState) -> u16 {
    if app.compare.is_some() {
        return super::compare_hist::wanted_height(app);
    }
    let Some(r) = app.selected_row() else {
        return 1;
    };
    let fixed = 1 + 1 + super::why::height(r) + SPARK_ROWS;
    if !source_has_hists(app) {
        return fixed + 1;
    }
    let (slice, wait) = hists(app, r);
    let rows = slice
        .map_or(1, |h| hist::rows_needed(h, app.hist_octaves))
        .max(wait.map_or(1, |h| hist::rows_needed(h, app.hist_octaves)));
    fixed + 1 + rows as u16
}
