#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The demo, from a fresh clone, as root on Debian 12: install dependencies, build
# Ganesha 4.3 with our patches and the FLEXFILES FSAL, then run a loopback cluster
# (1 metadata server + 3 NFSv3 data servers), show what it does, and stop everything.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target ff-demo ff_rpcbind_fixture

# NFSv3 servers register with rpcbind: start one for the demo if none runs, and stop
# only that one afterwards.
marker=build/demo-work/rpcbind.marker
mkdir -p build/demo-work
build/tests/integration/harness/ff_rpcbind_fixture start "$PWD/$marker" >/dev/null
trap 'build/tests/integration/harness/ff_rpcbind_fixture stop "$PWD/$marker" >/dev/null' EXIT

build/demo/ff-demo
