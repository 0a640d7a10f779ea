//! The CPU view (`c`): every CPU grouped by NUMA node (and LLC) with its
//! run-queue length (last interval, average and maximum over the kept
//! history, sparkline), busy %, switches/s, migrations in/out per second
//! and the interrupt and steal shares (IRQ% SIRQ% STEAL%).
//! When the detailed list does not fit, a compact grid comes first: one
//! heat glyph per CPU, one line per node with the node's summary, and the
//! list below it scrolls (Up/Down). The list's columns are the CPU table's
//! (model/cpu_metrics.rs); the node summaries are this view's own.
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::model::cpu_metrics::{self, Cell, CpuRow};
use crate::model::cpu_nodes::{self, NodeSummary};
use crate::model::cpus::{self, CpuFigures, CpuHistory, CpuView};
use crate::model::metrics::Value;
use crate::ui::app::AppState;
use crate::ui::format;
use crate::ui::theme;

/// Heat glyphs by run-queue length (the interval's average): upper bound,
/// glyph, legend.
const HEAT: [(f64, char, &str); 6] = [
    (0.1, '·', "0"),
    (0.75, '▁', "<1"),
    (1.5, '▃', "1"),
    (2.5, '▅', "2"),
    (3.5, '▇', "3"),
    (f64::INFINITY, '█', "4+"),
];

/// The heat level (index into HEAT) of a run-queue length.
pub fn heat_level(rq: f64) -> usize {
    HEAT.iter()
        .position(|(up, _, _)| rq < *up)
        .unwrap_or(HEAT.len() - 1)
}

fn heat(rq: Option<f64>) -> Span<'static> {
    match rq {
        Some(v) => {
            let l = heat_level(v);
            Span::styled(HEAT[l].1.to_string(), theme::heat(l))
        }
        None => Span::styled("?", theme::exited()),
    }
}

fn rq(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// A longest queue: exact below 32; above, the sampler counts in log2
/// buckets and `m` is its bucket's low bound, so say the bucket (`32-63`),
/// or `128+` where that does not fit a column.
pub fn max_text(m: u64) -> String {
    if m < 32 {
        return m.to_string();
    }
    let range = format!("{m}-{}", m.saturating_mul(2).saturating_sub(1));
    if range.len() <= 6 {
        range
    } else {
        format!("{m}+")
    }
}

fn opt_rate(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), format::rate)
}

pub fn render_info(app: &AppState, f: &mut Frame, area: Rect) {
    let t = &app.host.topology;
    let nodes = t.nodes().len();
    let mut s = vec![
        Span::styled("CPUs", theme::title()),
        Span::raw(" "),
        Span::styled(
            format!(
                "{} on {} node{}",
                t.cpus.len(),
                nodes,
                if nodes == 1 { "" } else { "s" }
            ),
            theme::value(),
        ),
        Span::raw("  "),
        Span::styled("run queue", theme::label()),
    ];
    for (i, (_, g, legend)) in HEAT.iter().enumerate() {
        s.push(Span::raw(" "));
        s.push(Span::styled(g.to_string(), theme::heat(i)));
        s.push(Span::raw(*legend));
    }
    if app.mig_cause.is_some() {
        s.push(Span::raw("  "));
        s.push(Span::styled(
            format!("migrations{}", crate::ui::mig_cause::label(app.mig_cause)),
            theme::label(),
        ));
    }
    s.push(Span::raw("  "));
    s.push(Span::styled("Esc back", theme::label()));
    f.render_widget(Paragraph::new(Line::from(s)), area);
}

/// The node's summary as labelled pieces of fixed width (so they line up
/// from node to node), most important first.
fn summary_pieces(s: &NodeSummary) -> Vec<Vec<Span<'static>>> {
    let pair = |l: &'static str, v: String, w: usize| {
        vec![
            Span::styled(l, theme::label()),
            Span::raw(" "),
            Span::styled(format!("{v:>w$}"), theme::value()),
        ]
    };
    let mut p = vec![
        pair("rq", rq(s.rq_now), 4),
        pair("max", s.rq_max.map_or_else(|| "-".into(), max_text), 2),
    ];
    if s.xin_s.is_some() {
        let mut x = pair("x-node in", opt_rate(s.xin_s), 4);
        x.extend(pair(" out", opt_rate(s.xout_s), 4));
        p.push(x);
    }
    p.push(pair(
        "busy",
        s.busy_pct.map_or_else(|| "-".into(), format::percent) + "%",
        6,
    ));
    p.push(pair("sw/s", opt_rate(s.switches_s), 6));
    p.push(pair("avg", rq(s.rq_avg), 4));
    if s.local_s.is_some() {
        p.push(pair("local", opt_rate(s.local_s), 4));
    }
    p
}

