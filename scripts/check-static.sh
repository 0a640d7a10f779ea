#!/usr/bin/env bash
# The static binary as the engineer on a sick box would use it: built by
# scripts/build-static.sh, copied into a minimal Debian root (debootstrap
# --variant=minbase: no compiler, no libelf, no zlib headers, no clang) and
# run there, live with BPF and replaying the demo recording in a terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build-static.sh
bin=target/static/x86_64-unknown-linux-gnu/release/schedtop
root=target/minroot
if [ ! -x "$root/bin/sh" ]; then
    command -v debootstrap >/dev/null || {
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    rm -rf "$root"
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
fi
for p in libelf1 libelf-dev zlib1g-dev clang; do
    if dpkg --root="$root" -s "$p" >/dev/null 2>&1; then
        echo "check-static: the minimal root has $p; it should not" >&2
        exit 1
    fi
done
cp "$bin" "$root/schedtop"
cp assets/demo.schedtop "$root/demo.schedtop"
mount --bind /proc "$root/proc"
mount --rbind /sys "$root/sys"
cleanup() {
    tmux -L check-static kill-server 2>/dev/null || true
    umount -R "$root/sys" 2>/dev/null || true
    umount "$root/proc" 2>/dev/null || true
}
trap cleanup EXIT

chroot "$root" /schedtop --version
# live, with the BPF probes
chroot "$root" /schedtop --batch -n 1 -i 0.5 --require-bpf |
    grep -q '"source":"bpf"' || { echo "check-static: live BPF failed in the minimal root" >&2; exit 1; }
# replay, in a real terminal
tmux -L check-static -f /dev/null new-session -d -s c -x 120 -y 30 "chroot $root /schedtop replay /demo.schedtop"
sleep 3
screen=$(tmux -L check-static capture-pane -p -t c)
grep -q "source replay" <<<"$screen" && grep -q "spin" <<<"$screen" ||
    { echo "check-static: replay did not show the recording:" >&2; echo "$screen" >&2; exit 1; }
echo "check-static: static binary runs live (BPF) and replays in a minimal Debian root"
