//! The setup screen's state and keys (`F2`, `S`): a draft of the settings
//! (settings.rs) the person edits line by line, then saves (Enter), uses
//! for this run only (Esc) or throws away (`x`). Its column lines come
//! from the metric table: a new metric is offered here by itself.
//! views/setup.rs draws it.
use super::columns::{self, Column};
use super::settings::{self, Settings, Theme, VIEWS};
use super::state_types::View;

/// One setting line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    View,
    Sort,
    SortOrder,
    Interval,
    HistBuckets,
    HistSpan,
    Theme,
    Mouse,
    Tree,
    ExactFigures,
}

pub const FIELDS: [Field; 10] = [
    Field::View,
    Field::Sort,
    Field::SortOrder,
    Field::Interval,
    Field::HistBuckets,
    Field::HistSpan,
    Field::Theme,
    Field::Mouse,
    Field::Tree,
    Field::ExactFigures,
];

/// The two tables whose columns can be chosen, with their section titles.
pub const TABLES: [(View, &str); 2] = [
    (View::Threads, "Columns of the threads table"),
    (View::Processes, "Columns of the processes table"),
];

/// A line the cursor can be on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    Field(Field),
    /// a column of a table, shown or not
    Column {
        view: View,
        column: Column,
        shown: bool,
    },
}

/// What the keys do on the setup screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetupKey {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    /// the previous / next value of a setting
    Left,
    Right,
    /// show or hide a column
    Toggle,
    /// move a shown column left / right in its table
    MoveUp,
    MoveDown,
    /// the cursor to this line (a click)
    Point(usize),
    /// close, use and save
    Save,
    /// close, use for this run
    Use,
    /// close, forget the changes
    Discard,
}

/// How the setup screen closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Closed {
    Save,
    Use,
    Discard,
}

/// The setup screen while it is open.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupDraft {
    pub settings: Settings,
    pub cursor: usize,
}

/// Every line of the setup screen for `s`: the settings, then per table
/// its shown columns in order and the hidden ones after them.
pub fn items(s: &Settings) -> Vec<Item> {
    let mut out: Vec<Item> = FIELDS.iter().map(|&f| Item::Field(f)).collect();
    for (view, _) in TABLES {
        let shown = s.columns(view);
        for &column in &shown {
            out.push(Item::Column {
                view,
                column,
                shown: true,
            });
        }
        for &column in columns::columns_of(view) {
            if !shown.contains(&column) {
                out.push(Item::Column {
                    view,
                    column,
                    shown: false,
                });
            }
        }
    }
    out
}

/// The columns a sort can name: the threads table's, then the processes
/// table's own.
fn sortable() -> Vec<Column> {
    let mut v = columns::columns_of(View::Threads).to_vec();
    for &c in columns::columns_of(View::Processes) {
        if !v.contains(&c) {
            v.push(c);
        }
    }
    v
}

fn cycle<T: PartialEq + Copy>(all: &[T], cur: T, up: bool) -> T {
    let n = all.len().max(1);
    let i = all.iter().position(|&x| x == cur).unwrap_or(0);
    all[if up { (i + 1) % n } else { (i + n - 1) % n }]
}

/// A setting's name on the screen.
pub fn label(f: Field) -> &'static str {
    match f {
        Field::View => "View at start",
        Field::Tree => "Process tree",
        Field::Sort => "Sort by",
        Field::SortOrder => "Sort order",
        Field::Interval => "Interval",
        Field::HistBuckets => "Histogram buckets",
        Field::HistSpan => "Histograms over",
        Field::Theme => "Colours",
        Field::Mouse => "Mouse",
        Field::ExactFigures => "Figures",
    }
}

