//! The table's columns: titles, widths, which ones go first when the
//! terminal is narrow, cell text and sort keys.
use std::cmp::Ordering;

use super::app::View;
use super::format;
use super::rows::Row;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Column {
    Tid,
    Pid,
    Comm,
    Threads,
    Cpu,
    Vcsw,
    Nvcsw,
    CpuPct,
    AvgSlice,
    P99Slice,
    P99Wait,
    Migr,
    /// cross-node migrations per second
    Xnode,
}

const THREAD_COLUMNS: &[Column] = &[
    Column::Tid,
    Column::Pid,
    Column::Comm,
    Column::Cpu,
    Column::Vcsw,
    Column::Nvcsw,
    Column::CpuPct,
    Column::AvgSlice,
    Column::P99Slice,
    Column::P99Wait,
    Column::Migr,
    Column::Xnode,
];

const PROCESS_COLUMNS: &[Column] = &[
    Column::Pid,
    Column::Comm,
    Column::Threads,
    Column::Vcsw,
    Column::Nvcsw,
    Column::CpuPct,
    Column::AvgSlice,
    Column::P99Slice,
    Column::P99Wait,
    Column::Migr,
    Column::Xnode,
];

/// Gap between columns.
pub const GAP: u16 = 1;
/// The name column grows up to this width when there is room.
const COMM_MAX: u16 = 24;

