//! What the state does with the setup screen, the saved settings and the
//! mouse's actions (mouse.rs maps clicks to them): open and close the setup
//! screen, use a set of settings, ask before quitting with unsaved ones,
//! select a clicked row, scroll by the wheel. No I/O: saving is the
//! session's (`Effect::Settings`).
use super::{AppState, HistScope, View};
use crate::ui::action::{Action, Effect, Prefs, SettingsEffect};
use crate::ui::settings::Settings;
use crate::ui::setup::{Closed, SetupDraft};
use crate::ui::status::Status;

/// The question at quit.
pub const ASK_SAVE: &str =
    "settings changed on the setup screen: s saves them and quits, q quits without, Esc stays";

impl AppState {
    /// The settings at start: the view too (later the setup screen's view
    /// is only for the next start).
    pub fn start_with(&mut self, s: Settings) -> Effect {
        let view = s.start_view();
        self.view = view;
        if view.is_table() {
            self.table_view = view;
        }
        self.use_settings(s, false, false)
    }

    /// Use `s` now: sort, interval, histograms, columns, colours, mouse.
    fn use_settings(&mut self, s: Settings, save: bool, quit: bool) -> Effect {
        self.sort = s.sort_column();
        self.sort_inverted = s.sort_inverted;
        self.hist_octaves = s.hist_octaves;
        self.hist_scope = if s.hist_since_start {
            HistScope::SinceStart
        } else {
            HistScope::Interval
        };
        let ns = s.interval_ns();
        let interval_ns = (ns != self.interval_ns).then_some(ns);
        if interval_ns.is_some() {
            self.interval_ns = ns;
            self.host.interval_ns = ns;
        }
        let mouse = s.mouse;
        // the processes view as a tree (`t` keeps this setting in step)
        if s.tree != self.listing.tree.on {
            self.listing.tree.on = s.tree;
            self.listing.rebuild(&self.derived);
        }
        self.view_model.set_settings(s);
        self.refresh(true);
        // exact figures at once when chosen (the held ones are dropped)
        self.hold_figures();
        Effect::Settings(SettingsEffect {
            interval_ns,
            mouse,
            save,
            quit,
        })
    }

    /// The setup screen's, the quit question's and the mouse's actions;
    /// None for the others.
    pub(super) fn prefs_apply(&mut self, a: Action) -> Option<Effect> {
        let vm = &mut self.view_model;
        let p = match a {
            Action::Quit if vm.unsaved && !vm.asking => {
                vm.asking = true;
                self.status = Some(Status::info(ASK_SAVE));
                return Some(Effect::None);
            }
            Action::Prefs(p) => p,
            _ => return None,
        };
        match p {
            Prefs::OpenSetup => {
                vm.setup = Some(SetupDraft::open(&vm.settings));
                self.help = false;
            }
            Prefs::Setup(k) => {
                let draft = vm.setup.as_mut()?;
                let closed = draft.apply(k)?;
                let s = draft.settings.clone();
                vm.setup = None;
                return Some(match closed {
                    Closed::Discard => Effect::None,
                    Closed::Use => {
                        vm.unsaved |= s != vm.settings;
                        self.use_settings(s, false, false)
                    }
                    Closed::Save => {
                        vm.unsaved = false;
                        self.use_settings(s, true, false)
                    }
                });
            }
            Prefs::QuitAnswer(answer) => {
                vm.asking = false;
                if let Some(save) = answer {
                    vm.unsaved = false;
                    let s = vm.settings.clone();
                    return Some(if save {
                        self.use_settings(s, true, true)
                    } else {
                        Effect::Quit
                    });
                }
            }
            Prefs::Pick(pos) => self.pick(pos, false),
            Prefs::PickFold(pos) => self.pick(pos, true),
            Prefs::Scroll(n) => self.scroll(n),
        }
        Some(Effect::None)
    }

    /// A click on row `pos` of the view's list (`fold`: on a cgroup's
    /// fold mark).
    fn pick(&mut self, pos: usize, fold: bool) {
        if self.view == View::Cgroups {
            let (all, filter) = (&self.derived.cgroups, &self.filter);
            let rows = self.cgroups.rows(all, filter);
            let Some(&i) = rows.get(pos) else { return };
            self.cgroups.selected = pos;
            self.cgroups.selected_path = Some(all[i].path.clone());
            if fold {
                let folded = self.cgroups.collapsed.contains(&all[i].path);
                let a = Action::CgroupFold(!folded);
                self.cgroups.apply(&a, all, filter, self.table_rows);
            }
        } else if self.view.is_table() {
            self.select(pos);
            if fold {
                self.fold_selected(None);
            }
            self.refresh_detail();
        }
    }

    /// The wheel: `n` lines down (up when negative).
    fn scroll(&mut self, n: i32) {
        let step = if n < 0 { Action::Up } else { Action::Down };
        match self.view {
            View::Cpus => self.scroll_cpus(n as isize),
            View::Threads | View::Processes => {
                self.select(self.selected.saturating_add_signed(n as isize));
                self.refresh_detail();
            }
            View::Cgroups => {
                for _ in 0..n.unsigned_abs().min(100) {
                    let (all, filter) = (&self.derived.cgroups, &self.filter);
                    self.cgroups.apply(&step, all, filter, self.table_rows);
                }
            }
            View::Numa | View::Findings => {
                self.apply(step);
            }
        }
    }
}