/// A setting's value on the screen.
pub fn value(s: &Settings, f: Field) -> String {
    let on = |b: bool| if b { "on" } else { "off" }.to_string();
    match f {
        Field::View => settings::view_key(s.start_view()).to_string(),
        Field::Tree => on(s.tree),
        Field::Sort => s.sort_column().title().trim().to_string(),
        Field::SortOrder => {
            let big_first = s.sort_column().descending_by_default() != s.sort_inverted;
            if big_first {
                "biggest first"
            } else {
                "smallest first"
            }
            .to_string()
        }
        Field::Interval => crate::ui::format::duration_ns(s.interval_ns() as f64),
        Field::HistBuckets => if s.hist_octaves {
            "whole octaves (bpftrace hist)"
        } else {
            "4 per octave"
        }
        .to_string(),
        Field::HistSpan => if s.hist_since_start {
            "since start"
        } else {
            "last interval"
        }
        .to_string(),
        Field::Theme => s.theme.name().to_string(),
        Field::Mouse => on(s.mouse),
        Field::ExactFigures => if s.exact_figures {
            "exact at each refresh"
        } else {
            "steady (hold moves of 5 % or less)"
        }
        .to_string(),
    }
}

impl SetupDraft {
    /// The setup screen on `s` (column lists as the tables show them).
    pub fn open(s: &Settings) -> SetupDraft {
        let mut settings = s.clone();
        for (view, _) in TABLES {
            *settings.column_keys_mut(view) =
                s.columns(view).iter().map(|c| c.0.to_string()).collect();
        }
        SetupDraft {
            settings,
            cursor: 0,
        }
    }

    pub fn item(&self) -> Option<Item> {
        items(&self.settings).get(self.cursor).copied()
    }

    /// One key; Some when the screen closes.
    pub fn apply(&mut self, k: SetupKey) -> Option<Closed> {
        let last = items(&self.settings).len().saturating_sub(1);
        match k {
            SetupKey::Up => self.cursor = self.cursor.saturating_sub(1),
            SetupKey::Down => self.cursor = (self.cursor + 1).min(last),
            SetupKey::PageUp => self.cursor = self.cursor.saturating_sub(10),
            SetupKey::PageDown => self.cursor = (self.cursor + 10).min(last),
            SetupKey::Home => self.cursor = 0,
            SetupKey::End => self.cursor = last,
            SetupKey::Point(i) => self.cursor = i.min(last),
            SetupKey::Left | SetupKey::Right => {
                let up = k == SetupKey::Right;
                match self.item() {
                    Some(Item::Field(f)) => self.change(f, up),
                    Some(Item::Column { .. }) => self.toggle(),
                    None => {}
                }
            }
            SetupKey::Toggle => match self.item() {
                Some(Item::Field(f)) => self.change(f, true),
                _ => self.toggle(),
            },
            SetupKey::MoveUp => self.shift(false),
            SetupKey::MoveDown => self.shift(true),
            SetupKey::Save => return Some(Closed::Save),
            SetupKey::Use => return Some(Closed::Use),
            SetupKey::Discard => return Some(Closed::Discard),
        }
        None
    }

    fn change(&mut self, f: Field, up: bool) {
        let s = &mut self.settings;
        match f {
            Field::View => {
                let views: Vec<View> = VIEWS.iter().map(|(v, _)| *v).collect();
                s.view = settings::view_key(cycle(&views, s.start_view(), up)).to_string();
            }
            Field::Sort => {
                s.sort = cycle(&sortable(), s.sort_column(), up).0.to_string();
                s.sort_inverted = false;
            }
            Field::SortOrder => s.sort_inverted = !s.sort_inverted,
            Field::Interval => s.interval_ms = settings::step_interval_ms(s.interval_ms, up),
            Field::HistBuckets => s.hist_octaves = !s.hist_octaves,
            Field::HistSpan => s.hist_since_start = !s.hist_since_start,
            Field::Theme => s.theme = cycle(&Theme::ALL, s.theme, up),
            Field::Mouse => s.mouse = !s.mouse,
            Field::Tree => s.tree = !s.tree,
            Field::ExactFigures => s.exact_figures = !s.exact_figures,
        }
    }

