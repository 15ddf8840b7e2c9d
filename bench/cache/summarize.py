#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-3.0-or-later
"""Summarise a bench_wcc_cache JSON run (--benchmark_format=json with repetitions) as the
table in README.md: median real time per operation, 2-thread vs 1-thread throughput, and
bytes per data file. Usage: summarize.py results.json"""
import json
import re
import sys


def main(path):
    with open(path) as f:
        run = json.load(f)
    ctx = run["context"]
    print(f"date {ctx['date']}, load average {', '.join(f'{x:.2f}' for x in ctx['load_avg'])}")
    if "note" in ctx:
        print(f"note: {ctx['note']}")
    medians = {}
    for b in run["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = re.sub(r"_median$", "", b["name"])
        medians[name] = b
    rows = []
    for name, b in medians.items():
        if "threads:2" in name:
            continue
        line = f"{name:60s} {b['real_time']:10.1f} {b['time_unit']} (cpu {b['cpu_time']:.1f})"
        two = medians.get(name.replace("threads:1", "threads:2"))
        if "threads:1" in name and two and "items_per_second" in b:
            ratio = two["items_per_second"] / b["items_per_second"]
            line += f"  2 threads: {ratio:.2f}x"
        for counter in ("heap_B_per_data_file", "rss_B_per_data_file", "applied_pct"):
            if counter in b:
                line += f"  {counter}={b[counter]:.1f}"
        rows.append(line)
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results.json")
