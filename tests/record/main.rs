//! Recordings and what reads them: the file format, the writer, directories of recordings, incident bundles, fixtures and the descriptor tables.
//!
//! One test binary for the lot: each test binary links the whole crate, and
//! linking 96 of them was most of the suite's build. A test that changes
//! process-wide state (environment, rlimits, capabilities, namespaces)
//! stays a binary of its own at the top of tests/.
#[path = "../common/mod.rs"]
mod common;

mod cgroup_conformance;
mod counter_conformance;
mod cpu_conformance;
mod fault_symlink;
mod findings_sinks;
mod fixture_physics;
mod history_mem;
mod incident_rotation;
mod record;
mod record_crash;
mod record_demo;
mod record_dir;
mod record_dir_floor;
mod record_dir_retention;
mod record_fixture;
mod record_fuzz;
mod record_hostile;
mod record_lock;
mod record_oversize;
mod system_conformance;
mod topology_flows;
mod trigger_sink;
