//! The NUMA view (`n`): one box per node on a Canvas (a circle of nodes),
//! arrows between nodes labelled with migrations/s from→to, coloured (and
//! doubled when big) by magnitude; the box says how many migrations stayed
//! inside the node. Only the biggest `MAX_ARROWS` flows are drawn; the
//! node x node matrix (beside the map when there is room, else on `m`)
//! shows all. The selected thread's flows are highlighted.
use std::f64::consts::PI;

use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Context, Line as CanvasLine};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::numa_selection::{lit_nodes, selection_line};
use crate::model::cpus::CpuView;
use crate::model::flows::NodeFlow;
use crate::model::rates::ThreadInterval;
use crate::ui::app::AppState;
use crate::ui::format;
use crate::ui::theme;

/// Arrows drawn at most (the matrix shows every flow).
pub const MAX_ARROWS: usize = 12;
/// The map needs at least this many columns beside the matrix.
const MAP_MIN_W: usize = 40;

/// A rate in at most three cells: `·` (none), `<.1`, `3.5`, `12`, `999`,
/// `12k`, `3M`.
pub fn rate3(v: f64) -> String {
    if !v.is_finite() || v <= 0.0 {
        "·".into()
    } else if v < 0.05 {
        "<.1".into()
    } else if v < 9.95 {
        format!("{v:.1}")
    } else if v < 999.5 {
        format!("{v:.0}")
    } else if v < 99_500.0 {
        format!("{:.0}k", v / 1e3)
    } else if v < 99.5e6 {
        format!("{:.0}M", v / 1e6)
    } else {
        "big".into()
    }
}

pub fn render_info(app: &AppState, f: &mut Frame, area: Rect) {
    let n = app.host.topology.nodes().len();
    let mut s = vec![
        Span::styled("NUMA", theme::title()),
        Span::raw(" "),
        Span::styled(
            format!("{n} node{}", if n == 1 { "" } else { "s" }),
            theme::value(),
        ),
    ];
    if let Some(v) = app.cpu.as_ref().filter(|v| v.has_migrations) {
        let (all, cross) = v.totals_s();
        let pct = if all > 0.0 { cross / all * 100.0 } else { 0.0 };
        s.extend([
            Span::raw("  "),
            Span::styled(
                format!("migrations/s{}", crate::ui::mig_cause::label(app.mig_cause)),
                theme::label(),
            ),
            Span::raw(" "),
            Span::styled(format::rate(all), theme::value()),
            Span::raw("  "),
            Span::styled("cross-node", theme::label()),
            Span::raw(" "),
            Span::styled(
                format!("{} ({}%)", format::rate(cross), format::percent(pct)),
                theme::value(),
            ),
        ]);
        let k = v.cross_flows().len();
        if k > MAX_ARROWS && !app.numa_matrix {
            s.push(Span::raw("  "));
            s.push(Span::styled(
                format!("arrows: top {MAX_ARROWS} of {k}"),
                theme::warning(),
            ));
        }
    }
    s.push(Span::raw("  "));
    s.push(Span::styled("Esc back", theme::label()));
    f.render_widget(Paragraph::new(Line::from(s)), area);
}

/// Is `f` one of the highlighted thread's flows?
fn lit(f: &NodeFlow, hl: &[u32]) -> bool {
    f.from_node != f.to_node && (hl.contains(&f.from_node) || hl.contains(&f.to_node))
}

/// Cells the matrix takes across.
fn matrix_width(nodes: usize) -> usize {
    4 + 4 * nodes + 6
}

/// The node x node matrix: migrations/s from the row's node to the
/// column's; the diagonal stays inside a node.
fn matrix_lines(view: &CpuView, nodes: &[u32], hl: &[u32]) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled("migr/s row→col", theme::label())];
    let mut head = vec![Span::styled("from", theme::table_header())];
    for n in nodes {
        head.push(Span::styled(
            format!("{:>4}", format!("N{n}")),
            theme::table_header(),
        ));
    }
    head.push(Span::styled(" x-out", theme::table_header()));
    out.push(Line::from(head));
    let mut xin = vec![0.0; nodes.len()];
    for &from in nodes {
        let mut l = vec![Span::styled(
            format!("{:<4}", format!("N{from}")),
            theme::title(),
        )];
        let mut xout = 0.0;
        for (j, &to) in nodes.iter().enumerate() {
            let v = view.flow_s(from, to);
            let flow = NodeFlow {
                from_node: from,
                to_node: to,
                count: 1,
            };
            let style = if from == to {
                theme::exited()
            } else if v > 0.0 && lit(&flow, hl) {
                theme::flow_highlight()
            } else {
                Style::new()
            };
            if from != to {
                xout += v;
                xin[j] += v;
            }
            l.push(Span::styled(format!("{:>4}", rate3(v)), style));
        }
        l.push(Span::styled(format!("{:>6}", rate3(xout)), theme::value()));
        out.push(Line::from(l));
    }
    let mut last = vec![Span::styled("x-in", theme::label())];
    for v in xin {
        last.push(Span::styled(format!("{:>4}", rate3(v)), theme::value()));
    }
    out.push(Line::from(last));
    out
}

