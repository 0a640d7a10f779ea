//! The comparison mode (`schedtop diff BEFORE AFTER` on a terminal, and
//! `snapshot --diff`): the app state fed by the compare model
//! (model/compare.rs). The state's own rows, CPU figures and findings are
//! AFTER's window (its first Sample, then the one spanning it), so every
//! view that reads the state shows AFTER; `CompareUi` holds the matched
//! entities and what BEFORE's window adds (its CPU figures and findings).
//! The thread, process and cgroup tables list the compared entities,
//! largest change first; their keys are handled here.
use crate::model::compare::{Compared, Window, FIGURES};

use super::action::{Action, Effect};
use super::app::{AppState, Mode, View};
use super::compare_columns;
pub use super::compare_state::{level_of, name, slot, CompareUi, Noted, Side};

/// The comparison table's rows for `app`'s view: its level, filtered by
/// name, largest change first (or by the sorted figure's change).
pub fn rows<'a>(app: &AppState, c: &'a CompareUi) -> Vec<&'a Compared> {
    let Some(level) = level_of(app.view) else {
        return Vec::new();
    };
    let filter = app.filter.to_lowercase();
    let mut v: Vec<(f64, String, &Compared)> = c
        .all
        .iter()
        .filter(|e| e.level == level)
        .map(|e| (e, name(e)))
        .filter(|(_, n)| filter.is_empty() || n.to_lowercase().contains(&filter))
        .map(|(e, n)| {
            let key = match c.sort.and_then(|s| FIGURES.iter().find(|f| f.name == s)) {
                Some(f) => compare_columns::change(e, f).map_or(-1.0, |(d, _)| d.abs()),
                None => e.weight(),
            };
            (key, n, e)
        })
        .collect();
    v.sort_by(|a, b| {
        let o = b.0.total_cmp(&a.0);
        let o = if c.inverted { o.reverse() } else { o };
        o.then_with(|| a.1.cmp(&b.1))
    });
    v.into_iter().map(|x| x.2).collect()
}

/// The selected entity of the table on screen.
pub fn selected<'a>(app: &AppState, c: &'a CompareUi) -> Option<&'a Compared> {
    let level = level_of(app.view)?;
    let r = rows(app, c);
    let i = c.selected[slot(level)].min(r.len().checked_sub(1)?);
    Some(r[i])
}

/// The comparison's state for `before` and `after`: AFTER's window fed to
/// the state, the processes table on screen.
pub fn comparing(before: &Window, after: &Window, all: Vec<Compared>) -> AppState {
    let mut app = AppState::new(after.host.clone(), Mode::Live);
    app.push_sample(after.first.clone());
    app.push_sample(after.end.clone());
    app.apply(Action::ToggleProcesses);
    app.compare = Some(Box::new(CompareUi::new(before, after, all)));
    app
}

impl AppState {
    /// The comparison mode's keys: moving and sorting in its tables, the
    /// detail pane; what a still comparison has no use for (pause, the
    /// interval, recording, rewinding) does nothing. None: the state's
    /// own handling (views, help, filter, screenshot, quit).
    pub fn compare_apply(&mut self, a: Action) -> Option<Effect> {
        let (view, width) = (self.view, self.size.0);
        let page = self.page().max(1);
        let n = self.compare.as_deref().map(|c| rows(self, c).len())?;
        if matches!(
            a,
            Action::TogglePause
                | Action::IntervalUp
                | Action::IntervalDown
                | Action::Replay(_)
                | Action::ToggleRecord
                | Action::FireIncident
                | Action::WriteFlight
                | Action::ToggleFollow
                | Action::ToggleHistScope
        ) {
            return Some(Effect::None);
        }
        let level = level_of(view)?;
        if a == Action::ToggleDetail {
            // the histogram overlay is for threads and processes
            self.detail = view != View::Cgroups && !self.detail;
            return Some(Effect::None);
        }
        let c = self.compare.as_deref_mut()?;
        let i = slot(level);
        let last = n.saturating_sub(1);
        let sel = c.selected[i].min(last);
        match a {
            Action::Up => c.selected[i] = sel.saturating_sub(1),
            Action::Down => c.selected[i] = (sel + 1).min(last),
            Action::PageUp => c.selected[i] = sel.saturating_sub(page),
            Action::PageDown => c.selected[i] = sel.saturating_add(page).min(last),
            Action::Home => c.selected[i] = 0,
            Action::End => c.selected[i] = last,
            Action::SortNext | Action::SortPrev => {
                // the overall change, then each figure on screen
                let order: Vec<Option<&'static str>> = std::iter::once(None)
                    .chain(
                        compare_columns::fit(level, width)
                            .into_iter()
                            .filter_map(|(col, _)| col.figure().map(|f| Some(f.name))),
                    )
                    .collect();
                let k = order.iter().position(|s| *s == c.sort).unwrap_or(0);
                let len = order.len();
                let next = if a == Action::SortNext {
                    k + 1
                } else {
                    k + len - 1
                };
                c.sort = order[next % len];
                c.inverted = false;
                c.selected[i] = 0;
            }
            Action::SortInvert => c.inverted = !c.inverted,
            Action::SortBy(col) => {
                if let Some(f) = compare_columns::figure_of(col) {
                    c.sort = Some(f.name);
                    c.inverted = false;
                    c.selected[i] = 0;
                }
            }
            Action::CgroupFold(_) => {}
            _ => return None,
        }
        // keep the selection on the page
        let s = c.selected[i];
        if s < c.offset[i] {
            c.offset[i] = s;
        } else if s >= c.offset[i] + page {
            c.offset[i] = s + 1 - page;
        }
        c.offset[i] = c.offset[i].min(n.saturating_sub(page));
        Some(Effect::None)
    }
}
