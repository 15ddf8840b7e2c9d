#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The demo, from a fresh clone, as root on Debian 12: install dependencies, build
# Ganesha 4.3 with our patches and the FLEXFILES FSAL, then run a loopback cluster
# (1 metadata server + 3 NFSv3 data servers), write the same files with and without
# LAYOUT_WCC (RFC 9766), print what each cost, and stop everything.
#
# FF_BUILD_DIR chooses the build tree (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FF_BUILD_DIR:-build}

bash scripts/setup-deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target ff-demo ff_rpcbind_fixture

# NFSv3 servers register with rpcbind: start one for the demo if none runs, and stop
# only that one afterwards.
work=$(cd "$build" && pwd)/demo-work
mkdir -p "$work"
fixture="$build/testing/harness/ff_rpcbind_fixture"
"$fixture" start "$work/rpcbind.marker" >/dev/null
trap '"$fixture" stop "$work/rpcbind.marker" >/dev/null' EXIT

"$build/demo/ff-demo"
