//! `schedtop doctor`: what this kernel offers, for bug reports.
use std::path::Path;

use crate::collect::{LiveOptions, LiveSource};

pub fn run() -> anyhow::Result<()> {
    println!("schedtop {}", env!("CARGO_PKG_VERSION"));
    println!("kernel: {}", crate::collect::system::kernel_release());
    // SAFETY: geteuid has no preconditions.
    println!("root: {}", unsafe { libc::geteuid() } == 0);
    println!(
        "BTF (/sys/kernel/btf/vmlinux): {}",
        Path::new("/sys/kernel/btf/vmlinux").exists()
    );
    let opts = LiveOptions {
        interval_ns: 1_000_000_000,
        pid_filter: vec![],
        force_procfs: false,
        require_bpf: false,
    };
    let src = LiveSource::open(&opts)?;
    let host = src.host();
    println!("source: {}", host.source.as_str());
    if let Some(r) = &host.degraded_reason {
        println!("note: {r}");
    }
    println!(
        "topology: {} CPUs, {} NUMA nodes",
        host.topology.cpus.len(),
        host.topology.nodes().len()
    );
    Ok(())
}
