#!/usr/bin/env bash
# Install what building and testing schedtop needs on Debian 12, as root.
# Idempotent: packages already there are not touched; safe to run often.
set -euo pipefail

need_pkgs=(clang llvm libelf-dev zlib1g-dev pkg-config make gcc libc6-dev ca-certificates curl)
for flag in "$@"; do
    case "$flag" in
    --test)
        # the test suite also drives the TUI in tmux, runs a workload under
        # perf, converts SVG screenshots to PNG and switches to user nobody;
        # bpftool counts what a churn leaves in the kernel's maps
        need_pkgs+=(tmux linux-perf librsvg2-bin util-linux procps bpftool) ;;
    --matrix)
        # scripts/kernel-matrix.sh: other kernels under QEMU, an initramfs
        # with a static busybox
        need_pkgs+=(qemu-system-x86 busybox-static cpio) ;;
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

# Rust: Debian 12's rustc is too old for ratatui 0.30; use rustup's stable.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "schedtop setup: installing Rust with rustup" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt >&2
    export PATH="$HOME/.cargo/bin:$PATH"
fi
