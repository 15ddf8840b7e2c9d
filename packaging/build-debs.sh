#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Builds the Debian packages: Debian's Ganesha 4.3 tarball + protocols/patches/series (as
# debian/patches) + this project's tree (as the orig-ffwcc component, unpacked in ffwcc/)
# + packaging/debian, with dpkg-buildpackage -b; then lintian, which must report no error.
#
#   packaging/build-debs.sh OUTDIR
#
# Leaves in OUTDIR the .deb files, the .changes and .buildinfo, build.log and lintian.txt.
# Environment: FF_DEB_JOBS (default 2) parallel jobs; FF_DEB_DBGSYM=1 also builds the
# -dbgsym packages (off by default: they double the packaging time); FF_STAGE_DIR a directory to stage in
# (kept afterwards; default a temporary one, removed); FF_DOWNLOAD_CACHE where the tarball is
# (default <repo>/.cache, as in the CMake superbuild).
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 OUTDIR" >&2
    exit 2
fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$1"
outdir="$(cd "$1" && pwd)"
jobs="${FF_DEB_JOBS:-2}"
tarball_name="nfs-ganesha_4.3.orig.tar.gz"
version="$(dpkg-parsechangelog -l "$repo/packaging/debian/changelog" -S Version)"

# Tools the build needs; installed only when running as root.
tools=(dpkg-dev debhelper fakeroot lintian)
missing=()
for p in "${tools[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "build-debs: missing ${missing[*]} (apt-get install them as root)" >&2
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

tarball="$("$repo/packaging/ganesha-tarball.sh")"

if [ -n "${FF_STAGE_DIR:-}" ]; then
    stage="$FF_STAGE_DIR"
    rm -rf "$stage"
    mkdir -p "$stage"
else
    stage="$(mktemp -d /tmp/ffwcc-debs.XXXXXX)"
    trap 'rm -rf "$stage"' EXIT
fi
src="$stage/nfs-ganesha-4.3"

cp "$tarball" "$stage/$tarball_name"
# The project's tree as it is now (the working tree, not only what is committed), without
# build trees, caches or the packaging itself.
tar -C "$repo" -czf "$stage/nfs-ganesha_4.3.orig-ffwcc.tar.gz" \
    --exclude=./.git --exclude=./build --exclude='./build-*' --exclude=./.cache \
    --exclude=./packaging --transform 's,^\.,ffwcc,' .
tar -C "$stage" -xzf "$stage/$tarball_name"
tar -C "$src" -xzf "$stage/nfs-ganesha_4.3.orig-ffwcc.tar.gz"
cp -r "$repo/packaging/debian" "$src/debian"
# The patch series, as quilt patches (dpkg-source applies them with fuzz 0).
mkdir -p "$src/debian/patches"
grep -v '^[[:space:]]*\(#\|$\)' "$repo/protocols/patches/series" > "$src/debian/patches/series"
while read -r patch; do
    cp "$repo/protocols/patches/$patch" "$src/debian/patches/"
done < "$src/debian/patches/series"

cd "$src"
if ! dpkg-checkbuilddeps >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
        dpkg-checkbuilddeps
        exit 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq ./ >/dev/null
fi

start=$(date +%s)
echo "build-debs: dpkg-buildpackage in $src (log: $outdir/build.log)"
if [ "${FF_DEB_DBGSYM:-0}" != 1 ]; then
    export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }noddebs"
fi
if ! nice -n 10 dpkg-buildpackage -b -us -uc -j"$jobs" >"$outdir/build.log" 2>&1; then
    tail -40 "$outdir/build.log" >&2
    echo "build-debs: dpkg-buildpackage failed (log: $outdir/build.log)" >&2
    exit 1
fi
echo "build-debs: built in $(( $(date +%s) - start )) s"

changes="$stage/nfs-ganesha_${version}_amd64.changes"
for f in $(sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]\{32\} [0-9]* [^ ]* [^ ]* //p' "$changes") ; do
    cp "$stage/$f" "$outdir/"
done
cp "$changes" "$outdir/"

# lintian exits non-zero on errors; warnings are listed in lintian.txt.
lintian_rc=0
lintian --allow-root --no-tag-display-limit "$changes" >"$outdir/lintian.txt" 2>&1 || lintian_rc=$?
echo "build-debs: lintian: $(grep -c '^E: ' "$outdir/lintian.txt" || true) errors," \
     "$(grep -c '^W: ' "$outdir/lintian.txt" || true) warnings (see $outdir/lintian.txt)"
if grep -q '^E: ' "$outdir/lintian.txt" || [ "$lintian_rc" -ge 2 ]; then
    grep '^E: ' "$outdir/lintian.txt" >&2 || cat "$outdir/lintian.txt" >&2
    exit 1
fi
ls "$outdir"/*.deb
