#!/usr/bin/env bash
# Remake every screenshot the README and docs/ show, with schedtop itself:
# `schedtop snapshot` renders views of the demo recordings (assets/demo.schedtop,
# see assets/make-demo.sh; assets/demo-cgroups.schedtop, see
# assets/make-demo-cgroups.sh) as text and SVG, and as PNG when rsvg-convert
# is installed. The list of shots is assets/screenshots.list. The same
# recording and binary give the same files, so a screenshot never shows an
# older screen than the code draws (tests/cli/screenshots_current.rs checks
# the committed ones against a fresh render). Nothing here needs root or a
# terminal.
#
#   scripts/screenshots.sh            # builds and uses target/debug/schedtop
#   SCHEDTOP=/usr/bin/schedtop scripts/screenshots.sh
#
# (The NUMA view of a 4-node guest, assets/numa-4node-guest.*, comes from a
# real guest, not a recording: scripts/kernel-matrix.sh --numa-snapshot.)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${SCHEDTOP:-}"
if [ -z "$bin" ]; then
    cargo build --bin schedtop
    target="$(cargo metadata --no-deps --format-version 1 | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
    bin="$target/debug/schedtop"
fi
# the screen must not depend on who runs the script
unset NO_COLOR COLORTERM

while read -r name rec at size opts; do
    case "$name" in '' | '#'*) continue ;; esac
    # shellcheck disable=SC2086 # the options are words
    for fmt in txt svg; do
        "$bin" snapshot --from "$rec" --at "$at" --size "$size" $opts \
            --format "$fmt" --force -o "assets/$name.$fmt"
    done
    if command -v rsvg-convert >/dev/null; then
        rsvg-convert --background-color '#1e1e1e' -o "assets/$name.png" "assets/$name.svg"
    fi
    echo "assets/$name.txt assets/$name.svg"
done <assets/screenshots.list
