#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The CI smoke run of one fuzz target: every input of its committed corpus and of its
# regressions (inputs that once crashed it, kept apart from the regenerated seeds), then
# <seconds> of fresh inputs. Fails on any crash, leak, sanitizer report, timeout or
# allocation over the limit (libFuzzer's exit status).
#   smoke.sh <fuzz binary> <scratch dir> <corpus dir> <regressions dir> <seconds> <max bytes>
set -euo pipefail
bin=$1 scratch=$2 corpus=$3 regressions=$4 seconds=$5 max_len=$6
rm -rf "$scratch"
mkdir -p "$scratch"
[ -d "$corpus" ] && [ -n "$(ls -A "$corpus")" ] || {
    echo "smoke: no seed corpus in $corpus (cmake --build <fuzz tree> --target ff_fuzz_seeds)" >&2
    exit 1
}
# shellcheck disable=SC2207
extra=($(awk -v t="$(basename "$corpus")" '$1 == t { $1 = ""; print }' "$(dirname "$0")/options"))
cd "$scratch"
dirs=("$scratch" "$corpus")
[ -d "$regressions" ] && dirs+=("$regressions")
exec "$bin" "${dirs[@]}" -max_total_time="$seconds" -max_len="$max_len" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 -print_final_stats=1 "${extra[@]}"
