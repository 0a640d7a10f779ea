//! The comparison table's columns: each compared figure (model/
//! compare_figures.rs) shown as AFTER's value with the change beside it,
//! titled, sized and formatted as the live table's column for the same
//! figure (columns.rs) where there is one; which columns go first when the
//! terminal is narrow, and the colour of a change (better, worse, or
//! neither where more is not by itself better).
use ratatui::style::Style;

use super::columns::{cell_text, Column};
use super::theme;
use crate::model::compare::{Better, Compared, Figure, Level, Match, FIGURES};
use crate::model::metrics::{Unit, Value};

/// A column of the comparison table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareColumn {
    /// the entity's name
    Name,
    /// "only before" / "only after" (blank when both sides have it)
    Side,
    /// a compared figure, by its batch-JSON name
    Figure(&'static str),
}

/// Width of the name column: at least, and at most when there is room.
const NAME_MIN: u16 = 14;
const NAME_MAX: u16 = 30;
const SIDE_W: u16 = 11;
/// " -12.3ms" and " -100%" beside the value
const CHANGE_W: u16 = 8;
const REL_W: u16 = 6;

/// The figure's live-table column, where the live table has one.
fn live_column(figure: &str) -> Option<Column> {
    Some(match figure {
        "cpu_pct" => Column::CPU_PCT,
        "involuntary_per_s" => Column::NVCSW,
        "voluntary_per_s" => Column::VCSW,
        "wait_p99_us" => Column::P99_WAIT,
        "slice_p99_us" => Column::P99_SLICE,
        "migrations_per_s" => Column::MIGR,
        "cross_node_migrations_per_s" => Column::XNODE,
        _ => return None,
    })
}

/// Title, unit, value width and drop rank (higher goes first when the
/// table does not fit) of a figure's column: the figures where better is
/// unambiguous stay longest, cross-node moves among them.
fn spec(figure: &str) -> (&'static str, Unit, u16, u8) {
    let rank = match figure {
        "cpu_pct" => 1,
        "wait_p99_us" | "throttled_ms_per_s" => 2,
        "cross_node_migrations_per_s" | "psi_some_pct" => 3,
        "involuntary_per_s" => 4,
        "wait_p50_us" => 5,
        "voluntary_per_s" => 6,
        "migrations_per_s" => 7,
        _ => 8,
    };
    if let Some(c) = live_column(figure) {
        return (c.title(), c.metric().unit, c.width(), rank);
    }
    match figure {
        "wait_p50_us" => ("P50WAIT", Unit::Microseconds, 7, rank),
        "throttled_ms_per_s" => ("THROTms/s", Unit::Count, 9, rank),
        "psi_some_pct" => ("PSI%", Unit::Percent, 5, rank),
        "switches_per_s" => ("SW/s", Unit::PerSecond, 6, rank),
        _ => ("RQ", Unit::Count, 5, rank),
    }
}

/// The figures each table compares, in display order.
fn figures_of(level: Level) -> &'static [&'static str] {
    match level {
        Level::Cgroup => &[
            "cpu_pct",
            "throttled_ms_per_s",
            "psi_some_pct",
            "wait_p99_us",
            "involuntary_per_s",
            "voluntary_per_s",
            "slice_p99_us",
            "migrations_per_s",
        ],
        _ => &[
            "cpu_pct",
            "wait_p99_us",
            "wait_p50_us",
            "involuntary_per_s",
            "voluntary_per_s",
            "slice_p99_us",
            "migrations_per_s",
            "cross_node_migrations_per_s",
        ],
    }
}

impl CompareColumn {
    pub fn figure(self) -> Option<&'static Figure> {
        match self {
            CompareColumn::Figure(n) => FIGURES.iter().find(|f| f.name == n),
            _ => None,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            CompareColumn::Name => "NAME",
            CompareColumn::Side => "MATCH",
            CompareColumn::Figure(n) => spec(n).0,
        }
    }

    /// Width of the value part (a figure's column adds the change).
    fn value_width(self) -> u16 {
        match self {
            CompareColumn::Name => NAME_MIN,
            CompareColumn::Side => SIDE_W,
            CompareColumn::Figure(n) => spec(n).2.max(6),
        }
    }

    pub fn width(self) -> u16 {
        match self {
            CompareColumn::Figure(_) => self.value_width() + CHANGE_W + REL_W,
            _ => self.value_width(),
        }
    }
}

