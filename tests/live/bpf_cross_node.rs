//! Cross-node migrations as the probe counts them, on this one-node host:
//! the BPF source is given a topology where two allowed CPUs sit on two
//! nodes, a thread is moved between them with sched_setaffinity, and every
//! move must count as crossing (the kernel's own se.nr_migrations says how
//! many moves there were). Without the probe's CPU→node map filled, every
//! CPU reads node 0 and nothing ever crosses.
use crate::common;

use common::*;
use schedtop::collect::bpf::BpfSource;
use schedtop::model::counters::CTR_CROSS_NODE_MIGRATIONS;
use schedtop::model::{CpuTopology, Sample, Topology};

fn thread_of(s: &Sample, tid: u32) -> &schedtop::model::ThreadSample {
    s.threads
        .iter()
        .find(|t| t.tid == tid)
        .unwrap_or_else(|| panic!("thread {tid} missing"))
}

#[test]
fn moves_between_nodes_of_the_given_topology_all_cross() {
    let _g = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 && !cannot_run("needs 2 CPUs in the cpuset") {
        return;
    }
    let (c0, c1) = (cpus[0], cpus[1]);
    // every online CPU on node 0, but c1 on node 1
    let online = schedtop::collect::topology::read_topology(std::path::Path::new("/sys")).unwrap();
    let topology = Topology {
        cpus: online
            .cpus
            .iter()
            .map(|c| CpuTopology {
                node: u32::from(c.cpu as usize == c1),
                ..c.clone()
            })
            .collect(),
    };
    let mut src = match BpfSource::start(topology, vec![getpid()], false, false) {
        Ok(s) => s,
        Err(e) => {
            common::skip::bpf_unavailable(&format!("BPF cannot load here: {e:#}"));
            return;
        }
    };
    let w = Workload::free_spinners(1);
    let tid = w.tids[0];
    set_affinity(tid, c0);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let a = src.drain().unwrap();
    let moves = 10u64;
    for i in 0..moves {
        set_affinity(tid, if i % 2 == 0 { c1 } else { c0 });
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let b = src.drain().unwrap();
    let (ta, tb) = (thread_of(&a, tid), thread_of(&b, tid));
    let migrated = tb.migrations.unwrap() - ta.migrations.unwrap();
    assert_eq!(migrated, moves, "the kernel counted {migrated} moves");
    let xnode =
        |t: &schedtop::model::ThreadSample| t.counters.get(CTR_CROSS_NODE_MIGRATIONS).unwrap();
    let crossed = xnode(tb) - xnode(ta);
    assert_eq!(crossed, moves, "every move went between nodes 0 and 1");
}