impl Column {
    pub fn title(self) -> &'static str {
        match self {
            Column::Tid => "TID",
            Column::Pid => "PID",
            Column::Comm => "COMM",
            Column::Threads => "THR",
            Column::Cpu => "CPU",
            Column::Vcsw => "VCSW/s",
            Column::Nvcsw => "NVCSW/s",
            Column::CpuPct => "CPU%",
            Column::AvgSlice => "AVGSLICE",
            Column::P99Slice => "P99SLICE",
            Column::P99Wait => "P99WAIT",
            Column::Migr => "MIGR/s",
            Column::Xnode => "XNODE/s",
        }
    }

    /// Width in cells (for COMM: the minimum).
    pub fn width(self) -> u16 {
        match self {
            Column::Tid | Column::Pid => 7,
            Column::Comm => 10,
            Column::Threads => 4,
            Column::Cpu => 3,
            // rates are at most 6 wide ("123.4k"); the title sets NVCSW/s
            Column::Vcsw => 6,
            Column::Nvcsw => 7,
            Column::CpuPct => 5,
            Column::AvgSlice | Column::P99Slice => 8,
            Column::P99Wait => 7,
            Column::Migr => 6,
            Column::Xnode => 7,
        }
    }

    /// Higher goes first when the table does not fit.
    fn drop_rank(self) -> u8 {
        match self {
            Column::Xnode => 11,
            Column::Pid => 10,
            Column::Migr => 9,
            Column::Cpu => 8,
            Column::Threads => 7,
            Column::P99Slice => 6,
            Column::AvgSlice => 5,
            Column::P99Wait => 4,
            Column::CpuPct => 3,
            Column::Vcsw => 2,
            Column::Tid => 1,
            Column::Nvcsw => 1,
            Column::Comm => 0,
        }
    }

    /// Biggest first, except for ids and names.
    pub fn descending_by_default(self) -> bool {
        !matches!(self, Column::Tid | Column::Pid | Column::Comm | Column::Cpu)
    }

    pub fn right_aligned(self) -> bool {
        self != Column::Comm
    }

    /// The cell's text (names still raw: the table escapes them).
    pub fn cell(self, r: &Row) -> String {
        let dash = || "-".to_string();
        match self {
            Column::Tid => r.id.to_string(),
            Column::Pid => r.pid.to_string(),
            Column::Comm => format::escape_name(&r.comm),
            Column::Threads => r.threads.to_string(),
            Column::Cpu => r.cpu.map_or_else(dash, |c| c.to_string()),
            Column::Vcsw => r.vcsw_s.map_or_else(dash, format::rate),
            Column::Nvcsw => r.nvcsw_s.map_or_else(dash, format::rate),
            Column::CpuPct => r.cpu_pct.map_or_else(dash, format::percent),
            Column::AvgSlice => r.avg_slice_ns.map_or_else(dash, format::duration_ns),
            Column::P99Slice => r.p99_slice_us.map_or_else(dash, format::duration_us),
            Column::P99Wait => r.p99_wait_us.map_or_else(dash, format::duration_us),
            Column::Migr => r.migr_s.map_or_else(dash, format::rate),
            Column::Xnode => r.xnode_s.map_or_else(dash, format::rate),
        }
    }

    /// Numeric sort value; None sorts last whatever the direction.
    fn number(self, r: &Row) -> Option<f64> {
        match self {
            Column::Tid => Some(r.id as f64),
            Column::Pid => Some(r.pid as f64),
            Column::Comm => None,
            Column::Threads => Some(r.threads as f64),
            Column::Cpu => r.cpu.map(f64::from),
            Column::Vcsw => r.vcsw_s,
            Column::Nvcsw => r.nvcsw_s,
            Column::CpuPct => r.cpu_pct,
            Column::AvgSlice => r.avg_slice_ns,
            Column::P99Slice => r.p99_slice_us.map(|v| v as f64),
            Column::P99Wait => r.p99_wait_us.map(|v| v as f64),
            Column::Migr => r.migr_s,
            Column::Xnode => r.xnode_s,
        }
    }

    /// Order of two rows by this column; `descending` flips known values
    /// only, unknown ones stay last. Ties go by id so the order is stable.
    pub fn compare(self, a: &Row, b: &Row, descending: bool) -> Ordering {
        let primary = if self == Column::Comm {
            let o = a.comm.to_lowercase().cmp(&b.comm.to_lowercase());
            if descending {
                o.reverse()
            } else {
                o
            }
        } else {
            match (self.number(a), self.number(b)) {
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
}

/// Every column of a table view, in display order (the CPU and NUMA views
/// keep the threads table's rows and selection, so they answer with its).
pub fn columns_of(view: View) -> &'static [Column] {
    match view {
        View::Processes => PROCESS_COLUMNS,
        View::Threads | View::Cpus | View::Numa => THREAD_COLUMNS,
    }
}

/// The view's default sort column.
pub fn default_sort(view: View) -> Column {
    match view {
        View::Threads | View::Processes | View::Cpus | View::Numa => Column::Nvcsw,
    }
}

/// The columns that fit in `width` cells with their widths: the lowest
/// ranked are dropped until the rest fit, then COMM takes what is left (up
/// to its maximum). Always keeps COMM, clipped if need be.
pub fn fit(view: View, width: u16) -> Vec<(Column, u16)> {
    let mut cols: Vec<Column> = columns_of(view).to_vec();
    let need = |cols: &[Column]| -> u32 {
        cols.iter().map(|c| u32::from(c.width())).sum::<u32>()
            + u32::from(GAP) * cols.len().saturating_sub(1) as u32
    };
    while need(&cols) > u32::from(width) && cols.len() > 1 {
        let worst = cols
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != Column::Comm)
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
            let w = if c == Column::Comm {
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
        assert_eq!(all.len(), THREAD_COLUMNS.len());
        let at80: Vec<Column> = fit(View::Threads, 80).iter().map(|c| c.0).collect();
        assert!(!at80.contains(&Column::Pid));
        assert!(at80.contains(&Column::Nvcsw) && at80.contains(&Column::Comm));
        // cross-node migrations are the first to go, then PID
        assert!(!at80.contains(&Column::Xnode) && at80.contains(&Column::Migr));
        let at90: Vec<Column> = fit(View::Threads, 90).iter().map(|c| c.0).collect();
        assert!(!at90.contains(&Column::Xnode) && at90.contains(&Column::Pid));
        let at100: Vec<Column> = fit(View::Threads, 100).iter().map(|c| c.0).collect();
        assert!(at100.contains(&Column::Xnode));
        for w in 0..220u16 {
            for view in [View::Threads, View::Processes] {
                let f = fit(view, w);
                assert!(f.iter().any(|c| c.0 == Column::Comm));
                if f.len() > 1 {
                    let used: u32 = f.iter().map(|c| u32::from(c.1)).sum::<u32>()
                        + (f.len() as u32 - 1) * u32::from(GAP);
                    assert!(used <= u32::from(w), "{view:?} at {w}: {used}");
                }
            }
        }
    }
}
