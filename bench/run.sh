#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-3.0-or-later
#
# The benchmarks in one command (not tests): builds what they need, runs
#   a + b  bench/e2e   ff-bench-getattr: GETATTR end to end against real servers
#   c      bench/cache bench_wcc_cache: the WCC attribute cache (Google Benchmark)
#   d      bench/e2e   ff-bench-proxy-io: READ/WRITE through the MDS against plain VFS
# and writes bench/results/<date>-<commit>.md, its plot <date>-<commit>.png, and
# bench/results/latest.md (a copy of the run's Markdown, pointing at the same plot).
#
#   bench/run.sh                      # build dir: build/ (FF_BENCH_BUILD_DIR to change)
#   FF_BENCH_SECONDS=3 bench/run.sh   # seconds per end-to-end round (default 2)
#   FF_BENCH_ROUNDS=3 bench/run.sh    # rounds per end-to-end cell (default 7)
#   FF_BENCH_AUTOGROUP_NICE=-10 bench/run.sh  # on a busy shared machine (see below)
#
# Extra cmake configure arguments for a fresh build dir: FF_BENCH_CMAKE_ARGS, e.g.
#   FF_BENCH_CMAKE_ARGS="-DFF_GANESHA_TREE=/path/to/build/ganesha".
set -euo pipefail

# On a shared machine, FF_BENCH_AUTOGROUP_NICE=-10 runs everything in a session of its own
# (its own scheduler autogroup, servers included) at that nice value, so other sessions'
# work takes less of the CPU being measured. Negative values need root.
if [ -n "${FF_BENCH_AUTOGROUP_NICE:-}" ] && [ -z "${FF_BENCH_OWN_SESSION:-}" ]; then
    FF_BENCH_OWN_SESSION=1 exec setsid --wait "$0" "$@"
fi
autogroup="default"
if [ -n "${FF_BENCH_OWN_SESSION:-}" ]; then
    if echo "$FF_BENCH_AUTOGROUP_NICE" >/proc/self/autogroup 2>/dev/null; then
        autogroup="own session, nice $FF_BENCH_AUTOGROUP_NICE"
    else
        echo "bench: could not set the autogroup's nice value" >&2
    fi
fi

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FF_BENCH_BUILD_DIR:-$repo/build}"
seconds="${FF_BENCH_SECONDS:-2}"
rounds="${FF_BENCH_ROUNDS:-7}"
jobs="${FF_BENCH_JOBS:-2}"
results="$repo/bench/results"

say() { echo "bench: $*" >&2; }

# Plotting and JSON tools, and perf for the profile of LAYOUT_WCC in the MDS
# (benchmark-only, so not in scripts/setup-deps.sh).
need=()
command -v gnuplot >/dev/null || need+=(gnuplot-nox)
command -v jq >/dev/null || need+=(jq)
[ -x /usr/bin/perf ] || need+=(linux-perf)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        say "installing ${need[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${need[@]}" >/dev/null
    else
        say "missing ${need[*]}: apt-get install ${need[*]} (as root)"
        exit 1
    fi
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
    "$repo/scripts/setup-deps.sh"
    say "configuring $build"
    # shellcheck disable=SC2086  # FF_BENCH_CMAKE_ARGS is a list of arguments
    cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${FF_BENCH_CMAKE_ARGS:-}
fi
say "building (-j$jobs)"
cmake --build "$build" -j"$jobs" --target ff-bench-getattr ff-bench-proxy-io bench_wcc_cache \
    ff_rpcbind_fixture

e2e_bin="$build/bench/e2e/ff-bench-getattr"
proxy_bin="$build/bench/e2e/ff-bench-proxy-io"
cache_bin="$build/bench/cache/bench_wcc_cache"
rpcbind_fixture="$build/testing/harness/ff_rpcbind_fixture"
for b in "$e2e_bin" "$proxy_bin" "$cache_bin" "$rpcbind_fixture"; do
    [ -x "$b" ] || { say "not built: $b"; exit 1; }
done

