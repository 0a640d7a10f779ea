//! UI tests: views on TestBackend, keys, mouse, replay and rewind, screenshots, and the few tmux ones.
//!
//! One test binary for the lot: each test binary links the whole crate, and
//! linking 96 of them was most of the suite's build. A test that changes
//! process-wide state (environment, rlimits, capabilities, namespaces)
//! stays a binary of its own at the top of tests/.
#[path = "../common/mod.rs"]
mod common;
#[path = "../svg_grid/mod.rs"]
mod svg_grid;

mod config_hostile;
mod fault_resize_storm;
mod fault_sigstop;
mod flight_key;
mod one_interval;
mod replay_dir;
mod rewind_tmux;
mod screenshot;
mod screenshot_e2e_tmux;
mod screenshot_key;
mod ui_cgroups;
mod ui_compare;
mod ui_cpu_numa;
mod ui_e2e_tmux;
mod ui_findings;
mod ui_incident;
mod ui_keys;
mod ui_loop;
mod ui_mouse;
mod ui_numa_cause;
mod ui_record_fault;
mod ui_recording;
mod ui_refresh;
mod ui_replay;
mod ui_rewind;
mod ui_setup_config;
mod ui_snapshots;
mod ui_steady;
mod ui_suspend_tmux;
mod ui_term_bytes;
mod ui_tree;
