//! `AppState`: everything the screen shows. Keys (`apply`) and Samples
//! (`push_sample`) change it; `render` only reads it. Derived rows are
//! recomputed here, when the inputs change, never while drawing. It does
//! no I/O and holds no reader or writer: a replay's recording and the `R`
//! recording belong to the `Session` (session.rs).
use std::{collections::VecDeque, sync::Arc};

use crate::model::fasthash::IdMap;
use crate::model::{HostInfo, Sample};

use super::action::{Action, Effect};
use super::columns::{self, Column};
use super::first_sample::FirstSample;
use super::row_order::{RowOrder, Rows, FULL_SORT_MAX};
use super::status::Status;
use crate::model::cpus::{self, CpuHistory, CpuView};
use crate::model::interval::{self as rows, Row, RowKey, SystemRates};
use crate::model::shared_interval::Interval;

pub use super::state_types::{
    HistScope, Mode, RecordingInfo, View, WaitView, HISTORY_CAP, INTERVAL_STEPS, PENDING_CAP,
    SERIES_CAP,
};

/// Rows kept sorted past the page (a screen drawn taller than the page).
const SORTED_SLACK: usize = 128;

/// The UI's state. Fields are public to read (render, tests); change them
/// through `apply` and `push_sample` so the derived rows stay in step.
#[derive(Clone, Debug)]
pub struct AppState {
    pub host: HostInfo,
    pub mode: Mode,
    pub view: View,
    /// the table (threads or processes) whose rows and selection are kept
    /// while the CPU or NUMA view is on screen, and where Esc returns
    pub table_view: View,
    /// NUMA view: the node x node matrix instead of the map (`m`)
    pub numa_matrix: bool,
    /// CPU view: first line of the detailed list
    pub cpu_scroll: usize,
    /// the cgroups view (cgroup_tree.rs)
    pub cgroups: super::cgroup_tree::CgroupsUi,
    /// each cgroup's throttled ms/s over recent intervals (sparkline)
    pub cgroup_throttle: super::cgroup_series::ThrottleSeries,
    /// help overlay: first line shown
    pub help_scroll: u16,
    pub interval_ns: u64,
    /// newest last, at most HISTORY_CAP; all but the newest without threads
    pub history: VecDeque<Arc<Sample>>,
    /// where the threads of the Sample before the newest ran (recent.rs)
    pub prev_places: cpus::ThreadPlaces,
    /// the first Sample ever seen ("since start")
    pub first: Option<FirstSample>,
    pub paused: bool,
    /// Intervals that arrived while paused
    pub pending: VecDeque<Arc<Interval>>,
    pub sort: Column,
    pub sort_inverted: bool,
    pub filter: String,
    pub filter_editing: bool,
    pub selected: usize,
    pub selected_key: Option<RowKey>,
    pub follow: bool,
    /// first visible table row
    pub offset: usize,
    /// data rows the table shows at the current size and layout; kept by
    /// `layout::apply` (the state does not lay out the screen itself)
    pub table_rows: usize,
    pub detail: bool,
    pub hist_scope: HistScope,
    /// detail histograms folded to whole octaves (`o`)
    pub hist_octaves: bool,
    /// which waits the detail's latency histogram counts (`w`)
    pub wait_view: WaitView,
    pub help: bool,
    /// terminal size (columns, rows)
    pub size: (u16, u16),
    /// the feed's last error, if the latest attempt failed
    pub error: Option<String>,
    /// a message on the bottom line ("saved …") until the next key
    pub status: Option<Status>,
    /// replay mode: the cursor in the recording (replay.rs)
    pub replay: Option<super::replay_cursor::Replay>,
    /// live mode: the recording `R` started, as the header shows it
    pub recording: Option<RecordingInfo>,
    /// `schedtop diff`'s comparison mode (compare_ui.rs)
    pub compare: Option<Box<super::compare_state::CompareUi>>,
    // ---- derived ----
    /// the current interval (its rows: `derived.threads`, ...), shared
    /// with the other sinks of the sampler that made it
    pub derived: Arc<Interval>,
    /// the current view's rows, filtered and sorted as far as the screen
    /// looked (`rows()`)
    pub(super) order: RowOrder,
    /// switches/s per row over time, oldest first
    pub series: super::switch_series::Series,
    /// where each thread series' row was last (switch_series.rs)
    pub(super) series_rows: super::switch_series::RowHints,
    /// the selected row's histograms and whys since the first Sample
    pub since_start: Option<rows::SinceStart>,
    /// the last interval per CPU and node→node (None before two Samples)
    pub cpu: Option<CpuView>,
    /// run-queue length per CPU per interval, at most CPU_HISTORY_CAP points
    pub cpu_history: CpuHistory,
    /// the CPU and NUMA views count only this migration cause (None: all)
    pub mig_cause: Option<crate::model::why::MigCause>,
    /// the interval's findings, ranked, and the findings view's selection
    pub findings: findings::FindingsUi,
    /// settings, setup screen, click targets (view_model.rs, app_prefs.rs)
    pub view_model: super::view_model::ViewModel,
    /// `G`'s grouping, its rows, and the source's filters (app_grouping.rs)
    pub listing: grouping::Listing,
    /// live: figures drawn as they were while they move little (steady.rs)
    pub steady: super::steady::Steady,
}

