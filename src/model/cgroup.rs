//! cgroups in a Sample (what cgroupfs said, cumulative) and in an Interval
//! (one row per cgroup: its threads' figures merged, the kernel's
//! throttling and pressure counters as rates). Rows are derived here once;
//! the views, JSON, CSV and any exporter read them.

use super::fasthash::IdMap;
use super::rates::{counter_delta, ThreadInterval};
use super::{Log2Hist, Sample};

pub use super::cgroup_sample::{CgroupSample, Pressure};

/// At most this many cgroups per Sample (threads' cgroups and their
/// ancestors); threads in cgroups beyond it have no cgroup.
pub const MAX_CGROUPS: usize = 4096;

/// The parent of cgroup path `p` ("/a/b" -> "/a", "/a" -> "/"), None for "/".
pub fn parent_path(p: &str) -> Option<&str> {
    if p == "/" || p.is_empty() {
        return None;
    }
    match p.trim_end_matches('/').rfind('/') {
        Some(0) | None => Some("/"),
        Some(i) => Some(&p[..i]),
    }
}

/// One line of the cgroups table: the cgroup's own kernel counters and its
/// threads' figures, summed over the whole subtree (like the kernel's own
/// CPU accounting: a parent's quota covers its children).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CgroupRow {
    pub path: String,
    /// index of the parent's row in `Derived::cgroups`, if it is listed
    pub parent: Option<usize>,
    /// 0 for the root of what is listed
    pub depth: u32,
    /// threads in the subtree
    pub threads: u32,
    /// threads in the cgroup itself (not its children)
    pub own_threads: u32,
    pub cpu_pct: Option<f64>,
    pub quota_cpus: Option<f64>,
    pub cpuset_cpus: Option<u32>,
    /// cumulative, as the kernel counts
    pub nr_periods: Option<u64>,
    pub nr_throttled: Option<u64>,
    pub throttled_ns: Option<u64>,
    /// periods throttled per second, and throttled time in ms per second
    pub throttled_per_s: Option<f64>,
    pub throttled_ms_per_s: Option<f64>,
    /// % of the interval some / all tasks waited for a CPU (from `total`)
    pub psi_some_pct: Option<f64>,
    pub psi_full_pct: Option<f64>,
    pub psi_some_avg10: Option<f64>,
    pub psi_full_avg10: Option<f64>,
    /// cumulative µs some / all tasks waited (the kernel's `total`)
    pub psi_some_us: Option<u64>,
    pub psi_full_us: Option<u64>,
    pub vcsw_s: Option<f64>,
    pub nvcsw_s: Option<f64>,
    pub p50_wait_us: Option<u64>,
    pub p99_wait_us: Option<u64>,
    pub p99_slice_us: Option<u64>,
    pub migr_s: Option<f64>,
    /// the interval's histograms merged over the subtree's threads
    pub slice_hist: Option<Log2Hist>,
    pub wait_hist: Option<Log2Hist>,
}

/// A thread's interval, summed into its cgroup and the cgroup's ancestors.
#[derive(Clone, Debug, Default)]
pub(crate) struct CgroupSums {
    threads: u32,
    own_threads: u32,
    measured: bool,
    voluntary: u64,
    involuntary: u64,
    oncpu_ns: u64,
    migrations: Option<u64>,
    slice_hist: Option<Log2Hist>,
    wait_hist: Option<Log2Hist>,
}

/// Parent index of every cgroup of `cur` (by path; unlisted parents: None).
pub fn parents(cur: &Sample) -> Vec<Option<usize>> {
    let by_path: std::collections::HashMap<&str, usize> = cur
        .cgroups
        .iter()
        .enumerate()
        .map(|(i, c)| (c.path.as_str(), i))
        .collect();
    cur.cgroups
        .iter()
        .map(|c| parent_path(&c.path).and_then(|p| by_path.get(p).copied()))
        .collect()
}

/// Accumulates threads into cgroups while the thread rows are derived.
pub(crate) struct CgroupAcc {
    parents: Vec<Option<usize>>,
    sums: Vec<CgroupSums>,
}

impl CgroupAcc {
    pub(crate) fn new(cur: &Sample) -> CgroupAcc {
        CgroupAcc {
            parents: parents(cur),
            sums: vec![CgroupSums::default(); cur.cgroups.len()],
        }
    }

