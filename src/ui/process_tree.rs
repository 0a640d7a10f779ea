//! `t` (htop's tree): every process under its parent (the parent pid the
//! source read), a process's threads under it, drawn with htop's lines
//! (├─ └─ │); siblings in the table's sort order; a process folded with
//! `-` shows `+` in its line. With a filter, a row that matches keeps its
//! ancestors on screen, dimmed, as htop does. Pure: the rows in, the lines
//! in screen order out (app_tree.rs calls it when a Sample or a key
//! changes them, never while drawing).
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::model::interval::{empty_row, Derived, Row, RowKey};
use crate::model::shared_interval::Interval;

/// A process with children: open, or folded (`-`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    Leaf,
    Open,
    Folded,
}

/// One line of the tree: which row, what to draw before its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeLine {
    /// index into the tree's base rows
    pub at: u32,
    /// htop's lines before the name ("│  ├─ "), `+` in place of `─` when
    /// folded
    pub prefix: String,
    /// shown only because a descendant matches the filter
    pub dim: bool,
    pub fold: Fold,
}

/// The tree's state: on or off, the folded processes, the lines.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    pub on: bool,
    /// folded processes, by pid
    pub folded: HashSet<u32>,
    /// the lines in screen order (empty while off)
    pub lines: Vec<TreeLine>,
}

/// The rows a tree is made of: every process, then the threads of the
/// processes that have more than one (a single thread is its process),
/// then the processes above them that a filter left out of the Sample
/// (`Sample::ancestors`) as rows with nothing counted and no threads
/// (`is_ancestor`): drawn dimmed, never matching a filter, in no sum.
pub fn base(iv: &Interval) -> Vec<Arc<Row>> {
    let d: &Derived = iv;
    let many: HashSet<u32> = d
        .processes
        .iter()
        .filter(|p| p.threads > 1)
        .map(|p| p.pid)
        .collect();
    let mut out = d.processes.clone();
    out.extend(d.threads.iter().filter(|t| many.contains(&t.pid)).cloned());
    let listed: HashSet<u32> = d.processes.iter().map(|p| p.pid).collect();
    for a in iv
        .sample
        .ancestors
        .iter()
        .filter(|a| !listed.contains(&a.pid))
    {
        let mut r = empty_row(RowKey::Process { pid: a.pid }, a.pid, a.pid);
        r.comm = a.comm.clone();
        r.process_comm = a.comm.clone();
        r.threads = 0;
        r.attrs.ppid = Some(a.ppid);
        out.push(Arc::new(r));
    }
    out
}

/// A process row that stands only for an ancestor of the filtered ones
/// (`base`): a measured process has at least one thread.
pub fn is_ancestor(r: &Row) -> bool {
    r.threads == 0 && matches!(r.key, RowKey::Process { .. })
}