impl AppState {
    pub fn new(host: HostInfo, mode: Mode) -> AppState {
        AppState {
            interval_ns: host.interval_ns,
            host,
            mode,
            view: View::Threads,
            table_view: View::Threads,
            numa_matrix: false,
            cpu_scroll: 0,
            cgroups: Default::default(),
            cgroup_throttle: Default::default(),
            help_scroll: 0,
            history: VecDeque::new(),
            prev_places: Default::default(),
            first: None,
            paused: false,
            pending: VecDeque::new(),
            sort: columns::default_sort(View::Threads),
            sort_inverted: false,
            filter: String::new(),
            filter_editing: false,
            selected: 0,
            selected_key: None,
            follow: false,
            offset: 0,
            table_rows: 1,
            detail: false,
            hist_scope: HistScope::Interval,
            hist_octaves: false,
            wait_view: WaitView::All,
            help: false,
            size: (80, 24),
            error: None,
            status: None,
            replay: None,
            recording: None,
            compare: None,
            derived: Arc::default(),
            order: RowOrder::default(),
            series: IdMap::default(),
            series_rows: IdMap::default(),
            since_start: None,
            cpu: None,
            cpu_history: CpuHistory::default(),
            mig_cause: None,
            findings: Default::default(),
            view_model: Default::default(),
            listing: Default::default(),
            steady: Default::default(),
        }
    }

    /// The newest Sample on screen.
    pub fn current(&self) -> Option<&Sample> {
        self.history.back().map(|s| &**s)
    }

    pub fn system(&self) -> Option<&SystemRates> {
        self.current().map(|_| &self.derived.system)
    }

    pub fn selected_row(&self) -> Option<&Row> {
        self.rows().get(self.selected)
    }

    /// The row count before filtering.
    pub fn total_rows(&self) -> usize {
        self.base_rows().len()
    }

    pub fn set_error(&mut self, e: Option<String>) {
        self.error = e;
    }

    fn base_rows(&self) -> &[std::sync::Arc<Row>] {
        base_of(&self.derived, &self.listing, self.table_view)
    }

    pub(super) fn descending(&self) -> bool {
        self.sort.descending_by_default() != self.sort_inverted
    }

