//! The parts of the UI state that are about the screen rather than the
//! data: the settings in use (settings.rs), the setup screen's draft
//! (setup.rs), whether settings in use are unsaved and the question at
//! quit, and where the last frame drew what a click can hit (hit_map.rs).
//! Plain data, no I/O.
use super::columns::Column;
use super::hit_map::HitMap;
use super::settings::Settings;
use super::setup::SetupDraft;
use super::state_types::View;

#[derive(Clone, Debug, Default)]
pub struct ViewModel {
    /// the settings in use
    pub settings: Settings,
    /// the columns of the threads and processes tables, from `settings`
    columns: [Vec<Column>; 2],
    /// the setup screen, while open
    pub setup: Option<SetupDraft>,
    /// settings were chosen on the setup screen for this run only: quit
    /// asks whether to keep them
    pub unsaved: bool,
    /// the question at quit is on the status line
    pub asking: bool,
    /// where the last frame drew what a click can hit
    pub hits: HitMap,
}

impl ViewModel {
    /// Use `s` (the caller applies what the data state keeps itself:
    /// sort, interval, histograms).
    pub fn set_settings(&mut self, s: Settings) {
        self.columns = [s.columns(View::Threads), s.columns(View::Processes)];
        self.settings = s;
    }

    /// The columns `view`'s table shows, in order.
    pub fn columns(&self, view: View) -> &[Column] {
        let c = match view {
            View::Processes => &self.columns[1],
            _ => &self.columns[0],
        };
        if c.is_empty() {
            // before any settings were set: every column
            super::columns::columns_of(view)
        } else {
            c
        }
    }
}
