//! The state's side of the process tree (`t`, F5; process_tree.rs lays it
//! out): turning it on shows the processes view as a tree, `-` folds the
//! selected process (a thread: its process), `+` opens it, a click on a
//! fold mark does either.
use super::{AppState, View};
use crate::model::interval::RowKey;
use crate::ui::action::{Action, TreeAction};
use crate::ui::app::grouping::Grouping;
use crate::ui::columns;
use crate::ui::process_tree::{self, Fold};
use crate::ui::row_order::{RowFilter, RowOrder};

impl AppState {
    /// Whether the table shows the process tree now.
    pub fn tree_shown(&self) -> bool {
        // (the processes view lists processes in modes Threads and
        // Processes: the mode is what `G` left)
        self.listing.tree.on
            && self.table_view == View::Processes
            && matches!(self.listing.mode, Grouping::Threads | Grouping::Processes)
    }

    /// The tree's lines for the current rows, filter, sort and folds; the
    /// table's order is theirs.
    pub(super) fn layout_tree(&mut self) {
        if !self.listing.tree_rows {
            self.listing.rebuild(&self.derived);
        }
        let (metric, desc) = (self.sort.metric(), self.descending());
        let f = RowFilter::new(&self.filter);
        let lines = process_tree::layout(
            &self.listing.rows,
            |r| f.matches(r),
            |a, b| columns::compare_by(metric, a, b, desc),
            &self.listing.tree.folded,
        );
        self.order = RowOrder::fixed(lines.iter().map(|l| l.at).collect());
        self.listing.tree.lines = lines;
    }

    /// `t`, F5, `+`, `-`; true when the action was handled here.
    pub(super) fn tree_apply(&mut self, a: &Action) -> bool {
        let Action::Tree(t) = *a else { return false };
        match t {
            TreeAction::Toggle => self.toggle_tree(),
            TreeAction::Fold(fold) if self.tree_shown() => self.fold_selected(Some(fold)),
            TreeAction::Fold(_) => {}
        }
        true
    }

    fn toggle_tree(&mut self) {
        let on = !self.tree_shown();
        // the selection follows to the process that holds it
        let key = self.selected_row().map(|r| RowKey::Process { pid: r.pid });
        self.listing.tree.on = on;
        // what the setup screen shows and would save
        self.view_model.settings.tree = on;
        self.listing.mode = Grouping::Processes;
        self.view = View::Processes;
        self.table_view = View::Processes;
        self.listing.rebuild(&self.derived);
        self.selected_key = key;
        self.refresh(true);
    }

    /// Fold (Some(true)), open (Some(false)) or flip (None) the selected
    /// process, or the process of the selected thread.
    pub(super) fn fold_selected(&mut self, fold: Option<bool>) {
        let Some(pid) = self.selected_row().map(|r| r.pid) else {
            return;
        };
        let has_kids = self
            .listing
            .tree
            .lines
            .iter()
            .find(|l| self.listing.rows[l.at as usize].key == RowKey::Process { pid })
            .is_some_and(|l| l.fold != Fold::Leaf);
        let folded = &mut self.listing.tree.folded;
        let fold = fold.unwrap_or(!folded.contains(&pid));
        if fold && has_kids {
            folded.insert(pid);
        } else if !fold {
            folded.remove(&pid);
        } else {
            return;
        }
        self.selected_key = Some(RowKey::Process { pid });
        self.refresh(true);
    }
}
