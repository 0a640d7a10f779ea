#!/usr/bin/env bash
# Flight recorder overhead: `perf bench sched pipe` pinned to CPU 0, with
# `schedtop trace` recording every switch/wakeup/migration (BPF ring buffer,
# Perfetto file) and without, interleaved pairs. Prints every pair and the
# median ratio (target <= 1.15).
#   bench/flight_overhead.sh [PAIRS] [LOOPS]
# SCHEDTOP_BIN=path picks the binary; RECORDER_CPU=1 pins the recorder (its
# draining and encoding) to CPU 1, which leaves only the probes' cost on CPU 0.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-12}
loops=${2:-200000}
bin=${SCHEDTOP_BIN:-./target/release/schedtop}
[ -x "$bin" ] || cargo build --release --locked -q
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (BPF)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# usecs/op of one pipe ping-pong run, both tasks on CPU 0
one_run() {
    taskset -c 0 perf bench sched pipe -l "$loops" 2>/dev/null |
        awk '/usecs\/op/ {print $1}'
}

ratios=()
for i in $(seq 1 "$pairs"); do
    base=$(one_run)
    rm -f "$work/t.pftrace"
    if [ -n "${RECORDER_CPU:-}" ]; then
        taskset -c "$RECORDER_CPU" "$bin" trace -d 600 -o "$work/t.pftrace" 2>"$work/err" &
    else
        "$bin" trace -d 600 -o "$work/t.pftrace" 2>"$work/err" &
    fi
    pid=$!
    # wait until the probes are attached (the recorder says so)
    for _ in $(seq 1 200); do
        grep -q "tracing for" "$work/err" && break
        kill -0 "$pid" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
        sleep 0.05
    done
    with=$(one_run)
    kill -INT "$pid"
    wait "$pid" || { cat "$work/err" >&2; exit 1; }
    summary=$(tail -1 "$work/err")
    r=$(awk -v a="$with" -v b="$base" 'BEGIN {printf "%.4f", a / b}')
    ratios+=("$r")
    printf 'pair %2d: without %s us/op, with %s us/op, ratio %s\n' "$i" "$base" "$with" "$r"
    printf '         %s\n' "${summary#schedtop: }"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2] + a[NR/2+1]) / 2}')
echo "median ratio (with schedtop trace / without), $pairs pairs: $median"