/// The lines of `base` (processes and threads, as `base` makes them):
/// `matches` is the filter, `cmp` the sort order, `folded` the folded pids.
pub fn layout(
    base: &[Arc<Row>],
    matches: impl Fn(&Row) -> bool,
    cmp: impl Fn(&Row, &Row) -> Ordering,
    folded: &HashSet<u32>,
) -> Vec<TreeLine> {
    let mut procs: HashMap<u32, u32> = HashMap::new();
    for (i, r) in base.iter().enumerate() {
        if matches!(r.key, RowKey::Process { .. }) {
            procs.insert(r.pid, i as u32);
        }
    }
    // children of each process (threads and processes), and the roots
    let mut kids: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut roots: Vec<u32> = Vec::new();
    for (i, r) in base.iter().enumerate() {
        let parent = match r.key {
            RowKey::Process { pid } => r.attrs.ppid.filter(|&pp| pp != pid),
            _ => Some(r.pid),
        };
        match parent.and_then(|pp| procs.get(&pp)) {
            Some(&p) => kids.entry(p).or_default().push(i as u32),
            None => roots.push(i as u32),
        }
    }
    // a parent loop (pid reuse in a hostile recording) has no root: each
    // process not reached from one starts its own
    let order = preorder(&roots, &kids, base.len());
    let mut reached = vec![false; base.len()];
    for &i in &order {
        reached[i as usize] = true;
    }
    for i in 0..base.len() as u32 {
        if !reached[i as usize] && matches!(base[i as usize].key, RowKey::Process { .. }) {
            roots.push(i);
            mark_reached(i, &kids, &mut reached);
        }
    }
    // kept: matches, or has a kept descendant (children follow their
    // parent in pre-order, so the reverse sees them first)
    let own: Vec<bool> = base.iter().map(|r| !is_ancestor(r) && matches(r)).collect();
    let mut kept = own.clone();
    let all = preorder(&roots, &kids, base.len());
    for &i in all.iter().rev() {
        if kept[i as usize] {
            continue;
        }
        kept[i as usize] = kids
            .get(&i)
            .is_some_and(|k| k.iter().any(|&c| kept[c as usize]));
    }
    // a process that matches shows all its threads
    for &i in &all {
        if own[i as usize] && matches!(base[i as usize].key, RowKey::Process { .. }) {
            for &c in kids.get(&i).into_iter().flatten() {
                if !matches!(base[c as usize].key, RowKey::Process { .. }) {
                    kept[c as usize] = true;
                }
            }
        }
    }
    let sorted = |list: &[u32]| -> Vec<u32> {
        let mut v: Vec<u32> = list.iter().copied().filter(|&c| kept[c as usize]).collect();
        v.sort_by(|&a, &b| cmp(&base[a as usize], &base[b as usize]));
        v
    };
    let mut out = Vec::new();
    // (row, the indent of its line, None for a root, else whether it is
    // the last of its siblings)
    let mut stack: Vec<(u32, String, Option<bool>)> = sorted(&roots)
        .into_iter()
        .rev()
        .map(|r| (r, String::new(), None))
        .collect();
    let mut seen = vec![false; base.len()];
    while let Some((i, indent, last)) = stack.pop() {
        if std::mem::replace(&mut seen[i as usize], true) {
            continue;
        }
        let children = kids.get(&i).map(|k| sorted(k)).unwrap_or_default();
        let r = &base[i as usize];
        let fold = if children.is_empty() {
            Fold::Leaf
        } else if folded.contains(&r.pid) && matches!(r.key, RowKey::Process { .. }) {
            Fold::Folded
        } else {
            Fold::Open
        };
        let mark = if fold == Fold::Folded { "+" } else { "─" };
        let prefix = match last {
            None if fold == Fold::Folded => "+ ".to_string(),
            None => String::new(),
            Some(true) => format!("{indent}└{mark} "),
            Some(false) => format!("{indent}├{mark} "),
        };
        out.push(TreeLine {
            at: i,
            prefix,
            dim: !own[i as usize],
            fold,
        });
        if fold != Fold::Open {
            continue;
        }
        let inner = match last {
            None => String::new(),
            Some(true) => format!("{indent}   "),
            Some(false) => format!("{indent}│  "),
        };
        let n = children.len();
        for (k, c) in children.into_iter().enumerate().rev() {
            stack.push((c, inner.clone(), Some(k + 1 == n)));
        }
    }
    out
}

/// `roots` and everything under them, each parent before its children,
/// each row once.
fn preorder(roots: &[u32], kids: &HashMap<u32, Vec<u32>>, n: usize) -> Vec<u32> {
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    let mut stack: Vec<u32> = roots.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i as usize], true) {
            continue;
        }
        out.push(i);
        stack.extend(kids.get(&i).into_iter().flatten().rev());
    }
    out
}

fn mark_reached(i: u32, kids: &HashMap<u32, Vec<u32>>, reached: &mut [bool]) {
    for j in preorder(&[i], kids, reached.len()) {
        reached[j as usize] = true;
    }
}

/// Cells of a name a deep line keeps visible before it gives up indent.
const NAME_KEPT: usize = 8;

/// The part of `prefix` drawn before a name `name_len` cells long in a
/// column `width` cells wide. As in htop the indent stays and a long name
/// is cut, so a line never sits left of its parent; only a line so deep
/// that fewer than `NAME_KEPT` cells of its name would show gives up whole
/// levels of indent from the left (the corner and the fold mark stay).
pub fn shown_prefix(prefix: &str, name_len: usize, width: usize) -> &str {
    let n = prefix.chars().count();
    let over = (n + name_len.min(NAME_KEPT)).saturating_sub(width);
    let skip = over.div_ceil(3).saturating_mul(3).min(n.saturating_sub(3));
    prefix
        .char_indices()
        .nth(skip)
        .map_or("", |(b, _)| &prefix[b..])
}

#[cfg(test)]
mod tests {
    use super::shown_prefix;

    // "│  │  ├─ " is 9 cells: three levels of indent before the name
    const DEEP: &str = "│  │  ├─ ";

    #[test]
    fn a_long_name_is_cut_not_moved_left_of_its_parent() {
        // a 15-cell name in a 17-cell column: the 9 cells of indent stay,
        // 8 cells of name show (the table cuts the rest)
        assert_eq!(shown_prefix(DEEP, 15, 17), "│  │  ├─ ");
        // a short sibling keeps the same indent, so both stay aligned
        assert_eq!(shown_prefix(DEEP, 4, 17), "│  │  ├─ ");
    }

    #[test]
    fn only_a_line_too_deep_for_eight_cells_of_name_gives_up_levels() {
        // 14 cells wide: 9 of indent would leave 5 of name; one level goes
        assert_eq!(shown_prefix(DEEP, 15, 14), "│  ├─ ");
        // never the corner itself
        assert_eq!(shown_prefix(DEEP, 15, 2), "├─ ");
    }
}
