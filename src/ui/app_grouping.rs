//! `G`: the table as threads, thread groups, processes or cgroups as rows
//! (model/groups.rs); Enter or Right opens a thread group into its threads,
//! Left on one of them closes it again. Group rows are rebuilt from the
//! interval's thread rows when a Sample arrives (never while drawing). The
//! source's thread filters (`-u`, `--cgroup`) are kept here for the
//! header, which names them.
use super::{AppState, View};
use crate::model::groups;
use crate::model::interval::{Derived, Row, RowKey};
use crate::model::shared_interval::Interval;
use crate::ui::action::Action;
use std::sync::Arc;

/// What one table row stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Grouping {
    #[default]
    Threads,
    ThreadGroups,
    Processes,
    Cgroups,
}

impl Grouping {
    /// `G`'s order.
    pub fn next(self) -> Grouping {
        match self {
            Grouping::Threads => Grouping::ThreadGroups,
            Grouping::ThreadGroups => Grouping::Processes,
            Grouping::Processes => Grouping::Cgroups,
            Grouping::Cgroups => Grouping::Threads,
        }
    }

    /// The line above the table.
    pub fn title(self) -> &'static str {
        match self {
            Grouping::Threads => "Threads",
            Grouping::ThreadGroups => "Thread groups",
            Grouping::Processes => "Processes",
            Grouping::Cgroups => "cgroups as rows",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Listing {
    /// what the processes table lists (the threads table lists threads)
    pub mode: Grouping,
    /// thread groups or cgroups (empty in the other modes)
    pub rows: Vec<Arc<Row>>,
    /// thread groups shown as their threads
    pub expanded: Vec<RowKey>,
    /// the source's thread filters, as the header names them
    pub filters: Vec<String>,
    /// the processes as a tree (`t`; its rows: processes, then threads)
    pub tree: crate::ui::process_tree::Tree,
    /// `rows` are the tree's (built while it was on)
    pub tree_rows: bool,
}

impl Listing {
    /// The group rows of the interval `d`, if the mode lists groups.
    pub fn rebuild(&mut self, d: &Interval) {
        self.tree_rows =
            self.tree.on && matches!(self.mode, Grouping::Threads | Grouping::Processes);
        self.rows = match self.mode {
            Grouping::ThreadGroups => groups::thread_groups(&d.threads, &self.expanded),
            Grouping::Cgroups => groups::cgroup_rows(&d.threads),
            _ if self.tree_rows => crate::ui::process_tree::base(d),
            Grouping::Threads | Grouping::Processes => Vec::new(),
        };
    }
}

/// The rows a table view lists (before its filter).
pub fn base_of<'a>(d: &'a Derived, l: &'a Listing, view: View) -> &'a [Arc<Row>] {
    match (view, l.mode) {
        (View::Processes, Grouping::ThreadGroups | Grouping::Cgroups) => &l.rows,
        (View::Processes, Grouping::Threads | Grouping::Processes) if l.tree_rows => &l.rows,
        (View::Processes, _) => &d.processes,
        _ => &d.threads,
    }
}

impl AppState {
    /// What the table lists now.
    pub fn grouping(&self) -> Grouping {
        match self.table_view {
            View::Processes => self.listing.mode,
            _ => Grouping::Threads,
        }
    }

    /// The grouping keys and `H`; true when the action was handled here.
    pub(super) fn grouping_apply(&mut self, a: &Action) -> bool {
        match a {
            Action::CycleGrouping => {
                self.set_grouping(self.grouping().next());
                true
            }
            // `H` leaves groups for plain processes
            Action::ToggleProcesses => {
                self.listing.mode = Grouping::Processes;
                false
            }
            Action::ToggleDetail | Action::CgroupFold(false) if self.view == View::Processes => {
                self.open_group()
            }
            Action::CgroupFold(true) if self.view == View::Processes => self.close_group(),
            _ => false,
        }
    }

    fn set_grouping(&mut self, g: Grouping) {
        // the selection follows to the row that holds it
        let sel = self.selected_row();
        let key = sel.map(|r| match g {
            Grouping::Threads => None,
            Grouping::ThreadGroups => Some(groups::group_key(r)),
            Grouping::Processes => Some(RowKey::Process { pid: r.pid }),
            Grouping::Cgroups => None,
        });
        let view = match g {
            Grouping::Threads => View::Threads,
            _ => View::Processes,
        };
        self.listing.mode = g;
        self.listing.rebuild(&self.derived);
        self.view = view;
        self.table_view = view;
        self.selected_key = key.flatten();
        self.refresh(true);
    }

    /// Enter / Right on a thread group: its threads instead.
    fn open_group(&mut self) -> bool {
        let Some(r) = self.selected_row() else {
            return false;
        };
        if self.listing.mode != Grouping::ThreadGroups || !matches!(r.key, RowKey::Group { .. }) {
            return false;
        }
        let key = r.key;
        self.listing.expanded.push(key);
        self.listing.rebuild(&self.derived);
        self.selected_key = self
            .listing
            .rows
            .iter()
            .find(|t| matches!(t.key, RowKey::Thread { .. }) && groups::group_key(t) == key)
            .map(|t| t.key);
        self.refresh(true);
        true
    }

    /// Left on a thread of an opened group: the group row again.
    fn close_group(&mut self) -> bool {
        let Some(r) = self.selected_row() else {
            return false;
        };
        let key = groups::group_key(r);
        let Some(i) = self.listing.expanded.iter().position(|&k| k == key) else {
            return false;
        };
        self.listing.expanded.swap_remove(i);
        self.listing.rebuild(&self.derived);
        self.selected_key = Some(key);
        self.refresh(true);
        true
    }
}
