#!/usr/bin/env bash
# Build target/deb/schedtop_VERSION_amd64.deb with dpkg-deb (no network
# beyond what scripts/build-static.sh needs): the static binary, the man
# page, bash/zsh/fish completions and one hardened systemd unit
# (packaging/systemd/schedtop.service: the agent, `serve --record-dir`, the
# exporter on 127.0.0.1:9717 and the black box in /var/log/schedtop in one
# process), run as the system user schedtop that postinst creates, with
# CAP_BPF and CAP_PERFMON only. schedtop-record.service and
# schedtop-exporter.service, the units of earlier packages, are links to it
# (and its Alias=), so hosts that enabled them run the agent. Not enabled on
# install:
#   systemctl enable --now schedtop
# Prints the path of the .deb on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build-static.sh >&2
bin=target/static/x86_64-unknown-linux-gnu/release/schedtop
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
stage=target/deb/schedtop_${version}_amd64
rm -rf "$stage"
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/share/man/man1" \
    "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
    "$stage/usr/share/fish/vendor_completions.d" "$stage/lib/systemd/system" \
    "$stage/usr/share/doc/schedtop"
install -m 0755 "$bin" "$stage/usr/bin/schedtop"
"$bin" man | gzip -9n >"$stage/usr/share/man/man1/schedtop.1.gz"
"$bin" completions bash >"$stage/usr/share/bash-completion/completions/schedtop"
"$bin" completions zsh >"$stage/usr/share/zsh/vendor-completions/_schedtop"
"$bin" completions fish >"$stage/usr/share/fish/vendor_completions.d/schedtop.fish"
install -m 0644 packaging/systemd/schedtop.service "$stage/lib/systemd/system/"
# the old unit names: a link in the unit directory is an alias to systemd
for old in schedtop-record schedtop-exporter; do
    ln -s schedtop.service "$stage/lib/systemd/system/$old.service"
done
cat >"$stage/usr/share/doc/schedtop/copyright" <<'COPY'
schedtop is licensed under the MIT license or the Apache License 2.0, at your option.
COPY
chmod 0644 "$stage"/usr/share/*/*/* "$stage"/usr/share/man/man1/* 2>/dev/null || true
size_kib=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<CTRL
Package: schedtop
Version: ${version}
Architecture: amd64
Maintainer: schedtop developers <schedtop@localhost>
Section: admin
Priority: optional
Installed-Size: ${size_kib}
Depends: adduser | passwd
Description: live view of what the Linux scheduler does to every thread
 Voluntary and involuntary context switches, on-CPU slices, run-queue waits,
 migrations across CPUs and NUMA nodes, run-queue lengths, per thread, from
 BPF probes (or /proc). A terminal view, recordings with replay, a black-box
 recorder service and an OpenMetrics exporter for Prometheus.
CTRL
# the system user schedtop, and the units reloaded, restarted on upgrade and
# stopped on removal as dh_installsystemd's scripts do (packaging/debian/)
install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$stage/DEBIAN/"
deb=target/deb/schedtop_${version}_amd64.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >&2
echo "$deb"
