#!/usr/bin/env bash
# Bounded fuzz run for CI: SECS seconds in all (default 60), split between
# the targets: `reader` (bytes as a recording file, read every way a user
# can; inputs starting 0xEE expand to files of up to 16 MiB) and `decoders`
# (the decoders on their own, below the frame CRC). Each prints, at exit,
# how many inputs reached each decoder and how many it rejected. Needs a
# nightly toolchain and cargo-fuzz; without them it says so and runs the
# stable-Rust corpus + mutation test instead (tests/record_fuzz.rs).
#
# A crash leaves its input in fuzz/artifacts/; add it to the target's
# corpus (fuzz/corpus/TARGET/) with the fix, so every input that ever
# failed is replayed on every run.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz/run.sh: no nightly toolchain; running the stable corpus test instead" >&2
    cd .. && exec cargo test --test record_fuzz -- --nocapture
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz
fi
cargo +nightly fuzz build reader
cargo +nightly fuzz build decoders
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run() {
    local target="$1" max_len="$2" t="$3"
    # a copy of the seeds: libFuzzer adds what it finds to its first corpus dir
    mkdir -p "$work/$target"
    cp corpus/"$target"/* "$work/$target/"
    # -rss_limit_mb / -malloc_limit_mb: no allocation without bound (a
    # Sample may decompress to 128 MiB and decode to 256 MiB; nothing more)
    cargo +nightly fuzz run "$target" "$work/$target" -- \
        -max_total_time="$t" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -max_len="$max_len" -timeout=20 2>&1 |
        grep -E '^(reader|decoders):|^Done|ERROR|panicked|SUMMARY|Test unit written|==[0-9]+==' || true
    return "${PIPESTATUS[0]}"
}
# the reader gets the larger share: files of frames reach every decoder
run reader 131072 $((secs * 2 / 3))
run decoders 65536 $((secs - secs * 2 / 3))
