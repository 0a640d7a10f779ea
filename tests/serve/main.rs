//! The exporter (`schedtop serve`) and the one agent process.
//!
//! One test binary for the lot: each test binary links the whole crate, and
//! linking 96 of them was most of the suite's build. A test that changes
//! process-wide state (environment, rlimits, capabilities, namespaces)
//! stays a binary of its own at the top of tests/.
#[path = "../common/mod.rs"]
mod common;

mod agent;
mod serve_exposition;
mod serve_hostile_names;
mod serve_http;
mod serve_prometheus;
mod serve_slow_clients;
mod serve_web_config;
