#!/usr/bin/env bash
# The .deb as an administrator would use it: built by scripts/build-deb.sh,
# installed with dpkg in the minimal Debian root that scripts/check-static.sh
# builds (run that first). Checked there:
# - postinst makes the system user schedtop (no login shell, no home), and
#   an upgrade try-restarts running units (systemd stood in for by a
#   recorder of the calls), a removal stops them;
# - one unit, the agent (`serve --record-dir`); the old names
#   schedtop-record and schedtop-exporter are links to it and in its Alias=;
# - the units name that user and only CAP_BPF and CAP_PERFMON, pass
#   `systemd-analyze verify`, and `systemd-analyze security --offline=true`
#   scores both at "OK" or better (exposure <= 4.9; printed). No
#   systemd-analyze is a failure, never a skip;
# - `record --dir` and `serve` run as schedtop with only those two
#   capabilities, as the units start them: the BPF source loads, the
#   recording dumps, a scrape from outside answers, and once the probes are
#   attached every thread of the exporter holds only what it said it kept.
set -euo pipefail
cd "$(dirname "$0")/.."
root=target/minroot
[ -x "$root/bin/sh" ] || { echo "check-deb: no minimal root: run scripts/check-static.sh first" >&2; exit 1; }
fail() { echo "check-deb: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null ||
    fail "systemd-analyze not found (Debian package systemd): the units cannot be checked"
deb=$(scripts/build-deb.sh | tail -1)
cp "$deb" "$root/schedtop.deb"
mount --bind /proc "$root/proc"
mount --rbind /sys "$root/sys"
serve=""
log=$(mktemp -d)
cleanup() {
    [ -n "$serve" ] && kill -- -"$serve" 2>/dev/null || true
    umount -R "$root/sys" 2>/dev/null || true
    umount "$root/proc" 2>/dev/null || true
    rm -f "$root/usr/local/sbin/deb-systemd-invoke" "$root/usr/local/sbin/systemctl"
    rm -rf "$root/run/systemd" "$log"
}
trap cleanup EXIT
in_root() { chroot "$root" env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

# start from a root without the package or its user
in_root dpkg --purge schedtop >/dev/null 2>&1 || true
in_root userdel schedtop >/dev/null 2>&1 || true
in_root dpkg -i /schedtop.deb >/dev/null
in_root schedtop --version
for f in /usr/share/man/man1/schedtop.1.gz /usr/share/bash-completion/completions/schedtop \
    /lib/systemd/system/schedtop.service; do
    [ -s "$root$f" ] || fail "$f is missing from the package"
done
# one unit, the agent; the old names are links to it (aliases) and its Alias=
[ "$(find "$root/lib/systemd/system" -maxdepth 1 -name 'schedtop*.service' -type f | wc -l)" = 1 ] ||
    fail "more than one schedtop unit file: $(ls "$root"/lib/systemd/system/schedtop*)"
for old in schedtop-record schedtop-exporter; do
    [ "$(readlink "$root/lib/systemd/system/$old.service")" = schedtop.service ] ||
        fail "$old.service is not a link to schedtop.service"
    grep -Eq "^Alias=(.* )?$old\.service( |$)" "$root/lib/systemd/system/schedtop.service" ||
        fail "schedtop.service has no Alias= $old.service"
done
grep -q "^ExecStart=/usr/bin/schedtop serve .*--record-dir /var/log/schedtop" \
    "$root/lib/systemd/system/schedtop.service" || fail "schedtop.service is not serve --record-dir"

# the system user: no login, no home, a system uid
IFS=: read -r _ _ uid gid _ home shell < <(in_root getent passwd schedtop) ||
    fail "postinst made no user schedtop"
in_root getent group schedtop >/dev/null || fail "postinst made no group schedtop"
[ "$uid" -gt 0 ] && [ "$uid" -lt 1000 ] || fail "schedtop has uid $uid, not a system uid"
[ "$home" = /nonexistent ] && [ ! -e "$root/nonexistent" ] || fail "schedtop has a home: $home"
case "$shell" in */nologin | */false) ;; *) fail "schedtop can log in (shell $shell)" ;; esac
echo "check-deb: user schedtop uid $uid gid $gid home $home shell $shell"

