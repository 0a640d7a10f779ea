//! schedtop: what the Linux scheduler does to every thread, live.
//!
//! Sources (`collect`) produce `model::Sample`s; everything else consumes them.
pub mod batch;
pub mod cli;
pub mod cli_view;
pub mod collect;
pub mod diff_cli;
pub mod diff_text;
pub mod docs;
pub mod doctor;
pub mod export;
/// The fuzz targets' bodies (fuzz/, tests): not in the release binary.
#[cfg(any(test, feature = "testdata"))]
pub mod fuzz;
pub mod incident_cli;
pub mod live_window;
pub mod model;
pub mod prefs_cli;
pub mod record;
pub mod record_cli;
pub mod serve;
pub mod serve_http;
pub mod sigpipe;
pub mod snapshot;
pub mod snapshot_diff;
pub mod trace;
pub mod ui;
pub mod util;
pub mod why_cli;
