#!/usr/bin/env bash
# Probe overhead: `perf bench sched pipe` pinned to one CPU, with schedtop
# attached (batch mode, all probes on) and without, interleaved pairs.
# Prints every pair and the median ratio (target <= 1.05).
#   bench/probe_overhead.sh [PAIRS] [LOOPS]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-12}
loops=${2:-200000}
bin=./target/release/schedtop
[ -x "$bin" ] || cargo build --release --locked -q
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 1; }

# usecs/op of one pipe ping-pong run, both tasks on CPU 0
one_run() {
    taskset -c 0 perf bench sched pipe -l "$loops" 2>/dev/null |
        awk '/usecs\/op/ {print $1}'
}

ratios=()
for i in $(seq 1 "$pairs"); do
    base=$(one_run)
    "$bin" --batch -i 1 --require-bpf >/dev/null 2>/tmp/schedtop-bench.err &
    pid=$!
    sleep 1.5 # loaded and attached (the first drain has happened)
    with=$(one_run)
    kill "$pid"; wait "$pid" 2>/dev/null || true
    r=$(awk -v a="$with" -v b="$base" 'BEGIN {printf "%.4f", a / b}')
    ratios+=("$r")
    printf 'pair %2d: without %s us/op, with %s us/op, ratio %s\n' "$i" "$base" "$with" "$r"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2] + a[NR/2+1]) / 2}')
echo "median ratio (with schedtop / without), $pairs pairs: $median"
