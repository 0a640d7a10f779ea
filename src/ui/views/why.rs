//! The detail pane's "why" lines: migrations by cause and what voluntary
//! switch-outs blocked on (the interval's, or since start with `a`), and who
//! ran when the row was preempted (always the last interval: preemptors are
//! not kept beyond it).
use ratatui::text::{Line, Span};

use crate::model::interval::{Row, RowKey};
use crate::model::why::{BlockReason, MigCause, WhyCounts};
use crate::ui::format::escape_name;
use crate::ui::theme;

/// Lines `lines` returns for a row (0 when the source has no why figures).
pub fn height(r: &Row) -> u16 {
    if r.why.is_some() {
        3
    } else {
        0
    }
}

fn label(s: &mut Vec<Span<'static>>, l: &'static str) {
    s.push(Span::styled(l, theme::label()));
    s.push(Span::raw(" "));
}

fn value(s: &mut Vec<Span<'static>>, name: &str, v: String) {
    s.push(Span::raw(format!(" {name} ")));
    s.push(Span::styled(v, theme::value()));
    s.push(Span::raw(" "));
}

fn causes(w: &WhyCounts) -> Line<'static> {
    let mut s = Vec::new();
    label(&mut s, "migrations by cause");
    for c in MigCause::ALL {
        value(
            &mut s,
            c.short(),
            w.migrations_by_cause[c as usize].to_string(),
        );
    }
    Line::from(s)
}

fn reasons(w: &WhyCounts, since_start: bool) -> Line<'static> {
    let mut s = Vec::new();
    label(&mut s, "blocked on");
    let total: u64 = w.blocked_on.iter().sum();
    let mut by: Vec<(BlockReason, u64)> = BlockReason::ALL
        .iter()
        .map(|&r| (r, w.blocked_on[r as usize]))
        .filter(|&(_, n)| n > 0)
        .collect();
    by.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    if by.is_empty() {
        let when = if since_start {
            " nothing since start"
        } else {
            " nothing this interval"
        };
        s.push(Span::styled(when, theme::exited()));
    }
    for (r, n) in by {
        let pct = n as f64 * 100.0 / total as f64;
        value(&mut s, r.short(), format!("{n} ({pct:.0}%)"));
    }
    Line::from(s)
}

fn preemptors(r: &Row, w: &WhyCounts, since_start: bool) -> Line<'static> {
    let mut s = Vec::new();
    label(
        &mut s,
        if since_start {
            "preempted by (last interval)"
        } else {
            "preempted by"
        },
    );
    if w.preempted_by.is_empty() && w.preempted_by_rest == 0 {
        s.push(Span::styled(" nobody this interval", theme::exited()));
    }
    let per_thread = matches!(r.key, RowKey::Thread { .. });
    for p in &w.preempted_by {
        let name = if p.comm.is_empty() {
            "?".to_string()
        } else {
            escape_name(&p.comm)
        };
        let who = if per_thread {
            format!("{} {name}/{}", p.tid, p.pid)
        } else {
            format!("{} {name}", p.pid)
        };
        value(&mut s, &who, p.count.to_string());
    }
    if w.preempted_by_rest > 0 {
        value(&mut s, "others", w.preempted_by_rest.to_string());
    }
    Line::from(s)
}

/// The row's why lines (none without figures): causes and reasons from
/// `since_start` when given, else the interval's.
pub fn lines(r: &Row, since_start: Option<&WhyCounts>) -> Vec<Line<'static>> {
    let Some(w) = &r.why else {
        return Vec::new();
    };
    let scope = since_start.unwrap_or(w);
    let since = since_start.is_some();
    vec![
        causes(scope),
        reasons(scope, since),
        preemptors(r, w, since),
    ]
}
