#!/usr/bin/env bash
# Remake the README images with schedtop itself: `schedtop snapshot` renders
# views of the demo recording (assets/demo.schedtop, see make-demo.sh) to
# SVG, and to PNG when rsvg-convert is installed: 256 spinners pinned to
# CPU 1 (and 16 for a spinner's detail pane, where each gets enough slices
# per second to fill its histograms). Nothing here needs root or a terminal.
#
#   assets/make-screenshots.sh            # uses target/debug/schedtop
#   SCHEDTOP=/usr/bin/schedtop assets/make-screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rec=assets/demo.schedtop
at256=2026-11-22T00:12:52Z
at16=2026-11-22T00:12:42Z
bin="${SCHEDTOP:-}"
if [ -z "$bin" ]; then
    cargo build --bin schedtop
    target="$(cargo metadata --no-deps --format-version 1 | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
    bin="$target/debug/schedtop"
fi

# shot NAME AT SIZE [snapshot options]
shot() {
    local name="$1" at="$2" size="$3"
    shift 3
    "$bin" snapshot --from "$rec" --at "$at" --size "$size" --force -o "assets/$name.svg" "$@"
    if command -v rsvg-convert >/dev/null; then
        rsvg-convert --background-color '#1e1e1e' -o "assets/$name.png" "assets/$name.svg"
    fi
    echo "assets/$name.svg"
}

# the threads table: every spinner preempted about once a second
shot screenshot-threads "$at256" 160x50 --view threads
# one of 16 spinners in detail: 4 ms slices, then 60 ms waits on the run queue
shot screenshot-detail "$at16" 120x40 --view detail --select spin16
# the CPU view: CPU 1's run queue at 255 while CPU 0 idles
shot screenshot-cpus "$at256" 120x30 --view cpus
