//! Topology from fixture sysfs trees, and node→node flows derived from it.
use std::path::Path;

use schedtop::collect::topology::{read_topology, write_fixture_tree};
use schedtop::model::flows::{cross_node_total, node_flows};

#[test]
fn fixture_trees_read_back_with_nodes_and_llcs() {
    for (nodes, per_node) in [(1u32, 2u32), (2, 4), (4, 8), (16, 8)] {
        let dir = tempfile::tempdir().unwrap();
        write_fixture_tree(dir.path(), nodes, per_node).unwrap();
        let t = read_topology(dir.path()).unwrap();
        assert_eq!(t.cpus.len() as u32, nodes * per_node);
        assert_eq!(t.nodes(), (0..nodes).collect::<Vec<_>>());
        for c in &t.cpus {
            assert_eq!(c.node, c.cpu / per_node, "cpu {}", c.cpu);
            assert_eq!(c.llc, c.node * per_node, "LLC named by its first CPU");
        }
    }
}

#[test]
fn machine_without_node_directory_is_one_node() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture_tree(dir.path(), 1, 4).unwrap();
    std::fs::remove_dir_all(dir.path().join("devices/system/node")).unwrap();
    let t = read_topology(dir.path()).unwrap();
    assert_eq!(t.nodes(), vec![0]);
    assert!(read_topology(Path::new("/nonexistent")).is_err());
}

#[test]
fn node_flows_equal_cpu_moves_summed_through_the_topology() {
    let dir = tempfile::tempdir().unwrap();
    write_fixture_tree(dir.path(), 16, 8).unwrap();
    let topo = read_topology(dir.path()).unwrap();
    // a deterministic scatter of CPU→CPU moves over 128 CPUs
    let mut moves = Vec::new();
    let mut x: u64 = 12345;
    for _ in 0..2000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let from = ((x >> 33) % 128) as u32;
        let to = ((x >> 17) % 128) as u32;
        moves.push((from, to, (x >> 60) + 1));
    }
    let flows = node_flows(&topo, &moves);
    // every (from node, to node) sum recomputed the slow way
    for f in &flows {
        let want: u64 = moves
            .iter()
            .filter(|m| m.0 / 8 == f.from_node && m.1 / 8 == f.to_node)
            .map(|m| m.2)
            .sum();
        assert_eq!(f.count, want, "{} -> {}", f.from_node, f.to_node);
    }
    let total: u64 = moves.iter().map(|m| m.2).sum();
    assert_eq!(flows.iter().map(|f| f.count).sum::<u64>(), total);
    let crossing: u64 = moves
        .iter()
        .filter(|m| m.0 / 8 != m.1 / 8)
        .map(|m| m.2)
        .sum();
    assert_eq!(cross_node_total(&flows), crossing);
    // a CPU the topology does not know is left out, not misattributed
    assert!(node_flows(&topo, &[(500, 0, 3)]).is_empty());
}
