//! CPU → NUMA node and CPU → last-level-cache from sysfs. The sysfs root is
//! a parameter so tests can use fixture trees (tests/fixtures/sysfs/*).
use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use crate::model::{CpuTopology, Topology};

/// Parse a kernel CPU list such as "0-3,8,10-11".
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let a: u32 = a
                    .trim()
                    .parse()
                    .with_context(|| format!("bad CPU list {s:?}"))?;
                let b: u32 = b
                    .trim()
                    .parse()
                    .with_context(|| format!("bad CPU list {s:?}"))?;
                if b < a || b - a > 65536 {
                    anyhow::bail!("bad CPU range {part:?}");
                }
                out.extend(a..=b);
            }
            None => out.push(
                part.trim()
                    .parse()
                    .with_context(|| format!("bad CPU list {s:?}"))?,
            ),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Read the topology under `sys_root` (normally "/sys").
pub fn read_topology(sys_root: &Path) -> Result<Topology> {
    let cpu_dir = sys_root.join("devices/system/cpu");
    let online = fs::read_to_string(cpu_dir.join("online"))
        .with_context(|| format!("reading {}", cpu_dir.join("online").display()))?;
    let cpus = parse_cpu_list(&online)?;

    // node membership: devices/system/node/nodeN/cpulist; no node dir = one node 0
    let mut node_of = std::collections::HashMap::new();
    let node_dir = sys_root.join("devices/system/node");
    if let Ok(entries) = fs::read_dir(&node_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(id) = name
                .strip_prefix("node")
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Ok(list) = fs::read_to_string(e.path().join("cpulist")) {
                for cpu in parse_cpu_list(&list)? {
                    node_of.insert(cpu, id);
                }
            }
        }
    }

    let topo = cpus
        .into_iter()
        .map(|cpu| CpuTopology {
            cpu,
            node: node_of.get(&cpu).copied().unwrap_or(0),
            llc: llc_of(&cpu_dir, cpu).unwrap_or(cpu),
        })
        .collect();
    Ok(Topology { cpus: topo })
}

/// Lowest CPU sharing the highest-level cache with `cpu`.
fn llc_of(cpu_dir: &Path, cpu: u32) -> Option<u32> {
    let cache = cpu_dir.join(format!("cpu{cpu}/cache"));
    let mut best: Option<(u32, u32)> = None; // (level, first cpu)
    for e in fs::read_dir(cache).ok()?.flatten() {
        if !e.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let level: u32 = fs::read_to_string(e.path().join("level"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        let shared = fs::read_to_string(e.path().join("shared_cpu_list")).ok()?;
        let first = *parse_cpu_list(&shared).ok()?.first()?;
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, first));
        }
    }
    best.map(|(_, first)| first)
}

/// Write a sysfs tree for `nodes` NUMA nodes of `cpus_per_node` CPUs, each
/// node one LLC, CPUs numbered node by node (what tests and fixture
/// topologies use; the files are the ones `read_topology` reads).
#[doc(hidden)]
pub fn write_fixture_tree(root: &Path, nodes: u32, cpus_per_node: u32) -> Result<()> {
    let total = nodes * cpus_per_node;
    let cpu_dir = root.join("devices/system/cpu");
    fs::create_dir_all(&cpu_dir)?;
    fs::write(cpu_dir.join("online"), format!("0-{}\n", total - 1))?;
    for node in 0..nodes {
        let first = node * cpus_per_node;
        let last = first + cpus_per_node - 1;
        let list = format!("{first}-{last}\n");
        let nd = root.join(format!("devices/system/node/node{node}"));
        fs::create_dir_all(&nd)?;
        fs::write(nd.join("cpulist"), &list)?;
        for cpu in first..=last {
            for (idx, level, shared) in [
                (0, 1, format!("{cpu}\n")),
                (2, 2, format!("{cpu}\n")),
                (3, 3, list.clone()),
            ] {
                let d = cpu_dir.join(format!("cpu{cpu}/cache/index{idx}"));
                fs::create_dir_all(&d)?;
                fs::write(d.join("level"), format!("{level}\n"))?;
                fs::write(d.join("shared_cpu_list"), shared)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n").unwrap(),
            vec![0, 1, 2, 3, 8, 10, 11]
        );
        assert_eq!(parse_cpu_list("5").unwrap(), vec![5]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<u32>::new());
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("0-4294967295").is_err());
    }
}
