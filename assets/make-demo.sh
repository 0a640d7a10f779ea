#!/usr/bin/env bash
# Remake assets/demo.schedtop: a real recording of busy threads pinned to
# one CPU, stepping 16 -> 64 -> 256 -> 1024 (examples/spin_steps.rs), taken
# by `schedtop record` with BPF at 1 s. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-assets/demo.schedtop}"
secs="${SECS:-5}"
cargo build --release --bin schedtop --example spin_steps
target="$(cargo metadata --no-deps --format-version 1 | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
"$target/release/schedtop" record --require-bpf --force -i 1 -o "$out" &
rec=$!
trap 'kill -INT $rec 2>/dev/null || true' EXIT
sleep 2
"$target/release/examples/spin_steps" --cpu 1 --steps 16,64,256,1024 --secs "$secs"
sleep 2
kill -INT "$rec"
wait "$rec"
trap - EXIT
ls -l "$out"
