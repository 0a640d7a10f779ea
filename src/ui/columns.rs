//! The table's columns, generated from the metric table (model/metrics.rs):
//! titles, widths, which ones go first when the terminal is narrow, cell
//! text (formatted by unit) and sort keys.
use std::cmp::Ordering;

use super::format;
use super::state_types::View;
use crate::model::interval::Row;
use crate::model::metrics::{self, Metric, Unit, Value, METRICS};

/// A column: the key of a metric that has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Column(pub &'static str);

impl Column {
    pub const TID: Column = Column("tid");
    pub const PID: Column = Column("pid");
    pub const COMM: Column = Column("comm");
    pub const THREADS: Column = Column("threads");
    pub const CPU: Column = Column("cpu");
    pub const VCSW: Column = Column("vcsw");
    pub const NVCSW: Column = Column("nvcsw");
    pub const CPU_PCT: Column = Column("cpu_pct");
    pub const AVG_SLICE: Column = Column("avg_slice");
    pub const P99_SLICE: Column = Column("p99_slice");
    pub const P99_WAIT: Column = Column("p99_wait");
    pub const MIGR: Column = Column("migr");
    pub const XNODE: Column = Column("xnode");
}

/// Gap between columns.
pub const GAP: u16 = 1;
/// The name column grows up to this width when there is room.
const COMM_MAX: u16 = 24;

impl Column {
    pub fn metric(self) -> &'static Metric {
        metrics::by_key(self.0).unwrap_or(&METRICS[0])
    }

    fn spec(self) -> metrics::ColumnSpec {
        self.metric()
            .column
            .expect("a column's metric has a column spec")
    }

    pub fn title(self) -> &'static str {
        self.spec().title
    }

    /// Width in cells (for COMM: the minimum).
    pub fn width(self) -> u16 {
        self.spec().width
    }

    /// Higher goes first when the table does not fit.
    fn drop_rank(self) -> u8 {
        self.spec().drop_rank
    }

    /// Biggest first, except for ids and names.
    pub fn descending_by_default(self) -> bool {
        !matches!(self.metric().unit, Unit::Id | Unit::Name)
    }

    pub fn right_aligned(self) -> bool {
        self.metric().unit != Unit::Name
    }

    /// The cell's text (names still raw: the table escapes them).
    pub fn cell(self, r: &Row) -> String {
        let m = self.metric();
        cell_text(m.unit, &m.value(r))
    }

    /// Order of two rows by this column; `descending` flips known values
    /// only, unknown ones stay last. Ties go by id so the order is stable.
    pub fn compare(self, a: &Row, b: &Row, descending: bool) -> Ordering {
        compare_by(self.metric(), a, b, descending)
    }
}

/// `Column::compare` with the metric looked up once (sorting many rows).
pub fn compare_by(m: &Metric, a: &Row, b: &Row, descending: bool) -> Ordering {
    let (va, vb) = (m.value(a), m.value(b));
    let primary = if let (Value::Text(x), Value::Text(y)) = (&va, &vb) {
        let o = x.to_lowercase().cmp(&y.to_lowercase());
        if descending {
            o.reverse()
        } else {
            o
        }
    } else {
        match (va.number(), vb.number()) {
            (Some(x), Some(y)) => {
                let o = x.partial_cmp(&y).unwrap_or(Ordering::Equal);
                if descending {
                    o.reverse()
                } else {
                    o
                }
            }
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        }
    };
    primary.then(a.id.cmp(&b.id))
}

/// A value as a table cell: `-` when unknown, else formatted by its unit.
pub fn cell_text(unit: Unit, v: &Value) -> String {
    match (unit, v) {
        (_, Value::None) => "-".to_string(),
        (Unit::Name, Value::Text(t)) => format::escape_name(t),
        (Unit::PerSecond, Value::F(f)) => format::rate(*f),
        (Unit::Percent, Value::F(f)) => format::percent(*f),
        (Unit::Nanoseconds, Value::F(f)) => format::duration_ns(*f),
        (Unit::Microseconds, Value::U(u)) => format::duration_us(*u),
        (_, Value::U(u)) => u.to_string(),
        (_, Value::I(i)) => i.to_string(),
        (_, Value::F(f)) => format!("{f:.1}"),
        (_, Value::Text(t)) => format::escape_name(t),
        (_, Value::Flag(b)) => if *b { "yes" } else { "no" }.to_string(),
        (_, Value::Hist(h)) => h.total().to_string(),
        (_, Value::Labels(v)) => v.iter().map(|p| p.1).sum::<u64>().to_string(),
        (_, Value::Floats(v)) => v
            .iter()
            .map(|f| format!("{f:.2}"))
            .collect::<Vec<_>>()
            .join(" "),
        (_, Value::Pairs(v)) => v.iter().map(|p| p.1).sum::<u64>().to_string(),
    }
}

