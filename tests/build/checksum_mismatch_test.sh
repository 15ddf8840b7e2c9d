#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# A corrupted cached Ganesha tarball must stop the build with both checksums.
# Usage: checksum_mismatch_test.sh SOURCE_DIR GOOD_TARBALL WORK_DIR
set -u
src=$1 good=$2 work=$3
rm -rf "$work" && mkdir -p "$work/cache"
cp "$good" "$work/cache/"
tarball="$work/cache/$(basename "$good")"
printf 'x' | dd of="$tarball" bs=1 seek=1000 conv=notrunc status=none
actual=$(sha256sum "$tarball" | cut -d' ' -f1)

out=$(cmake -S "$src" -B "$work/build" -DFF_DOWNLOAD_CACHE="$work/cache" 2>&1)
rc=$?
fail=0
[ $rc -ne 0 ] || { echo "FAIL: configure succeeded on a corrupted tarball"; fail=1; }
grep -q "expected sha256 d4efd020edf4dfe65abfd0f0f66eb4390613360f99dce4354467ab297e0e1c0f" <<<"$out" ||
    { echo "FAIL: expected checksum not printed"; fail=1; }
grep -q "actual   sha256 $actual" <<<"$out" || { echo "FAIL: actual checksum not printed"; fail=1; }
[ -d "$work/build/ganesha/nfs-ganesha-4.3" ] && { echo "FAIL: a corrupted tarball was extracted"; fail=1; }
rm -rf "$work"
[ $fail -eq 0 ] && echo "checksum mismatch stops the build: 1 passed, 0 failed"
exit $fail
