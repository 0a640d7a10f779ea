#!/usr/bin/env bash
# schedtop on the kernels people run: boot Debian's cloud kernels (bullseye
# 5.10, bookworm 6.1, trixie 6.12) under QEMU with 4 vCPUs on 2 NUMA nodes,
# the static schedtop and its guest checker in an initramfs, and check
# schedtop against the kernel's own counters inside each (PASS/FAIL lines,
# examples/guest_check/). Prints a per-kernel table; exits non-zero if any
# kernel fails a check.
#
#   scripts/kernel-matrix.sh [--refresh] [SUITE...]   the matrix (CI)
#   scripts/kernel-matrix.sh --numa-snapshot          a 4-node guest (8 vCPUs):
#       remakes assets/numa-4node-guest.{svg,txt} with `schedtop snapshot`
#
# Kernels are cached in /var/cache/schedtop-kernels (SCHEDTOP_KERNEL_CACHE);
# --refresh looks for newer ones. Guests run under TCG (nested KVM hangs on
# our VMs): their timings mean nothing, the checks compare counts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh --matrix

suites=()
mode=matrix
refresh=
for a in "$@"; do
    case "$a" in
    --numa-snapshot) mode=numa-snapshot ;;
    --refresh) refresh=--refresh ;;
    bullseye | bookworm | trixie) suites+=("$a") ;;
    *) echo "usage: $0 [--refresh] [--numa-snapshot] [bullseye|bookworm|trixie]..." >&2; exit 2 ;;
    esac
