//! What the user can ask for, whatever key or event asked for it (keys.rs
//! maps input to these), and what the event loop must do as a result.
use super::columns::Column;
pub use super::setup::SetupKey;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Quit,
    ToggleHelp,
    CloseHelp,
    /// start typing a filter
    FilterStart,
    FilterChar(char),
    FilterBackspace,
    /// stop typing, keep the filter
    FilterDone,
    /// stop typing, drop the filter
    FilterClear,
    /// Esc outside the filter prompt: back to the table from the CPU or NUMA
    /// view, else clear the filter, else close the detail pane
    Escape,
    SortNext,
    SortPrev,
    SortInvert,
    /// sort by this column (htop's `P`: CPU%)
    SortBy(Column),
    /// threads <-> processes
    ToggleProcesses,
    /// `G`: threads, thread groups, processes, cgroups as rows
    CycleGrouping,
    TogglePause,
    IntervalUp,
    IntervalDown,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    ToggleDetail,
    /// detail histograms: last interval <-> since start
    ToggleHistScope,
    /// detail histograms: four sub-buckets per octave <-> whole octaves
    /// (bpftrace's hist())
    ToggleOctaves,
    /// the detail's latency histogram: all waits, after wakeups, after
    /// preemptions (`w`)
    CycleWaitView,
    ToggleFollow,
    /// the CPU view, or back to the table when it is on screen
    ShowCpus,
    /// the NUMA view, or back to the table when it is on screen
    ShowNuma,
    /// the cgroups view, or back to the table when it is on screen
    ShowCgroups,
    /// the findings view (`y`), or back to the table when it is on screen
    ShowFindings,
    /// cgroups view: hide (true) or show the selected cgroup's children
    CgroupFold(bool),
    /// NUMA view: node x node matrix <-> map (opens the NUMA view if needed)
    ToggleMatrix,
    /// CPU and NUMA views: only migrations of the next cause
    CycleMigCause,
    /// scroll the help overlay by this many lines
    HelpScroll(i32),
    Resize(u16, u16),
    /// save the screen as it is (the `s` key)
    Screenshot,
    /// replay: play/pause, step, jump, speed (replay.rs)
    Replay(ReplayAction),
    /// live: start or stop recording to a file (`R`, recording.rs)
    ToggleRecord,
    /// live: write the flight recorder as a Perfetto trace (`W`, flight_key.rs)
    WriteFlight,
    /// live: write an incident bundle now (`i`, session.rs)
    FireIncident,
    /// the setup screen, saved settings and the mouse (app_prefs.rs)
    Prefs(Prefs),
    /// the process tree (`t`, F5, `+`, `-`; app_tree.rs)
    Tree(TreeAction),
}

/// The process tree's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeAction {
    /// the processes view as a tree, or back to the plain list
    Toggle,
    /// fold (true, `-`) or open (`+`) the selected process
    Fold(bool),
}

/// The setup screen's, the quit question's and the mouse's actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefs {
    /// `F2`, `S`: the setup screen
    OpenSetup,
    /// a key on the setup screen
    Setup(SetupKey),
    /// the answer to "keep the changed settings?" at quit: save and quit,
    /// quit without saving, or stay (None)
    QuitAnswer(Option<bool>),
    /// a click on row N of the view's list
    Pick(usize),
    /// a click on a cgroup's fold mark: select it, fold or unfold it
    PickFold(usize),
    /// the wheel: this many lines down (negative: up)
    Scroll(i32),
}

/// What the event loop does after an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    Quit,
    /// ask the feed for Samples at this interval (ns)
    SetInterval(u64),
    /// save the screen (screenshot_key.rs) and say where on the status line
    Screenshot,
    /// ask the flight recorder for a trace file (flight_key.rs)
    WriteFlight,
    /// a replay move, for the session that holds the recording (replay.rs)
    Replay(ReplayAction),
    /// start or stop the recording sink (recording.rs)
    ToggleRecord,
    /// ask the incident watch for a bundle (session.rs)
    FireIncident,
    /// settings to use (app_prefs.rs): the session saves them when asked
    /// and the loop sets the interval and the mouse
    Settings(SettingsEffect),
}

/// What using a set of settings asks of the loop and the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettingsEffect {
    /// the feed's new interval, when it changed
    pub interval_ns: Option<u64>,
    /// mouse capture on or off
    pub mouse: bool,
    /// write them to the config file (session.rs)
    pub save: bool,
    /// quit afterwards (when the save worked)
    pub quit: bool,
}

/// What the user can do to a replay (the `Action::Replay` payload).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayAction {
    PlayPause,
    /// one Sample later (pauses)
    StepForward,
    /// one Sample earlier (pauses)
    StepBack,
    First,
    Last,
    /// x1 -> x10 -> x100 -> x1
    CycleSpeed,
    Faster,
    Slower,
    /// open the jump prompt (`j`)
    JumpStart,
    JumpChar(char),
    JumpBackspace,
    /// Enter: go to the typed time
    JumpDone,
    /// Esc: close the prompt, stay
    JumpCancel,
}
