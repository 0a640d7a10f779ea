//! The settings a person keeps between runs (config.toml, config_file.rs)
//! and edits in the setup screen (setup.rs): which columns each table shows
//! and in which order, the view at start, the sort, the interval, the
//! histogram mode, the colours, the mouse and exact or steady figures. Plain data, checked here; the
//! columns come from the metric table, so a new metric is offered by itself.
use serde::{Deserialize, Serialize};

use super::columns::{self, Column};
use super::state_types::{View, INTERVAL_STEPS};

/// The colours (palette.rs applies them to the drawn screen).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Theme {
    /// htop's colours
    #[default]
    Default,
    /// no colour at all, emphasis by bold and reverse video (NO_COLOR)
    Monochrome,
    /// bright colours, bold text, black on white bars
    HighContrast,
}

impl Theme {
    pub const ALL: [Theme; 3] = [Theme::Default, Theme::Monochrome, Theme::HighContrast];

    pub fn name(self) -> &'static str {
        match self {
            Theme::Default => "default",
            Theme::Monochrome => "monochrome",
            Theme::HighContrast => "high-contrast",
        }
    }
}

/// The columns each table shows, in order, by metric key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ColumnChoice {
    pub threads: Vec<String>,
    pub processes: Vec<String>,
}

impl Default for ColumnChoice {
    fn default() -> Self {
        let keys = |v: View| {
            columns::columns_of(v)
                .iter()
                .map(|c| c.0.to_string())
                .collect()
        };
        ColumnChoice {
            threads: keys(View::Threads),
            processes: keys(View::Processes),
        }
    }
}

/// Everything config.toml holds (a missing key takes its default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// the view at start: threads, processes, cpus, numa, cgroups, findings
    pub view: String,
    /// the processes view as a tree (`t`), as htop's tree mode
    pub tree: bool,
    /// the sort column of the tables (a metric key, e.g. nvcsw, cpu_pct)
    pub sort: String,
    /// smallest first where the column sorts biggest first (`I`)
    pub sort_inverted: bool,
    /// the sampling interval, ms
    pub interval_ms: u64,
    /// detail histograms in whole octaves, as bpftrace's hist() (`o`)
    pub hist_octaves: bool,
    /// detail histograms since start rather than the last interval (`a`)
    pub hist_since_start: bool,
    pub theme: Theme,
    /// clicks and the wheel (off: the terminal selects text without Shift)
    pub mouse: bool,
    /// the live table draws every figure exactly at each refresh; off
    /// (the default), a figure that moved by 5 % or less keeps the value
    /// drawn before (steady.rs: fewer bytes on a slow link)
    pub exact_figures: bool,
    pub columns: ColumnChoice,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            view: view_key(View::Threads).to_string(),
            tree: false,
            sort: columns::default_sort(View::Threads).0.to_string(),
            sort_inverted: false,
            interval_ms: 1000,
            hist_octaves: false,
            hist_since_start: false,
            theme: Theme::Default,
            mouse: true,
            exact_figures: false,
            columns: ColumnChoice::default(),
        }
    }
}

/// The views a person can start in, with their names in the file.
pub const VIEWS: [(View, &str); 6] = [
    (View::Threads, "threads"),
    (View::Processes, "processes"),
    (View::Cpus, "cpus"),
    (View::Numa, "numa"),
    (View::Cgroups, "cgroups"),
    (View::Findings, "findings"),
];

pub fn view_key(v: View) -> &'static str {
    VIEWS
        .iter()
        .find(|(x, _)| *x == v)
        .map_or("threads", |(_, k)| k)
}

pub fn view_of(key: &str) -> Option<View> {
    VIEWS.iter().find(|(_, k)| *k == key).map(|(v, _)| *v)
}

/// The longest and shortest interval a file may ask for, ms.
pub const INTERVAL_MIN_MS: u64 = 100;
pub const INTERVAL_MAX_MS: u64 = 60_000;

/// The column of `key` that `view`'s table can show.
pub fn column_of(view: View, key: &str) -> Option<Column> {
    columns::columns_of(view)
        .iter()
        .copied()
        .find(|c| c.0 == key)
}

impl Settings {
    pub fn start_view(&self) -> View {
        view_of(&self.view).unwrap_or(View::Threads)
    }

