//! The findings view (`y`): what the interval on screen says is wrong,
//! ranked as `schedtop why` ranks it (warnings first, then by how much of
//! the subject's time each explains), one line each; below the list the
//! selected finding's sentence and its evidence, figure by figure. Enter
//! opens the view that shows the evidence (app_findings.rs).
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crate::model::findings::{Finding, Severity, SubjectType};
use crate::ui::app::AppState;
use crate::ui::format::{escape_name, truncate};
use crate::ui::theme;

pub fn render_info(app: &AppState, f: &mut Frame, area: Rect) {
    let list = &app.findings.list;
    let warnings = list
        .iter()
        .filter(|x| x.severity == Severity::Warning)
        .count();
    let s = vec![
        Span::styled("Findings", theme::title()),
        Span::raw(" "),
        Span::styled(list.len().to_string(), theme::value()),
        Span::raw("  "),
        Span::styled("warnings", theme::label()),
        Span::raw(" "),
        Span::styled(warnings.to_string(), theme::value()),
        Span::raw("  "),
        Span::styled("ranked by impact", theme::label()),
    ];
    f.render_widget(Paragraph::new(Line::from(s)), area);
}

/// Where Enter goes for a subject.
fn target(t: SubjectType) -> &'static str {
    match t {
        SubjectType::Cgroup => "cgroups view",
        SubjectType::Thread | SubjectType::Process => "detail",
        SubjectType::Cpu | SubjectType::System => "CPU view",
        SubjectType::Node => "NUMA view",
    }
}

/// `cgroup app`, `process 4242 java`, `node 0`, `system`.
fn subject(f: &Finding) -> String {
    let s = &f.subject;
    match s.kind {
        SubjectType::System => "system".into(),
        SubjectType::Cgroup => format!("cgroup {}", escape_name(&s.name)),
        _ if s.name.is_empty() => format!("{} {}", s.kind.key(), s.id),
        _ => format!("{} {} {}", s.kind.key(), s.id, escape_name(&s.name)),
    }
}

const HEAD: &str = "  # SEVERITY KIND               IMPACT  SUBJECT";

fn row(i: usize, f: &Finding, width: usize) -> String {
    let s = format!(
        "{:>3} {:<8} {:<18} {:>5.0}%  {}",
        i + 1,
        f.severity.key(),
        f.kind.key(),
        f.impact * 100.0,
        subject(f)
    );
    truncate(&s, width)
}

/// The selected finding: its sentence, its evidence, where Enter goes.
fn detail(f: &Finding) -> Vec<Line<'static>> {
    let mut out = vec![
        Line::styled(escape_name(&f.text), theme::value()),
        Line::raw(""),
    ];
    for (figure, v) in &f.evidence.0 {
        out.push(Line::from(vec![
            Span::styled(format!("  {figure:<26}"), theme::label()),
            Span::styled(escape_name(&v.to_string()), theme::value()),
        ]));
    }
    out.push(Line::raw(""));
    out.push(Line::styled(
        format!(
            "Enter: the {} with this {}",
            target(f.subject.kind),
            f.subject.kind.key()
        ),
        theme::label(),
    ));
    out
}

pub fn render(app: &AppState, f: &mut Frame, area: Rect) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let list = &app.findings.list;
    let w = usize::from(area.width);
    if list.is_empty() {
        let text = if app.history.len() < 2 {
            "No interval yet: findings need two Samples."
        } else {
            "Nothing found: no thread waits long enough, often enough, for a rule to name a cause."
        };
        let p = Paragraph::new(Line::styled(text, theme::label())).wrap(Wrap { trim: true });
        f.render_widget(p, area);
        return;
    }
    // the list takes up to half the area; the selected one's evidence the rest
    let list_h = (list.len() as u16 + 1).min(area.height.div_ceil(2).max(2));
    let shown = usize::from(list_h.saturating_sub(1)).max(1);
    let sel = app.findings.selected.min(list.len() - 1);
    let first = sel.saturating_sub(shown - 1);
    let mut lines = vec![Line::styled(truncate(HEAD, w), theme::table_header())];
    for (i, x) in list.iter().enumerate().skip(first).take(shown) {
        let style = if i == sel {
            theme::selected()
        } else if x.severity == Severity::Warning {
            theme::warning()
        } else {
            theme::value()
        };
        let mut text = row(i, x, w);
        let pad = w.saturating_sub(Span::raw(text.as_str()).width());
        text.push_str(&" ".repeat(pad));
        lines.push(Line::styled(text, style));
    }
    let top = Rect::new(area.x, area.y, area.width, list_h.min(area.height));
    f.render_widget(Paragraph::new(lines), top);
    let rest_h = area.height.saturating_sub(list_h + 1);
    if rest_h > 0 {
        let bottom = Rect::new(area.x, area.y + list_h + 1, area.width, rest_h);
        let p = Paragraph::new(detail(&list[sel])).wrap(Wrap { trim: false });
        f.render_widget(p, bottom);
    }
}
