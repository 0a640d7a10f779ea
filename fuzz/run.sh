#!/usr/bin/env bash
# Bounded fuzz run of the recording reader for CI: SECS seconds (default 60)
# on the seed corpus. Needs a nightly toolchain and cargo-fuzz; without them
# it says so and runs the stable-Rust corpus + mutation test instead
# (tests/record_fuzz.rs), so the target's function is still exercised.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz/run.sh: no nightly toolchain; running the stable corpus test instead" >&2
    cd .. && exec cargo test --test record_fuzz
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz
fi
# a copy of the seeds: libFuzzer adds what it finds to its first corpus dir
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp corpus/reader/* "$work/"
# -rss_limit_mb: the reader must not allocate without bound
cargo +nightly fuzz run reader "$work" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 -timeout=10
