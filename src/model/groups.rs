//! Rows that stand for several threads: a thread group (the threads of one
//! process whose names differ only in digits: `worker-1`..`worker-64`,
//! `pool-3-thread-17`) or a cgroup. A group's figures are its threads'
//! sums, and its percentiles are read from the merged histograms: the p99
//! of a pool is not the average of its threads' p99s (one thread that waited
//! 50 ms among 63 that waited 1 ms moves the mean of p99s, not the p99).
use crate::model::opt_rate::OptRate;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::hist::Log2Hist;
use super::row::{p99_us, Row, RowKey};
use super::why::WhyCounts;

/// A name with every run of digits replaced by `*`: the threads of a pool
/// share it (`pool-3-thread-17` -> `pool-*-thread-*`).
pub fn name_shape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('*');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

fn hash_of(s: &str) -> u64 {
    // DefaultHasher::new() has fixed keys: the same shape hashes the same in
    // every interval, so a group row keeps its selection
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// The key of the group `t` belongs to (its process and its name's shape).
pub fn group_key(t: &Row) -> RowKey {
    RowKey::Group {
        pid: t.pid,
        shape: hash_of(&name_shape(&t.comm)),
    }
}

/// Whether thread `t` of Sample `s` belongs to the group or cgroup `key`.
pub fn holds(key: RowKey, s: &super::Sample, t: &super::ThreadSample) -> bool {
    match key {
        RowKey::Group { pid, shape } => t.pid == pid && hash_of(&name_shape(&t.comm)) == shape,
        RowKey::Cgroup { path } => t
            .cgroup
            .and_then(|i| s.cgroups.get(i as usize))
            .is_some_and(|c| hash_of(&c.path) == path),
        _ => false,
    }
}

/// Thread rows in thread groups: a group of two or more threads becomes one
/// row (named by the shape, with its thread count); a thread alone in its
/// group stays its own row, as do the threads of a group listed in
/// `expanded`. Groups come in process, then name order.
pub fn thread_groups(threads: &[Arc<Row>], expanded: &[RowKey]) -> Vec<Arc<Row>> {
    let mut groups: BTreeMap<(u32, String), Vec<&Arc<Row>>> = BTreeMap::new();
    for t in threads {
        groups
            .entry((t.pid, name_shape(&t.comm)))
            .or_default()
            .push(t);
    }
    let mut out = Vec::with_capacity(groups.len());
    for ((pid, shape), members) in groups {
        let key = RowKey::Group {
            pid,
            shape: hash_of(&shape),
        };
        if members.len() == 1 || expanded.contains(&key) {
            out.extend(members.into_iter().cloned());
            continue;
        }
        let members: Vec<&Row> = members.into_iter().map(|r| &**r).collect();
        let mut r = sum_rows(key, &members);
        r.comm = Arc::from(shape.as_str());
        out.push(Arc::new(r));
    }
    out
}

/// One row per cgroup: the threads of each cgroup summed (threads whose
/// cgroup is unknown are left out). Cgroups in path order.
pub fn cgroup_rows(threads: &[Arc<Row>]) -> Vec<Arc<Row>> {
    let mut groups: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for t in threads {
        if let Some(path) = t.cgroup.as_deref() {
            groups.entry(path).or_default().push(&**t);
        }
    }
    groups
        .into_values()
        .map(|members| {
            let path = members[0].cgroup.clone().unwrap_or_default();
            let mut r = sum_rows(
                RowKey::Cgroup {
                    path: hash_of(&path),
                },
                &members,
            );
            r.pid = 0;
            r.id = 0;
            r.comm = members[0]
                .cgroup_name
                .clone()
                .unwrap_or_else(|| path.clone());
            r.process_comm = r.comm.clone();
            Arc::new(r)
        })
        .collect()
}

/// The sum of `members` (at least one) as one row with key `key`: counts
/// and rates added, histograms merged and their p99s read again, the mean
/// slice from the summed CPU time over the summed slices. Name, settings
/// and cgroup are the first member's (the lowest tid in a process's group).
pub fn sum_rows(key: RowKey, members: &[&Row]) -> Row {
    let first = members[0];
    let mut r = first.clone();
    r.key = key;
    r.id = first.pid;
    r.cpu = None;
    r.threads = 0;
    r.exited = true;
    r.voluntary = 0;
    r.involuntary = 0;
    let (mut oncpu, mut wait, mut migr) = (None, None, None);
    let (mut vcsw, mut nvcsw, mut cpu, mut migr_s) = (None, None, None, None);
    // unknown (a source without counters) unless a member knows them
    let mut counters = crate::model::counters::Counters::default();
    let (mut slice_h, mut wait_h, mut wake_h, mut preempt_h) = (None, None, None, None);
    let mut why: Option<WhyCounts> = None;
    // slices: a member's CPU time over its mean slice is its slice count
    let (mut slices, mut sliced_ns) = (0.0f64, 0u64);
    for m in members {
        r.threads = r.threads.saturating_add(m.threads);
        r.exited &= m.exited;
        r.voluntary = r.voluntary.saturating_add(m.voluntary);
        r.involuntary = r.involuntary.saturating_add(m.involuntary);
        add_u(&mut oncpu, m.oncpu_ns);
        add_u(&mut wait, m.wait_ns);
        add_u(&mut migr, m.migrations);
        counters.add(&m.counters);
        add_f(&mut vcsw, m.vcsw_s.get());
        add_f(&mut nvcsw, m.nvcsw_s.get());
        add_f(&mut cpu, m.cpu_pct.get());
        add_f(&mut migr_s, m.migr_s.get());
        merge(&mut slice_h, m.slice_hist());
        merge(&mut wait_h, m.wait_hist());
        merge(&mut wake_h, m.wakeup_wait_hist());
        merge(&mut preempt_h, m.preempt_wait_hist());
        if let Some(w) = &m.why {
            why.get_or_insert_with(WhyCounts::default).add(w);
        }
        if let (Some(ns), Some(avg)) = (m.oncpu_ns, m.avg_slice_ns.get()) {
            if avg > 0.0 {
                slices += ns as f64 / avg;
                sliced_ns = sliced_ns.saturating_add(ns);
            }
        }
    }
    r.oncpu_ns = oncpu;
    r.wait_ns = wait;
    r.migrations = migr;
    r.counters = counters;
    r.vcsw_s = OptRate::from(vcsw);
    r.nvcsw_s = OptRate::from(nvcsw);
    r.cpu_pct = OptRate::from(cpu);
    r.migr_s = OptRate::from(migr_s);
    r.avg_slice_ns = OptRate::from((slices > 0.0).then(|| sliced_ns as f64 / slices));
    r.p99_slice_us = p99_us(slice_h.as_ref());
    r.p99_wait_us = p99_us(wait_h.as_ref());
    r.p99_wakeup_wait_us = p99_us(wake_h.as_ref());
    r.p99_preempt_wait_us = p99_us(preempt_h.as_ref());
    r.hists = crate::model::row_hists::RowHists::new([slice_h, wait_h, wake_h, preempt_h]);
    r.why = why.map(|mut w| {
        w.label();
        Arc::new(w)
    });
    r
}

fn add_u(into: &mut Option<u64>, v: Option<u64>) {
    if let Some(v) = v {
        *into = Some(into.unwrap_or(0).saturating_add(v));
    }
}

fn add_f(into: &mut Option<f64>, v: Option<f64>) {
    if let Some(v) = v {
        *into = Some(into.unwrap_or(0.0) + v);
    }
}

fn merge(into: &mut Option<Log2Hist>, from: Option<&Log2Hist>) {
    if let Some(f) = from {
        into.get_or_insert_with(Log2Hist::new).merge(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_become_one_star_per_run() {
        assert_eq!(name_shape("worker-17"), "worker-*");
        assert_eq!(name_shape("pool-3-thread-17"), "pool-*-thread-*");
        assert_eq!(name_shape("nginx"), "nginx");
        assert_eq!(name_shape("kworker/1:0H"), "kworker/*:*H");
    }
}
