//! NUMA node→node migration flows, derived from the CPU→CPU matrix through
//! the topology (so a replay, which carries both, draws the same flows).
use std::collections::BTreeMap;

use super::sample::Topology;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeFlow {
    pub from_node: u32,
    pub to_node: u32,
    pub count: u64,
}

/// Sum (from_cpu, to_cpu, count) cells per (from_node, to_node). CPUs the
/// topology does not know (offlined since) are left out.
pub fn node_flows(topology: &Topology, cpu_moves: &[(u32, u32, u64)]) -> Vec<NodeFlow> {
    let mut sums: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for &(from, to, count) in cpu_moves {
        if let (Some(f), Some(t)) = (topology.node_of(from), topology.node_of(to)) {
            let cell = sums.entry((f, t)).or_default();
            *cell = cell.saturating_add(count);
        }
    }
    sums.into_iter()
        .map(|((from_node, to_node), count)| NodeFlow {
            from_node,
            to_node,
            count,
        })
        .collect()
}

/// Migrations that crossed nodes, of all in `flows`.
pub fn cross_node_total(flows: &[NodeFlow]) -> u64 {
    flows
        .iter()
        .filter(|f| f.from_node != f.to_node)
        .fold(0u64, |a, f| a.saturating_add(f.count))
}