/// Every column of a table view, in display order (the CPU and NUMA views
/// keep the threads table's rows and selection, so they answer with its).
pub fn columns_of(view: View) -> &'static [Column] {
    static THREADS: std::sync::OnceLock<Vec<Column>> = std::sync::OnceLock::new();
    static PROCESSES: std::sync::OnceLock<Vec<Column>> = std::sync::OnceLock::new();
    let pick = |processes: bool| -> Vec<Column> {
        METRICS
            .iter()
            .filter(|m| {
                m.column
                    .is_some_and(|c| if processes { c.processes } else { c.threads })
            })
            .map(|m| Column(m.key))
            .collect()
    };
    match view {
        View::Processes => PROCESSES.get_or_init(|| pick(true)),
        View::Threads | View::Cpus | View::Numa | View::Cgroups | View::Findings => {
            THREADS.get_or_init(|| pick(false))
        }
    }
}

/// The view's default sort column.
pub fn default_sort(view: View) -> Column {
    match view {
        View::Threads | View::Processes | View::Cpus | View::Numa | View::Cgroups => Column::NVCSW,
        View::Findings => Column::NVCSW,
    }
}

/// The help overlay's notes on the columns, in table order.
pub fn help_notes() -> impl Iterator<Item = &'static str> {
    METRICS.iter().filter_map(|m| m.help)
}

/// The columns that fit in `width` cells with their widths: the lowest
/// ranked are dropped until the rest fit, then COMM takes what is left (up
/// to its maximum). Always keeps COMM, clipped if need be.
pub fn fit(view: View, width: u16) -> Vec<(Column, u16)> {
    fit_cols(columns_of(view), width)
}

/// `fit` for the columns a person chose (settings.rs), in their order.
pub fn fit_cols(chosen: &[Column], width: u16) -> Vec<(Column, u16)> {
    let mut cols: Vec<Column> = chosen.to_vec();
    let need = |cols: &[Column]| -> u32 {
        cols.iter().map(|c| u32::from(c.width())).sum::<u32>()
            + u32::from(GAP) * cols.len().saturating_sub(1) as u32
    };
    while need(&cols) > u32::from(width) && cols.len() > 1 {
        let worst = cols
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != Column::COMM)
            .max_by_key(|(_, c)| c.drop_rank())
            .map(|(i, _)| i);
        match worst {
            Some(i) => {
                cols.remove(i);
            }
            None => break,
        }
    }
    let spare = u32::from(width).saturating_sub(need(&cols));
    cols.into_iter()
        .map(|c| {
            let w = if c == Column::COMM {
                let grown = (u32::from(c.width()) + spare).min(u32::from(COMM_MAX)) as u16;
                grown.min(width)
            } else {
                c.width()
            };
            (c, w)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_terminals_drop_least_important_first() {
        let all = fit(View::Threads, 200);
        assert_eq!(all.len(), columns_of(View::Threads).len());
        let at80: Vec<Column> = fit(View::Threads, 80).iter().map(|c| c.0).collect();
        assert!(!at80.contains(&Column::PID));
        assert!(at80.contains(&Column::NVCSW) && at80.contains(&Column::COMM));
        // cross-node migrations are the first to go, then PID
        assert!(!at80.contains(&Column::XNODE) && at80.contains(&Column::MIGR));
        let at90: Vec<Column> = fit(View::Threads, 90).iter().map(|c| c.0).collect();
        assert!(!at90.contains(&Column::XNODE) && at90.contains(&Column::PID));
        let at100: Vec<Column> = fit(View::Threads, 100).iter().map(|c| c.0).collect();
        assert!(at100.contains(&Column::XNODE));
        for w in 0..220u16 {
            for view in [View::Threads, View::Processes] {
                let f = fit(view, w);
                assert!(f.iter().any(|c| c.0 == Column::COMM));
                if f.len() > 1 {
                    let used: u32 = f.iter().map(|c| u32::from(c.1)).sum::<u32>()
                        + (f.len() as u32 - 1) * u32::from(GAP);
                    assert!(used <= u32::from(w), "{view:?} at {w}: {used}");
                }
            }
        }
    }
}
