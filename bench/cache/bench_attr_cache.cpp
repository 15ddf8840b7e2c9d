// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Benchmarks of the WCC attribute cache (fsal_flexfiles/wcc): lookup, merged view (what a
// GETATTR costs) and update (a one-entry LAYOUT_WCC), at 1k, 100k and 1M cached data files,
// with 1 and 2 threads; and the memory one cached data file costs, measured (mallinfo2 and
// RSS before/after filling a fresh cache), not estimated.
//
//   bench_wcc_cache --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Keys are uniformly random over the whole table, so at 1M files every lookup misses the
// CPU caches: that is the worst case, a real GETATTR load is far more local.
//
// Two ways to time a lookup:
//   - throughput (BM_Lookup, BM_Merged): back-to-back lookups of independent keys. The CPU
//     may overlap one lookup's cache misses with the next one's, so at 100k/1M this is
//     faster than any single lookup can be.
//   - latency (BM_*Latency): each key depends on the previous answer, so lookups cannot
//     overlap: the time of one lookup on its own, which is what a GETATTR pays (it does one
//     lookup between thousands of other instructions). The README's headline is this one,
//     for merged(), the call the GETATTR path (overlay_data_attrs) makes.
// The direct-pointer yardstick uses urcu's inline read side, like attr_cache.cpp.
#define _LGPL_SOURCE
#include "cache/attr_cache.hpp"
#include "cache/snapshot_pool.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <malloc.h>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <span>
#include <sys/mman.h>
#include <unistd.h>
#include <urcu-bp.h>
#include <vector>

using namespace flexfiles::wcc;

namespace {

constexpr DataFileSlot kM0{0, 0};
constexpr DataFileSlot kM1{1, 0};

DsAttrs attrs_at(std::int64_t t) {
    DsAttrs a;
    a.size = static_cast<std::uint64_t>(t) & 0xFFFFFF;
    a.space_used = 4096;
    a.atime = a.mtime = a.ctime = NfsTime{t};
    a.uid = a.gid = 7000;
    a.mode = 0100640;
    a.valid = kAttrsAll;
    return a;
}

// One cache per size, filled once (single data file per file), shared by the benchmarks.
AttrCache& cache_of(std::size_t files) {
    static std::mutex mu;
    static std::map<std::size_t, std::unique_ptr<AttrCache>> caches;
    std::lock_guard lock(mu);
    auto& c = caches[files];
    if (!c) {
        c = std::make_unique<AttrCache>(files);
        for (std::size_t f = 0; f < files; ++f) {
            const std::array<WccReport, 1> r{WccReport{kM0, attrs_at(1)}};
            c->apply_wcc(f, Iomode::ReadWrite, r);
        }
        AttrCache::wait_for_reclaim(); // let background resizes settle
    }
    return *c;
}

struct Rng {
    std::uint64_t x;
    std::uint64_t next() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    }
};

void BM_Lookup(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const AttrCache& cache = cache_of(n);
    Rng rng{0x9e3779b97f4a7c15ull * (state.thread_index() + 1)};
    for (auto _ : state) {
        auto d = cache.lookup(DataFileKey{rng.next() % n, kM0});
        benchmark::DoNotOptimize(d);
    }
    state.SetItemsProcessed(state.iterations());
}

// The same 1M-file cache, but the lookups stay on 1k hot files (GETATTRs on busy files):
// the cost of the structure itself, without a DRAM miss per step.
void BM_LookupHot(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const AttrCache& cache = cache_of(n);
    Rng rng{0x27d4eb2full * (state.thread_index() + 1)};
    for (auto _ : state) {
        auto d = cache.lookup(DataFileKey{(rng.next() % 1000) * (n / 1000), kM0});
        benchmark::DoNotOptimize(d);
    }
    state.SetItemsProcessed(state.iterations());
}

