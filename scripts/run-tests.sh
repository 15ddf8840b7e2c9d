#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The whole test suite from a fresh clone, as root on Debian 12:
# install dependencies, fetch + verify + patch + build Ganesha 4.3 and our code,
# run every ctest test (unit, integration, kernel, package), then the unit tests under
# ASan + UBSan and a smoke run of every fuzz target (the fuzz tree, build-fuzz/), then
# check nothing was left running. Extra arguments go to a single ctest (e.g. -L unit),
# and skip the fuzz tree.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"

status=0
# A skipped test is not a passed one: ctest counts it as passed, so look for it.
run_ctest() {
    local log
    log=$(mktemp)
    ctest "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    if grep -q '\*\*\*Skipped' "$log"; then
        echo "run-tests: tests were skipped; a skipped test does not pass" >&2
        rc=1
    fi
    rm -f "$log"
    return "$rc"
}
ctest_args=(--test-dir build --output-on-failure --timeout 600)
if [ $# -gt 0 ]; then
    run_ctest "${ctest_args[@]}" "$@" || status=$?
else
    # The whole suite in three parts, so that the packages build (about 10 minutes of
    # compiling on 2 cores) while the kernel client sits through the data-server freezes
    # (KernelDsFreeze: about 8 minutes, nearly all of it waiting), instead of after them.
    run_ctest "${ctest_args[@]}" -LE package -E '^KernelDsFreeze[.]' || status=$?

    packages="$PWD/build/packages"
    rm -rf "$packages"
    mkdir -p "$packages"
    echo "run-tests: building the .debs and the RPMs beside the data-server freezes" \
        "(log: $packages/build.log)"
    (packaging/build-debs.sh "$packages/debs" && packaging/build-rpms.sh "$packages/rpms") \
        >"$packages/build.log" 2>&1 &
    build_pid=$!
    run_ctest "${ctest_args[@]}" -R '^KernelDsFreeze[.]' || status=$?
    if wait "$build_pid"; then
        # The package tests install and inspect what was built (FF_PACKAGE_DEBS,
        # FF_PACKAGE_RPMS); a failed build fails the suite with its log.
        FF_PACKAGE_DEBS="$packages/debs" FF_PACKAGE_RPMS="$packages/rpms" \
            run_ctest "${ctest_args[@]}" -L package || status=$?
    else
        echo "run-tests: building the packages failed:" >&2
        tail -n 40 "$packages/build.log" >&2
        status=1
    fi
fi

# The fuzz tree (cmake/FFFuzz.cmake): our libraries, the tools, the unit tests and the
# fuzz targets built by clang with AddressSanitizer + UndefinedBehaviorSanitizer and
# libFuzzer's coverage, against the Ganesha just built. Its ctest runs the unit tests
# under the sanitizers and a smoke run of every fuzz target (label fuzz: the committed
# corpus and regressions, then a few seconds of fresh inputs). The integration tests
# under the sanitizers, Ganesha's core included, are scripts/run-sanitized.sh.
if [ $# -eq 0 ]; then
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DFF_FUZZ=ON -DFF_GANESHA_TREE="$PWD/build/ganesha" >/dev/null
    cmake --build build-fuzz -j"$(nproc)"
    run_ctest --test-dir build-fuzz --output-on-failure --timeout 600 -L 'unit|fuzz' || status=$?
fi

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
