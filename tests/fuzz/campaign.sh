#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The long fuzzing run of the acceptance: every target until it has executed <runs>
# inputs (default 10 million) or run <seconds> (default 3600), whichever comes first,
# <jobs> targets at a time (default 2: this machine's cores), each from its committed
# corpus and regressions plus a scratch corpus it grows. Prints one line per target:
# executions, edges covered (libFuzzer's cov), features, corpus size, result.
#   campaign.sh <fuzz tree> [runs] [seconds] [jobs] [target...]
set -euo pipefail
tree=$(realpath "$1")
runs=${2:-10000000}
seconds=${3:-3600}
jobs=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
here=$(cd "$(dirname "$0")" && pwd)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=()
    for d in "$here"/corpus/*/; do targets+=("$(basename "$d")"); done
fi
out="$tree/tests/fuzz/campaign"
mkdir -p "$out"
[ -f "$tree/sanitizer-env.sh" ] && source "$tree/sanitizer-env.sh"

run_one() {
    local t=$1 work="$out/$1"
    rm -rf "$work"
    mkdir -p "$work/corpus"
    local dirs=("$work/corpus" "$here/corpus/$t")
    [ -d "$here/regressions/$t" ] && dirs+=("$here/regressions/$t")
    local extra
    # shellcheck disable=SC2207
    extra=($(awk -v t="$t" '$1 == t { $1 = ""; print }' "$here/options"))
    local rc=0
    (cd "$work" && "$tree/tests/fuzz/fuzz_$t" "${dirs[@]}" -runs="$runs" \
        -max_total_time="$seconds" -max_len=70000 -timeout=10 -rss_limit_mb=2048 \
        -malloc_limit_mb=64 -print_final_stats=1 "${extra[@]}" >"$work/log" 2>&1) || rc=$?
    local execs cov ft corp
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log" | awk '{print $2}')
    cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | awk '{print $2}')
    ft=$(grep -o 'ft: [0-9]*' "$work/log" | tail -1 | awk '{print $2}')
    corp=$(grep -o 'corp: [0-9]*/[0-9a-zA-Z]*' "$work/log" | tail -1 | awk '{print $2}')
    local secs
    secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$work/log" | awk '{print $5}')
    printf '%-22s execs=%s seconds=%s cov=%s ft=%s corpus=%s result=%s\n' "$t" "${execs:-?}" \
        "${secs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$([ $rc -eq 0 ] && echo ok || echo "FAILED rc=$rc ($work/log)")"
}

export -f run_one
export tree runs seconds out here
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
