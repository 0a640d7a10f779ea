//! The data contract: one `Sample` per interval, whatever the source.
pub mod cgroup;
pub mod cgroup_name;
pub mod cgroup_sample;
pub mod cpus;
pub mod fasthash;
pub mod figures;
pub mod flows;
pub mod hist;
pub mod interval;
pub mod metrics;
pub mod physics;
pub mod pressure;
pub mod rates;
pub mod row;
pub mod sample;
pub mod tally;
mod thread_same;
pub mod trigger;
pub mod trigger_eval;
pub mod why;
pub mod why_resolve;

pub use cgroup::CgroupRow;
pub use cgroup_sample::{CgroupSample, Pressure};
pub use hist::Log2Hist;
pub use sample::*;
