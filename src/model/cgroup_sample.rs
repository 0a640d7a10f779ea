//! What cgroupfs said about one cgroup when a Sample was taken (cumulative,
//! as recorded), and the flat CPU-pressure figures kept with it.
use serde::{Deserialize, Serialize};

use super::pressure::CpuPressure;

/// CPU pressure (PSI) of a cgroup or of the system.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// % of the last 10 s some tasks waited for a CPU
    pub some_avg10: f64,
    /// cumulative µs some tasks waited
    pub some_total_us: u64,
    /// the same with all non-idle tasks waiting; absent for the system
    /// on kernels before 5.13
    pub full_avg10: Option<f64>,
    pub full_total_us: Option<u64>,
}

/// One cgroup as cgroupfs showed it when the Sample was taken. Every
/// figure is optional: a cgroup can vanish between reads, a file can be
/// missing (v1 has no PSI; the root has no quota).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CgroupSample {
    /// "/a/b" in the hierarchy whose quota applies (v1: the cpu
    /// controller's; v2: the unified tree). Hostile: escape before display.
    pub path: String,
    /// the CFS quota in CPUs; None when unlimited or unknown
    pub quota_cpus: Option<f64>,
    /// CPUs its cpuset allows, if known
    pub cpuset_cpus: Option<u32>,
    /// cumulative, as the kernel counts
    pub nr_periods: Option<u64>,
    pub nr_throttled: Option<u64>,
    pub throttled_ns: Option<u64>,
    pub pressure: Option<Pressure>,
}

impl From<CpuPressure> for Pressure {
    /// The figures a Sample keeps of a `cpu.pressure` / `/proc/pressure/cpu`
    /// reading.
    fn from(p: CpuPressure) -> Pressure {
        Pressure {
            some_avg10: p.some.avg10,
            some_total_us: p.some.total_us,
            full_avg10: p.full.map(|f| f.avg10),
            full_total_us: p.full.map(|f| f.total_us),
        }
    }
}