// Latency: the next key depends on the previous answer (through a field that is always
// present), so the CPU cannot start the next lookup before this one finished.
void BM_LookupLatency(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const AttrCache& cache = cache_of(n);
    Rng rng{0x165667b1ull * (state.thread_index() + 1)};
    std::uint64_t carry = 0;
    for (auto _ : state) {
        auto d = cache.lookup(DataFileKey{(rng.next() ^ carry) % n, kM0});
        carry = d ? (d->attrs.valid & 0x100) : 1; // 0, but only known once d is loaded
        benchmark::DoNotOptimize(d);
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_MergedLatency(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const AttrCache& cache = cache_of(n);
    Rng rng{0xd3a2646cull * (state.thread_index() + 1)};
    std::uint64_t carry = 0;
    for (auto _ : state) {
        auto m = cache.merged((rng.next() ^ carry) % n);
        carry = m ? (m->attrs.valid & 0x100) : 1;
        benchmark::DoNotOptimize(m);
    }
    state.SetItemsProcessed(state.iterations());
}

void BM_Merged(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const AttrCache& cache = cache_of(n);
    Rng rng{0x85ebca6bull * (state.thread_index() + 1)};
    for (auto _ : state) {
        auto m = cache.merged(rng.next() % n);
        benchmark::DoNotOptimize(m);
    }
    state.SetItemsProcessed(state.iterations());
}

CacheAnchor* anchors_of(std::size_t files);

// A one-entry LAYOUT_WCC of a random file, whose snapshot names its anchor (as every file
// with an FSAL handle does): the update moves the anchor on. The LAYOUT_WCC path has just
// resolved the file's handle, so the anchor is hot there: here the anchor of the update 8
// ahead is prefetched. Through the table (BM_Update: the file's hash probe) or through the
// file's anchor (BM_UpdateThroughAnchor: what LAYOUT_WCC does).
void update_bench(benchmark::State& state, bool through_anchor) {
    const auto n = static_cast<std::size_t>(state.range(0));
    AttrCache& cache = cache_of(n);
    CacheAnchor* anchors = anchors_of(n);
    Rng rng{0xc2b2ae35ull * (state.thread_index() + 1)};
    constexpr std::size_t kAhead = 8;
    std::array<std::uint64_t, kAhead> ahead{};
    for (auto& f : ahead) {
        f = rng.next() % n;
        __builtin_prefetch(&anchors[f], 1);
    }
    std::size_t k = 0;
    // Strictly increasing ctimes (shared by the threads) so every update is applied.
    static std::atomic<std::int64_t> clock{1000};
    std::uint64_t applied = 0;
    for (auto _ : state) {
        const std::uint64_t file = ahead[k % kAhead];
        const std::uint64_t next = rng.next() % n;
        __builtin_prefetch(&anchors[next], 1);
        ahead[k++ % kAhead] = next;
        const std::array<WccReport, 1> r{
            WccReport{kM0, attrs_at(clock.fetch_add(1, std::memory_order_relaxed))}};
        applied += (through_anchor ? cache.apply_wcc(anchors[file], file, Iomode::ReadWrite, r)
                                   : cache.apply_wcc(file, Iomode::ReadWrite, r))
                       .applied;
    }
    state.SetItemsProcessed(state.iterations());
    state.counters["applied_pct"] = benchmark::Counter(100.0 * static_cast<double>(applied) /
                                                           static_cast<double>(state.iterations()),
                                                       benchmark::Counter::kAvgThreads);
}

void BM_Update(benchmark::State& state) {
    update_bench(state, false);
}

void BM_UpdateThroughAnchor(benchmark::State& state) {
    update_bench(state, true);
}

// Every file of cache_of(n) with an attached anchor (what each FSAL handle holds), made
// once, on first use (BM_Update, BM_AnchorMergedLatency): from then on the caches'
// snapshots name anchors, as the FSAL's do.
CacheAnchor* anchors_of(std::size_t files) {
    static std::mutex mu;
    static std::map<std::size_t, std::unique_ptr<CacheAnchor[]>> anchors;
    AttrCache& cache = cache_of(files);
    std::lock_guard lock(mu);
    auto& a = anchors[files];
    if (!a) {
        a = std::make_unique<CacheAnchor[]>(files);
        for (std::size_t f = 0; f < files; ++f) {
            cache.attach(f, a[f]);
        }
        AttrCache::wait_for_reclaim();
    }
    return a.get();
}

// merged() through the file's anchor, as the GETATTR path does (overlay_from_cache). The
// handle, and the anchor in it, is hot on the real path (the GETATTR just resolved it):
// here the anchor of the lookup 8 ahead is prefetched, independently of any answer, while
// the lookups themselves are chained (each index depends on the previous answer), so the
// time is one anchor hit plus the snapshot's loads, one lookup at a time.
void BM_AnchorMergedLatency(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const AttrCache& cache = cache_of(n);
    const CacheAnchor* anchors = anchors_of(n);
    Rng rng{0x27d4eb2full * (state.thread_index() + 1)};
    constexpr std::size_t kAhead = 8;
    std::array<std::uint64_t, kAhead> ahead{};
    for (auto& i : ahead) {
        i = rng.next() % n;
        __builtin_prefetch(&anchors[i]);
    }
    std::uint64_t carry = 0;
    std::size_t k = 0;
    for (auto _ : state) {
        const std::uint64_t idx = ahead[k % kAhead] ^ carry;
        const std::uint64_t next = rng.next() % n;
        __builtin_prefetch(&anchors[next]);
        ahead[k++ % kAhead] = next;
        auto m = cache.merged(anchors[idx], idx);
        carry = m ? (m->attrs.valid & 0x100) : 1;
        benchmark::DoNotOptimize(m);
    }
    state.SetItemsProcessed(state.iterations());
}

// The yardstick for BM_AnchorMergedLatency: a plain pointer from a handle to a 128-byte
// malloc'd block. The handle is hot on the real path (the GETATTR just resolved it), so
// here the loads of handle pointers may run ahead; only the snapshot loads are chained.
void BM_DirectPointerLatency(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    struct Snapshot {
        std::uint64_t words[16];
    };
    std::vector<Snapshot*> handles(n);
    for (auto& h : handles) {
        h = new Snapshot{};
    }
    Rng rng{0x9e3779b1ull * (state.thread_index() + 1)};
    std::uintptr_t carry = 0;
    for (auto _ : state) {
        rcu_read_lock();
        const Snapshot* handle_ptr = rcu_dereference(handles[rng.next() % n]);
        const auto* s =
            reinterpret_cast<const Snapshot*>(reinterpret_cast<std::uintptr_t>(handle_ptr) + carry);
        std::uint64_t copy[16];
        std::memcpy(copy, s->words, sizeof(copy));
        carry = copy[3] & 0x100; // 0, but only known once the snapshot is loaded
        rcu_read_unlock();
        benchmark::DoNotOptimize(copy);
    }
    for (auto* h : handles) {
        delete h;
    }
    state.SetItemsProcessed(state.iterations());
}

// The machine's latency for one dependent random load over a working set of range(0) bytes
// (a shuffled pointer chain): the yardstick for the lookups above, which chase three such
// pointers (bucket, node, snapshot) when the table does not fit in the CPU caches.
// range(1) = 1 asks for transparent huge pages (2 MiB) under the chain: the difference is
// what TLB misses cost on this machine.
void BM_DependentLoad(benchmark::State& state) {
    struct alignas(64) Line {
        std::size_t next;
    };
    const auto bytes = static_cast<std::size_t>(state.range(0));
    const std::size_t n = bytes / sizeof(Line);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        state.SkipWithError("mmap failed");
        return;
    }
    madvise(mem, bytes, state.range(1) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    std::span<Line> lines(static_cast<Line*>(mem), n);
    for (std::size_t i = 0; i < n; ++i) {
        lines[order[i]].next = order[(i + 1) % n];
    }
    std::size_t p = 0;
    for (auto _ : state) {
        p = lines[p].next;
        benchmark::DoNotOptimize(p);
    }
    munmap(mem, bytes);
}

// Bytes per cached data file: heap in use (mallinfo2, incl. mmapped chunks) and resident
// set, before and after filling a fresh cache with `files` files of `mirrors` data files.
// Blocks waiting in the snapshot pools (left by earlier benchmarks, resident, counted by
// mallinfo) are not in use: both figures leave them out (snapshot_pool::pooled_bytes).
long rss_bytes() {
    long pages = 0, resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) {
            resident = 0;
        }
        std::fclose(f);
    }
    return resident * sysconf(_SC_PAGESIZE);
}