# the units: the user, the capabilities, the filter
for u in schedtop; do
    f="$root/lib/systemd/system/$u.service"
    for want in "User=schedtop" "Group=schedtop" "AmbientCapabilities=CAP_BPF CAP_PERFMON" \
        "CapabilityBoundingSet=CAP_BPF CAP_PERFMON" "NoNewPrivileges=yes" \
        "SystemCallFilter=@system-service bpf perf_event_open"; do
        grep -qx "$want" "$f" || fail "$u.service lacks '$want'"
    done
done
units=$(mktemp -d -p "$log")
stage=${deb%.deb}
for u in "$root"/lib/systemd/system/schedtop.service; do
    # the staged binary stands in for /usr/bin/schedtop (verify runs it)
    sed "s|/usr/bin/schedtop|$PWD/$stage/usr/bin/schedtop|" "$u" >"$units/$(basename "$u")"
done
systemd-analyze verify --man=no "$units"/*.service
for u in "$units"/*.service; do
    # exposure 0.0-10.0 in tenths: OK is 1.0-4.9, SAFE below, PERFECT 0.0
    systemd-analyze security --offline=true --threshold=49 "$u" >"$log/security" 2>&1 ||
        { cat "$log/security" >&2; fail "$(basename "$u") scores worse than OK"; }
    score=$(grep -o 'Overall exposure level for .*' "$log/security") ||
        { cat "$log/security" >&2; fail "no score for $(basename "$u")"; }
    echo "check-deb: $score"
    grep -Eq ': [0-9.]+ (OK|SAFE|PERFECT)' <<<"$score" || fail "$(basename "$u") is not at OK or better"
done

# as the units start it: the user schedtop, only CAP_BPF and CAP_PERFMON,
# no new privileges
as_unit() {
    in_root setpriv --reuid schedtop --regid schedtop --init-groups --no-new-privs \
        --inh-caps=-all,+bpf,+perfmon --ambient-caps=-all,+bpf,+perfmon \
        --bounding-set=-all,+bpf,+perfmon "$@"
}
# a short black-box run: two files, readable as one timeline (systemd's
# LogsDirectory= gives the directory to the user)
rm -rf "$root/var/log/schedtop"
install -d -m 0700 -o "$uid" -g "$gid" "$root/var/log/schedtop"
# (--keep-free 64M: the default floor, up to 4 GiB, would pause it on a
# nearly full CI disk; the floor itself is tested in record_dir_floor.rs)
as_unit schedtop record --dir /var/log/schedtop --rotate 2s --retain 1h -i 0.5 --keep-free 64M \
    --duration 5s --require-bpf 2>"$log/record" || { cat "$log/record" >&2; fail "record as schedtop failed"; }
grep -q "(bpf source)" "$log/record" || { cat "$log/record" >&2; fail "record did not use the BPF source"; }
files=$(find "$root/var/log/schedtop" -name '*.schedtop' -uid "$uid" | wc -l)
[ "$files" -ge 2 ] || fail "record --dir wrote $files files as schedtop, expected 2 or more"
lines=$(in_root schedtop dump /var/log/schedtop | wc -l)
[ "$lines" -ge 8 ] || fail "dump of the directory gave $lines intervals"

# the agent from there (schedtop.service: the exporter and the black box in
# one process), scraped from outside
rm -rf "$root/var/log/schedtop-agent"
install -d -m 0700 -o "$uid" -g "$gid" "$root/var/log/schedtop-agent"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# setsid, chroot, env and setpriv exec: $! is the exporter itself
setsid chroot "$root" env PATH=/usr/sbin:/usr/bin:/sbin:/bin setpriv --reuid schedtop --regid schedtop \
    --init-groups --no-new-privs --inh-caps=-all,+bpf,+perfmon --ambient-caps=-all,+bpf,+perfmon \
    --bounding-set=-all,+bpf,+perfmon \
    schedtop serve --listen "127.0.0.1:$port" -i 1 --require-bpf \
    --record-dir /var/log/schedtop-agent --rotate 1s --keep-free 64M 2>"$log/serve" &
serve=$!
scrape() { curl -sf "http://127.0.0.1:$port/metrics" || true; }
metrics=""
for _ in $(seq 1 50); do
    metrics=$(scrape)
    [ -n "$metrics" ] && break
    sleep 0.2
done
sleep 2.5
later=$(scrape)
status=$(cat "/proc/$serve/status" 2>/dev/null || true)
threads=$(for t in "/proc/$serve"/task/*/status; do
    echo "$(sed -n 's/^Name:\t//p' "$t") $(grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' "$t" | tr -d '\t' | tr '\n' ' ')"
