#!/usr/bin/env bash
# schedtop's own cost: CPU time and peak RSS of the live TUI over DURATION
# seconds (default 60) with 10,000 threads alive, 1 s interval.
# Targets: <= 2 % of one core, <= 64 MiB peak RSS.
#   bench/tui_cost.sh [DURATION] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
nthreads=${2:-10000}
bin=${SCHEDTOP_BIN:-./target/release/schedtop}
[ -x "$bin" ] || cargo build --release --locked -q
command -v tmux >/dev/null || { echo "needs tmux" >&2; exit 1; }

# 10,000 threads that stay alive (asleep) for the whole run
python3 - "$nthreads" "$((secs + 30))" <<'PY' &
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
sleep 8 # let the threads start

sock="schedtop-bench-$$"
tmux -L "$sock" -f /dev/null new-session -d -s b -x 160 -y 50 "$bin -i 1"
trap 'tmux -L "$sock" kill-server 2>/dev/null; kill $holder 2>/dev/null' EXIT
sleep 3 # BPF loaded, first Samples drawn
pid=$(tmux -L "$sock" display -p -t b '#{pane_pid}')
ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(cpu_ticks); s0=$(date +%s.%N)
sleep "$secs"
t1=$(cpu_ticks); s1=$(date +%s.%N)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
threads_seen=$(tmux -L "$sock" capture-pane -p -t b | awk '/^Threads/ {print $2; exit}')
awk -v t0="$t0" -v t1="$t1" -v s0="$s0" -v s1="$s1" -v hz="$ticks" -v hwm="$hwm" -v n="$nthreads" -v seen="$threads_seen" 'BEGIN {
    cpu = (t1 - t0) / hz; wall = s1 - s0
    printf "threads alive: %d (schedtop lists %s)\n", n, seen
    printf "schedtop CPU: %.2f s over %.1f s = %.2f %% of one core (target <= 2 %%)\n", cpu, wall, 100 * cpu / wall
    printf "schedtop peak RSS: %.1f MiB (target <= 64 MiB)\n", hwm / 1024
}'
