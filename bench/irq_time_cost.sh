#!/usr/bin/env bash
# What the interrupt-time probes (bpf/irq_time.bpf.h) cost on an interrupt-heavy
# load: a UDP flood over loopback in a private network namespace whose lo
# steers received packets (RPS) to the last CPU, where a spinner runs, with
# sender and receiver on the first CPU. Work done per second (packets
# received, spinner loops) without schedtop, with schedtop but its
# interrupt-time probes off (SCHEDTOP_IRQ_TIME=0) and with the default, in
# alternating rounds. Usage: bench/irq_time_cost.sh [SECONDS] [ROUNDS]
# (root; python3, unshare, ip). Run it on a quiet machine: other load on
# those CPUs moves the figures more than the probes do.
set -euo pipefail
secs=${1:-5}
rounds=${2:-3}
bin=${SCHEDTOP:-target/release/schedtop}
[ -x "$bin" ] || bin=target/debug/schedtop
cpus=$(python3 -c 'import os; c=sorted(os.sched_getaffinity(0)); print(c[0], c[-1])')
read -r flood_cpu spin_cpu <<<"$cpus"
[ "$flood_cpu" != "$spin_cpu" ] || { echo "needs two CPUs" >&2; exit 1; }
work=$(mktemp -d)
trap 'kill -- -$$ 2>/dev/null; rm -rf "$work"' EXIT INT TERM

cat >"$work/load.py" <<'EOF'
import os, socket, sys, time, threading
secs, flood_cpu, spin_cpu = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
loops = [0]
def spin():
    os.sched_setaffinity(0, {spin_cpu})
    n, end = 0, time.time() + secs
    while time.time() < end:
        for _ in range(1000):
            pass
        n += 1
    loops[0] = n
t = threading.Thread(target=spin)
t.start()
os.sched_setaffinity(0, {flood_cpu})
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", 0))
r.setblocking(False)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
to, msg, got, end = r.getsockname(), b"x" * 64, 0, time.time() + secs
while time.time() < end:
    for _ in range(32):
        s.sendto(msg, to)
    try:
        while True:
            r.recv(2048)
            got += 1
    except BlockingIOError:
        pass
t.join()
print(f"{got / secs:.0f} {loops[0] / secs:.0f}")
EOF

load() {
    unshare --net --mount --propagation private sh -c \
        "mount -t sysfs none /sys && ip link set lo up && \
         printf %x $((1 << spin_cpu)) > /sys/class/net/lo/queues/rx-0/rps_cpus && \
         exec python3 $work/load.py $secs $flood_cpu $spin_cpu"
}

with_schedtop() {
    env "$@" "$bin" --batch -i 1 >/dev/null 2>&1 &
    local pid=$!
    sleep 2
    load
    kill "$pid"
    wait "$pid" 2>/dev/null || true
}

printf '%-22s %14s %14s\n' "round / mode" "packets/s" "spin loops/s"
for r in $(seq "$rounds"); do
    printf '%-22s %14s %14s\n' "$r none" $(load)
    printf '%-22s %14s %14s\n' "$r irq-time off" $(with_schedtop SCHEDTOP_IRQ_TIME=0)
    printf '%-22s %14s %14s\n' "$r irq-time on" $(with_schedtop SCHEDTOP_IRQ_TIME=1)
done