done 2>/dev/null)
kill -- -"$serve" 2>/dev/null || true
wait "$serve" 2>/dev/null || true
serve=""
cat "$log/serve"
grep -q '^schedtop_switches_total{kind="voluntary"}' <<<"$metrics" && grep -q '^# EOF$' <<<"$metrics" ||
    fail "schedtop serve as schedtop gave no metrics"
grep -q '^schedtop_build_info{.*source="bpf"' <<<"$metrics" || fail "serve did not use the BPF source"
samples() { sed -n 's/^schedtop_samples_total \([0-9]*\).*/\1/p' <<<"$1"; }
[ "$(samples "$later")" -gt "$(samples "$metrics")" ] ||
    fail "no Sample taken after the capabilities were dropped ($(samples "$metrics") then $(samples "$later"))"
grep -q '^schedtop_sample_errors_total 0' <<<"$later" || fail "Samples failed after the drop"
# who it ran as, and what each thread holds after the drop
grep -Eq "^Uid:\s+$uid\s+$uid\s+$uid\s+$uid$" <<<"$status" || fail "serve did not run as uid $uid: $(grep Uid <<<"$status")"
echo "check-deb: serve ran as uid $uid; its threads after the drop:"
echo "$threads"
# CAP_BPF is bit 39, CAP_PERFMON bit 38
case "$(grep -o 'capabilities dropped.*' "$log/serve")" in
*"none kept") kept=0000000000000000 ;;
*"but CAP_BPF "*) kept=0000008000000000 ;;
*) fail "serve did not say what it kept" ;;
esac
n=0
while read -r name rest; do
    n=$((n + 1))
    for set in Inh Prm Eff Amb; do
        grep -q "Cap$set:$kept" <<<"$rest" || fail "thread $name: Cap$set is not $kept: $rest"
    done
    grep -q "CapBnd:000000c000000000" <<<"$rest" || fail "thread $name ran with more than CAP_BPF CAP_PERFMON: $rest"
done <<<"$threads"
[ "$n" -ge 2 ] || fail "read $n threads of serve"
# the black box it fed, written as the user after the drop
files=$(find "$root/var/log/schedtop-agent" -name '*.schedtop' -uid "$uid" | wc -l)
[ "$files" -ge 2 ] || fail "serve --record-dir wrote $files files as schedtop, expected 2 or more"
lines=$(in_root schedtop dump /var/log/schedtop-agent | wc -l)
[ "$lines" -ge 2 ] || fail "dump of the agent's directory gave $lines intervals"
echo "check-deb: the agent (serve --record-dir) as schedtop: $files files, $lines intervals"

# an upgrade restarts running units, a removal stops them: systemd stood in
# for by scripts that record how they are called
mkdir -p "$root/run/systemd/system"
for tool in deb-systemd-invoke systemctl; do
    printf '#!/bin/sh\necho "%s $*" >>/systemd-calls\n' "$tool" >"$root/usr/local/sbin/$tool"
    chmod 0755 "$root/usr/local/sbin/$tool"
done
rm -f "$root/systemd-calls"
in_root dpkg -i /schedtop.deb >/dev/null
grep -qx "deb-systemd-invoke try-restart schedtop.service schedtop-record.service schedtop-exporter.service" "$root/systemd-calls" ||
    { cat "$root/systemd-calls" >&2; fail "an upgrade did not try-restart the units"; }
grep -qx "systemctl --system daemon-reload" "$root/systemd-calls" || fail "an upgrade did not reload systemd"
rm -f "$root/systemd-calls"
in_root dpkg -r schedtop >/dev/null
grep -qx "deb-systemd-invoke stop schedtop.service schedtop-record.service schedtop-exporter.service" "$root/systemd-calls" ||
    { cat "$root/systemd-calls" >&2; fail "a removal did not stop the units"; }
rm -f "$root/systemd-calls"
echo "check-deb: upgrade try-restarts the units, removal stops them"
echo "check-deb: $deb installs in a minimal Debian root; units verified and scored OK or better; record and serve run as schedtop with CAP_BPF CAP_PERFMON only"
