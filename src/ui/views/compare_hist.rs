//! The comparison's detail pane: the selected entity's histograms of both
//! windows overlaid bucket by bucket, as bpftrace draws `hist()`, BEFORE's
//! bar then AFTER's, with each side's p50 and p99. Counts are per second
//! of each window (a 10 s and a 60 s window compare as rates), and both
//! bars share one scale. The on-CPU slices on the left; on the right the
//! run-queue waits: all, after a wakeup or after a preemption (`w`).
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::model::compare::{Compared, Figures};
use crate::model::Log2Hist;
use crate::ui::app::{AppState, WaitView};
use crate::ui::compare_ui::{self, CompareUi};
use crate::ui::format;
use crate::ui::theme;

use super::hist;

/// Bars no wider than bpftrace's.
const BAR_MAX: usize = 40;

fn wait_of(f: &Figures, v: WaitView) -> Option<&Log2Hist> {
    match v {
        WaitView::All => f.wait_hist.as_ref(),
        WaitView::AfterWakeup => f.wakeup_wait_hist.as_ref(),
        WaitView::AfterPreemption => f.preempt_wait_hist.as_ref(),
    }
}

fn quantiles(h: Option<&Log2Hist>) -> String {
    let q = |p: f64| {
        h.and_then(|h| h.quantile_us(p))
            .map_or_else(|| "-".to_string(), format::duration_us)
    };
    format!("p50 {} p99 {}", q(0.5), q(0.99))
}

/// A bucket's label and each side's events per second in it.
type Bucket = (String, f64, f64);

/// The rows both histograms need: labels, and each side's count per
/// second; folded to octaves when either side only knows octaves.
fn overlay(
    b: Option<&Log2Hist>,
    a: Option<&Log2Hist>,
    (bs, as_): (f64, f64),
    fold: bool,
    max_rows: usize,
) -> Option<(Vec<Bucket>, usize)> {
    let fold = fold || [b, a].iter().flatten().any(|h| h.octaves_only);
    let empty = Log2Hist::new();
    let rb = hist::rows(b.unwrap_or(&empty), fold);
    let ra = hist::rows(a.unwrap_or(&empty), fold);
    let sum: Vec<u64> = rb.iter().zip(&ra).map(|(x, y)| x.1 + y.1).collect();
    let (from, to, hidden) = hist::window(&sum, max_rows)?;
    let per_s = |n: u64, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
    let rows = (from..to)
        .map(|i| (rb[i].0.clone(), per_s(rb[i].1, bs), per_s(ra[i].1, as_)))
        .collect();
    Some((rows, hidden))
}

fn bar(v: f64, max: f64, w: usize) -> String {
    let filled = if v > 0.0 {
        ((v / max * w as f64).round() as usize).clamp(1, w)
    } else {
        0
    };
    format!("{}{}", "@".repeat(filled), " ".repeat(w - filled))
}

