//! The command line: batch, dump, diff, snapshot, why, doctor, user errors and closed descriptors.
//!
//! One test binary for the lot: each test binary links the whole crate, and
//! linking 96 of them was most of the suite's build. A test that changes
//! process-wide state (environment, rlimits, capabilities, namespaces)
//! stays a binary of its own at the top of tests/.
#[path = "../common/mod.rs"]
mod common;
#[path = "../svg_grid/mod.rs"]
mod svg_grid;

mod cli_batch;
mod cli_docs;
mod cli_filters;
mod cli_small;
mod closed_stdio;
mod diff_cli;
mod doc_columns;
mod doc_links;
mod doctor_features;
mod dump_cgroups;
mod dump_json;
mod dump_why;
mod procfs_fallback;
mod procfs_hostile_name;
mod screenshots_current;
mod skip_rules;
mod snapshot_cli;
mod user_errors;
mod why_cli;
