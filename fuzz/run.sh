#!/usr/bin/env bash
# Bounded fuzz run for CI: SECS seconds in all (default 60), split between
# the targets: `reader` (bytes as a recording file, read every way a user
# can; inputs starting 0xEE expand to files of up to 16 MiB) and `decoders`
# (the decoders on their own, below the frame CRC). Each prints, at exit,
# how many inputs reached each decoder and how many it rejected. Needs a
# nightly toolchain and cargo-fuzz; without them it says so and runs the
# stable-Rust corpus + mutation test instead (tests/record/record_fuzz.rs).
#
# Every input that ever failed is kept and replayed first, on every run:
# small ones in the target's corpus (fuzz/corpus/TARGET/, also mutated),
# the slow ones (files of many MiB, or a few KB that decompress to
# hundreds of MiB) in fuzz/regressions/TARGET/, run once each. A crash
# leaves its input in fuzz/artifacts/: add it to one of them with the fix.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz/run.sh: no nightly toolchain; running the stable corpus test instead" >&2
    cd .. && exec cargo test --test record record_fuzz:: -- --nocapture
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz
fi
cargo +nightly fuzz build reader
cargo +nightly fuzz build decoders
bin="$(ls -d target/*/release | head -1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Run a fuzz binary, show its tally and any finding; fail if it failed.
# -rss_limit_mb / -malloc_limit_mb: no allocation without bound (a Sample
# may decompress to 128 MiB and decode to 128 MiB; nothing more).
fuzz() {
    local rc=0
    "$@" -rss_limit_mb=2048 -malloc_limit_mb=1024 >"$work/log" 2>&1 || rc=$?
    grep -E '^(reader|decoders):|^Done|ERROR|panicked|SUMMARY|Test unit written' "$work/log" || true
    if [ "$rc" != 0 ]; then
        tail -40 "$work/log"
        exit "$rc"
    fi
}
# the kept slow failures, once each
for target in reader decoders; do
    if compgen -G "regressions/$target/*" >/dev/null; then
        fuzz "$bin/$target" -timeout=60 regressions/"$target"/*
    fi
done
run() {
    local target="$1" max_len="$2" t="$3"
    # a copy of the seeds: libFuzzer adds what it finds to its first corpus dir
    mkdir -p "$work/$target"
    cp corpus/"$target"/* "$work/$target/"
    fuzz "$bin/$target" "$work/$target" -max_total_time="$t" -max_len="$max_len" \
        -timeout=20 -artifact_prefix="$PWD/artifacts/$target/"
}
mkdir -p artifacts/reader artifacts/decoders
# the reader gets the larger share: files of frames reach every decoder
run reader 131072 $((secs * 2 / 3))
run decoders 65536 $((secs - secs * 2 / 3))
