//! Compiles the BPF programs into libbpf skeletons (CO-RE: each object is
//! relocated against the running kernel's BTF at load time):
//! bpf/schedtop.bpf.c (the aggregating probes) and bpf/flight.bpf.c (the
//! flight recorder behind `schedtop trace`).
use std::env;
use std::path::PathBuf;

use libbpf_cargo::SkeletonBuilder;

/// (source, generated skeleton)
const PROGRAMS: [(&str, &str); 2] = [
    ("bpf/schedtop.bpf.c", "schedtop.skel.rs"),
    ("bpf/flight.bpf.c", "flight.skel.rs"),
];

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let bpf_dir = manifest.join("bpf");
    for (src, skel) in PROGRAMS {
        if let Err(e) = SkeletonBuilder::new()
            .source(src)
            .clang_args([
                "-I".into(),
                bpf_dir.clone().into_os_string(),
                "-Wall".into(),
                "-O2".into(),
                "-g".into(),
            ])
            .build_and_generate(out.join(skel))
        {
            panic!("building the BPF program {src} failed (is clang installed? see README): {e:#}");
        }
    }
    // The commit this binary was built from, for `--version` and `doctor`.
    // Not re-read on every commit (that would rebuild everything each time):
    // exact for clean builds (CI, release, static), may lag in a dev tree.
    let commit = std::process::Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .current_dir(&manifest)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SCHEDTOP_GIT_COMMIT={commit}");
    // the directory: cargo rebuilds when any file in it changes (a header
    // left off a list of files would be stale in the skeleton)
    println!("cargo:rerun-if-changed=bpf");
}
