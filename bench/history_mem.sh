#!/usr/bin/env bash
# The live view's rewind history at full size: ten minutes of 1 s Samples of
# 10,000 threads (1 % replaced each second) under the 256 MiB cap, and the
# 8 MiB cap's bound while the oldest go. Prints bytes kept, ms per push and
# the worst read (docs/benchmarks.md: "Rewind history"); the same checks as the suite's
# small case hold. A measurement, so not part of `cargo test`: minutes in a
# debug build, about a minute in release.
#   bench/history_mem.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked --release --test record history_mem:: -- --ignored --nocapture --test-threads 1