/// One node's box on the map, in cells (left, top) with its label.
struct NodeBox {
    node: u32,
    x: f64,
    y: f64,
    label: String,
}

/// Height of a node's box: framed (3 rows), or one row `[N5 24]` when
/// framed boxes would crowd each other.
const BOX_H: f64 = 3.0;
const SLIM_H: f64 = 1.0;

/// Boxes on a circle (one in the middle, two side by side), in cell
/// coordinates with y down; the box size (width, height) goes with them.
fn layout_boxes(view: &CpuView, nodes: &[u32], w: f64, h: f64) -> (Vec<NodeBox>, (f64, f64)) {
    let labels: Vec<String> = nodes
        .iter()
        .map(|&n| format!("N{n} {}", rate3(view.flow_s(n, n))))
        .collect();
    let box_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(2) as f64 + 2.0;
    let k = nodes.len();
    let mut bh = BOX_H;
    let centers: Vec<(f64, f64)> = match k {
        1 => vec![(w / 2.0, h / 2.0)],
        2 => vec![(w * 0.25, h / 2.0), (w * 0.75, h / 2.0)],
        _ => {
            let rx = ((w - box_w) / 2.0 - 1.0).max(1.0);
            let mut pts = circle_layout(k, rx, ((h - bh) / 2.0).max(0.0), (box_w, bh));
            if separation(&pts, (box_w, bh)) < 1.0 {
                bh = SLIM_H;
                pts = circle_layout(k, rx, ((h - bh) / 2.0).max(0.0), (box_w, bh));
            }
            pts.into_iter()
                .map(|(x, y)| (w / 2.0 + x, h / 2.0 + y))
                .collect()
        }
    };
    let boxes = nodes
        .iter()
        .zip(labels)
        .zip(centers)
        .map(|((&node, label), (cx, cy))| NodeBox {
            node,
            x: (cx - box_w / 2.0).round().clamp(0.0, (w - box_w).max(0.0)),
            y: (cy - bh / 2.0).round().clamp(0.0, (h - bh).max(0.0)),
            label,
        })
        .collect();
    (boxes, (box_w, bh))
}

/// `k` points evenly spaced along an ellipse, clockwise from the top,
/// where a row counts `wy` columns of length: 0 spaces them by horizontal
/// distance only, 2 as the ellipse looks on screen.
fn on_ellipse(k: usize, rx: f64, ry: f64, wy: f64) -> Vec<(f64, f64)> {
    const STEPS: usize = 720;
    let at = |i: usize| {
        let a = -PI / 2.0 + 2.0 * PI * i as f64 / STEPS as f64;
        (rx * a.cos(), ry * a.sin())
    };
    let mut acc = vec![0.0; STEPS + 1];
    for i in 1..=STEPS {
        let (p, q) = (at(i - 1), at(i));
        // a small floor keeps vertical stretches from collapsing when wy is 0
        acc[i] = acc[i - 1] + ((q.0 - p.0).powi(2) + (wy * (q.1 - p.1)).powi(2)).sqrt() + 1e-3;
    }
    let total = acc[STEPS];
    (0..k)
        .map(|j| {
            let want = total * j as f64 / k as f64;
            let i = acc.partition_point(|&d| d < want).min(STEPS);
            at(i)
        })
        .collect()
}

/// How well `pts` keep boxes of `size` apart, with room for an
/// arrow label between them: the worst neighbouring pair's separation (1
/// or more is enough).
fn separation(pts: &[(f64, f64)], (box_w, box_h): (f64, f64)) -> f64 {
    let n = pts.len();
    (0..n)
        .map(|i| {
            let (a, b) = (pts[i], pts[(i + 1) % n]);
            ((a.0 - b.0).abs() / (box_w + 4.0)).max((a.1 - b.1).abs() / (box_h + 1.0))
        })
        .fold(f64::INFINITY, f64::min)
}

/// Points on the ellipse spaced so that neighbouring boxes are as far
/// apart as the area allows (the weight of rows in the spacing is chosen
/// for the area's shape).
fn circle_layout(k: usize, rx: f64, ry: f64, size: (f64, f64)) -> Vec<(f64, f64)> {
    let mut best = on_ellipse(k, rx, ry, 2.0);
    let mut best_sep = separation(&best, size);
    for i in 0..=16 {
        let pts = on_ellipse(k, rx, ry, f64::from(i) * 0.25);
        let sep = separation(&pts, size);
        if sep > best_sep + 1e-9 {
            best = pts;
            best_sep = sep;
        }
    }
    best
}

