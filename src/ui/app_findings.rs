//! The findings the screen shows (model/findings.rs): computed once per
//! interval where the state derives it (`AppState::ingest`), from the same
//! rows and CPU figures the views read, so the header, the findings view,
//! replay and rewind all show the findings of the moment on screen. The
//! findings view's keys, and Enter: the view that shows a finding's
//! evidence, with its subject selected.
use super::{AppState, View};
use crate::model::findings::{Finding, SubjectType, Value};
use crate::model::interval::RowKey;
use crate::ui::action::Action;

#[derive(Clone, Debug, Default)]
pub struct FindingsUi {
    /// ranked: warnings first, then by impact (model/findings.rs)
    pub list: Vec<Finding>,
    /// the findings view's selected finding
    pub selected: usize,
}

impl FindingsUi {
    /// The interval's findings (the shared Interval's: none without an
    /// earlier Sample). `M`'s migration cause does not touch them: the
    /// rules read busy time and queue lengths.
    pub fn update(&mut self, list: &[Finding]) {
        self.list = list.to_vec();
        self.selected = self.selected.min(self.list.len().saturating_sub(1));
    }

    /// The first finding (the header's line).
    pub fn top(&self) -> Option<&Finding> {
        self.list.first()
    }
}

fn id_u32(v: &Value) -> Option<u32> {
    match v {
        Value::Int(n) => u32::try_from(*n).ok(),
        Value::Num(x) if *x >= 0.0 && *x <= f64::from(u32::MAX) => Some(*x as u32),
        Value::Text(t) => t.parse().ok(),
        _ => None,
    }
}

impl AppState {
    /// The findings view's keys; true when the action was one of them.
    pub(crate) fn findings_apply(&mut self, a: Action) -> bool {
        if self.view != View::Findings {
            return false;
        }
        let last = self.findings.list.len().saturating_sub(1);
        let page = self.page().max(1);
        let sel = &mut self.findings.selected;
        match a {
            Action::Up => *sel = sel.saturating_sub(1),
            Action::Down => *sel = (*sel + 1).min(last),
            Action::PageUp => *sel = sel.saturating_sub(page),
            Action::PageDown => *sel = (*sel + page).min(last),
            Action::Home => *sel = 0,
            Action::End => *sel = last,
            Action::ToggleDetail => self.jump_to_evidence(),
            _ => return false,
        }
        true
    }

    /// Enter on a finding: its subject in the view that shows why.
    fn jump_to_evidence(&mut self) {
        let Some(f) = self.findings.list.get(self.findings.selected) else {
            return;
        };
        let (kind, id) = (f.subject.kind, f.subject.id.clone());
        match kind {
            SubjectType::Cgroup => {
                let Value::Text(path) = id else { return };
                // unfold its ancestors so it is listed
                let mut at = path.as_str();
                while let Some((parent, _)) = at.rsplit_once('/') {
                    let parent = if parent.is_empty() { "/" } else { parent };
                    self.cgroups.collapsed.remove(parent);
                    if parent == "/" {
                        break;
                    }
                    at = parent;
                }
                self.cgroups.selected_path = Some(path);
                self.cgroups.refresh(&self.derived.cgroups, &self.filter);
                self.view = View::Cgroups;
            }
            SubjectType::Thread | SubjectType::Process => {
                let Some(n) = id_u32(&id) else { return };
                let (table, key) = if kind == SubjectType::Thread {
                    let row = self.derived.threads.iter().find(|r| r.id == n);
                    (View::Threads, row.map(|r| r.key))
                } else {
                    (View::Processes, Some(RowKey::Process { pid: n }))
                };
                // the row must be listed: a filter that hides it goes
                self.filter.clear();
                self.table_view = table;
                self.view = table;
                self.selected_key = key;
                self.detail = true;
                self.refresh(true);
            }
            SubjectType::Cpu => self.view = View::Cpus,
            SubjectType::Node => self.view = View::Numa,
            SubjectType::System => self.view = View::Cpus,
        }
    }
}
