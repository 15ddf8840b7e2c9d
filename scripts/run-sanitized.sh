#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The unit and integration suites under AddressSanitizer + UndefinedBehaviorSanitizer, as
# root on Debian 12: Ganesha's core, the FLEXFILES module, the tools and the tests all
# built with -DFF_SANITIZE=address,undefined in build-san/ (cmake/FFSanitize.cmake), every
# report fatal. Each process writes its reports to build-san/sanitizer-reports/; the run
# fails if any test fails or any report was written (a server's leak report at exit
# included), and prints them. Extra arguments go to ctest (e.g. -R LayoutWcc).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-deps.sh
cmake -S . -B build-san -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFF_SANITIZE=address,undefined >/dev/null
cmake --build build-san -j"$(nproc)"

# shellcheck source=/dev/null
source build-san/sanitizer-env.sh
reports="$PWD/build-san/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan"
export UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan"

status=0
ctest --test-dir build-san --output-on-failure --timeout 900 -L 'unit|integration' "$@" || status=$?

left=$(pgrep -f "$PWD/build-san/ganesha/build/ganesha.nfsd" || true)
if [ -n "$left" ]; then
    echo "run-sanitized: ganesha.nfsd left running by the tests: $left" >&2
    pkill -9 -f "$PWD/build-san/ganesha/build/ganesha.nfsd" || true
    status=1
fi
if [ -n "$(ls -A "$reports")" ]; then
    echo "run-sanitized: sanitizer reports:" >&2
    for f in "$reports"/*; do
        echo "==== $f" >&2
        cat "$f" >&2
    done
    status=1
else
    echo "run-sanitized: no sanitizer report"
fi
exit $status