/// One histogram's block: its title with both sides' quantiles, then a
/// line per bucket: label, BEFORE's rate and bar, AFTER's rate and bar.
pub fn block(
    name: &str,
    b: Option<&Log2Hist>,
    a: Option<&Log2Hist>,
    secs: (f64, f64),
    fold: bool,
    (width, max_rows): (u16, usize),
) -> Vec<Line<'static>> {
    let mut out = vec![
        Line::styled(format!("{name} (us), events/s"), theme::title()),
        Line::from(vec![
            Span::styled("before ", theme::label()),
            Span::raw(quantiles(b)),
            Span::styled("  | after ", theme::label()),
            Span::raw(quantiles(a)),
        ]),
    ];
    if b.is_none() && a.is_none() {
        out.push(Line::styled(
            "(no histogram on either side)",
            theme::exited(),
        ));
        return out;
    }
    let Some((rows, hidden)) = overlay(b, a, secs, fold, max_rows.saturating_sub(2).max(1)) else {
        out.push(Line::styled("(no events)", theme::exited()));
        return out;
    };
    let rate = |v: f64| format::rate(v);
    let label_w = rows.iter().map(|r| r.0.len()).max().unwrap_or(3);
    let count_w = rows
        .iter()
        .map(|r| rate(r.1).len().max(rate(r.2).len()))
        .max()
        .unwrap_or(1);
    let max = rows.iter().map(|r| r.1.max(r.2)).fold(0.0, f64::max);
    // "label b |bar| a |bar|"
    let fixed = label_w + 2 * (1 + count_w + 3) + 1;
    let bar_w = (usize::from(width).saturating_sub(fixed) / 2).min(BAR_MAX);
    for (label, vb, va) in rows {
        let mut s = vec![Span::raw(format!("{label:<label_w$}"))];
        for v in [vb, va] {
            s.push(Span::raw(format!(" {:>count_w$} |", rate(v))));
            if bar_w > 0 {
                s.push(Span::styled(bar(v, max, bar_w), theme::bar()));
            }
            s.push(Span::raw("|"));
        }
        out.push(Line::from(s));
    }
    if hidden > 0 {
        out.push(Line::styled(
            format!("({hidden} more buckets)"),
            theme::exited(),
        ));
    }
    out
}

fn title(e: &Compared) -> String {
    let side = match e.matched {
        crate::model::compare::Match::Both => "both sides",
        crate::model::compare::Match::OnlyBefore => "only before",
        crate::model::compare::Match::OnlyAfter => "only after",
    };
    format!(
        " {} {} ({side}) ",
        e.level.key(),
        format::escape_name(&compare_ui::name(e))
    )
}

/// The overlay of the selected entity's histograms.
pub fn render(app: &AppState, c: &CompareUi, f: &mut Frame, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let Some(e) = compare_ui::selected(app, c) else {
        return;
    };
    f.render_widget(
        Paragraph::new(Line::styled(title(e), theme::table_header())),
        Rect::new(area.x, area.y, area.width, 1),
    );
    let body = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
    let half = body.width / 2;
    let rows = usize::from(body.height);
    let secs = (c.before.seconds, c.after.seconds);
    let (b, a) = (e.before.as_ref(), e.after.as_ref());
    let slice = block(
        "on-CPU slice",
        b.and_then(|x| x.slice_hist.as_ref()),
        a.and_then(|x| x.slice_hist.as_ref()),
        secs,
        app.hist_octaves,
        (half.saturating_sub(1), rows),
    );
    let wait = block(
        app.wait_view.title(),
        b.and_then(|x| wait_of(x, app.wait_view)),
        a.and_then(|x| wait_of(x, app.wait_view)),
        secs,
        app.hist_octaves,
        (body.width - half, rows),
    );
    f.render_widget(
        Paragraph::new(slice),
        Rect::new(body.x, body.y, half.saturating_sub(1), body.height),
    );
    f.render_widget(
        Paragraph::new(wait),
        Rect::new(body.x + half, body.y, body.width - half, body.height),
    );
}

/// Lines the pane wants: its title, each block's two title lines and its
/// buckets (the taller block).
pub fn wanted_height(app: &AppState) -> u16 {
    let Some(c) = app.compare.as_deref() else {
        return 1;
    };
    let Some(e) = compare_ui::selected(app, c) else {
        return 1;
    };
    let secs = (c.before.seconds, c.after.seconds);
    let (b, a) = (e.before.as_ref(), e.after.as_ref());
    let need = |b: Option<&Log2Hist>, a: Option<&Log2Hist>| {
        overlay(b, a, secs, app.hist_octaves, usize::MAX).map_or(1, |(r, _)| r.len())
    };
    let slice = need(
        b.and_then(|x| x.slice_hist.as_ref()),
        a.and_then(|x| x.slice_hist.as_ref()),
    );
    let wait = need(
        b.and_then(|x| wait_of(x, app.wait_view)),
        a.and_then(|x| wait_of(x, app.wait_view)),
    );
    (1 + 2 + slice.max(wait)) as u16
}
