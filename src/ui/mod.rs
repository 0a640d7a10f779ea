//! The live terminal UI: `AppState` (app.rs) changed by `Action`s (keys.rs
//! maps input to them) and by Samples from a `Feed`; `render` draws it,
//! one file per part of the screen under views/.
pub mod action;
pub mod app;
mod app_ingest;
pub mod cgroup_series;
pub mod cgroup_tree;
pub mod columns;
pub mod compare_columns;
pub mod compare_state;
pub mod compare_ui;
pub mod config_file;
pub mod feed;
pub mod first_sample;
#[cfg(any(test, feature = "testdata"))]
pub mod fixtures;
pub mod flight_key;
pub mod format;
pub mod history;
pub mod hit_map;
pub mod incident_screens;
pub mod keeper;
pub mod keys;
pub mod layout;
pub mod lean_backend;
pub mod mig_cause;
pub mod mouse;
pub mod palette;
pub mod process_tree;
pub mod recent;
pub mod recording;
pub mod render;
pub mod replay;
pub mod replay_cursor;
pub mod rewind;
pub mod row_order;
pub mod run;
pub mod screenshot_key;
pub mod session;
pub mod settings;
pub mod setup;
pub mod setup_keys;
pub mod state_types;
pub mod status;
pub mod steady;
pub mod suspend;
pub mod switch_series;
pub mod terminal;
pub mod theme;
pub mod tty;
pub mod view_model;
pub mod views;

pub use app::{AppState, Mode, View};
pub use render::{render, render_to_buffer};
pub use run::run_live;
pub use session::Session;