/// An arrow head pointing along (dx, dy) (cells, y down).
fn head_glyph(dx: f64, dy: f64) -> char {
    // rows are about twice as tall as columns are wide
    let a = (-dy * 2.0).atan2(dx);
    let octant = ((a / (PI / 4.0)).round() as i64).rem_euclid(8);
    ['→', '↗', '↑', '↖', '←', '↙', '↓', '↘'][octant as usize]
}

/// Cell coordinates (y down, a cell spans [x, x+1)) to the canvas's, whose
/// bounds are [0, w-1] x [0, h-1] so that a label printed at (x, h-1-y)
/// lands in cell (x, y); a point maps to the matching Braille dot.
fn to_canvas(px: f64, py: f64, w: f64, h: f64) -> (f64, f64) {
    let x = (2.0 * px - 0.5) * (w - 1.0) / (2.0 * w - 1.0);
    let y = (h - 1.0) - (4.0 * py - 0.5) * (h - 1.0) / (4.0 * h - 1.0);
    (x.clamp(0.0, w - 1.0), y.clamp(0.0, h - 1.0))
}

struct Arrow {
    from: (f64, f64),
    to: (f64, f64),
    color: Color,
    heavy: bool,
    head: (u16, u16, char),
    label: (u16, u16, String),
    style: Style,
}

/// Weight of a flow: 0 below 10 migrations/s, 1 below 100, 2 above (a
/// thread crossing nodes a hundred times a second loses its caches
/// constantly). Drawn thin cyan, thin yellow, doubled red.
pub fn flow_tier(per_s: f64) -> usize {
    if per_s >= 100.0 {
        2
    } else if per_s >= 10.0 {
        1
    } else {
        0
    }
}

/// The arrows for `flows` between `boxes` (None where boxes overlap).
fn arrows(
    view: &CpuView,
    flows: &[NodeFlow],
    boxes: &[NodeBox],
    (box_w, box_h): (f64, f64),
    hl: &[u32],
    (w, h): (f64, f64),
) -> Vec<Arrow> {
    let center = |n: u32| {
        boxes
            .iter()
            .find(|b| b.node == n)
            .map(|b| (b.x + box_w / 2.0, b.y + box_h / 2.0))
    };
    let mut out = Vec::new();
    for f in flows {
        let (Some(a), Some(b)) = (center(f.from_node), center(f.to_node)) else {
            continue;
        };
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let vlen = (dx * dx + 4.0 * dy * dy).sqrt();
        if vlen < 1e-9 {
            continue;
        }
        // the two directions between a pair run side by side
        let paired = flows
            .iter()
            .any(|g| g.from_node == f.to_node && g.to_node == f.from_node);
        let off = if paired { 0.7 } else { 0.0 };
        let (ox, oy) = (-2.0 * dy / vlen * off, dx / vlen * off / 2.0);
        let exit = |dx: f64, dy: f64| {
            let tx = if dx.abs() > 1e-9 {
                (box_w / 2.0 + 0.3) / dx.abs()
            } else {
                f64::INFINITY
            };
            let ty = if dy.abs() > 1e-9 {
                (box_h / 2.0 + 0.2) / dy.abs()
            } else {
                f64::INFINITY
            };
            tx.min(ty)
        };
        let t = exit(dx, dy);
        if 2.0 * t >= 0.95 {
            continue;
        }
        let start = (a.0 + ox + dx * t, a.1 + oy + dy * t);
        let end = (b.0 + ox - dx * t, b.1 + oy - dy * t);
        let per_s = ThreadInterval::per_s(f.count, view.interval_s);
        let tier = flow_tier(per_s);
        let lit = lit(f, hl);
        let color = if lit {
            theme::FLOW_HIGHLIGHT
        } else {
            theme::flow_color(tier)
        };
        let style = if lit {
            theme::flow_highlight()
        } else {
            Style::new()
                .fg(color)
                .add_modifier(ratatui::style::Modifier::BOLD)
        };
        let cell = |p: (f64, f64)| {
            (
                p.0.floor().clamp(0.0, w - 1.0) as u16,
                p.1.floor().clamp(0.0, h - 1.0) as u16,
            )
        };
        let hc = cell(end);
        // the direction in the label too: the two ways between a pair run close
        let text = format!("{}{}", format::rate(per_s), head_glyph(dx, dy));
        let at = (
            start.0 + (end.0 - start.0) * 0.33,
            start.1 + (end.1 - start.1) * 0.33,
        );
        let lw = text.chars().count() as f64;
        let lx = (at.0 - lw / 2.0).round().clamp(0.0, (w - lw).max(0.0)) as u16;
        let ly = at.1.floor().clamp(0.0, h - 1.0) as u16;
        out.push(Arrow {
            from: start,
            to: end,
            color,
            heavy: tier == 2,
            head: (hc.0, hc.1, head_glyph(dx, dy)),
            label: (lx, ly, text),
            style,
        });
    }
    out
}

