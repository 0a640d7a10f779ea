#!/usr/bin/env bash
# Run schedtop's whole test suite (installing what it needs first).
# The BPF tests attach real probes: run as root on a kernel with BTF. Where
# BPF cannot load they skip, unless SCHEDTOP_REQUIRE_BPF=1 (CI sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh --test
cargo test --locked --no-fail-fast "$@"
