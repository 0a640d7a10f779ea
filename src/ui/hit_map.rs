//! Where the last frame drew what a click can hit: the table's column
//! titles, its rows, the cgroup tree's fold marks, the footer's key hints.
//! Filled after each frame from the layout the renderer used (mouse.rs),
//! read when a click arrives; plain data, no terminal.
use ratatui::layout::{Position, Rect};

use super::action::Action;
use super::columns::Column;

/// What a click on a region means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// a table column's title: sort by it (again: invert)
    SortBy(Column),
    /// the row at this position of the view's list
    Row(usize),
    /// a cgroup's fold mark: select it and fold or unfold it
    Fold(usize),
    /// a key hint or a view name: what its key does
    Act(Action),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub rect: Rect,
    pub target: Target,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HitMap {
    /// later regions lie on top of earlier ones
    pub regions: Vec<Region>,
}

impl HitMap {
    pub fn push(&mut self, rect: Rect, target: Target) {
        if rect.width > 0 && rect.height > 0 {
            self.regions.push(Region { rect, target });
        }
    }

    /// What lies at column `x`, row `y` (the topmost region).
    pub fn at(&self, x: u16, y: u16) -> Option<Target> {
        self.regions
            .iter()
            .rev()
            .find(|r| r.rect.contains(Position::new(x, y)))
            .map(|r| r.target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_topmost_region_wins_and_edges_are_exclusive() {
        let mut m = HitMap::default();
        m.push(Rect::new(0, 5, 80, 1), Target::Row(3));
        m.push(Rect::new(4, 5, 2, 1), Target::Fold(3));
        m.push(Rect::new(0, 6, 0, 1), Target::Row(9)); // empty: never hit
        assert_eq!(m.at(0, 5), Some(Target::Row(3)));
        assert_eq!(m.at(5, 5), Some(Target::Fold(3)));
        assert_eq!(m.at(6, 5), Some(Target::Row(3)));
        assert_eq!(m.at(80, 5), None);
        assert_eq!(m.at(0, 6), None);
    }
}