work="$(mktemp -d)"
marker="$work/rpcbind.marker"
cleanup() {
    "$rpcbind_fixture" stop "$marker" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
# NFSv3 data servers need a portmapper; started only if none answers, stopped after.
"$rpcbind_fixture" start "$marker" >/dev/null

commit="$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
dirty=""
if ! git -C "$repo" diff --quiet HEAD -- 2>/dev/null; then
    dirty=" (with uncommitted changes)"
fi
date_utc="$(date -u +%Y-%m-%d)"
stamp="$date_utc-$commit"
cpu="$(sed -n '/^model name/{s/^model name[[:space:]]*: //p;q}' /proc/cpuinfo)"
cores="$(nproc)"
kernel="$(uname -sr)"
mem="$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

say "a + b: end to end ($rounds rounds of $seconds s per cell)"
t0=$(date +%s)
"$e2e_bin" --seconds "$seconds" --rounds "$rounds" --out "$work"
t1=$(date +%s)

say "c: cache micro-benchmarks"
cache_targets='^BM_(AnchorMergedLatency/1000000/real_time|DependentLoad/bytes:268435456/thp:0|Update/1000000/real_time/threads:1|UpdateThroughAnchor/1000000/real_time/threads:1)$'
# One repetition at a short minimum time keeps the whole run to a few minutes;
# bench/cache/README.md has the longer command for medians of 5 (#16's targets get them
# below).
"$cache_bin" --benchmark_min_time=0.2 --benchmark_format=console \
    --benchmark_out="$work/cache.json" --benchmark_out_format=json >&2
# #16's cache targets again: the anchored lookup beside the dependent DRAM load it is
# judged against, and the updates, 5 repetitions each in random order (so a drift of the
# machine during the run reaches all of them alike), medians.
"$cache_bin" --benchmark_filter="$cache_targets" --benchmark_min_time=0.2 \
    --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=true --benchmark_format=console \
    --benchmark_out="$work/cache-targets.json" --benchmark_out_format=json >&2
t2=$(date +%s)

say "d: I/O through the MDS"
"$proxy_bin" --rounds "$rounds" --out "$work"
t3=$(date +%s)
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p "$results"
md="$results/$stamp.md"
png="$stamp.png"

# ops/s vs sessions (a, b) and latency (a).
gnuplot <<GP
set terminal pngcairo size 1400,460 font "DejaVu Sans,10"
set output "$results/$png"
set multiplot layout 1,3 title "ganesha-flexfiles $commit, $date_utc: GETATTR end to end ($cpu, $cores cores)"
set key bottom right
set grid
set logscale x 2
set xlabel "client sessions"
set xtics ("1" 1, "8" 8, "32" 32)
set ylabel "GETATTR/s"
set yrange [0:*]
set title "a. GETATTR throughput"
plot "$work/e2e.dat" using 1:2 with linespoints lw 2 title "LAYOUT\\\_WCC fresh", \
     "" using 1:3 with linespoints lw 2 title "Trust\\\_WCC = false", \
     "" using 1:4 with linespoints lw 2 title "floor (no layout)", \
     "" using 1:5 with linespoints lw 1 dt 2 title "plain VFS export"
set title "a. GETATTR latency (p50 solid, p99 dashed)"
set ylabel "microseconds"
set logscale y 10
set yrange [*:*]
plot "$work/e2e.dat" using 1:6 with linespoints lw 2 lc 1 title "WCC p50", \
     "" using 1:10 with linespoints lw 1 dt 2 lc 1 title "WCC p99", \
     "" using 1:7 with linespoints lw 2 lc 2 title "no WCC p50", \
     "" using 1:11 with linespoints lw 1 dt 2 lc 2 title "no WCC p99", \
     "" using 1:8 with linespoints lw 2 lc 3 title "floor p50", \
     "" using 1:12 with linespoints lw 1 dt 2 lc 3 title "floor p99"
unset logscale y
set yrange [0:*]
set title "b. compounds per second"
set ylabel "compounds/s"
plot "$work/e2e-b.dat" using 1:2 with linespoints lw 2 title "PUTFH+GETATTR", \
     "" using 1:3 with linespoints lw 2 title "PUTFH+LAYOUT\\\_WCC+GETATTR"
unset multiplot
GP

cache_table() {
    jq -r '
      def num(x): if x == null then "" else (x * 100 | round / 100 | tostring) end;
      def rate(x): if x == null then "" else ((x / 1000 | round) | tostring) + "k" end;
      .benchmarks[]
      | select(.run_type == "iteration")
      | "| \(.name) | \(.threads // 1) | \(num(.real_time)) \(.time_unit) | \(num(.cpu_time)) \(.time_unit) | \(rate(.items_per_second)) | \(
          [ to_entries[]
            | select(.key | test("^(heap_B_per_data_file|rss_B_per_data_file|applied_pct)$"))
            | "\(.key) = \(num(.value))" ] | join(", ")) |"
    ' "$work/cache.json"
}

