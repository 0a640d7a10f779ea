#!/usr/bin/env bash
# The exporter's own cost: CPU time and peak RSS of `schedtop serve` over
# DURATION seconds (default 120) with 10,000 sleeping threads alive,
# scraped every 15 s as Prometheus would, at the unit's settings
# (--interval 5 --top 20); and the size of one /metrics answer.
# Targets: <= 1 % of one core, <= 64 MiB peak RSS.
#   bench/serve.sh [DURATION] [THREADS] [-- extra serve options]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-120}
nthreads=${2:-10000}
shift 2 2>/dev/null || shift $# || true
[ "${1:-}" = "--" ] && shift
bin=${SCHEDTOP_BIN:-./target/release/schedtop}
[ -x "$bin" ] || cargo build --release --locked -q
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# 10,000 threads that stay alive (asleep) for the whole run
setsid python3 - "$nthreads" "$((secs + 60))" <<'PY' &
import sys, threading, time
n, life = int(sys.argv[1]), float(sys.argv[2])
threading.stack_size(64 * 1024)
stop = threading.Event()
for _ in range(n):
    threading.Thread(target=stop.wait, daemon=True).start()
print(f"{n} threads alive", flush=True)
time.sleep(life)
PY
holder=$!
setsid "$bin" serve --listen "127.0.0.1:$port" --interval 5 --top 20 "$@" 2>/dev/null &
serve=$!
trap 'kill -- -$serve -$holder 2>/dev/null || true' EXIT
sleep 10 # threads started, BPF loaded, first Samples taken

scrape() { curl -s -o "$1" -w '%{size_download}' "http://127.0.0.1:$port/metrics"; }
out=$(mktemp)
ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$serve/stat"; }
scrape "$out" >/dev/null
t0=$(cpu_ticks); s0=$(date +%s.%N)
end=$(( $(date +%s) + secs ))
scrapes=0
while [ "$(date +%s)" -lt "$end" ]; do
    bytes=$(scrape "$out")
    scrapes=$((scrapes + 1))
    sleep 15
done
t1=$(cpu_ticks); s1=$(date +%s.%N)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$serve/status")
series=$(grep -vc '^#' "$out")
listed=$(awk '/^schedtop_samples_total/ {print $2}' "$out")
rm -f "$out"
awk -v t0="$t0" -v t1="$t1" -v s0="$s0" -v s1="$s1" -v hz="$ticks" -v hwm="$hwm" -v n="$nthreads" \
    -v bytes="$bytes" -v series="$series" -v scrapes="$scrapes" -v samples="$listed" 'BEGIN {
    cpu = (t1 - t0) / hz; wall = s1 - s0
    printf "threads alive: %d; %d scrapes, %d Samples taken in all\n", n, scrapes, samples
    printf "serve CPU: %.2f s over %.1f s = %.2f %% of one core (target <= 1 %%)\n", cpu, wall, 100 * cpu / wall
    printf "serve peak RSS: %.1f MiB (target <= 64 MiB)\n", hwm / 1024
    printf "/metrics answer: %d bytes, %d series\n", bytes, series
}'