fn draw_map(f: &mut Frame, area: Rect, view: &CpuView, nodes: &[u32], hl: &[u32]) {
    if area.width < 8 || area.height < 3 {
        return;
    }
    let (w, h) = (f64::from(area.width), f64::from(area.height));
    let (boxes, (box_w, box_h)) = layout_boxes(view, nodes, w, h);
    let mut flows = view.cross_flows();
    let lit_rest: Vec<NodeFlow> = flows
        .iter()
        .skip(MAX_ARROWS)
        .filter(|f| lit(f, hl))
        .copied()
        .collect();
    flows.truncate(MAX_ARROWS);
    flows.extend(lit_rest);
    // highlighted ones last, so they are drawn on top
    flows.sort_by_key(|f| lit(f, hl));
    let arrows = arrows(view, &flows, &boxes, (box_w, box_h), hl, (w, h));
    let print = |ctx: &mut Context, x: u16, y: u16, line: Line<'static>| {
        ctx.print(f64::from(x), h - 1.0 - f64::from(y), line);
    };
    let canvas = Canvas::default()
        .marker(Marker::Braille)
        .x_bounds([0.0, w - 1.0])
        .y_bounds([0.0, h - 1.0])
        .paint(|ctx| {
            for a in &arrows {
                let (x1, y1) = to_canvas(a.from.0, a.from.1, w, h);
                let (x2, y2) = to_canvas(a.to.0, a.to.1, w, h);
                ctx.draw(&CanvasLine::new(x1, y1, x2, y2, a.color));
                if a.heavy {
                    // a second line beside it: weight by magnitude
                    let (x1, y1) = to_canvas(a.from.0, a.from.1 + 0.25, w, h);
                    let (x2, y2) = to_canvas(a.to.0, a.to.1 + 0.25, w, h);
                    ctx.draw(&CanvasLine::new(x1, y1, x2, y2, a.color));
                }
            }
            for a in &arrows {
                let (x, y, g) = a.head;
                print(ctx, x, y, Line::styled(g.to_string(), a.style));
                let (x, y, t) = &a.label;
                print(ctx, *x, *y, Line::styled(t.clone(), a.style));
            }
            let bw = box_w as usize;
            let inner = bw.saturating_sub(2);
            for b in &boxes {
                let (x, y) = (b.x as u16, b.y as u16);
                if box_h < BOX_H {
                    print(
                        ctx,
                        x,
                        y,
                        Line::from(vec![
                            Span::styled("[", theme::node_box()),
                            Span::styled(format!("{:<inner$}", b.label), theme::title()),
                            Span::styled("]", theme::node_box()),
                        ]),
                    );
                    continue;
                }
                let bar = "─".repeat(inner);
                print(
                    ctx,
                    x,
                    y,
                    Line::styled(format!("┌{bar}┐"), theme::node_box()),
                );
                print(
                    ctx,
                    x,
                    y + 1,
                    Line::from(vec![
                        Span::styled("│", theme::node_box()),
                        Span::styled(format!("{:<inner$}", b.label), theme::title()),
                        Span::styled("│", theme::node_box()),
                    ]),
                );
                print(
                    ctx,
                    x,
                    y + 2,
                    Line::styled(format!("└{bar}┘"), theme::node_box()),
                );
            }
        });
    f.render_widget(canvas, area);
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
    if !view.has_migrations {
        f.render_widget(
            Paragraph::new(Line::styled(
                "no migrations: /proc has no CPU-to-CPU counts (the BPF source needs root)",
                theme::exited(),
            )),
            area,
        );
        return;
    }
    let nodes = app.host.topology.nodes();
    let hl = lit_nodes(app);
    f.render_widget(
        Paragraph::new(selection_line(app)),
        Rect::new(area.x, area.y, area.width, 1),
    );
    let body = Rect::new(area.x, area.y + 1, area.width, area.height - 1);
    if body.height == 0 {
        return;
    }
    let mw = matrix_width(nodes.len());
    let matrix = Paragraph::new(matrix_lines(view, &nodes, &hl));
    if app.numa_matrix {
        f.render_widget(matrix, body);
    } else if usize::from(body.width) >= mw + 2 + MAP_MIN_W {
        let mw = mw as u16;
        let map = Rect::new(body.x, body.y, body.width - mw - 2, body.height);
        draw_map(f, map, view, &nodes, &hl);
        f.render_widget(
            matrix,
            Rect::new(body.x + body.width - mw, body.y, mw, body.height),
        );
    } else {
        draw_map(f, body, view, &nodes, &hl);
    }
}

#[cfg(test)]
#[path = "numa_tests.rs"]
mod tests;