std::size_t heap_bytes() {
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

void BM_MemoryPerDataFile(benchmark::State& state) {
    const auto files = static_cast<std::size_t>(state.range(0));
    const auto mirrors = static_cast<std::size_t>(state.range(1));
    double heap_per = 0, rss_per = 0;
    for (auto _ : state) {
        AttrCache::wait_for_reclaim();
        malloc_trim(0);
        const auto pooled0 = static_cast<double>(snapshot_pool::pooled_bytes());
        const auto heap0 = static_cast<double>(heap_bytes()) - pooled0;
        const auto rss0 = static_cast<double>(rss_bytes()) - pooled0;
        auto cache = std::make_unique<AttrCache>(files);
        for (std::size_t f = 0; f < files; ++f) {
            const std::array<WccReport, 2> r{WccReport{kM0, attrs_at(1)},
                                             WccReport{kM1, attrs_at(1)}};
            cache->apply_wcc(f, Iomode::ReadWrite, std::span(r.data(), mirrors));
        }
        AttrCache::wait_for_reclaim();
        const double data_files = static_cast<double>(files * mirrors);
        const auto pooled1 = static_cast<double>(snapshot_pool::pooled_bytes());
        heap_per = (static_cast<double>(heap_bytes()) - pooled1 - heap0) / data_files;
        rss_per = (static_cast<double>(rss_bytes()) - pooled1 - rss0) / data_files;
        state.PauseTiming();
        cache.reset();
        state.ResumeTiming();
    }
    state.counters["heap_B_per_data_file"] = heap_per;
    state.counters["rss_B_per_data_file"] = rss_per;
}

// 1k, 100k and 1M files, with 1 and 2 threads (items/s of 2 threads is their total).
void files_and_threads(benchmark::internal::Benchmark* b) {
    b->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->Threads(1)->Threads(2)->UseRealTime();
}

} // namespace

BENCHMARK(BM_Lookup)->Apply(files_and_threads);
BENCHMARK(BM_LookupHot)->Arg(1'000'000)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_LookupLatency)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->UseRealTime();
BENCHMARK(BM_MergedLatency)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->UseRealTime();
BENCHMARK(BM_AnchorMergedLatency)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->UseRealTime();
BENCHMARK(BM_DirectPointerLatency)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->UseRealTime();
BENCHMARK(BM_Merged)->Apply(files_and_threads);
BENCHMARK(BM_Update)->Apply(files_and_threads);
BENCHMARK(BM_UpdateThroughAnchor)->Apply(files_and_threads);
BENCHMARK(BM_DependentLoad)
    ->ArgsProduct({{32 << 10, 1 << 20, 64 << 20, 256 << 20}, {0, 1}})
    ->ArgNames({"bytes", "thp"});
BENCHMARK(BM_MemoryPerDataFile)
    ->Args({1'000'000, 1})
    ->Args({500'000, 2})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