    /// Show or hide the column under the cursor (the name column stays);
    /// the cursor stays on it.
    fn toggle(&mut self) {
        let Some(Item::Column {
            view,
            column,
            shown,
        }) = self.item()
        else {
            return;
        };
        if column == Column::COMM {
            return;
        }
        let keys = self.settings.column_keys_mut(view);
        if shown {
            keys.retain(|k| k != column.0);
        } else {
            keys.push(column.0.to_string());
        }
        self.follow(view, column);
    }

    /// Move the shown column under the cursor one place.
    fn shift(&mut self, later: bool) {
        let Some(Item::Column {
            view,
            column,
            shown: true,
        }) = self.item()
        else {
            return;
        };
        let keys = self.settings.column_keys_mut(view);
        let Some(i) = keys.iter().position(|k| k == column.0) else {
            return;
        };
        let j = if later { i + 1 } else { i.wrapping_sub(1) };
        if j < keys.len() {
            keys.swap(i, j);
        }
        self.follow(view, column);
    }

    fn follow(&mut self, view: View, column: Column) {
        if let Some(i) = items(&self.settings).iter().position(
            |it| matches!(it, Item::Column { view: v, column: c, .. } if *v == view && *c == column),
        ) {
            self.cursor = i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(d: &mut SetupDraft, view: View, column: Column) {
        d.cursor = items(&d.settings)
            .iter()
            .position(|it| matches!(it, Item::Column { view: v, column: c, .. } if *v == view && *c == column))
            .unwrap();
    }

    #[test]
    fn columns_hide_show_and_move() {
        let mut d = SetupDraft::open(&Settings::default());
        let before = d.settings.columns(View::Threads);
        at(&mut d, View::Threads, Column::PID);
        d.apply(SetupKey::Toggle);
        let now = d.settings.columns(View::Threads);
        assert_eq!(now.len(), before.len() - 1);
        assert!(!now.contains(&Column::PID));
        // the hidden column is listed after the shown ones, cursor on it
        assert_eq!(
            d.item(),
            Some(Item::Column {
                view: View::Threads,
                column: Column::PID,
                shown: false
            })
        );
        d.apply(SetupKey::Toggle);
        assert_eq!(d.settings.columns(View::Threads).last(), Some(&Column::PID));
        // move NVCSW one place earlier
        at(&mut d, View::Threads, Column::NVCSW);
        let i = d
            .settings
            .columns(View::Threads)
            .iter()
            .position(|&c| c == Column::NVCSW)
            .unwrap();
        d.apply(SetupKey::MoveUp);
        let cols = d.settings.columns(View::Threads);
        assert_eq!(cols[i - 1], Column::NVCSW);
        // the name column cannot be hidden
        at(&mut d, View::Threads, Column::COMM);
        d.apply(SetupKey::Toggle);
        assert!(d.settings.columns(View::Threads).contains(&Column::COMM));
        // the processes table is untouched
        assert_eq!(
            d.settings.columns(View::Processes),
            columns::columns_of(View::Processes)
        );
    }

    #[test]
    fn every_metric_column_has_a_line() {
        let its = items(&Settings::default());
        for (view, _) in TABLES {
            for &c in columns::columns_of(view) {
                assert!(its.iter().any(|it| matches!(it, Item::Column { view: v, column, .. } if *v == view && *column == c)));
            }
        }
    }

    #[test]
    fn fields_cycle_and_come_back() {
        let mut d = SetupDraft::open(&Settings::default());
        for (i, f) in FIELDS.iter().enumerate() {
            d.cursor = i;
            let start = value(&d.settings, *f);
            d.apply(SetupKey::Right);
            assert_ne!(value(&d.settings, *f), start, "{f:?}");
            d.apply(SetupKey::Left);
            assert_eq!(value(&d.settings, *f), start, "{f:?}");
        }
        assert_eq!(d.apply(SetupKey::Save), Some(Closed::Save));
    }
}
