//! Compiles bpf/schedtop.bpf.c into a libbpf skeleton (CO-RE: the object is
//! relocated against the running kernel's BTF at load time).
use std::env;
use std::path::PathBuf;

use libbpf_cargo::SkeletonBuilder;

const SRC: &str = "bpf/schedtop.bpf.c";

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let bpf_dir = manifest.join("bpf");
    if let Err(e) = SkeletonBuilder::new()
        .source(SRC)
        .clang_args([
            "-I".into(),
            bpf_dir.into_os_string(),
            "-Wall".into(),
            "-O2".into(),
            "-g".into(),
        ])
        .build_and_generate(out.join("schedtop.skel.rs"))
    {
        panic!("building the BPF program failed (is clang installed? see README): {e:#}");
    }
    for f in ["schedtop.bpf.c", "schedtop.h", "kernel_types.h"] {
        println!("cargo:rerun-if-changed=bpf/{f}");
    }
}
