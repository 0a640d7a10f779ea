#!/usr/bin/env bash
# Build one static x86_64 binary to copy onto a sick server over SSH:
# glibc linked statically (crt-static), libbpf, libelf and zlib from their
# static archives (Debian's libelf-dev and zlib1g-dev ship libelf.a, libz.a).
# Output: target/static/x86_64-unknown-linux-gnu/release/schedtop
# Extra arguments go to cargo, e.g. `--example guest_check` (built static
# too, into .../release/examples/).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
# --target keeps RUSTFLAGS away from build scripts and proc macros, which
# must stay dynamic to run on the build machine.
LIBBPF_SYS_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu \
RUSTFLAGS="-C target-feature=+crt-static -C strip=symbols" \
    cargo build --release --locked --features static \
    --target x86_64-unknown-linux-gnu --target-dir target/static --bins "$@"
out=target/static/x86_64-unknown-linux-gnu/release
bins=("$out/schedtop")
for ((i = 1; i <= $#; i++)); do
    [ "${!i}" = --example ] && { j=$((i + 1)); bins+=("$out/examples/${!j}"); }
done
for bin in "${bins[@]}"; do
    if ldd "$bin" 2>&1 | grep -Eq "not a dynamic executable|statically linked"; then
        echo "static binary: $bin ($(du -h "$bin" | cut -f1))"
    else
        echo "error: $bin is dynamically linked:" >&2
        ldd "$bin" >&2
        exit 1
    fi
done
