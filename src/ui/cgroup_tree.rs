//! The cgroups view's state and its rows: the tree of `Derived::cgroups`
//! in depth-first order, siblings sorted by the chosen column, collapsed
//! subtrees hidden, and the filter (path or short name) keeping matches
//! with their ancestors. No I/O; views/cgroups.rs draws it.
use std::collections::BTreeSet;

use super::action::Action;
use crate::model::cgroup_metrics::{self, CgroupFigure};
use crate::model::cgroup_name::short_name;
use crate::model::metrics::Unit;
use crate::model::CgroupRow;

/// What the cgroups table is sorted by: a figure of the cgroup table
/// with a sort title (model/cgroup_metrics.rs). The tree keeps its shape:
/// siblings are ordered by it.
#[derive(Clone, Copy, Debug)]
pub struct CgSort(&'static CgroupFigure);

impl PartialEq for CgSort {
    fn eq(&self, o: &CgSort) -> bool {
        self.0.key == o.0.key
    }
}
impl Eq for CgSort {}

impl CgSort {
    /// The sort by the figure with this key, if the view sorts by it.
    pub fn by_key(key: &str) -> Option<CgSort> {
        cgroup_metrics::sorts().find(|f| f.key == key).map(CgSort)
    }

    pub fn figure(self) -> &'static CgroupFigure {
        self.0
    }

    pub fn title(self) -> &'static str {
        self.0.sort.unwrap_or(self.0.key)
    }

    fn by_name(self) -> bool {
        self.0.unit == Unit::Name
    }

    fn key(self, r: &CgroupRow) -> f64 {
        // unknown sorts below every known value
        self.0.value(r).number().unwrap_or(-1.0)
    }
}

#[derive(Clone, Debug)]
pub struct CgroupsUi {
    /// index into `rows()`
    pub selected: usize,
    /// the selected cgroup's path, kept across Samples
    pub selected_path: Option<String>,
    /// paths whose children are hidden
    pub collapsed: BTreeSet<String>,
    pub sort: CgSort,
    pub inverted: bool,
    pub detail: bool,
}

impl Default for CgroupsUi {
    fn default() -> Self {
        CgroupsUi {
            selected: 0,
            selected_path: None,
            collapsed: BTreeSet::new(),
            sort: CgSort::by_key("cpu_pct").expect("the cgroup table sorts by CPU%"),
            inverted: false,
            detail: false,
        }
    }
}

/// The actions the cgroups view takes for itself.
pub fn handles(a: &Action) -> bool {
    matches!(
        a,
        Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Home
            | Action::End
            | Action::ToggleDetail
            | Action::SortNext
            | Action::SortPrev
            | Action::SortInvert
            | Action::CgroupFold(_)
    )
}

fn matches(r: &CgroupRow, filter: &str) -> bool {
    let f = filter.to_lowercase();
    r.path.to_lowercase().contains(&f) || short_name(&r.path).to_lowercase().contains(&f)
}

