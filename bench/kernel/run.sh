#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The small-file benchmark with the Linux kernel client (not a test): builds
# ff-bench-smallfiles, runs it, and writes bench/results/<date>-<commit>-smallfiles.md with
# its plot (.png). About a minute on an idle 2-core machine.
#
#   bench/kernel/run.sh
#   FF_BENCH_FILES=400 FF_BENCH_ROUNDS=5 bench/kernel/run.sh
#   FF_BENCH_BEFORE=/path/to/other/build bench/kernel/run.sh   # also run that build's
#       ganesha.nfsd and FSAL modules with the same guest and script, as a "before" column
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${FF_BENCH_BUILD_DIR:-$repo/build}"
files="${FF_BENCH_FILES:-200}"
rounds="${FF_BENCH_ROUNDS:-3}"
results="$repo/bench/results"
say() { echo "bench: $*" >&2; }

command -v gnuplot >/dev/null || {
    say "installing gnuplot-nox"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends gnuplot-nox >/dev/null
}
if [ ! -f "$build/CMakeCache.txt" ]; then
    "$repo/scripts/setup-deps.sh"
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j2 --target ff-bench-smallfiles ff_rpcbind_fixture ff_kernel_initramfs >&2

work="$(mktemp -d)"
marker="$work/rpcbind.marker"
fixture="$build/testing/harness/ff_rpcbind_fixture"
cleanup() { "$fixture" stop "$marker" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"$fixture" start "$marker" >/dev/null

commit="$(git -C "$repo" rev-parse --short HEAD)"
stamp="$(date -u +%Y-%m-%d)-$commit"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$work/now" "$work/before"
say "this build: $files files x $rounds rounds per export"
"$build/bench/kernel/ff-bench-smallfiles" --files "$files" --rounds "$rounds" --out "$work/now" >/dev/null
if [ -n "${FF_BENCH_BEFORE:-}" ]; then
    before_commit="$(git -C "$FF_BENCH_BEFORE/.." rev-parse --short HEAD 2>/dev/null || echo "?")"
    say "before: $FF_BENCH_BEFORE ($before_commit)"
    FF_GANESHA_NFSD="$FF_BENCH_BEFORE/ganesha/build/ganesha.nfsd" \
    FF_PLUGINS_DIR="$FF_BENCH_BEFORE/plugins" \
        "$build/bench/kernel/ff-bench-smallfiles" --files "$files" --rounds "$rounds" \
        --out "$work/before" >/dev/null
fi
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p "$results"
md="$results/$stamp-smallfiles.md"
png="$stamp-smallfiles.png"
plot_before=""
if [ -f "$work/before/smallfiles.dat" ]; then
    plot_before=", '$work/before/smallfiles.dat' using 2:xtic(1) title 'FLEXFILES before ($before_commit)'"
fi
gnuplot <<GP
set terminal pngcairo size 900,420 font "DejaVu Sans,10"
set output "$results/$png"
set title "Small files through Linux 6.1 (QEMU guest), NFSv4.2, $files files x $rounds rounds, $commit"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "operations per second (median)"
set yrange [0:*]
set grid ytics
set key top left
plot '$work/now/smallfiles.dat' using 3:xtic(1) title 'plain VFS export', \
     '' using 2:xtic(1) title 'FLEXFILES ($commit)'$plot_before
GP

{
    echo "# Small files through the Linux kernel client, $stamp"
    echo
    echo "Command: \`bench/kernel/run.sh\` ($files files x $rounds rounds per export). One QEMU guest"
    echo "(Debian 12's Linux $(ls "$repo/.cache/kernel/current/root/lib/modules" 2>/dev/null), TCG, 1 vCPU) mounts two exports of one"
    echo "MDS with vers=4.2: FLEXFILES over VFS (Mirrors = 2, 3 NFSv3 data servers) and a plain"
    echo "VFS export; servers and guest share the machine's $(nproc) cores (load before"
    echo "$load_before, after $load_after). Phases are timed in the guest; the rounds alternate"
    echo "which export goes first. The ratios are the point, not the absolute rates."
    echo
    echo "![small files]($png)"
    echo
    cat "$work/now/smallfiles.md"
    if [ -f "$work/before/smallfiles.md" ]; then
        echo
        echo "## Before: $before_commit, the same guest and script"
        echo
        cat "$work/before/smallfiles.md"
    fi
} > "$md"
cp "$md" "$results/latest-smallfiles.md"
say "wrote $md and $results/$png"
