#!/usr/bin/env bash
# The .deb as an administrator would use it: built by scripts/build-deb.sh,
# installed with dpkg in the minimal Debian root that scripts/check-static.sh
# builds (run that first), then `schedtop --version`, a short
# `record --dir` into /var/log/schedtop and a `dump` of it from there, and
# `serve` scraped from outside; the
# systemd units checked with `systemd-analyze verify` where it exists.
set -euo pipefail
cd "$(dirname "$0")/.."
root=target/minroot
[ -x "$root/bin/sh" ] || { echo "check-deb: no minimal root: run scripts/check-static.sh first" >&2; exit 1; }
deb=$(scripts/build-deb.sh | tail -1)
cp "$deb" "$root/schedtop.deb"
mount --bind /proc "$root/proc"
mount --rbind /sys "$root/sys"
serve=""
cleanup() {
    [ -n "$serve" ] && kill -- -"$serve" 2>/dev/null || true
    umount -R "$root/sys" 2>/dev/null || true
    umount "$root/proc" 2>/dev/null || true
}
trap cleanup EXIT

chroot "$root" dpkg -i /schedtop.deb >/dev/null
chroot "$root" schedtop --version
for f in /usr/share/man/man1/schedtop.1.gz /usr/share/bash-completion/completions/schedtop \
    /lib/systemd/system/schedtop-record.service /lib/systemd/system/schedtop-exporter.service; do
    [ -s "$root$f" ] || { echo "check-deb: $f is missing from the package" >&2; exit 1; }
done
# a short black-box run: two files, readable as one timeline
rm -rf "$root/var/log/schedtop"
chroot "$root" schedtop record --dir /var/log/schedtop --rotate 2s --retain 1h -i 0.5 \
    --duration 5s --require-bpf 2>/dev/null
files=$(find "$root/var/log/schedtop" -name '*.schedtop' | wc -l)
[ "$files" -ge 2 ] || { echo "check-deb: record --dir wrote $files files, expected 2 or more" >&2; exit 1; }
lines=$(chroot "$root" schedtop dump /var/log/schedtop | wc -l)
[ "$lines" -ge 8 ] || { echo "check-deb: dump of the directory gave $lines intervals" >&2; exit 1; }
# the exporter from there, scraped from outside
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid chroot "$root" schedtop serve --listen "127.0.0.1:$port" -i 1 --require-bpf 2>/dev/null &
serve=$!
metrics=""
for _ in $(seq 1 50); do
    metrics=$(curl -sf "http://127.0.0.1:$port/metrics" || true)
    [ -n "$metrics" ] && break
    sleep 0.2
done
kill -- -"$serve" 2>/dev/null || true
wait "$serve" 2>/dev/null || true
grep -q '^schedtop_switches_total{kind="voluntary"}' <<<"$metrics" && grep -q '^# EOF$' <<<"$metrics" ||
    { echo "check-deb: schedtop serve in the minimal root gave no metrics" >&2; exit 1; }
chroot "$root" dpkg -r schedtop >/dev/null
# the units, with the staged binary standing in for /usr/bin/schedtop
if command -v systemd-analyze >/dev/null; then
    units=$(mktemp -d)
    stage=${deb%.deb}
    for u in packaging/systemd/*.service; do
        sed "s|/usr/bin/schedtop|$PWD/$stage/usr/bin/schedtop|" "$u" >"$units/$(basename "$u")"
    done
    systemd-analyze verify --man=no "$units"/*.service
    rm -rf "$units"
else
    echo "check-deb: systemd-analyze not found: units not verified" >&2
fi
echo "check-deb: $deb installs in a minimal Debian root, records a directory, serves metrics, units verify"