    /// The current view's rows, filtered, in the sort order (sorted as far
    /// as the screen looked: the rows past the page are in no order).
    pub fn rows(&self) -> Rows<'_> {
        self.order.rows(self.base_rows())
    }

    /// Every row in its place (a search in sort order).
    pub fn sort_all(&mut self) {
        self.sort_upto(usize::MAX);
    }

    /// Sort the first `upto` rows into place.
    fn sort_upto(&mut self, upto: usize) {
        let (metric, desc) = (self.sort.metric(), self.descending());
        let by = |a: &Row, b: &Row| columns::compare_by(metric, a, b, desc);
        let base = base_of(&self.derived, &self.listing, self.table_view);
        self.order.sort_metric_upto(upto, base, (metric, desc), by);
    }

    /// Recompute the visible rows. `keep_key`: keep the selection on the
    /// same thread/process (else on the same position, like htop without F).
    pub(super) fn refresh(&mut self, keep_key: bool) {
        if !columns::columns_of(self.table_view).contains(&self.sort) {
            self.sort = columns::default_sort(self.table_view);
            self.sort_inverted = false;
        }
        if self.tree_shown() {
            self.layout_tree();
        } else {
            self.listing.tree.lines.clear();
            self.order = RowOrder::filtered(self.base_rows(), &self.filter);
            if self.order.len() <= FULL_SORT_MAX {
                self.sort_upto(usize::MAX);
            }
        }
        if keep_key {
            if let Some(rank) = self.selected_key.and_then(|k| self.rank_of(k)) {
                self.selected = rank;
            }
        }
        self.select(self.selected);
        self.refresh_detail();
    }

    /// The position the row `key` sorts to, if it is listed.
    fn rank_of(&self, key: RowKey) -> Option<usize> {
        let (metric, desc) = (self.sort.metric(), self.descending());
        let by = |a: &Row, b: &Row| columns::compare_by(metric, a, b, desc);
        self.order.rank_of_key(key, self.base_rows(), by)
    }

    /// Move the selection to `i` (clamped) and scroll it into view; the
    /// rows up to a screenful past it are sorted.
    fn select(&mut self, i: usize) {
        let n = self.order.len();
        self.selected = i.min(n.saturating_sub(1));
        let page = self.page().max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + page {
            self.offset = self.selected + 1 - page;
        }
        self.offset = self.offset.min(n.saturating_sub(page));
        // a view drawn taller than the page (a screenshot) stays sorted
        self.sort_upto(self.offset + page.max(SORTED_SLACK) + SORTED_SLACK);
        self.selected_key = self.rows().get(self.selected).map(|r| r.key);
    }

    /// `M`: the next migration cause (mig_cause.rs), and the last
    /// interval's CPU figures again (not the queue-length history).
    fn cycle_mig_cause(&mut self) {
        self.mig_cause = super::mig_cause::next(self.mig_cause);
        let mut last = self.history.iter().rev();
        let (cur, prev) = (last.next(), last.next());
        if let Some(cur) = cur {
            self.cpu =
                cpus::derive_by(&self.host.topology, prev.map(|p| &**p), cur, self.mig_cause);
        }
    }

    /// Whether the live view shows an earlier moment (rewind.rs).
    pub fn rewound(&self) -> bool {
        self.mode == Mode::Live && self.replay.is_some()
    }

    /// Table rows visible at the current size.
    pub fn page(&self) -> usize {
        self.table_rows
    }

    /// The table's height changed (resize, detail pane, header wrap): keep
    /// the selection in view.
    pub fn set_table_rows(&mut self, rows: usize) {
        if rows != self.table_rows {
            self.table_rows = rows;
            self.select(self.selected);
        }
    }

    fn refresh_detail(&mut self) {
        self.since_start = None;
        if !self.detail || self.hist_scope != HistScope::SinceStart {
            self.first.as_mut().map(FirstSample::release);
            return;
        }
        let first = self.first.as_mut().and_then(FirstSample::sample);
        if let (Some(first), Some(cur), Some(key)) = (first, self.history.back(), self.selected_key)
        {
            self.since_start = Some(rows::since_start(&first, cur, key));
        }
    }

    fn step_interval(&mut self, up: bool) -> Effect {
        let cur = self.interval_ns;
        let next = if up {
            INTERVAL_STEPS.iter().copied().find(|&s| s > cur)
        } else {
            INTERVAL_STEPS.iter().rev().copied().find(|&s| s < cur)
        };
        match next {
            Some(ns) => {
                self.interval_ns = ns;
                self.host.interval_ns = ns;
                Effect::SetInterval(ns)
            }
            None => Effect::None,
        }
    }

    fn cycle_sort(&mut self, forward: bool) {
        // the columns on screen: sorting by a hidden one would puzzle
        let shown = self.view_model.columns(self.table_view);
        let cols: Vec<Column> = columns::fit_cols(shown, self.size.0)
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        let i = cols.iter().position(|&c| c == self.sort).unwrap_or(0);
        let n = cols.len();
        let j = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        self.sort = cols[j];
        self.sort_inverted = false;
        self.refresh(true);
    }

    fn toggle_view(&mut self) {
        let (view, key) = match self.table_view {
            View::Threads | View::Cpus | View::Numa | View::Cgroups | View::Findings => {
                let pid = self.selected_row().map(|r| r.pid);
                (View::Processes, pid.map(|pid| RowKey::Process { pid }))
            }
            View::Processes => {
                // the process's main thread, else its first thread
                let pid = self.selected_row().map(|r| r.pid);
                let key = pid.and_then(|pid| {
                    let t = &self.derived.threads;
                    t.iter()
                        .find(|r| r.id == pid)
                        .or_else(|| t.iter().find(|r| r.pid == pid))
                        .map(|r| r.key)
                });
                (View::Threads, key)
            }
        };
        self.view = view;
        self.table_view = view;
        self.selected_key = key;
        self.refresh(true);
    }

    /// Show `view`, or go back to the table if it is already shown.
    fn show(&mut self, view: View) {
        self.view = if self.view == view {
            self.table_view
        } else {
            view
        };
    }

    /// Lines of the CPU view's detailed list (a title per node, a line per
    /// CPU): the bound of its scrolling.
    fn cpu_list_len(&self) -> usize {
        self.host.topology.cpus.len() + self.host.topology.nodes().len()
    }

    /// Move the CPU list by `delta` lines (the renderer clamps it to what
    /// fills the screen).
    fn scroll_cpus(&mut self, delta: isize) {
        let max = self.cpu_list_len().saturating_sub(1);
        self.cpu_scroll = self.cpu_scroll.saturating_add_signed(delta).min(max);
    }

    /// Apply one user action; the Effect tells the event loop what else to
    /// do. Callers go through `layout::apply`, which keeps the page size.
    pub(crate) fn apply(&mut self, a: Action) -> Effect {
        if !matches!(a, Action::Resize(..)) {
            // a message stays until the next key
            self.status = None;
        }
        if let Some(e) = self.prefs_apply(a) {
            return e;
        }
        if self.findings_apply(a) || self.tree_apply(&a) || self.grouping_apply(&a) {
            return Effect::None;
        }
        if self.view == View::Cgroups && super::cgroup_tree::handles(&a) {
            let page = self.page();
            self.cgroups
                .apply(&a, &self.derived.cgroups, &self.filter, page);
            return Effect::None;
        }
        match a {
            Action::Screenshot => return Effect::Screenshot,
            Action::WriteFlight => return Effect::WriteFlight,
            Action::FireIncident => return Effect::FireIncident,
            Action::Replay(r) => return Effect::Replay(r),
            Action::ToggleRecord => return Effect::ToggleRecord,
            Action::Quit => return Effect::Quit,
            Action::ToggleHelp => {
                self.help = !self.help;
                self.help_scroll = 0;
            }
            Action::CloseHelp => self.help = false,
            Action::HelpScroll(d) => {
                self.help_scroll = (i32::from(self.help_scroll) + d).clamp(0, 200) as u16;
            }
            Action::ShowCpus => self.show(View::Cpus),
            Action::ShowNuma => self.show(View::Numa),
            Action::ShowCgroups => {
                self.show(View::Cgroups);
                self.cgroups.refresh(&self.derived.cgroups, &self.filter);
            }
            Action::ShowFindings => self.show(View::Findings),
            Action::CgroupFold(_) | Action::Prefs(_) | Action::CycleGrouping | Action::Tree(_) => {}
            Action::ToggleMatrix => {
                // opens the NUMA view on the matrix, or flips it there
                self.numa_matrix = self.view != View::Numa || !self.numa_matrix;
                self.view = View::Numa;
            }
            Action::CycleMigCause => self.cycle_mig_cause(),
            Action::FilterStart => self.filter_editing = true,
            Action::FilterChar(c) => {
                if !c.is_control() && self.filter.chars().count() < 64 {
                    self.filter.push(c);
                    self.refresh(true);
                }
            }
            Action::FilterBackspace => {
                self.filter.pop();
                self.refresh(true);
            }
            Action::FilterDone => self.filter_editing = false,
            Action::FilterClear => {
                self.filter_editing = false;
                self.filter.clear();
                self.refresh(true);
            }
            Action::Escape => {
                if !self.view.is_table() {
                    self.view = self.table_view;
                } else if !self.filter.is_empty() {
                    self.filter.clear();
                    self.refresh(true);
                } else {
                    self.detail = false;
                }
            }
            Action::SortNext => self.cycle_sort(true),
            Action::SortPrev => self.cycle_sort(false),
            Action::SortInvert => {
                self.sort_inverted = !self.sort_inverted;
                self.refresh(true);
            }
            Action::SortBy(c) => {
                if columns::columns_of(self.view).contains(&c) {
                    self.sort = c;
                    self.sort_inverted = false;
                    self.refresh(true);
                }
            }
            Action::ToggleProcesses => self.toggle_view(),
            Action::TogglePause => {
                self.paused = !self.paused;
                if !self.paused && !self.pending.is_empty() {
                    while let Some(iv) = self.pending.pop_front() {
                        self.ingest(iv);
                    }
                    self.refresh(self.follow);
                }
            }
            Action::IntervalUp => return self.step_interval(true),
            Action::IntervalDown => return self.step_interval(false),
            Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Home
            | Action::End
                if self.view == View::Cpus =>
            {
                let page = self.page().max(1) as isize;
                match a {
                    Action::Up => self.scroll_cpus(-1),
                    Action::Down => self.scroll_cpus(1),
                    Action::PageUp => self.scroll_cpus(-page),
                    Action::PageDown => self.scroll_cpus(page),
                    Action::Home => self.cpu_scroll = 0,
                    _ => self.scroll_cpus(isize::MAX),
                }
                return Effect::None;
            }
            Action::Up => self.select(self.selected.saturating_sub(1)),
            Action::Down => self.select(self.selected.saturating_add(1)),
            Action::PageUp => self.select(self.selected.saturating_sub(self.page().max(1))),
            Action::PageDown => self.select(self.selected.saturating_add(self.page().max(1))),
            Action::Home => self.select(0),
            Action::End => self.select(usize::MAX),
            Action::ToggleDetail if !self.view.is_table() => {}
            Action::ToggleDetail => {
                self.detail = !self.detail;
                self.select(self.selected);
                self.refresh_detail();
            }
            Action::ToggleOctaves => self.hist_octaves = !self.hist_octaves,
            Action::CycleWaitView => self.wait_view = self.wait_view.next(),
            Action::ToggleHistScope => {
                self.hist_scope = match self.hist_scope {
                    HistScope::Interval => HistScope::SinceStart,
                    HistScope::SinceStart => HistScope::Interval,
                };
                self.refresh_detail();
            }
            Action::ToggleFollow => self.follow = !self.follow,
            Action::Resize(w, h) => {
                self.size = (w, h);
                self.select(self.selected);
            }
        }
        if matches!(
            a,
            Action::Up
                | Action::Down
                | Action::PageUp
                | Action::PageDown
                | Action::Home
                | Action::End
        ) {
            self.refresh_detail();
        }
        Effect::None
    }
}

#[path = "app_findings.rs"]
pub mod findings;
#[path = "app_grouping.rs"]
pub mod grouping;
#[path = "app_prefs.rs"]
pub mod prefs;
#[path = "app_tree.rs"]
pub mod tree;
use grouping::base_of;