/// The compared figure a live-table column shows (`P` sorts by CPU%).
pub fn figure_of(c: Column) -> Option<&'static Figure> {
    FIGURES.iter().find(|f| live_column(f.name) == Some(c))
}

/// The columns that fit `width` with their widths: figures dropped in the
/// live table's order until the rest fit, the name taking what is left.
pub fn fit(level: Level, width: u16) -> Vec<(CompareColumn, u16)> {
    let mut figs: Vec<&'static str> = figures_of(level).to_vec();
    let need = |figs: &[&'static str]| -> u32 {
        let fixed = u32::from(NAME_MIN + 1 + SIDE_W);
        figs.iter()
            .map(|f| u32::from(CompareColumn::Figure(f).width()) + 1)
            .sum::<u32>()
            + fixed
    };
    while need(&figs) > u32::from(width) && !figs.is_empty() {
        let worst = (0..figs.len())
            .max_by_key(|&i| spec(figs[i]).3)
            .unwrap_or(0);
        figs.remove(worst);
    }
    let spare = u32::from(width).saturating_sub(need(&figs));
    let name_w = (u32::from(NAME_MIN) + spare).min(u32::from(NAME_MAX)) as u16;
    let mut out = vec![(CompareColumn::Name, name_w.min(width))];
    out.push((CompareColumn::Side, SIDE_W));
    out.extend(
        figs.into_iter()
            .map(|f| (CompareColumn::Figure(f), CompareColumn::Figure(f).width())),
    );
    out
}

/// `f`'s value as the live table writes it.
fn text(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Microseconds => cell_text(unit, &Value::U(v.abs().round() as u64)),
        Unit::Count => format!("{:.1}", v.abs()),
        _ => cell_text(unit, &Value::F(v.abs())),
    }
}

/// The change of `f` (after − before) and before's value; an entity on one
/// side only changed from or to nothing. None: unknown on a side.
pub fn change(c: &Compared, f: &Figure) -> Option<(f64, f64)> {
    let side = |s: &Option<crate::model::compare::Figures>| s.as_ref().and_then(|x| (f.get)(x));
    let (b, a) = (side(&c.before), side(&c.after));
    match c.matched {
        Match::Both => Some((a? - b?, b?)),
        Match::OnlyBefore => Some((-b?, b?)),
        Match::OnlyAfter => Some((a?, 0.0)),
    }
}

/// What a change means: green better, red worse, plain where more is not
/// by itself better or the entity is on one side only.
pub fn change_style(c: &Compared, f: &Figure, d: f64) -> Style {
    let noise = d.abs() < f.floor;
    if f.better != Better::Lower || c.matched != Match::Both || noise {
        Style::new()
    } else if d < 0.0 {
        theme::better()
    } else {
        theme::worse()
    }
}

/// A figure's cell: AFTER's value, the change, and the change relative to
/// BEFORE ("new" / "gone" for an entity on one side).
pub fn cell(c: &Compared, col: CompareColumn) -> (String, String, String) {
    let Some(f) = col.figure() else {
        return (String::new(), String::new(), String::new());
    };
    let unit = spec(f.name).1;
    let after = c.after.as_ref().and_then(|x| (f.get)(x));
    let value = after.map_or_else(|| "-".to_string(), |v| text(unit, v));
    let Some((d, b)) = change(c, f) else {
        return (value, String::new(), String::new());
    };
    let abs = fmt_change(col, d);
    let rel = match c.matched {
        Match::OnlyBefore => "gone".to_string(),
        Match::OnlyAfter => "new".to_string(),
        Match::Both if d == 0.0 => String::new(),
        Match::Both if b == 0.0 => "new".to_string(),
        Match::Both => {
            let pct = (d / b.abs() * 100.0).clamp(-999.0, 999.0);
            format!("{pct:+.0}%")
        }
    };
    (value, abs, rel)
}

/// A change in its figure's unit, signed (`+1.2k`, `-8.4ms`).
pub fn fmt_change(col: CompareColumn, d: f64) -> String {
    let Some(f) = col.figure() else {
        return String::new();
    };
    if d == 0.0 {
        return "0".into();
    }
    let sign = if d < 0.0 { "-" } else { "+" };
    format!("{sign}{}", text(spec(f.name).1, d))
}

/// Widths inside a figure's cell: value, change, relative change.
pub fn parts(col: CompareColumn) -> (usize, usize, usize) {
    (
        usize::from(col.value_width()),
        usize::from(CHANGE_W),
        usize::from(REL_W),
    )
}
