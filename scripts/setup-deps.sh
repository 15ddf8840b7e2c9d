#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Installs what building and testing this project needs on Debian 12 (run as root).
# Idempotent and quiet when everything is already there; both README commands call it.
set -euo pipefail

# Ganesha's source comes from Debian's source package: enable the source index if absent.
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "setup-deps: enabling Debian source indexes (deb-src)"
    cat > /etc/apt/sources.list.d/debian-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    need_update=1
fi

packages=(
    # toolchain
    build-essential cmake pkgconf bison flex rsync patch git
    # Ganesha 4.3's own build dependencies, for the configuration cmake/GaneshaBuild.cmake
    # builds (system libntirpc, dbus, Kerberos, ID mapping, winbind, VFS, 9P); the same
    # libraries as Build-Depends in packaging/debian/control
    libdbus-1-dev libnfsidmap-dev libwbclient-dev libntirpc-dev libkrb5-dev libblkid-dev
    libattr1-dev libacl1-dev liburcu-dev uuid-dev libcap-dev
    # our code, tests and tools
    libcmocka-dev libnfs-dev libnfs-utils libgtest-dev libbenchmark-dev libsqlite3-dev
    rpcbind dbus python3 python3-dbus procps
    # the packages and the package test: dpkg-buildpackage, lintian, rpmbuild
    debhelper dpkg-dev fakeroot lintian rpm
    # the kernel-client tests: Linux guests under QEMU with a busybox initramfs
    qemu-system-x86 busybox-static cpio kmod
    # the fuzz targets (libFuzzer) and the sanitized unit tests of the fuzz tree
    clang libclang-rt-14-dev
    # the style check of our C++ (tests/unit/style)
    clang-format
    # the ceph tests: a single-node Ceph (monitor, memstore OSD, manager, MDS), and the
    # CephFS and RADOS client libraries Ganesha's FSAL_CEPH and rados_cluster build against
    ceph-mon ceph-osd ceph-mgr ceph-mds libcephfs-dev librados-dev
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ "${need_update:-0}" = 1 ] || [ ${#missing[@]} -gt 0 ] ||
   ! ls /var/lib/apt/lists/*_source_Sources* >/dev/null 2>&1; then
    echo "setup-deps: apt-get update"
    apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup-deps: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Ganesha's VFS resolves each export's file system through /etc/mtab: a booted Debian has
# it, a bare chroot or a minimal image may not (the data servers then fail with
# "resolve_posix_filesystem ... No such file or directory"). Debian's own link.
if [ ! -e /etc/mtab ] && [ ! -L /etc/mtab ]; then
    echo "setup-deps: linking /etc/mtab to ../proc/self/mounts"
    ln -s ../proc/self/mounts /etc/mtab
fi

# The kernel the kernel-client tests boot (Debian's linux-image-amd64, unpacked, not
# installed), cached beside the Ganesha tarball.
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/testing/kernel_client/fetch-kernel.sh" "$root/.cache/kernel"