    pub fn sort_column(&self) -> Column {
        column_of(View::Threads, &self.sort)
            .or_else(|| column_of(View::Processes, &self.sort))
            .unwrap_or(columns::default_sort(View::Threads))
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval_ms.saturating_mul(1_000_000)
    }

    /// The keys of `view`'s columns (threads for every non-table view).
    pub fn column_keys(&self, view: View) -> &Vec<String> {
        match view {
            View::Processes => &self.columns.processes,
            _ => &self.columns.threads,
        }
    }

    pub fn column_keys_mut(&mut self, view: View) -> &mut Vec<String> {
        match view {
            View::Processes => &mut self.columns.processes,
            _ => &mut self.columns.threads,
        }
    }

    /// `view`'s columns as the table shows them (unknown keys skipped; the
    /// name column always there).
    pub fn columns(&self, view: View) -> Vec<Column> {
        let mut out: Vec<Column> = Vec::new();
        for k in self.column_keys(view) {
            if let Some(c) = column_of(view, k) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        if !out.contains(&Column::COMM) {
            out.push(Column::COMM);
        }
        out
    }

    /// What is wrong with these settings, in one line, if anything.
    pub fn check(&self) -> Result<(), String> {
        if view_of(&self.view).is_none() {
            let names: Vec<&str> = VIEWS.iter().map(|(_, k)| *k).collect();
            return Err(format!(
                "view = \"{}\" is not one of {}",
                self.view,
                names.join(", ")
            ));
        }
        if column_of(View::Threads, &self.sort).is_none()
            && column_of(View::Processes, &self.sort).is_none()
        {
            return Err(format!("sort = \"{}\" is not a column", self.sort));
        }
        if !(INTERVAL_MIN_MS..=INTERVAL_MAX_MS).contains(&self.interval_ms) {
            return Err(format!(
                "interval_ms = {} is not between {INTERVAL_MIN_MS} and {INTERVAL_MAX_MS}",
                self.interval_ms
            ));
        }
        for (view, name) in [(View::Threads, "threads"), (View::Processes, "processes")] {
            if let Some(k) = self
                .column_keys(view)
                .iter()
                .find(|k| column_of(view, k).is_none())
            {
                return Err(format!(
                    "columns.{name}: \"{k}\" is not a column of the {name} table"
                ));
            }
        }
        Ok(())
    }
}

/// The interval step after (`up`) or before `ms`, for the setup screen.
pub fn step_interval_ms(ms: u64, up: bool) -> u64 {
    let ns = ms.saturating_mul(1_000_000);
    let next = if up {
        INTERVAL_STEPS.iter().copied().find(|&s| s > ns)
    } else {
        INTERVAL_STEPS.iter().rev().copied().find(|&s| s < ns)
    };
    next.map_or(ms, |s| s / 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_their_own_check_and_list_every_column() {
        let s = Settings::default();
        assert_eq!(s.check(), Ok(()));
        assert_eq!(s.columns(View::Threads), columns::columns_of(View::Threads));
        assert_eq!(
            s.columns(View::Processes),
            columns::columns_of(View::Processes)
        );
    }

    #[test]
    fn the_name_column_stays_and_unknown_keys_are_refused() {
        let mut s = Settings::default();
        s.columns.threads = vec!["nvcsw".into(), "cpu_pct".into()];
        assert_eq!(
            s.columns(View::Threads),
            vec![Column::NVCSW, Column::CPU_PCT, Column::COMM]
        );
        s.columns.threads.push("bogus".into());
        let e = s.check().unwrap_err();
        assert!(e.contains("bogus") && !e.contains('\n'), "{e}");
        // a thread-only column is not a process column
        let mut s = Settings::default();
        s.columns.processes = vec!["tid".into()];
        assert!(s.check().unwrap_err().contains("processes"));
    }

    #[test]
    fn interval_steps_walk_the_key_steps() {
        assert_eq!(step_interval_ms(1000, true), 2000);
        assert_eq!(step_interval_ms(1000, false), 500);
        assert_eq!(step_interval_ms(100, false), 100);
        assert_eq!(step_interval_ms(60_000, true), 60_000);
        // between steps: to the neighbouring step
        assert_eq!(step_interval_ms(1500, true), 2000);
    }
}