done
if [ ${#suites[@]} -eq 0 ]; then
    if [ $mode = numa-snapshot ]; then suites=(trixie); else suites=(bullseye bookworm trixie); fi
fi
# a whole boot with every check takes about a minute under TCG; a hung
# guest must not hold CI
boot_timeout=${SCHEDTOP_MATRIX_TIMEOUT:-300}
# To chase a rare guest failure: run the checks REPEAT times in one boot,
# only those whose name contains ONLY, with the kernel's console at LOGLEVEL
# (7 shows a soft lockup's stacks; 3, the default, keeps PASS lines clean)
repeat=${SCHEDTOP_MATRIX_REPEAT:-1}
only=${SCHEDTOP_MATRIX_ONLY:-}
loglevel=${SCHEDTOP_MATRIX_LOGLEVEL:-3}
# which suites also boot as the 4-node guest (a list; "none": no 4-node
# boot). One by default: what the two checks test (the balancer's
# cross-node moves, the wakeup path's LLC-only search) is the same code on
# the three kernels, and each 4-node boot adds about a minute (56-82 s
# measured on a loaded 2-core host, where a 2-node boot took 151-172 s)
four_node=${SCHEDTOP_MATRIX_FOUR_NODE:-trixie}
# SCHEDTOP_MATRIX_IRQ_TIME=1: the checks with the interrupt-time probes on
irq_time=${SCHEDTOP_MATRIX_IRQ_TIME:-}

out=target/matrix
mkdir -p "$out"
scripts/build-static.sh --example guest_check >&2
bin=target/static/x86_64-unknown-linux-gnu/release

# the initramfs: busybox, schedtop, the checker, /init
root=$out/initramfs
rm -rf "$root"
mkdir -p "$root/bin"
busybox=$(command -v busybox)
grep -Eq "not a dynamic executable|statically linked" <<<"$(ldd "$busybox" 2>&1 || true)" ||
    { echo "kernel-matrix: $busybox is not static (install busybox-static)" >&2; exit 1; }
cp "$busybox" "$root/bin/busybox"
cp "$bin/schedtop" "$root/schedtop"
cp "$bin/examples/guest_check" "$root/guest_check"
cp scripts/matrix/init "$root/init"
# Debian's perf with its libraries at their own paths: the independent
# oracle of the run-queue wait check (`perf sched timehist`)
perf=$(readlink -f "$(command -v perf)")
for f in "$perf" $(ldd "$perf" | grep -o '/[^ ]*'); do
    mkdir -p "$root$(dirname "$f")"
    cp -L "$f" "$root$f"
done
mkdir -p "$root/usr/bin"
[ "$perf" = /usr/bin/perf ] || cp -L "$perf" "$root/usr/bin/perf"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.gz"

# however this script ends, no guest outlives it: kill qemu by its pid file
# (timeout's own pid is not enough: SIGKILL to timeout orphans its child)
qemu_pid=
cleanup() {
    if [ -n "$qemu_pid" ]; then
        [ -s "$out/qemu.pid" ] && kill -9 "$(cat "$out/qemu.pid")" 2>/dev/null
        kill -9 "$qemu_pid" 2>/dev/null
        wait "$qemu_pid" 2>/dev/null
    fi
    rm -f "$out/qemu.pid"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# boot KERNEL LOG NODES CPUS [ONLY]: one guest, its console into LOG
boot() {
    local kernel=$1 log=$2 nodes=$3 cpus=$4 only=${5:-$only} numa=() n
    local per_cpu=$((cpus / nodes)) per_mem=$((2048 / nodes))
    for ((n = 0; n < nodes; n++)); do
        numa+=(-object "memory-backend-ram,id=m$n,size=${per_mem}M"
            -numa "node,nodeid=$n,cpus=$((n * per_cpu))-$(((n + 1) * per_cpu - 1)),memdev=m$n")
    done
    # -cpu max crashes 6.12 (text_poke); Skylake-Client boots all three.
    # One host thread for all vCPUs (thread=single): with a thread per vCPU,
    # a vCPU can keep running a stale translation of kernel text that
    # text_poke is patching on another. Seen as an "Oops: int3" on 6.12
    # and, on 6.1, as a deadlock when a tracepoint's static call is patched
    # (a BPF link attached or closed): every other vCPU loops on the int3 at
    # __schedule's sched_switch site with interrupts off, so the patching
    # CPU waits forever for their IPI acks (soft lockup in
    # text_poke_bp_batch; 1 tracer run in ~13 under thread=multi, 0 in 120
    # under thread=single, which costs ~10 % more time here).
    # SCHEDTOP_MATRIX_TCG_THREAD=multi brings the old mode back.
    timeout --kill-after=10 "$boot_timeout" \
        qemu-system-x86_64 -accel "tcg,thread=${SCHEDTOP_MATRIX_TCG_THREAD:-single}" -cpu Skylake-Client \
        -smp "$cpus" -m 2048 "${numa[@]}" -nographic -no-reboot -pidfile "$out/qemu.pid" \
        -kernel "$kernel" -initrd "$out/initrd.gz" \
        -append "console=ttyS0 panic=-1 softlockup_panic=1 softlockup_all_cpu_backtrace=1 loglevel=$loglevel psi=1 schedtop.mode=$mode schedtop.repeat=$repeat${only:+ schedtop.only=$only}${irq_time:+ schedtop.irq_time=$irq_time}" \
        </dev/null >"$log" 2>&1 &
    qemu_pid=$!
    local rc=0
    wait "$qemu_pid" || rc=$?
    qemu_pid=
    rm -f "$out/qemu.pid"
    # the serial console ends lines with CR LF
    sed -i 's/\r$//' "$log"
    return $rc
}

if [ $mode = numa-snapshot ]; then
    kernel=$(scripts/matrix/fetch-kernel.sh "${suites[0]}" $refresh)
    log=$out/numa-snapshot.log
    boot "$kernel" "$log" 4 8 || true
    for fmt in svg txt; do
        sed -n "/^=== begin numa.$fmt\$/,/^=== end numa.$fmt\$/p" "$log" | sed '1d;$d' |
            base64 -d >"$out/numa.$fmt" || true
        [ -s "$out/numa.$fmt" ] ||
            { echo "kernel-matrix: no numa.$fmt in the guest's console ($log):" >&2; tail -20 "$log" >&2; exit 1; }
    done
    grep -q "4 nodes" "$out/numa.txt" ||
        { echo "kernel-matrix: the snapshot does not show 4 nodes:" >&2; cat "$out/numa.txt" >&2; exit 1; }
    cp "$out/numa.svg" assets/numa-4node-guest.svg
    cp "$out/numa.txt" assets/numa-4node-guest.txt
    grep -m1 "^=== guest:" "$log"
    cat assets/numa-4node-guest.txt
    echo "kernel-matrix: wrote assets/numa-4node-guest.svg and .txt"
    exit 0
fi

failed=0
rows=()
# SCHEDTOP_MATRIX_ONLY=4-node boots the 4-node guest alone
runs=()
for suite in "${suites[@]}"; do
    [[ $only == *4-node* ]] || runs+=("$suite")
    if [[ " $four_node " == *" $suite "* ]] && { [ -z "$only" ] || [[ $only == *4-node* ]]; }; then
        runs+=("$suite/4n")
    fi
done
for run in "${runs[@]}"; do
    suite=${run%/4n}
    # a 4-node guest (8 vCPUs, 2 a node) runs only the checks named 4-node
    geometry=(2 4)
    [ "$run" = "$suite" ] || geometry=(4 8 "${only:-4-node}")
    log=$out/${run/\//-}.log
    start=$SECONDS
    if ! kernel=$(scripts/matrix/fetch-kernel.sh "$suite" $refresh); then
        rows+=("$run|-|-|-|-|-|-|FAIL (fetch)")
        failed=1
        continue
    fi
    rc=0
    boot "$kernel" "$log" "${geometry[@]}" || rc=$?
    # The emulator's text_poke faults (see boot()): an int3 the kernel never
    # left there, or a soft lockup while text_poke waits for the other
    # vCPUs. Not the kernel or schedtop (the same boot passes on a rerun):
    # should one still happen, boot once more, and say so.
    retried=
    if ! grep -q '^=== guest_check exit 0$' "$log" &&
        { grep -q 'Oops: int3' "$log" ||
            grep -A40 'soft lockup' "$log" | grep -q 'text_poke_bp_batch'; }; then
        echo "kernel-matrix: $suite: the guest died on an emulator text_poke fault; booting it once more:" >&2
        grep -m3 -E 'Oops: int3|soft lockup|RIP:' "$log" >&2 || true
        retried=" (retried: TCG text_poke fault)"
        rc=0
        boot "$kernel" "$log" "${geometry[@]}" || rc=$?
    fi
    secs=$((SECONDS - start))
    release=$(sed -n 's/.*=== guest: \([^,]*\),.*/\1/p' "$log" | head -1)
    # the Debian package version says which upstream release it is
    version=$(cut -d_ -f2 "$(dirname "$kernel")/package" 2>/dev/null || echo "?")
    echo "----- $run (${release:-no boot}) -----"
    sed -n '/^=== begin doctor$/,/^=== end doctor$/p' "$log" | sed '1d;$d'
    grep -E '^(PASS|FAIL|RESULT) ' "$log" || true
    source=$(sed -n 's/^[A-Z]* source: source=\([a-z]*\).*/\1/p' "$log" | head -1)
    pass=$(grep -c '^PASS ' "$log" || true)
    fail=$(grep -c '^FAIL ' "$log" || true)
    verdict="ok$retried"
    if ! grep -q '^=== guest_check exit 0$' "$log"; then
        verdict="FAIL: $(sed -n 's/^FAIL \([^:]*\):.*/\1/p' "$log" | paste -sd, | sed 's/,/, /g')"
        failed=1
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then verdict="FAIL (timeout ${boot_timeout}s)"; fi
        # softlockup_panic=1: a CPU stuck in the kernel ends the boot
        grep -q 'soft lockup' "$log" && verdict="FAIL (soft lockup: $(grep -m1 -o 'soft lockup.*' "$log"))"
        grep -q '^=== guest_check exit' "$log" || { echo "guest console (last lines):"; tail -15 "$log"; }
    fi
    rows+=("$run|${release:-?}|$version|${source:-?}|$pass|$fail|$secs|$verdict")
done

echo
fmt='%-10s %-27s %-13s %-7s %4s %4s %4s  %s\n'
printf "$fmt" suite kernel package source pass fail secs result
for r in "${rows[@]}"; do
    IFS='|' read -r s k ver src p f t v <<<"$r"
    printf "$fmt" "$s" "$k" "$ver" "$src" "$p" "$f" "$t" "$v"
done
exit $failed