impl CgroupsUi {
    /// Indices into `all`, in the order shown.
    pub fn rows(&self, all: &[CgroupRow], filter: &str) -> Vec<usize> {
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); all.len()];
        let mut roots = Vec::new();
        for (i, r) in all.iter().enumerate() {
            match r.parent.filter(|&p| p < all.len() && p != i) {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        // with a filter: matches and their ancestors
        let keep: Vec<bool> = if filter.is_empty() {
            vec![true; all.len()]
        } else {
            let mut keep = vec![false; all.len()];
            for (i, r) in all.iter().enumerate() {
                if matches(r, filter) {
                    let mut at = Some(i);
                    let mut hops = 0;
                    while let Some(j) = at {
                        if keep[j] || hops > all.len() {
                            break;
                        }
                        keep[j] = true;
                        hops += 1;
                        at = all[j].parent.filter(|&p| p < all.len());
                    }
                }
            }
            keep
        };
        let order = |v: &mut Vec<usize>| {
            v.sort_by(|&a, &b| {
                let (ra, rb) = (&all[a], &all[b]);
                let s = self.sort;
                let o = if s.by_name() {
                    short_name(&ra.path).cmp(&short_name(&rb.path))
                } else {
                    s.key(rb).total_cmp(&s.key(ra))
                };
                let o = if self.inverted { o.reverse() } else { o };
                o.then_with(|| ra.path.cmp(&rb.path))
            })
        };
        order(&mut roots);
        for c in &mut children {
            order(c);
        }
        let mut out = Vec::with_capacity(all.len());
        let mut stack: Vec<usize> = roots.into_iter().rev().collect();
        while let Some(i) = stack.pop() {
            if !keep[i] || out.len() > all.len() {
                continue;
            }
            out.push(i);
            if !self.collapsed.contains(&all[i].path) {
                stack.extend(children[i].iter().rev());
            }
        }
        out
    }

    /// Whether row `i` has children (drawn with a fold mark).
    pub fn has_children(all: &[CgroupRow], i: usize) -> bool {
        all.iter().any(|r| r.parent == Some(i))
    }

    /// Keep the selection on the same cgroup when the rows change.
    pub fn refresh(&mut self, all: &[CgroupRow], filter: &str) {
        let rows = self.rows(all, filter);
        if let Some(p) = &self.selected_path {
            if let Some(pos) = rows.iter().position(|&i| &all[i].path == p) {
                self.selected = pos;
            }
        }
        self.selected = self.selected.min(rows.len().saturating_sub(1));
        self.selected_path = rows.get(self.selected).map(|&i| all[i].path.clone());
    }

    pub fn apply(&mut self, a: &Action, all: &[CgroupRow], filter: &str, page: usize) {
        let n = self.rows(all, filter).len();
        let last = n.saturating_sub(1);
        let page = page.max(1);
        match a {
            Action::Up => self.selected = self.selected.saturating_sub(1),
            Action::Down => self.selected = (self.selected + 1).min(last),
            Action::PageUp => self.selected = self.selected.saturating_sub(page),
            Action::PageDown => self.selected = (self.selected + page).min(last),
            Action::Home => self.selected = 0,
            Action::End => self.selected = last,
            Action::ToggleDetail => self.detail = !self.detail,
            Action::SortNext | Action::SortPrev => {
                let sorts: Vec<CgSort> = cgroup_metrics::sorts().map(CgSort).collect();
                let i = sorts.iter().position(|&s| s == self.sort).unwrap_or(0);
                let k = sorts.len();
                let j = if matches!(a, Action::SortNext) {
                    (i + 1) % k
                } else {
                    (i + k - 1) % k
                };
                self.sort = sorts[j];
                self.inverted = false;
            }
            Action::SortInvert => self.inverted = !self.inverted,
            Action::CgroupFold(fold) => {
                if let Some(p) = self.selected_path.clone() {
                    if *fold {
                        self.collapsed.insert(p);
                    } else {
                        self.collapsed.remove(&p);
                    }
                }
            }
            _ => {}
        }
        let rows = self.rows(all, filter);
        self.selected = self.selected.min(rows.len().saturating_sub(1));
        // a move picks a new cgroup; a sort or fold keeps the one selected
        if matches!(
            a,
            Action::Up
                | Action::Down
                | Action::PageUp
                | Action::PageDown
                | Action::Home
                | Action::End
        ) {
            self.selected_path = rows.get(self.selected).map(|&i| all[i].path.clone());
        } else {
            self.refresh(all, filter);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, parent: Option<usize>, cpu: f64) -> CgroupRow {
        CgroupRow {
            path: path.into(),
            parent,
            cpu_pct: Some(cpu),
            ..Default::default()
        }
    }

    fn tree() -> Vec<CgroupRow> {
        vec![
            row("/", None, 100.0),
            row("/a", Some(0), 10.0),
            row("/b", Some(0), 80.0),
            row("/b/x", Some(2), 70.0),
            row("/a/y", Some(1), 5.0),
        ]
    }

    #[test]
    fn depth_first_siblings_by_cpu_fold_and_filter() {
        let all = tree();
        let mut ui = CgroupsUi::default();
        assert_eq!(ui.rows(&all, ""), [0, 2, 3, 1, 4]);
        ui.inverted = true;
        assert_eq!(ui.rows(&all, ""), [0, 1, 4, 2, 3]);
        ui.inverted = false;
        ui.sort = CgSort::by_key("path").unwrap();
        assert_eq!(ui.rows(&all, ""), [0, 1, 4, 2, 3]);
        ui.sort = CgSort::by_key("cpu_pct").unwrap();
        // fold /b: its child is hidden, and the selection stays on /b
        ui.refresh(&all, "");
        ui.apply(&Action::Down, &all, "", 10);
        assert_eq!(ui.selected_path.as_deref(), Some("/b"));
        ui.apply(&Action::CgroupFold(true), &all, "", 10);
        assert_eq!(ui.rows(&all, ""), [0, 2, 1, 4]);
        assert_eq!(ui.selected, 1);
        ui.apply(&Action::CgroupFold(false), &all, "", 10);
        assert_eq!(ui.rows(&all, "").len(), 5);
        // a filter keeps the matches and their ancestors
        assert_eq!(ui.rows(&all, "y"), [0, 1, 4]);
        assert_eq!(ui.rows(&all, "nothing"), Vec::<usize>::new());
    }

    #[test]
    fn a_parent_loop_or_bad_index_cannot_hang_or_panic() {
        let mut all = tree();
        all[1].parent = Some(4);
        all[4].parent = Some(1);
        all[3].parent = Some(99);
        let ui = CgroupsUi::default();
        let rows = ui.rows(&all, "y");
        assert!(rows.len() <= all.len());
        assert!(ui.rows(&all, "").len() <= all.len());
    }
}
