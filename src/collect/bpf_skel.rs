//! The skeleton libbpf-cargo generates from bpf/schedtop.bpf.c (build.rs):
//! the programs, maps and the C structs' Rust twins, for the loader, the
//! source and the thread reader alike.
#![allow(clippy::all, clippy::pedantic, non_camel_case_types, unused_imports)]
include!(concat!(env!("OUT_DIR"), "/schedtop.skel.rs"));
