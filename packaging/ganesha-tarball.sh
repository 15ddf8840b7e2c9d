#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# Prints the path of Debian's nfs-ganesha 4.3 tarball, fetched into the download cache
# with `apt-get source --tar-only` when it is not there yet, after checking its sha256
# against the one the CMake superbuild uses (cmake/GaneshaSource.cmake): the packages and
# the superbuild are built from the very same file.
#
#   packaging/ganesha-tarball.sh        (FF_DOWNLOAD_CACHE: default <repo>/.cache)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${FF_DOWNLOAD_CACHE:-$repo/.cache}"
tarball="$cache/nfs-ganesha_4.3.orig.tar.gz"
sha256="$(sed -n 's/^set(GANESHA_TARBALL_SHA256 "\([0-9a-f]*\)")/\1/p' "$repo/cmake/GaneshaSource.cmake")"
if [ -z "$sha256" ]; then
    echo "ganesha-tarball: no GANESHA_TARBALL_SHA256 in cmake/GaneshaSource.cmake" >&2
    exit 1
fi
if [ ! -f "$tarball" ]; then
    mkdir -p "$cache"
    (cd "$cache" && apt-get source --tar-only -qq "nfs-ganesha=4.3-2") >&2
fi
echo "$sha256  $tarball" | sha256sum -c --quiet - >&2
echo "$tarball"
