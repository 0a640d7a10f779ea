#!/usr/bin/env bash
# Probe overhead: `perf bench sched pipe` pinned to CPU 0 with schedtop
# attached (batch mode, all probes on) and without, interleaved runs whose
# order rotates. Each round has four runs: without schedtop, with it as it
# runs by default (run-queue waits timed from the wakeup: one clock read per
# switch-in and per wakeup), with --run-delay-waits (waits from the kernel's
# run_delay: no wakeup programs, no clock read), and the floor: the default's
# programs attached at the same tracepoints with empty bodies
# (SCHEDTOP_BENCH_EMPTY_PROBES=1), which is what any probe there costs before
# it does anything (the kernel's dispatch; retpolines make it dear on this VM).
# A fifth run is the default without the dirty-set marking that lets a 6.2+
# drain read only the threads that changed (SCHEDTOP_READ_EVERY_TASK=1): the
# probe's share of that saving. A sixth is the default with the probes that
# sit behind a flag (wakers, interrupt time), so both ways are printed;
# SCHEDTOP_BENCH_FLAGGED picks which (default "SCHEDTOP_WAKERS=1
# SCHEDTOP_IRQ_TIME=1"; "SCHEDTOP_WAKERS=1" measures the wakers alone).
# Prints every round and the median ratios (target <= 1.05).
#   bench/probe_overhead.sh [PAIRS] [LOOPS]
# SCHEDTOP_BIN=path picks the binary; SCHEDTOP_CPU=1 pins schedtop's own
# user-space work (drains) to CPU 1, which leaves only the probes on CPU 0.
# BPF_STATS=1 turns on kernel.bpf_stats_enabled for the run (restored after)
# and prints the probes' own cost per event, which unlike the ratio does not
# drown in the noise of a busy machine.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-12}
loops=${2:-200000}
bin=${SCHEDTOP_BIN:-./target/release/schedtop}
[ -x "$bin" ] || cargo build --release --locked -q
# the sixth run's environment: SCHEDTOP_NAME=VALUE words
read -r -a flagged_env <<<"${SCHEDTOP_BENCH_FLAGGED:-SCHEDTOP_WAKERS=1 SCHEDTOP_IRQ_TIME=1}"
[ "${#flagged_env[@]}" -gt 0 ] || { echo "SCHEDTOP_BENCH_FLAGGED names no variable" >&2; exit 1; }
for v in "${flagged_env[@]}"; do
    [[ $v =~ ^SCHEDTOP_[A-Z0-9_]+=[^[:space:]]*$ ]] ||
        { echo "SCHEDTOP_BENCH_FLAGGED: '$v' is not SCHEDTOP_NAME=VALUE" >&2; exit 1; }
done
flagged_label="${flagged_env[*]}"
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root (BPF)" >&2; exit 1; }

work=$(mktemp -d)
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
cleanup() {
    rm -rf "$work"
    if [ "${BPF_STATS:-}" = 1 ]; then echo "$stats_was" >/proc/sys/kernel/bpf_stats_enabled; fi
}
trap cleanup EXIT
if [ "${BPF_STATS:-}" = 1 ]; then
    command -v bpftool >/dev/null || { echo "BPF_STATS=1 needs bpftool" >&2; exit 1; }
    echo 1 >/proc/sys/kernel/bpf_stats_enabled
fi
: >"$work/stats"

# usecs/op of one pipe ping-pong run, both tasks on CPU 0
one_run() {
    taskset -c 0 perf bench sched pipe -l "$loops" 2>/dev/null |
        awk '/usecs\/op/ {print $1}'
}

# one run with schedtop attached (extra arguments passed on; $run_env: its
# extra environment); sets $with
run_env=()
run_with() {
    local pin=()
    [ -n "${SCHEDTOP_CPU:-}" ] && pin=(taskset -c "$SCHEDTOP_CPU")
    "${pin[@]}" env "${run_env[@]}" "$bin" --batch -i 1 --require-bpf "$@" >"$work/out" 2>"$work/err" &
    local pid=$!
    # attached once the first interval is printed
    for _ in $(seq 1 300); do
        [ -s "$work/out" ] && break
        kill -0 "$pid" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
        sleep 0.05
    done
    with=$(one_run)
    if [ "${BPF_STATS:-}" = 1 ] && [ -z "${SCHEDTOP_BENCH_EMPTY_PROBES:-}" ]; then
        bpftool prog show | awk '/name (handle_|sample_runqueue)/ {
            for (i = 1; i <= NF; i++) { if ($i == "name") n = $(i+1); if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) }
            print n, t, c }' >>"$work/stats"
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

ratios=()
ratios_rd=()
ratios_empty=()
ratios_every=()
ratios_flagged=()
for i in $(seq 1 "$pairs"); do
    # rotate which run goes first, so a drift in the machine's load
    # does not favour one side
    for k in $(seq 0 5); do
        case $(((i + k) % 6)) in
        0) base=$(one_run) ;;
        1) run_with; stamp=$with ;;
        2) run_with --run-delay-waits; rd=$with ;;
        3) SCHEDTOP_BENCH_EMPTY_PROBES=1 run_with; empty=$with ;;
        4) SCHEDTOP_READ_EVERY_TASK=1 run_with; every=$with ;;
        5)
            run_env=("${flagged_env[@]}")
            run_with
            run_env=()
            flagged=$with
            ;;
        esac
    done
    r=$(awk -v a="$stamp" -v b="$base" 'BEGIN {printf "%.4f", a / b}')
    r2=$(awk -v a="$rd" -v b="$base" 'BEGIN {printf "%.4f", a / b}')
    r3=$(awk -v a="$empty" -v b="$base" 'BEGIN {printf "%.4f", a / b}')
    r4=$(awk -v a="$every" -v b="$base" 'BEGIN {printf "%.4f", a / b}')
    r5=$(awk -v a="$flagged" -v b="$base" 'BEGIN {printf "%.4f", a / b}')
    ratios_every+=("$r4")
    ratios_flagged+=("$r5")
    ratios+=("$r")
    ratios_rd+=("$r2")
    ratios_empty+=("$r3")
    printf 'round %2d: without %s us/op, with %s (ratio %s), --run-delay-waits %s (%s), empty probes %s (%s), no dirty sets %s (%s), %s %s (%s)\n' \
        "$i" "$base" "$stamp" "$r" "$rd" "$r2" "$empty" "$r3" "$every" "$r4" "$flagged_label" "$flagged" "$r5"
done
median() {
    printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2] + a[NR/2+1]) / 2}'
}
echo "median ratio (with schedtop / without), $pairs rounds: $(median "${ratios[@]}") (waits from the wakeup, the default)"
echo "median ratio (with schedtop / without), $pairs rounds: $(median "${ratios_rd[@]}") (--run-delay-waits)"
echo "median ratio (with schedtop / without), $pairs rounds: $(median "${ratios_empty[@]}") (the floor: the same programs, empty)"
echo "median ratio (with schedtop / without), $pairs rounds: $(median "${ratios_every[@]}") (the default without dirty sets: every task read at every drain)"
echo "median ratio (with schedtop / without), $pairs rounds: $(median "${ratios_flagged[@]}") (the default with the flagged probes on: $flagged_label)"
if [ "${BPF_STATS:-}" = 1 ]; then
    awk '{t[$1] += $2; c[$1] += $3} END {for (n in t) if (c[n] > 0) printf "probe cost %-18s %6.0f ns/event over %d events (default and --run-delay-waits runs)\n", n, t[n] / c[n], c[n]}' "$work/stats" | sort
fi
