#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Builds the RPMs from packaging/rpm/nfs-ganesha.spec: Source0 is Debian's Ganesha 4.3
# tarball (the same file, same checksum, as the superbuild's), Source1 this project's tree
# (its protocols/patches/series is applied in %prep).
#
#   packaging/build-rpms.sh OUTDIR
#
# On Debian, rpmbuild (package `rpm`) does not know the build dependencies, which are
# Debian packages here: --nodeps. Leaves the .rpm files and build.log in OUTDIR.
# Environment: FF_RPM_JOBS (default 2), FF_DOWNLOAD_CACHE (default <repo>/.cache).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1"
outdir="$(cd "$1" && pwd)"

command -v rpmbuild >/dev/null || {
    echo "build-rpms: rpmbuild missing (apt-get install rpm)" >&2
    exit 1
}
tarball="$("$repo/packaging/ganesha-tarball.sh")"

top="$(mktemp -d /tmp/ffwcc-rpms.XXXXXX)"
trap 'rm -rf "$top"' EXIT
mkdir -p "$top"/{SOURCES,SPECS,BUILD,BUILDROOT,RPMS,SRPMS}
cp "$tarball" "$top/SOURCES/"
tar -C "$repo" -czf "$top/SOURCES/ffwcc.tar.gz" \
    --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./.cache \
    --exclude=./packaging --transform 's,^\.,ffwcc,' .
cp "$repo/packaging/rpm/nfs-ganesha.spec" "$top/SPECS/"

start=$(date +%s)
echo "build-rpms: rpmbuild in $top (log: $outdir/build.log)"
if ! nice -n 10 rpmbuild -bb --nodeps \
        --define "_topdir $top" \
        --define "_smp_mflags -j${FF_RPM_JOBS:-2}" \
        "$top/SPECS/nfs-ganesha.spec" >"$outdir/build.log" 2>&1; then
    tail -40 "$outdir/build.log" >&2
    echo "build-rpms: rpmbuild failed (log: $outdir/build.log)" >&2
    exit 1
fi
echo "build-rpms: built in $(( $(date +%s) - start )) s"
find "$top/RPMS" -name '*.rpm' -exec cp {} "$outdir/" \;
ls "$outdir"/*.rpm
