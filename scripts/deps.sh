#!/usr/bin/env bash
# Install what building and testing schedtop needs on Debian 12, as root.
# Idempotent: packages already there are not touched; safe to run often.
set -euo pipefail

need_pkgs=(clang llvm libelf-dev zlib1g-dev pkg-config make gcc libc6-dev ca-certificates curl)
for flag in "$@"; do
    case "$flag" in
    --test)
        with_test=1
        # the test suite also drives the TUI in tmux, runs a workload under
        # perf, converts SVG screenshots to PNG and switches to user nobody;
        # bpftool counts what a churn leaves in the kernel's maps; bpftrace
        # runs runqlat's logic as the run-queue wait oracle; htop is the
        # anchor of bench/scale.sh; systemd-analyze checks the .deb's units
        # openssl makes the TLS test's certificate; mkfs.ext4 and losetup
        # the small filesystem the black box fills
        need_pkgs+=(tmux linux-perf librsvg2-bin util-linux procps bpftool bpftrace htop systemd iproute2
            openssl e2fsprogs mount) ;;
    --matrix)
        # scripts/kernel-matrix.sh: other kernels under QEMU, an initramfs
        # with a static busybox and perf (the run-queue wait oracle)
        need_pkgs+=(qemu-system-x86 busybox-static cpio linux-perf) ;;
    esac
done

missing=()
for p in "${need_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "schedtop setup: missing packages (${missing[*]}); run as root to install them" >&2
        exit 1
    fi
    echo "schedtop setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The exporter's test scrapes schedtop with a real Prometheus that it starts
# itself (tests/serve/serve_prometheus.rs): the package's own service must not run.
if [ -n "${with_test:-}" ]; then
    prom_missing=()
    for p in prometheus python3-prometheus-client; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || prom_missing+=("$p")
    done
    if [ ${#prom_missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ]; then
        echo "schedtop setup: installing ${prom_missing[*]} (service kept stopped)" >&2
        guard=""
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            # invoke-rc.d asks this script; 101 = do not start services
            printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
            chmod 755 /usr/sbin/policy-rc.d
            guard=1
        fi
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${prom_missing[@]}" >/dev/null || { [ -n "$guard" ] && rm -f /usr/sbin/policy-rc.d; exit 1; }
        [ -n "$guard" ] && rm -f /usr/sbin/policy-rc.d
        if [ -d /run/systemd/system ]; then
            systemctl disable --now prometheus.service >/dev/null 2>&1 || true
        fi
    elif [ ${#prom_missing[@]} -gt 0 ]; then
        echo "schedtop setup: missing packages (${prom_missing[*]}); run as root to install them" >&2
        exit 1
    fi
fi

# Rust: Debian 12's rustc is too old for ratatui 0.30; use rustup's stable.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "schedtop setup: installing Rust with rustup" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt >&2
    export PATH="$HOME/.cargo/bin:$PATH"
fi
