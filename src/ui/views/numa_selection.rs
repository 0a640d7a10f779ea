//! The NUMA view's line about the selected thread, and which of its
//! nodes' flows are highlighted.
use ratatui::text::{Line, Span};

use crate::model::counters::CROSS_NODE;
use crate::model::interval::{Row, RowKey};
use crate::model::why::MigCause;
use crate::ui::app::AppState;
use crate::ui::format::{self, escape_name};
use crate::ui::theme;

/// The selected thread's nodes to highlight. Under `M` (one migration
/// cause), none when the thread made no move of that cause in the interval;
/// a thread with some keeps all its flows (its per-cause counts do not say
/// which of its moves crossed nodes).
pub(super) fn lit_nodes(app: &AppState) -> Vec<u32> {
    let Some((r, nodes)) = app.highlighted_thread() else {
        return Vec::new();
    };
    match cause_moves(app, r) {
        Some((_, 0)) => Vec::new(),
        _ => nodes,
    }
}

/// Under `M`, the chosen cause and the row's moves of it in the interval
/// (None: no filter, or the source does not know causes).
fn cause_moves(app: &AppState, r: &Row) -> Option<(MigCause, u64)> {
    let c = app.mig_cause?;
    let n = r
        .why
        .as_ref()?
        .migrations_by_cause
        .get(c as usize)
        .copied()?;
    Some((c, n))
}

/// The line about the selected thread.
pub(super) fn selection_line(app: &AppState) -> Line<'static> {
    let Some(r) = app.selected_row() else {
        return Line::styled("no thread selected", theme::exited());
    };
    if !matches!(r.key, RowKey::Thread { .. }) {
        return Line::styled(
            "a process is selected: pick a thread (H, then n) to highlight its flows",
            theme::exited(),
        );
    }
    let name = format!("thread {} {}", r.id, escape_name(&r.comm));
    let nodes = lit_nodes(app);
    let mut s = vec![Span::styled(name, theme::value()), Span::raw(": ")];
    let by_cause = cause_moves(app, r);
    if nodes.is_empty() {
        s.push(Span::styled(
            match (r.counter_per_s(&CROSS_NODE), by_cause) {
                (None, _) => "cross-node migrations unknown".to_string(),
                (Some(x), Some((c, 0))) if x > 0.0 => {
                    format!("no {} migrations in the last interval", c.key())
                }
                (Some(_), _) => "no cross-node migrations in the last interval".to_string(),
            },
            theme::label(),
        ));
    } else {
        let list: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
        let of_cause = by_cause.map_or(String::new(), |(c, n)| {
            format!(" ({n} of its moves were {})", c.key())
        });
        s.push(Span::styled(
            format!(
                "{} cross-node migrations/s; flows of node{} {} highlighted{of_cause}",
                r.counter_per_s(&CROSS_NODE)
                    .map_or_else(|| "-".into(), format::rate),
                if list.len() == 1 { "" } else { "s" },
                list.join(", ")
            ),
            theme::flow_highlight(),
        ));
    }
    s.push(Span::styled("  (Up/Down: another thread)", theme::exited()));
    Line::from(s)
}