    /// Add one thread in cgroup `idx` with its interval (None: unknown).
    pub(crate) fn add(&mut self, idx: Option<u32>, iv: Option<&ThreadInterval>) {
        let mut at = idx.map(|i| i as usize).filter(|&i| i < self.sums.len());
        if let Some(i) = at {
            let own = &mut self.sums[i].own_threads;
            *own = own.saturating_add(1);
        }
        // a parent chain is at most MAX_CGROUPS long: no cycle can loop
        let mut hops = 0;
        while let Some(i) = at {
            let s = &mut self.sums[i];
            s.threads = s.threads.saturating_add(1);
            if let Some(iv) = iv {
                s.measured = true;
                // saturating: a hostile recording cannot overflow them
                s.voluntary = s.voluntary.saturating_add(iv.voluntary);
                s.involuntary = s.involuntary.saturating_add(iv.involuntary);
                s.oncpu_ns = s.oncpu_ns.saturating_add(iv.oncpu_ns);
                if let Some(m) = iv.migrations {
                    s.migrations = Some(s.migrations.unwrap_or(0).saturating_add(m));
                }
                if let Some(h) = &iv.slice_hist {
                    s.slice_hist.get_or_insert_with(Log2Hist::new).merge(h);
                }
                if let Some(h) = &iv.wait_hist {
                    s.wait_hist.get_or_insert_with(Log2Hist::new).merge(h);
                }
            }
            hops += 1;
            if hops > MAX_CGROUPS {
                break;
            }
            at = self.parents[i];
        }
    }

