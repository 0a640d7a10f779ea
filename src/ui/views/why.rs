//! The detail pane's "why" lines: migrations by cause and what voluntary
//! switch-outs blocked on (the interval's, or since start with `a`), and who
//! ran when the row was preempted and who woke it (always the last
//! interval: pair lists are not kept beyond it), and for a thread the wait
//! chain: what its top wakers did in the same interval, and who woke them.
use ratatui::text::{Line, Span};
use std::sync::Arc;

use crate::model::interval::{Row, RowKey};
use crate::model::why::{BlockReason, MigCause, Preemptor, PseudoWaker, WhyCounts};
use crate::ui::format::escape_name;
use crate::ui::theme;

/// Wakers followed in the wait chain.
const CHAIN_WAKERS: usize = 2;

/// Lines `lines` returns for a row (0 when the source has no why figures).
pub fn height(r: &Row) -> u16 {
    match &r.why {
        Some(w) => 4 + chain_len(r, w) as u16,
        None => 0,
    }
}

fn chain_len(r: &Row, w: &WhyCounts) -> usize {
    if matches!(r.key, RowKey::Thread { .. }) {
        w.woken_by.len().min(CHAIN_WAKERS)
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

fn who(p: &Preemptor, per_thread: bool) -> String {
    let name = if p.comm.is_empty() {
        "?".to_string()
    } else {
        escape_name(&p.comm)
    };
    if per_thread {
        format!("{} {name}/{}", p.tid, p.pid)
    } else {
        format!("{} {name}", p.pid)
    }
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

fn wakers(r: &Row, w: &WhyCounts, since_start: bool) -> Line<'static> {
    let mut s = Vec::new();
    label(
        &mut s,
        if since_start {
            "woken by (last interval)"
        } else {
            "woken by"
        },
    );
    if !w.wakers_known() {
        // not counted (the probes' waker counting off, the source or the
        // recording has none): unknown, never "nobody"
        s.push(Span::styled(" -", theme::value()));
        s.push(Span::styled(
            " (not counted: SCHEDTOP_WAKERS=1)",
            theme::exited(),
        ));
        return Line::from(s);
    }
    let total = w.wakeups_listed();
    if total == 0 {
        s.push(Span::styled(" nobody this interval", theme::exited()));
    }
    let pct = |n: u64| format!("{n} ({:.0}%)", n as f64 * 100.0 / total.max(1) as f64);
    let per_thread = matches!(r.key, RowKey::Thread { .. });
    for p in &w.woken_by {
        value(&mut s, &who(p, per_thread), pct(p.count));
    }
    if w.woken_by_rest > 0 {
        value(&mut s, "others", pct(w.woken_by_rest));
    }
    for p in PseudoWaker::ALL {
        let n = w.woken_by_irq[p as usize];
        if n > 0 {
            value(&mut s, p.key(), pct(n));
        }
    }
    Line::from(s)
}

/// What a thread did in the interval, for the chain: its top block reason
/// and share, its wait p99, whether it was preempted.
fn doing(s: &mut Vec<Span<'static>>, t: &Row) {
    let w = t.why.as_deref();
    let block = w
        .and_then(WhyCounts::top_block)
        .map_or("-".into(), |(r, share)| {
            format!("{} {:.0}%", r.short(), share * 100.0)
        });
    value(s, "blocks", block);
    let p99 = t.p99_wait_us.map_or("-".into(), |v| format!("{v}us"));
    value(s, "wait p99", p99);
    let preempted = t.nvcsw_s.get().map_or("-".into(), |v| format!("{v:.0}/s"));
    value(s, "preempted", preempted);
}

/// One link of the wait chain per top waker of a thread: what the waker
/// did in the same interval, then who woke it most and what that one did
/// (a second hop: one row lookup more).
fn chain(w: &WhyCounts, threads: &[Arc<Row>]) -> Vec<Line<'static>> {
    let row_of = |tid: u32| {
        threads
            .iter()
            .find(|t| matches!(t.key, RowKey::Thread { tid: x, .. } if x == tid))
    };
    let mut out = Vec::new();
    for p in w.woken_by.iter().take(CHAIN_WAKERS) {
        let mut s = Vec::new();
        label(&mut s, "chain");
        s.push(Span::raw(format!(" <- {}:", who(p, true))));
        let Some(t) = row_of(p.tid) else {
            s.push(Span::styled(" not in the list", theme::exited()));
            out.push(Line::from(s));
            continue;
        };
        doing(&mut s, t);
        // the second hop: the waker's own top waker, a thread (what it
        // did) or an interrupt
        let tw = t.why.as_deref();
        let irq_top = tw.map_or(0, |tw| tw.woken_by_irq.iter().copied().max().unwrap_or(0));
        match tw.and_then(|tw| tw.woken_by.first()) {
            Some(q) if q.count >= irq_top => {
                s.push(Span::raw(format!(" <- {}:", who(q, true))));
                match row_of(q.tid) {
                    Some(u) => doing(&mut s, u),
                    None => s.push(Span::styled(" not in the list", theme::exited())),
                }
            }
            _ => {
                if let Some((name, share)) = tw.and_then(WhyCounts::top_waker) {
                    let name = escape_name(&name);
                    s.push(Span::raw(format!(" <- {name} {:.0}%", share * 100.0)));
                }
            }
        }
        out.push(Line::from(s));
    }
    out
}

/// The row's why lines (none without figures): causes and reasons from
/// `since_start` when given, else the interval's; `threads` are the
/// interval's thread rows, where the wait chain finds the wakers.
pub fn lines(r: &Row, since_start: Option<&WhyCounts>, threads: &[Arc<Row>]) -> Vec<Line<'static>> {
    let Some(w) = &r.why else {
        return Vec::new();
    };
    let scope = since_start.unwrap_or(w);
    let since = since_start.is_some();
    let mut out = vec![
        causes(scope),
        reasons(scope, since),
        preemptors(r, w, since),
        wakers(r, w, since),
    ];
    if chain_len(r, w) > 0 {
        out.extend(chain(w, threads));
    }
    out
}
