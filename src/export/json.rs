//! The batch-mode record: one JSON object per interval (JSON Lines). This
//! schema is an interface scripts rely on (README "Batch output"); add
//! fields, never rename or remove them.
use serde::Serialize;

use crate::model::rates::{cpu_intervals, elapsed_s, intervals, migration_deltas, ThreadInterval};
use crate::model::{HostInfo, Sample};
pub use crate::util::clock::{civil_from_days, rfc3339};

#[derive(Serialize)]
pub struct IntervalRecord {
    /// end of the interval, RFC 3339 UTC
    pub time: String,
    pub time_ns: u64,
    pub interval_s: f64,
    pub source: &'static str,
    pub host: String,
    pub threads: Vec<ThreadRecord>,
    pub cpus: Vec<CpuRecord>,
    pub migrations: Vec<MigrationRecord>,
    pub system: SystemRecord,
}

#[derive(Serialize)]
pub struct ThreadRecord {
    pub tid: u32,
    pub pid: u32,
    pub comm: String,
    pub process: String,
    pub cpu: u32,
    pub voluntary: u64,
    pub involuntary: u64,
    /// null on a thread's first interval when its starting counts are unknown
    pub voluntary_per_s: Option<f64>,
    pub involuntary_per_s: Option<f64>,
    pub oncpu_ns: Option<u64>,
    pub wait_ns: Option<u64>,
    pub migrations: Option<u64>,
    pub cross_node_migrations: Option<u64>,
    pub slice_hist_us: Option<Vec<[u64; 2]>>,
    pub wait_hist_us: Option<Vec<[u64; 2]>>,
    pub exited: bool,
}

#[derive(Serialize)]
pub struct CpuRecord {
    pub cpu: u32,
    pub node: u32,
    pub llc: u32,
    pub switches_per_s: f64,
    pub busy_pct: f64,
    pub rq_len_avg: Option<f64>,
    pub rq_len_max: Option<u64>,
    /// [queue length low bound, samples]
    pub rq_len_hist: Option<Vec<[u64; 2]>>,
}

#[derive(Serialize)]
pub struct MigrationRecord {
    pub from_cpu: u32,
    pub to_cpu: u32,
    pub count: u64,
}

#[derive(Serialize)]
pub struct SystemRecord {
    pub context_switches_per_s: f64,
    pub procs_running: u32,
    pub procs_blocked: u32,
    pub load: [f64; 3],
    /// cumulative updates the probes could not store (full map etc.)
    pub lost_updates: u64,
}

/// The record for the interval that ends with `cur`.
pub fn interval_record(host: &HostInfo, prev: Option<&Sample>, cur: &Sample) -> IntervalRecord {
    let dt = prev.map_or(host.interval_ns as f64 / 1e9, |p| elapsed_s(p, cur));
    let threads = intervals(prev, cur)
        .into_iter()
        .map(|(t, iv)| {
            let per_s = |f: fn(&ThreadInterval) -> u64| {
                iv.as_ref().map(|i| ThreadInterval::per_s(f(i), dt))
            };
            ThreadRecord {
                tid: t.tid,
                pid: t.pid,
                comm: t.comm.clone(),
                process: t.process_comm.clone(),
                cpu: t.cpu,
                voluntary: t.voluntary,
                involuntary: t.involuntary,
                voluntary_per_s: per_s(|i| i.voluntary),
                involuntary_per_s: per_s(|i| i.involuntary),
                oncpu_ns: iv.as_ref().map(|i| i.oncpu_ns),
                wait_ns: iv.as_ref().map(|i| i.wait_ns),
                migrations: iv.as_ref().and_then(|i| i.migrations),
                cross_node_migrations: iv.as_ref().and_then(|i| i.cross_node_migrations),
                slice_hist_us: iv
                    .as_ref()
                    .and_then(|i| i.slice_hist.as_ref())
                    .map(|h| h.nonzero_pairs()),
                wait_hist_us: iv
                    .as_ref()
                    .and_then(|i| i.wait_hist.as_ref())
                    .map(|h| h.nonzero_pairs()),
                exited: t.exited,
            }
        })
        .collect();
    let topo = &host.topology;
    let cpus = cpu_intervals(prev, cur, dt)
        .into_iter()
        .map(|c| {
            let place = topo.cpus.iter().find(|t| t.cpu == c.cpu);
            CpuRecord {
                cpu: c.cpu,
                node: place.map_or(0, |p| p.node),
                llc: place.map_or(c.cpu, |p| p.llc),
                switches_per_s: ThreadInterval::per_s(c.switches, dt),
                busy_pct: if dt > 0.0 {
                    (c.busy_ns as f64 / 1e9 / dt * 100.0).min(100.0)
                } else {
                    0.0
                },
                rq_len_avg: c.rq.as_ref().map(|r| r.avg),
                rq_len_max: c.rq.as_ref().map(|r| r.max),
                rq_len_hist: c
                    .rq
                    .as_ref()
                    .map(|r| r.hist.iter().map(|&(l, n)| [l, n]).collect()),
            }
        })
        .collect();
    let migrations = migration_deltas(prev, cur)
        .into_iter()
        .map(|(from_cpu, to_cpu, count)| MigrationRecord {
            from_cpu,
            to_cpu,
            count,
        })
        .collect();
    let ctxt = prev.map_or(0, |p| {
        crate::model::rates::counter_delta(cur.system.context_switches, p.system.context_switches)
    });
    IntervalRecord {
        time: rfc3339(cur.time_ns),
        time_ns: cur.time_ns,
        interval_s: dt,
        source: host.source.as_str(),
        host: host.hostname.clone(),
        threads,
        cpus,
        migrations,
        system: SystemRecord {
            context_switches_per_s: ThreadInterval::per_s(ctxt, dt),
            procs_running: cur.system.procs_running,
            procs_blocked: cur.system.procs_blocked,
            load: cur.system.load,
            lost_updates: cur.system.losses.total(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_formats_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        // 2026-11-21T23:15:28.5Z
        assert_eq!(
            rfc3339(1_795_302_928_500_000_000),
            "2026-11-21T23:15:28.500Z"
        );
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
    }
}
