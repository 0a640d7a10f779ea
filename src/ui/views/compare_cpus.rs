//! The comparison's CPU (`c`) and NUMA (`n`) views, and its findings (`y`):
//! each CPU's figures on both sides with the change; the node-to-node
//! migration matrices of both windows (per second of each) and the change
//! in each flow, fewer cross-node moves in green; each side's findings.
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::model::cpu_metrics::{self, CpuRow};
use crate::model::cpus::{CpuHistory, CpuView};
use crate::model::findings::{Finding, Severity};
use crate::ui::app::{AppState, View};
use crate::ui::compare_ui::CompareUi;
use crate::ui::format;
use crate::ui::theme;

fn opt(v: Option<f64>, f: fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

fn delta(b: Option<f64>, a: Option<f64>, f: fn(f64) -> String) -> String {
    match (b, a) {
        (Some(b), Some(a)) => {
            let d = a - b;
            let sign = if d < 0.0 { "-" } else { "+" };
            format!("{sign}{}", f(d.abs()))
        }
        _ => "-".to_string(),
    }
}

/// A line per CPU: busy %, switches/s, migrations in/s, each before,
/// after and change.
fn cpu_lines(c: &CompareUi) -> Vec<Line<'static>> {
    let (Some(b), Some(a)) = (&c.before.cpu, &c.after.cpu) else {
        return vec![Line::styled(
            "(a side has fewer than two Samples: no CPU figures)",
            theme::exited(),
        )];
    };
    let head = format!(
        "{:<6} {:>23}   {:>23}   {:>23}",
        "CPU", "BUSY% before after chg", "SW/s before after chg", "MIGRin/s before after chg"
    );
    let mut out = vec![Line::styled(head, theme::table_header())];
    // the interval's figures only: no run-queue history here
    let no_history = CpuHistory::default();
    for fa in &a.cpus {
        let fb = b.cpus.iter().find(|x| x.cpu == fa.cpu);
        // each figure through its descriptor (model/cpu_metrics.rs)
        let trio = |key: &str, f: fn(f64) -> String| {
            let fig = cpu_metrics::by_key(key);
            let g = |c: &crate::model::cpus::CpuFigures| {
                fig?.value(&CpuRow::of_figures(c, &no_history)).number()
            };
            let (vb, va) = (fb.and_then(g), g(fa));
            format!(
                "{:>7} {:>7} {:>7}",
                opt(vb, f),
                opt(va, f),
                delta(vb, va, f)
            )
        };
        out.push(Line::raw(format!(
            "cpu{:<3} {}   {}   {}",
            fa.cpu,
            trio("busy_pct", format::percent),
            trio("switches_per_s", format::rate),
            trio("migrations_in_per_s", format::rate),
        )));
    }
    out
}

fn nodes(v: &CpuView) -> Vec<u32> {
    let mut n: Vec<u32> = v.cpus.iter().map(|c| c.node).collect();
    n.sort_unstable();
    n.dedup();
    n
}

/// The three node x node matrices side by side: before, after, change.
fn matrix_lines(c: &CompareUi) -> Vec<Line<'static>> {
    let (Some(b), Some(a)) = (&c.before.cpu, &c.after.cpu) else {
        return Vec::new();
    };
    if !a.has_migrations && !b.has_migrations {
        return vec![Line::styled(
            "(no migration matrix: the procfs source does not count CPU-to-CPU moves)",
            theme::exited(),
        )];
    }
    let mut ns = nodes(a);
    ns.extend(nodes(b));
    ns.sort_unstable();
    ns.dedup();
    const W: usize = 8;
    let block_w = 5 + ns.len() * W;
    let title = |t: &str| format!("{t:<block_w$}   ");
    let mut out = vec![
        Line::styled(
            "node -> node migrations/s (row: from, column: to)",
            theme::title(),
        ),
        Line::styled(
            format!("{}{}{}", title("before"), title("after"), title("change")),
            theme::label(),
        ),
    ];
    let head: String = ns
        .iter()
        .map(|n| format!("{:>W$}", format!("n{n}")))
        .collect();
    out.push(Line::styled(
        format!("{:5}{head}   {:5}{head}   {:5}{head}", "", "", ""),
        theme::table_header(),
    ));
    for &from in &ns {
        let mut s = Vec::new();
        for v in [b, a] {
            s.push(Span::raw(format!("{:<5}", format!("n{from}"))));
            for &to in &ns {
                s.push(Span::raw(format!(
                    "{:>W$}",
                    format::rate(v.flow_s(from, to))
                )));
            }
            s.push(Span::raw("   "));
        }
        s.push(Span::raw(format!("{:<5}", format!("n{from}"))));
        for &to in &ns {
            let d = a.flow_s(from, to) - b.flow_s(from, to);
            // fewer moves across nodes is better; within a node, neither
            let style = if from == to || d.abs() < 1.0 {
                Style::new()
            } else if d < 0.0 {
                theme::better()
            } else {
                theme::worse()
            };
            let sign = if d < 0.0 { "-" } else { "+" };
            s.push(Span::styled(
                format!("{:>W$}", format!("{sign}{}", format::rate(d.abs()))),
                style,
            ));
        }
        out.push(Line::from(s));
    }
    let (ab, xb) = b.totals_s();
    let (aa, xa) = a.totals_s();
    out.push(Line::raw(format!(
        "all migrations/s {} -> {}   cross-node/s {} -> {}",
        format::rate(ab),
        format::rate(aa),
        format::rate(xb),
        format::rate(xa)
    )));
    out
}

pub fn render(app: &AppState, c: &CompareUi, f: &mut Frame, area: Rect) {
    let mut lines = Vec::new();
    if app.view == View::Cpus {
        lines.extend(cpu_lines(c));
        lines.push(Line::raw(""));
        lines.extend(matrix_lines(c));
    } else {
        lines.extend(matrix_lines(c));
        lines.push(Line::raw(""));
        lines.extend(cpu_lines(c));
    }
    f.render_widget(Paragraph::new(lines), area);
}

fn finding_lines(what: &'static str, list: &[Finding]) -> Vec<Line<'static>> {
    let mut out = vec![Line::styled(
        format!("{what}: {} finding(s)", list.len()),
        theme::title(),
    )];
    for f in list {
        let style = match f.severity {
            Severity::Warning => theme::warning(),
            Severity::Info => theme::label(),
        };
        out.push(Line::from(vec![
            Span::styled(format!("  {}: ", f.severity.key()), style),
            Span::styled(f.kind.key(), theme::label()),
            Span::raw(" "),
            Span::raw(format::escape_name(&f.text)),
        ]));
    }
    out
}

/// Both sides' findings, BEFORE's first.
pub fn findings(c: &CompareUi, f: &mut Frame, area: Rect) {
    let mut lines = finding_lines("before", &c.before.findings);
    lines.push(Line::raw(""));
    lines.extend(finding_lines("after", &c.after.findings));
    f.render_widget(Paragraph::new(lines), area);
}
