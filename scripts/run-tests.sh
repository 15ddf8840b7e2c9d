#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The whole test suite from a fresh clone, as root on Debian 12:
# install dependencies, fetch + verify + patch + build Ganesha 4.3 and our code,
# run every ctest test (unit and integration), then check nothing was left running.
# Extra arguments go to ctest (e.g. -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

status=0
ctest --test-dir build --output-on-failure --timeout 600 "$@" || status=$?

# Every server a test starts runs from this build tree: none may survive the suite.
left=$(pgrep -f "$(pwd)/build/ganesha/build/ganesha.nfsd" || true)
if [ -n "$left" ]; then
    echo "run-tests: ganesha.nfsd left running by the tests: $left" >&2
    pkill -9 -f "$(pwd)/build/ganesha/build/ganesha.nfsd" || true
    status=1
fi
# Nor may a kernel-client guest (each boots with ff.host=ffk-... on its command line).
left=$(pgrep -f "qemu-system-x86_64 .*ff.host=ffk-" || true)
if [ -n "$left" ]; then
    echo "run-tests: QEMU guests left running by the tests: $left" >&2
    pkill -9 -f "qemu-system-x86_64 .*ff.host=ffk-" || true
    status=1
fi
exit $status