fn width(spans: &[Span]) -> usize {
    spans.iter().map(Span::width).sum()
}

/// Append the summary pieces that fit in `room` cells (two spaces apart),
/// stopping at the first that does not.
fn push_summary(out: &mut Vec<Span<'static>>, s: &NodeSummary, room: usize) {
    let mut used = 0;
    for piece in summary_pieces(s) {
        let w = width(&piece) + 2;
        if used + w > room {
            break;
        }
        used += w;
        out.push(Span::raw("  "));
        out.extend(piece);
    }
}

/// The node's CPUs as heat glyphs, a space between LLCs.
fn glyphs(view: &CpuView, node: u32) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut llc = None;
    for c in view.cpus.iter().filter(|c| c.node == node) {
        if llc.is_some_and(|l| l != c.llc) {
            out.push(Span::raw(" "));
        }
        llc = Some(c.llc);
        out.push(heat(c.rq_now));
    }
    out
}

/// The compact grid: per node its label, one glyph per CPU and its
/// summary (on the same line when there is room, else below).
fn grid_lines(view: &CpuView, sums: &[NodeSummary], w: usize) -> Vec<Line<'static>> {
    let label_w = sums
        .iter()
        .map(|s| format!("N{}", s.node).len())
        .max()
        .unwrap_or(2)
        + 1;
    let avail = w.saturating_sub(label_w).max(1);
    let mut out = Vec::new();
    for s in sums {
        let g = glyphs(view, s.node);
        let chunks: Vec<&[Span]> = g.chunks(avail).collect();
        let one_line = chunks.len() <= 1 && w.saturating_sub(label_w + g.len()) >= 24;
        for (i, chunk) in chunks.iter().enumerate() {
            let label = if i == 0 {
                format!("{:<label_w$}", format!("N{}", s.node))
            } else {
                " ".repeat(label_w)
            };
            let mut l = vec![Span::styled(label, theme::title())];
            l.extend(chunk.iter().cloned());
            if one_line {
                let room = w.saturating_sub(label_w + g.len());
                push_summary(&mut l, s, room);
            }
            out.push(Line::from(l));
        }
        if !one_line {
            let mut l = vec![Span::raw(" ".repeat(label_w.saturating_sub(2)))];
            push_summary(&mut l, s, w.saturating_sub(label_w));
            out.push(Line::from(l));
        }
    }
    out
}

const SPARK_TITLE: &str = "RQ HISTORY";

/// The list's header: the CPU table's column titles (model/cpu_metrics.rs),
/// each right-aligned in its width, then the sparkline's.
fn list_head() -> String {
    let mut h: Vec<String> = cpu_metrics::columns()
        .iter()
        .map(|(_, c)| format!("{:>w$}", c.title, w = c.width))
        .collect();
    h.push(format!(" {SPARK_TITLE}"));
    h.join(" ")
}

/// A CPU's cell of one column, as the list writes it.
pub fn cell_text(cell: Cell, v: &Value) -> String {
    match (cell, v) {
        (_, Value::None) => "-".into(),
        (Cell::RunQueue { .. }, v) => rq(v.number()),
        (Cell::QueueMax, Value::U(m)) => max_text(*m),
        (Cell::Percent, Value::F(p)) => format::percent(*p),
        (Cell::Rate, Value::F(r)) => format::rate(*r),
        (_, Value::U(n)) => n.to_string(),
        (_, v) => v.number().map_or_else(|| "-".into(), |n| n.to_string()),
    }
}

/// The cells of a CPU's line, left to right (without the sparkline).
pub fn cells(r: &CpuRow) -> Vec<String> {
    cpu_metrics::columns()
        .iter()
        .map(|(fig, c)| cell_text(c.cell, &fig.value(r)))
        .collect()
}

/// The sparkline of one CPU's run-queue averages, newest right, scaled to
/// `top` (the longest average on screen).
fn spark(hist: &CpuHistory, cpu: u32, w: usize, top: f64) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let Some(s) = hist.get(cpu) else {
        return String::new();
    };
    let skip = s.len().saturating_sub(w);
    s.iter()
        .skip(skip)
        .map(|p| {
            let v = f64::from(p.avg);
            if v <= 0.0 || top <= 0.0 {
                ' '
            } else {
                let i = ((v / top) * 8.0).ceil() as usize;
                BARS[i.clamp(1, 8) - 1]
            }
        })
        .collect()
}

