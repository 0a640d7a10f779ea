#!/usr/bin/env bash
# Fetch Debian's cloud kernel of one suite (bullseye, bookworm, trixie) and
# print the path of its vmlinuz. apt runs with a private sources list, lists
# and cache under the cache directory, so the machine's own apt setup is not
# touched. A kernel fetched once is reused; --refresh looks for a newer one.
# Usage: fetch-kernel.sh SUITE [--refresh]
set -euo pipefail
suite=$1
refresh=${2:-}
cache=${SCHEDTOP_KERNEL_CACHE:-/var/cache/schedtop-kernels}
# each suite's own kernel series (bookworm's security archive also carries
# 6.12 builds for Debian 12: not the kernel Debian 12 users run)
case "$suite" in
bullseye) series=5.10 ;;
bookworm) series=6.1 ;;
trixie) series=6.12 ;;
*) echo "fetch-kernel: unknown suite $suite (bullseye, bookworm, trixie)" >&2; exit 2 ;;
esac
dir=$cache/$suite
if [ "$refresh" != --refresh ] && [ -s "$dir/vmlinuz" ]; then
    echo "$dir/vmlinuz"
    exit 0
fi

apt_dir=$cache/apt/$suite
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$dir"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
# SCHEDTOP_DEBIAN_MIRROR: another mirror (archive.debian.org once a suite
# leaves the main one)
mirror=${SCHEDTOP_DEBIAN_MIRROR:-http://deb.debian.org}
cat >"$apt_dir/sources.list" <<SOURCES
deb [signed-by=$keyring] $mirror/debian $suite main
deb [signed-by=$keyring] $mirror/debian $suite-updates main
deb [signed-by=$keyring] $mirror/debian-security $suite-security main
SOURCES
apt_opts=(
    -o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o Dir::Etc::SourceParts=/dev/null
    -o Dir::Etc::Preferences=/dev/null
    -o Dir::Etc::PreferencesParts=/dev/null
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache"
    -o Debug::NoLocking=1
    -o APT::Sandbox::User=root
    -o APT::Architecture=amd64
)
# one missing suite (say -updates) must not stop the others being read
apt-get "${apt_opts[@]}" -qq update >&2 ||
    echo "fetch-kernel: apt-get update had errors; using the lists it got" >&2
# newest ABI first; a version the lists name may be gone from the mirror
# (a 404): then the next one
mapfile -t candidates < <(apt-cache "${apt_opts[@]}" pkgnames linux-image- |
    grep -E "^linux-image-${series//./\\.}\.[0-9]+[-+][0-9a-z.+-]*-cloud-amd64-unsigned\$" | sort -V -r)
[ ${#candidates[@]} -gt 0 ] || { echo "fetch-kernel: no cloud kernel listed for $suite" >&2; exit 1; }
debdir=$apt_dir/debs
mkdir -p "$debdir"
for pkg in "${candidates[@]}"; do
    rm -f "$debdir"/*.deb
    if (cd "$debdir" && apt-get "${apt_opts[@]}" -qq download "$pkg" >&2); then
        deb=$(ls "$debdir"/*.deb)
        rm -rf "$dir/root"
        dpkg -x "$deb" "$dir/root"
        # only the kernel image is needed: the guest mounts no disk and
        # loads no module (everything it uses is built in)
        cp "$dir"/root/boot/vmlinuz-* "$dir/vmlinuz.new"
        mv "$dir/vmlinuz.new" "$dir/vmlinuz"
        basename "$deb" >"$dir/package"
        rm -rf "$dir/root" "$deb"
        echo "fetch-kernel: $suite: $(cat "$dir/package")" >&2
        echo "$dir/vmlinuz"
        exit 0
    fi
    echo "fetch-kernel: $pkg could not be downloaded; trying the next one" >&2
done
echo "fetch-kernel: no cloud kernel of $suite could be downloaded" >&2
exit 1
