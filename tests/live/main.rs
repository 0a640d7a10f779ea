//! Tests on real probes and real workloads, checked against the kernel's own counters; every timing-sensitive one holds `common::serial()`.
//!
//! One test binary for the lot: each test binary links the whole crate, and
//! linking 96 of them was most of the suite's build. A test that changes
//! process-wide state (environment, rlimits, capabilities, namespaces)
//! stays a binary of its own at the top of tests/.
#[path = "../common/mod.rs"]
mod common;

mod bpf_buckets;
mod bpf_cross_node;
mod bpf_live;
mod bpf_stress;
mod bpf_wait_oracle;
mod bpf_wait_split;
mod bpf_why;
mod bpf_zombie;
mod cgroupfs_live;
mod cgroups_live;
mod cpu_irq_proc_stat;
mod fault_churn;
mod flight;
mod flight_ring;
mod scale_idle_exact;
mod stolen_unknown;
mod thread_nice;
mod thread_policy;
mod tree_ancestors;
mod trigger_bundle;
mod trigger_live_tmux;
mod ui_groups;
mod wakers_unknown;
mod why_live;
mod why_wakers_live;
