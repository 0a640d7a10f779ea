//! The header: host, kernel, CPUs and nodes, source, interval, clock,
//! system-wide switch rates, procs, load, lost updates, PAUSED.
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::model::metrics::Value;
use crate::model::system_metrics::{self, Cell, SystemRow};
use crate::model::SourceKind;
use crate::ui::app::{AppState, Mode};
use crate::ui::format::{self, escape_name};
use crate::ui::theme;

/// A piece of the header that is never split across lines.
type Segment = Vec<Span<'static>>;

fn pair(label: &'static str, value: String) -> Segment {
    vec![
        Span::styled(label, theme::label()),
        Span::raw(" "),
        Span::styled(value, theme::value()),
    ]
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {one}s")
    }
}

pub fn source_name(app: &AppState) -> &'static str {
    match (app.mode, app.host.source) {
        (Mode::Replay, _) => "replay",
        (Mode::Live, SourceKind::Bpf) => "BPF",
        (Mode::Live, SourceKind::Procfs) => "procfs",
    }
}

fn identity(app: &AppState) -> Vec<Segment> {
    let mut s = Vec::new();
    if app.paused {
        s.push(vec![Span::styled(" PAUSED ", theme::paused())]);
    }
    s.extend(super::header_marks::header_segments(app));
    if let Some(rec) = super::header_marks::header_segment(app) {
        s.push(rec);
    }
    s.push(vec![Span::styled("schedtop", theme::title())]);
    let h = &app.host;
    s.push(pair("host", escape_name(&h.hostname)));
    s.push(pair("kernel", escape_name(&h.kernel)));
    if let Some(ext) = &h.sched_ext {
        s.push(pair("sched_ext", escape_name(ext)));
    }
    let cpus = plural(h.topology.cpus.len(), "CPU");
    let nodes = plural(h.topology.nodes().len(), "node");
    s.push(vec![Span::styled(
        format!("{cpus}, {nodes}"),
        theme::value(),
    )]);
    s.push(pair("source", source_name(app).to_string()));
    s.push(pair("interval", format::interval(app.interval_ns)));
    // (a replay's timeline says when instead)
    if let (Some(cur), None) = (app.current(), &app.replay) {
        s.push(pair(
            "at",
            format!("{} UTC", format::clock_utc(cur.time_ns)),
        ));
    }
    s
}

/// The system table's header figures (model/system_metrics.rs) as
/// (label, text, alarm: shown as an error); before the first Sample
/// (no `row.sample`) only those shown always.
pub fn system_texts(row: &SystemRow) -> Vec<(&'static str, String, bool)> {
    let mut out = Vec::new();
    for (fig, h) in system_metrics::header_figures() {
        if row.sample.is_none() && !h.always {
            continue;
        }
        let v = fig.value(row);
        if h.cell == Cell::PercentIfKnown && matches!(v, Value::None) {
            continue;
        }
        let text = match (h.cell, &v) {
            (_, Value::None) => "-".to_string(),
            (Cell::Rate, Value::F(r)) => format::rate(*r),
            (Cell::Percent | Cell::PercentIfKnown, Value::F(p)) => format!("{p:.1}%"),
            (Cell::TwoDecimals, Value::Floats(v)) => v
                .iter()
                .map(|f| format!("{f:.2}"))
                .collect::<Vec<_>>()
                .join(" "),
            (_, Value::U(n)) => n.to_string(),
            (_, v) => v.number().map_or_else(|| "-".into(), |n| n.to_string()),
        };
        let alarm = h.cell == Cell::Alarm && v.number().is_some_and(|n| n > 0.0);
        out.push((h.label, text, alarm));
    }
    out
}

fn stats(app: &AppState) -> Vec<Segment> {
    let row = SystemRow {
        rates: app.system(),
        sample: app.current(),
    };
    let mut s = Vec::new();
    for (label, text, alarm) in system_texts(&row) {
        let mut seg = pair(label, text.clone());
        if alarm {
            seg[2] = Span::styled(text, theme::error());
        }
        s.push(seg);
    }
    if row.sample.is_none() {
        s.push(vec![Span::styled(
            "waiting for the first sample",
            theme::label(),
        )]);
    }
    s
}

/// `text` as one segment per word, in `style`.
fn words(text: &str, style: ratatui::style::Style) -> Vec<Segment> {
    text.split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| vec![Span::styled(w.to_string(), style)])
        .collect()
}

/// Lay segments out left to right, `gap` apart, starting a new line when
/// the next one does not fit in `width` (a segment wider than the line is
/// clipped on a line of its own).
fn flow(segments: Vec<Segment>, gap: &'static str, width: u16, out: &mut Vec<Line<'static>>) {
    let width = usize::from(width);
    let mut line: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for seg in segments {
        let w: usize = seg.iter().map(Span::width).sum();
        if !line.is_empty() && used + gap.len() + w > width {
            out.push(Line::from(std::mem::take(&mut line)));
            used = 0;
        }
        if !line.is_empty() {
            line.push(Span::raw(gap));
            used += gap.len();
        }
        used += w;
        line.extend(seg);
    }
    if !line.is_empty() {
        out.push(Line::from(line));
    }
}

/// The header's lines at `width`: identity and statistics, the degraded
/// source's reason and the feed's error, each wrapped as needed.
pub fn lines(app: &AppState, width: u16) -> Vec<Line<'static>> {
    if let Some(c) = app.compare.as_deref() {
        return super::compare_header::lines(app, c);
    }
    let mut out = Vec::new();
    // one flow: 80 columns take three lines, 200 one
    let mut segments = identity(app);
    segments.extend(stats(app));
    flow(segments, "  ", width, &mut out);
    if !app.listing.filters.is_empty() {
        let text = format!("only: {}", escape_name(&app.listing.filters.join(", ")));
        flow(words(&text, theme::warning()), " ", width, &mut out);
    }
    out.extend(super::header_finding::line(app));
    // replay: play state, speed, start, progress bar, end, cursor
    out.extend(super::timeline::lines(app, width));
    if let Some(reason) = &app.host.degraded_reason {
        let what = match app.host.source {
            SourceKind::Procfs => "procfs mode:",
            SourceKind::Bpf => "degraded:",
        };
        let text = format!("{what} {}", escape_name(reason));
        flow(words(&text, theme::warning()), " ", width, &mut out);
    }
    if let Some(e) = &app.error {
        let text = format!("error: {}", escape_name(e));
        flow(words(&text, theme::error()), " ", width, &mut out);
    }
    out
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    f.render_widget(Paragraph::new(lines(app, area.width)), area);
}
