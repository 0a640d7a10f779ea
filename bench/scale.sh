#!/usr/bin/env bash
# schedtop and htop side by side with many threads alive: CPU % of one core
# and peak RSS of each monitor over DURATION seconds (default 20) at a 1 s
# refresh, and the key-to-frame latency (a key that re-sorts the table, to
# the first changed screen, polled every 5 ms through tmux). Cases: 10,000,
# 50,000 and 100,000 sleeping threads, and 10,000 with 1,000 of them active
# (each waking 100 times a second), and 20,000 started after the monitor
# (`20000+`: each ran once while watched, so schedtop holds histograms for
# them; the others slept since before it started and have none).
# Targets (issue "scale"): <= 1 % at 10,000; <= 2 % and <= 80 MiB at 50,000;
# <= 4 % and <= 150 MiB at 100,000.
#   bench/scale.sh [DURATION] [CASES...]     a case: THREADS[:ACTIVE][+]
# Raises kernel.pid_max and vm.max_map_count as needed and restores them.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
shift || true
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(10000 10000:1000 20000+ 50000 100000)
bin=${SCHEDTOP_BIN:-./target/release/schedtop}
[ -x "$bin" ] || cargo build --release --locked -q
for tool in tmux htop cc; do
    command -v $tool >/dev/null || { echo "scale: needs $tool (scripts/deps.sh --test installs it)" >&2; exit 1; }
done
work=$(mktemp -d)
cc -O2 -pthread -o "$work/holder" bench/scale/holder.c

old_pid_max=$(sysctl -n kernel.pid_max)
old_map_count=$(sysctl -n vm.max_map_count)
old_threads_max=$(sysctl -n kernel.threads-max)
sock="schedtop-scale-$$"
# start_holder N ACTIVE: the threads, in their own process group, once all run
start_holder() {
    setsid "$work/holder" "$1" "$2" >"$work/holder.out" &
    echo $! >"$work/holder.pid"
    for _ in $(seq 1 600); do
        grep -q ready "$work/holder.out" 2>/dev/null && break
        sleep 0.1
    done
    grep -q ready "$work/holder.out" || { echo "scale: $1 threads did not start" >&2; exit 1; }
}
stop_holder() {
    local p
    p=$(cat "$work/holder.pid" 2>/dev/null) || return 0
    kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true # a child of this shell: reaped
    rm -f "$work/holder.pid"
}
cleanup() {
    tmux -L "$sock" kill-server 2>/dev/null || true
    stop_holder
    sysctl -q -w kernel.pid_max="$old_pid_max" vm.max_map_count="$old_map_count" \
        kernel.threads-max="$old_threads_max" || true
    rm -rf "$work"
}
trap cleanup EXIT

ticks=$(getconf CLK_TCK)

# measure NAME CMD...: run CMD in a 160x50 tmux pane, print "cpu% rss_mib key_ms"
measure() {
    local name=$1
    shift
    tmux -L "$sock" -f /dev/null new-session -d -s m -x 160 -y 50 "$*"
    local pid
    pid=$(tmux -L "$sock" display -p -t m '#{pane_pid}')
    if [ -n "$late" ]; then
        sleep 2 # the monitor is up: it sees the threads start
        start_holder "$n" "$active"
    fi
    sleep 6 # loaded, first frames drawn, first full refresh done
    local t0 s0 t1 s1 hwm
    t0=$(awk '{print $14 + $15}' "/proc/$pid/stat"); s0=$(date +%s.%N)
    sleep "$secs"
    t1=$(awk '{print $14 + $15}' "/proc/$pid/stat"); s1=$(date +%s.%N)
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
    # key to frame: invert the sort order (I in both) and wait for the screen to change
    local before after k0 k1 key_ms=-1
    before=$(tmux -L "$sock" capture-pane -p -t m)
    k0=$(date +%s%N)
    tmux -L "$sock" send-keys -t m I
    for _ in $(seq 1 400); do
        after=$(tmux -L "$sock" capture-pane -p -t m)
        if [ "$after" != "$before" ]; then
            k1=$(date +%s%N)
            key_ms=$(((k1 - k0) / 1000000))
            break
        fi
        sleep 0.005
    done
    tmux -L "$sock" kill-server 2>/dev/null || true
    [ -z "$late" ] || stop_holder
    sleep 1
    awk -v t0="$t0" -v t1="$t1" -v s0="$s0" -v s1="$s1" -v hz="$ticks" -v hwm="$hwm" -v k="$key_ms" \
        'BEGIN { printf "%.2f %.1f %d\n", 100 * (t1 - t0) / hz / (s1 - s0), hwm / 1024, k }'
}

printf "%-14s %10s %10s %10s %10s %9s %9s %8s\n" threads "schedtop%" "htop%" "cpu ratio" \
    "schedtopMiB" "htopMiB" "key ms" "htop key"
for c in "${cases[@]}"; do
    late=
    case $c in *+) late=1 c=${c%+} ;; esac
    n=${c%%:*}
    active=0
    [ "$c" = "$n" ] || active=${c#*:}
    # each thread: a pid, two maps (stack and guard); room for the rest of the box
    need_pid=$((n + 40000))
    need_maps=$((2 * n + 65530))
    [ "$(sysctl -n kernel.pid_max)" -ge $need_pid ] || sysctl -q -w kernel.pid_max=$need_pid
    [ "$(sysctl -n vm.max_map_count)" -ge $need_maps ] || sysctl -q -w vm.max_map_count=$need_maps
    [ "$(sysctl -n kernel.threads-max)" -ge $need_pid ] || sysctl -q -w kernel.threads-max=$need_pid
    [ -n "$late" ] || start_holder "$n" "$active"
    read -r s_cpu s_rss s_key < <(measure schedtop "$bin" -i 1)
    read -r h_cpu h_rss h_key < <(measure htop htop -d 10)
    stop_holder
    ratio=$(awk -v a="$s_cpu" -v b="$h_cpu" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
    label=$n
    [ "$active" = 0 ] || label="$n ($active act)"
    [ -z "$late" ] || label="$label (seen)"
    printf "%-14s %10s %10s %10s %10s %9s %9s %8s\n" "$label" "$s_cpu" "$h_cpu" "$ratio" \
        "$s_rss" "$h_rss" "$s_key" "$h_key"
done
