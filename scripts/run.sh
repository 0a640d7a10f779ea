#!/usr/bin/env bash
# Build schedtop (installing build dependencies if needed) and run it live.
# Arguments go to schedtop: scripts/run.sh --batch -n 3
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cargo build --release --locked -q
exec ./target/release/schedtop "$@"
