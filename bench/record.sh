#!/usr/bin/env bash
# Recording benchmarks; prints the figures (nothing is asserted):
#  - bytes per active thread per Sample, 1,000 threads, 1 s, histograms;
#  - a synthetic 24 h recording (86,400 Samples of 1,000 threads): time to
#    open it and to seek to a random instant. Needs ~1 GB in $TMPDIR and
#    about 10 minutes; `bench/record.sh size` runs only the first part;
#  - history: the live view's rewind buffer over its whole window;
#  - decode, streams: one Sample's encode/decode times, its bytes by stream.
#  history, decode and streams take `--from RECORDING` (its last two
#  Samples) instead of synthetic threads.
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
shift || true
cargo run --release --example record_bench -- "$what" "$@"