# The median of `$1` (a run name) in the targets' run, in ns.
cache_median() {
    jq -r --arg n "$1" '.benchmarks[]
      | select(.run_type == "aggregate" and .aggregate_name == "median" and .run_name == $n)
      | .real_time' "$work/cache-targets.json"
}

cache_targets_table() {
    local lookup load update anchor
    lookup=$(cache_median BM_AnchorMergedLatency/1000000/real_time)
    load=$(cache_median BM_DependentLoad/bytes:268435456/thp:0)
    update=$(cache_median BM_Update/1000000/real_time/threads:1)
    anchor=$(cache_median BM_UpdateThroughAnchor/1000000/real_time/threads:1)
    awk -v l="$lookup" -v d="$load" -v u="$update" -v a="$anchor" 'BEGIN {
        r = l / d
        printf "| anchored lookup at 1M files <= 1.3x one dependent DRAM load | %.0f / %.0f ns = %.2fx | %s |\n", l, d, r, (r <= 1.3 ? "yes" : "no")
        printf "| update at 1M files <= 1 us | %.0f ns through the table, %.0f ns through the anchor | %s |\n", u, a, (u <= 1000 && a <= 1000 ? "yes" : "no")
    }'
}

{
    echo "# Benchmark run $stamp"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| machine | $cpu, $cores cores, $mem RAM, $kernel |"
    echo "| commit | $commit$dirty |"
    echo "| date | $(date -u '+%Y-%m-%d %H:%M UTC') |"
    echo "| load average (1/5/15 min) | before $load_before, after $load_after |"
    echo "| scheduling | $autogroup |"
    echo "| durations | end to end $((t1 - t0)) s, cache $((t2 - t1)) s, I/O through the MDS $((t3 - t2)) s |"
    echo
    echo "Command: \`bench/run.sh\` (end-to-end cells of $rounds rounds x $seconds s; everything, servers and"
    echo "clients, shares the machine's $cores cores, so the ratios are the point, not the"
    echo "absolute rates)."
    echo
    echo "![GETATTR throughput and latency]($png)"
    echo
    echo "## End to end (bench/e2e, ff-bench-getattr)"
    echo
    echo "1 MDS + 3 NFSv3 data servers (Ganesha 4.3) on loopback, Mirrors = 2; one NFSv4.2"
    echo "session per client thread; data-server GETATTRs from the data servers' own NFSv3"
    echo "counters (Enable_FULLV3_Stats over a private dbus)."
    echo
    cat "$work/e2e.md"
    echo
    echo "## c. WCC attribute cache (bench/cache, bench_wcc_cache)"
    echo
    echo "One repetition each, \`--benchmark_min_time=0.2\`. Lookup/Merged/Update/N: N cached"
    echo "files; threads:2 rates are the total of both threads; MemoryPerDataFile/F/M: F files"
    echo "of M data files each."
    echo
    echo "| benchmark | threads | real time | CPU time | items/s | counters |"
    echo "|---|---:|---:|---:|---:|---|"
    cache_table
    echo
    echo "#16's cache targets: the same benchmarks, 5 repetitions each in random order"
    echo "(\`--benchmark_enable_random_interleaving\`), medians. The dependent load: a chase"
    echo "through 256 MiB (no transparent huge pages), one DRAM miss per step."
    echo
    echo "| target (#16) | measured | met |"
    echo "|---|---|---|"
    cache_targets_table
    echo
    echo "## d. I/O through the MDS (bench/e2e, ff-bench-proxy-io)"
    echo
    cat "$work/proxy-io.md"
} > "$md"

# latest.md: the same report (the plot link stays relative to bench/results/).
cp "$md" "$results/latest.md"
say "wrote $md, $results/$png and $results/latest.md"
