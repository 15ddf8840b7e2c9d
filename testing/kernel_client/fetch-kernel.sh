#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Fetches the kernel the kernel-client tests boot: the Debian 12 image that
# linux-image-amd64 depends on (apt-get download, unpacked with dpkg-deb -x, never
# installed), into CACHE/<version>/ (vmlinuz, modules), and points CACHE/current at it.
# Idempotent: a version already unpacked is kept. Called by scripts/setup-deps.sh.
#
#   fetch-kernel.sh CACHE_DIR
set -euo pipefail
cache=${1:?usage: fetch-kernel.sh CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

package=$(apt-cache depends linux-image-amd64 2>/dev/null |
          awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
if [ -z "$package" ]; then
    echo "fetch-kernel: apt-cache names no kernel image for linux-image-amd64 (apt-get update?)" >&2
    exit 1
fi
version=${package#linux-image-}
dir="$cache/$version"

if [ ! -f "$dir/complete" ]; then
    echo "fetch-kernel: $package (downloaded and unpacked into $dir, not installed)"
    rm -rf "$dir" "$cache/download"
    mkdir -p "$cache/download"
    # _apt cannot write into a root-owned folder: download as root, quietly.
    (cd "$cache/download" && apt-get download -qq "$package" 2>/dev/null) || {
        echo "fetch-kernel: apt-get download $package failed" >&2
        exit 1
    }
    mkdir -p "$dir/root"
    dpkg-deb -x "$cache"/download/*.deb "$dir/root"
    rm -rf "$cache/download"
    ln -s "root/boot/vmlinuz-$version" "$dir/vmlinuz"
    ln -s "root/lib/modules/$version" "$dir/modules"
    [ -f "$dir/vmlinuz" ] && [ -f "$dir/modules/kernel/fs/nfs/nfsv4.ko" ] || {
        echo "fetch-kernel: $package has no vmlinuz or nfsv4.ko" >&2
        exit 1
    }
    touch "$dir/complete"
fi
ln -sfn "$version" "$cache/current"
# The build's initramfs depends on this file: rewritten only when the version changes.
if [ "$(cat "$cache/current.version" 2>/dev/null)" != "$version" ]; then
    echo "$version" > "$cache/current.version"
fi