    /// The rows, in the Sample's order.
    pub(crate) fn rows(self, prev: Option<&Sample>, cur: &Sample, dt: f64) -> Vec<CgroupRow> {
        let before: IdMap<&str, usize> = prev
            .map(|p| {
                p.cgroups
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.path.as_str(), i))
                    .collect()
            })
            .unwrap_or_default();
        let mut depth = vec![0u32; cur.cgroups.len()];
        for (i, slot) in depth.iter_mut().enumerate() {
            // parents are not assumed to come before their children
            let mut d = 0;
            let mut at = self.parents[i];
            while let Some(p) = at {
                d += 1;
                if d as usize > MAX_CGROUPS {
                    break;
                }
                at = self.parents[p];
            }
            *slot = d;
        }
        let rate = |now: Option<u64>, then: Option<u64>| -> Option<f64> {
            let d = counter_delta(now?, then?);
            (dt > 0.0).then(|| ThreadInterval::per_s(d, dt))
        };
        cur.cgroups
            .iter()
            .zip(self.sums)
            .enumerate()
            .map(|(i, (c, s))| {
                let old = prev.and_then(|p| before.get(c.path.as_str()).map(|&j| &p.cgroups[j]));
                let psi = c.pressure.as_ref();
                let old_psi = old.and_then(|o| o.pressure.as_ref());
                let measured = s.measured;
                CgroupRow {
                    path: c.path.clone(),
                    parent: self.parents[i],
                    depth: depth[i],
                    threads: s.threads,
                    own_threads: s.own_threads,
                    cpu_pct: (measured && dt > 0.0).then(|| s.oncpu_ns as f64 / 1e9 / dt * 100.0),
                    quota_cpus: c.quota_cpus,
                    cpuset_cpus: c.cpuset_cpus,
                    nr_periods: c.nr_periods,
                    nr_throttled: c.nr_throttled,
                    throttled_ns: c.throttled_ns,
                    throttled_per_s: rate(c.nr_throttled, old.and_then(|o| o.nr_throttled)),
                    throttled_ms_per_s: rate(c.throttled_ns, old.and_then(|o| o.throttled_ns))
                        .map(|ns| ns / 1e6),
                    // µs per s / 1e4 = % of the time
                    psi_some_pct: rate(
                        psi.map(|p| p.some_total_us),
                        old_psi.map(|p| p.some_total_us),
                    )
                    .map(|us| us / 1e4),
                    psi_full_pct: rate(
                        psi.and_then(|p| p.full_total_us),
                        old_psi.and_then(|p| p.full_total_us),
                    )
                    .map(|us| us / 1e4),
                    psi_some_avg10: psi.map(|p| p.some_avg10),
                    psi_full_avg10: psi.and_then(|p| p.full_avg10),
                    psi_some_us: psi.map(|p| p.some_total_us),
                    psi_full_us: psi.and_then(|p| p.full_total_us),
                    vcsw_s: measured.then(|| ThreadInterval::per_s(s.voluntary, dt)),
                    nvcsw_s: measured.then(|| ThreadInterval::per_s(s.involuntary, dt)),
                    p50_wait_us: s.wait_hist.as_ref().and_then(|h| h.quantile_us(0.5)),
                    p99_wait_us: s.wait_hist.as_ref().and_then(|h| h.quantile_us(0.99)),
                    p99_slice_us: s.slice_hist.as_ref().and_then(|h| h.quantile_us(0.99)),
                    migr_s: s.migrations.map(|m| ThreadInterval::per_s(m, dt)),
                    slice_hist: s.slice_hist,
                    wait_hist: s.wait_hist,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ThreadSample;

    #[test]
    fn parent_paths() {
        assert_eq!(parent_path("/"), None);
        assert_eq!(parent_path("/a"), Some("/"));
        assert_eq!(parent_path("/a/b"), Some("/a"));
        assert_eq!(parent_path("/a/b/c"), Some("/a/b"));
    }

    fn cg(path: &str, throttled: Option<u64>, ns: Option<u64>, psi: Option<u64>) -> CgroupSample {
        CgroupSample {
            path: path.into(),
            quota_cpus: Some(0.5),
            nr_periods: Some(100),
            nr_throttled: throttled,
            throttled_ns: ns,
            pressure: psi.map(|t| Pressure {
                some_total_us: t,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn thread(tid: u32, cgroup: Option<u32>, oncpu_ns: u64, vol: u64) -> ThreadSample {
        ThreadSample {
            tid,
            pid: tid,
            oncpu_ns,
            voluntary: vol,
            cgroup,
            ..Default::default()
        }
    }

    #[test]
    fn rows_sum_threads_over_the_subtree_and_rate_the_kernel_counters() {
        let a = Sample {
            mono_ns: 0,
            threads: vec![thread(1, Some(1), 0, 0), thread(2, Some(2), 0, 0)].into(),
            cgroups: vec![
                cg("/", None, None, Some(0)),
                cg("/svc", Some(10), Some(1_000_000_000), Some(5_000)),
                cg("/svc/child", Some(0), Some(0), None),
            ],
            ..Default::default()
        };
        let mut b = a.clone();
        b.mono_ns = 2_000_000_000;
        b.threads = vec![
            thread(1, Some(1), 500_000_000, 10),
            thread(2, Some(2), 300_000_000, 4),
        ]
        .into();
        b.cgroups[1].nr_throttled = Some(30);
        b.cgroups[1].throttled_ns = Some(1_400_000_000);
        b.cgroups[1].pressure = Some(Pressure {
            some_total_us: 205_000,
            ..Default::default()
        });
        // the child vanished between reads: its counters unknown
        b.cgroups[2].nr_throttled = None;
        b.cgroups[2].throttled_ns = None;
        let d = crate::model::interval::derive(Some(&a), &b, 1.0);
        let rows = &d.cgroups;
        assert_eq!(rows.len(), 3);
        assert_eq!(
            (rows[0].threads, rows[1].threads, rows[2].threads),
            (2, 2, 1)
        );
        assert_eq!(
            (
                rows[0].own_threads,
                rows[1].own_threads,
                rows[2].own_threads
            ),
            (0, 1, 1)
        );
        assert_eq!((rows[0].depth, rows[1].depth, rows[2].depth), (0, 1, 2));
        assert_eq!(rows[2].parent, Some(1));
        // (0.5 + 0.3) s of CPU in 2 s = 40 % of a core
        assert!((rows[1].cpu_pct.unwrap() - 40.0).abs() < 1e-9);
        assert!((rows[2].cpu_pct.unwrap() - 15.0).abs() < 1e-9);
        assert_eq!(rows[1].throttled_per_s, Some(10.0));
        assert!((rows[1].throttled_ms_per_s.unwrap() - 200.0).abs() < 1e-9);
        // 200 ms of pressure in 2 s = 10 %
        assert!((rows[1].psi_some_pct.unwrap() - 10.0).abs() < 1e-9);
        assert_eq!(rows[2].throttled_ms_per_s, None);
        assert_eq!(rows[2].psi_some_pct, None);
        assert_eq!(rows[1].vcsw_s, Some(7.0));
        // thread 1 names its cgroup by index
        assert_eq!(d.threads[0].cgroup.as_deref(), Some("/svc"));
    }

    #[test]
    fn a_first_sample_has_no_rates_but_its_cumulative_counts() {
        let a = Sample {
            threads: vec![thread(1, Some(0), 5, 1)].into(),
            cgroups: vec![cg("/x", Some(3), Some(9), Some(7))],
            ..Default::default()
        };
        let d = crate::model::interval::derive(None, &a, 1.0);
        assert_eq!(d.cgroups[0].throttled_per_s, None);
        assert_eq!(d.cgroups[0].nr_throttled, Some(3));
        assert_eq!(d.cgroups[0].psi_some_us, Some(7));
        // an index past the list is no cgroup, not a panic
        let mut bad = a.clone();
        bad.threads[0].cgroup = Some(99);
        let d = crate::model::interval::derive(None, &bad, 1.0);
        assert_eq!(d.cgroups[0].threads, 0);
        assert_eq!(d.threads[0].cgroup, None);
    }
}