fn cpu_line(c: &CpuFigures, hist: &CpuHistory, spark_w: usize, top: f64) -> Line<'static> {
    let row = CpuRow::of_figures(c, hist);
    let mut l = Vec::new();
    for (i, (fig, col)) in cpu_metrics::columns().into_iter().enumerate() {
        if i > 0 {
            l.push(Span::raw(" "));
        }
        let v = fig.value(&row);
        let text = format!("{:>w$}", cell_text(col.cell, &v), w = col.width);
        l.push(match col.cell {
            Cell::RunQueue { heat: true } => {
                let style = v
                    .number()
                    .map(heat_level)
                    .map_or(theme::exited(), theme::heat);
                Span::styled(text, style)
            }
            _ => Span::raw(text),
        });
    }
    l.push(Span::raw("  "));
    if spark_w > 0 {
        l.push(Span::styled(
            spark(hist, c.cpu, spark_w, top),
            theme::sparkline(),
        ));
    }
    Line::from(l)
}

fn node_title(s: &NodeSummary, w: usize) -> Line<'static> {
    let head = format!("node {}  CPUs {}", s.node, cpus::cpu_list(&s.cpus));
    let hw = head.chars().count();
    let mut l = vec![Span::styled(head, theme::title())];
    push_summary(&mut l, s, w.saturating_sub(hw));
    Line::from(l)
}

/// The detailed list: a title line per node (its summary), a line per CPU.
fn list_body(app: &AppState, view: &CpuView, sums: &[NodeSummary], w: usize) -> Vec<Line<'static>> {
    let spark_w = w.saturating_sub(list_head().len() - SPARK_TITLE.len());
    let top = view
        .cpus
        .iter()
        .filter_map(|c| app.cpu_history.get(c.cpu))
        .flat_map(|s| s.iter().rev().take(spark_w).map(|p| f64::from(p.avg)))
        .fold(1.0_f64, f64::max);
    let mut out = Vec::new();
    for s in sums {
        out.push(node_title(s, w));
        for c in view.cpus.iter().filter(|c| c.node == s.node) {
            out.push(cpu_line(c, &app.cpu_history, spark_w, top));
        }
    }
    out
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let Some(view) = &app.cpu else {
        f.render_widget(
            Paragraph::new(Line::styled(
                "waiting for a second Sample: rates need two",
                theme::exited(),
            )),
            area,
        );
        return;
    };
    let w = usize::from(area.width);
    let h = usize::from(area.height);
    let sums = cpu_nodes::node_summaries(view, &app.cpu_history);
    // the sparkline's title goes first when the columns fill the width
    let full = list_head();
    let cols = full
        .strip_suffix(&format!("  {SPARK_TITLE}"))
        .unwrap_or(&full);
    let text = if full.chars().count() > w {
        cols
    } else {
        &full
    };
    let head = Line::styled(format::truncate(text, w), theme::table_header());
    let body = list_body(app, view, &sums, w);
    let mut lines = Vec::new();
    if body.len() < h {
        lines.push(head);
        lines.extend(body);
    } else {
        let grid = grid_lines(view, &sums, w);
        let grid_h = grid.len().min(h);
        lines.extend(grid.into_iter().take(grid_h));
        let rest = h - grid_h;
        if rest >= 4 {
            let visible = rest - 2;
            let off = app.cpu_scroll.min(body.len().saturating_sub(visible));
            let end = (off + visible).min(body.len());
            lines.push(Line::styled(
                format::truncate(
                    &format!(
                        "── list lines {}-{} of {} (Up/Down scroll) ──",
                        off + 1,
                        end,
                        body.len()
                    ),
                    w,
                ),
                theme::border(),
            ));
            lines.push(head);
            lines.extend(body.into_iter().skip(off).take(visible));
        }
    }
    f.render_widget(Paragraph::new(lines), area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_queues_show_their_bucket() {
        assert_eq!(max_text(3), "3");
        assert_eq!(max_text(31), "31");
        assert_eq!(max_text(32), "32-63");
        assert_eq!(max_text(64), "64-127");
        assert_eq!(max_text(128), "128+");
    }

    #[test]
    fn heat_levels() {
        assert_eq!(heat_level(0.0), 0);
        assert_eq!(heat_level(0.5), 1);
        assert_eq!(heat_level(1.0), 2);
        assert_eq!(heat_level(2.0), 3);
        assert_eq!(heat_level(3.0), 4);
        assert_eq!(heat_level(63.0), 5);
    }
}
