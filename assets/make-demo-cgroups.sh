#!/usr/bin/env bash
# Remake assets/demo-cgroups.schedtop: the "GOMAXPROCS=128 in a 2-CPU
# container" story at small scale. 16 -> 64 -> 256 busy threads in a cgroup
# limited to 0.5 CPU, beside an unlimited sibling with 2 busy threads, all
# on CPU 1, recorded by `schedtop record` with BPF at 1 s. Run as root on a
# host with the cpu controller on cgroup v1 (the test cgroups are created
# under it and removed at the end) or on v2 with the cpu controller enabled.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-assets/demo-cgroups.schedtop}"
secs="${SECS:-6}"
cargo build --release --bin schedtop --example spin_steps
target="$(cargo metadata --no-deps --format-version 1 | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
if [ -d /sys/fs/cgroup/cpu ]; then
    root=/sys/fs/cgroup/cpu/schedtop-demo
    limit() { echo 50000 >"$1/cpu.cfs_quota_us"; echo 100000 >"$1/cpu.cfs_period_us"; }
else
    root=/sys/fs/cgroup/schedtop-demo
    limit() { echo "50000 100000" >"$1/cpu.max"; }
fi
mkdir -p "$root/limited" "$root/sibling"
limit "$root/limited"
cleanup() {
    kill -INT "${rec:-}" 2>/dev/null || true
    kill "${sib:-}" 2>/dev/null || true
    wait 2>/dev/null || true
    rmdir "$root/limited" "$root/sibling" "$root" 2>/dev/null || true
}
trap cleanup EXIT
"$target/release/schedtop" record --require-bpf --force -i 1 -o "$out" &
rec=$!
sleep 2
sh -c "echo \$\$ >$root/sibling/cgroup.procs; exec $target/release/examples/spin_steps --cpu 0 --steps 2 --secs $((secs * 3 + 2))" &
sib=$!
sh -c "echo \$\$ >$root/limited/cgroup.procs; exec $target/release/examples/spin_steps --cpu 1 --steps 16,64,256 --secs $secs"
wait "$sib"
sleep 2
kill -INT "$rec"
wait "$rec"
rec=
ls -l "$out"
