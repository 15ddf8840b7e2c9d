// SPDX-License-Identifier: LGPL-3.0-or-later
//
// RCU stress for the WCC attribute cache: 2 lock-free readers and 1 writer for 2 seconds,
// then 2 racing writers for 1 second.
// Every update n writes size = n, mtime = n * 1000 + 7, ctime = n, space_used = 3n, so a
// reader that saw fields from two different updates (a torn read) is caught at once. Each
// reader also checks that what it sees of a file never goes back in time. Afterwards every
// retired snapshot must have been freed through call_rcu.
#include "cache/attr_cache.hpp"
#include "versioned_attrs.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <latch>
#include <thread>
#include <vector>

// cmocka last: its macros (fail, ...) clash with the C++ library's names; the header
// does not wrap its declarations in extern "C".
// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}
// clang-format on

using namespace flexfiles::wcc;

namespace {

constexpr FileId kFiles = 64;
constexpr DataFileSlot kMirrors[2] = {{0, 0}, {1, 0}};
constexpr auto kRunFor = std::chrono::seconds(2);
constexpr int kForgetEvery = 997; // also exercise removal under readers

using versioned::encode;

bool consistent(const DsAttrs& a) {
    return versioned::consistent(a) && a.space_used == 3 * a.size;
}

struct ReaderResult {
    std::uint64_t reads = 0;
    std::uint64_t found = 0;
    std::uint64_t torn = 0;
    std::uint64_t backwards = 0;
};

void reader(const AttrCache& cache, const std::atomic<bool>& stop, unsigned seed,
            ReaderResult& out) {
    std::array<std::uint64_t, kFiles> last_seen{};
    std::uint64_t x = seed;
    while (!stop.load(std::memory_order_relaxed)) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const FileId file = x % kFiles;
        out.reads++;
        if ((x >> 20) & 1) {
            auto d = cache.lookup(DataFileKey{file, kMirrors[(x >> 21) & 1]});
            if (d) {
                out.found++;
                out.torn += !consistent(d->attrs);
            }
        } else if (auto m = cache.merged(file)) {
            out.found++;
            // Merged size/mtime/ctime come from one record: the same encoding holds.
            out.torn += !versioned::consistent(m->attrs);
            // Versions only grow (a forget() restarts a file at a higher version too).
            out.backwards += m->attrs.size < last_seen[file];
            last_seen[file] = m->attrs.size;
        }
    }
}

void rcu_readers_never_see_torn_records_and_retired_snapshots_are_freed(void**) {
    const CacheStats before = AttrCache(1).stats(); // process-wide reclaim counters
    AttrCache cache(kFiles);
    std::atomic<bool> stop{false};
    ReaderResult r1, r2;
    std::thread t1(reader, std::cref(cache), std::cref(stop), 0x9e3779b9u, std::ref(r1));
    std::thread t2(reader, std::cref(cache), std::cref(stop), 0x85ebca6bu, std::ref(r2));

    std::uint64_t updates = 0, forgets = 0, n = 0;
    std::uint64_t freed_during_run = 0;
    const auto end = std::chrono::steady_clock::now() + kRunFor;
    while (std::chrono::steady_clock::now() < end) {
        ++n;
        const FileId file = n % kFiles;
        // Both mirrors in one LAYOUT_WCC: one publication.
        const std::array<WccReport, 2> reports{WccReport{kMirrors[0], encode(n)},
                                               WccReport{kMirrors[1], encode(n)}};
        const WccResult res = cache.apply_wcc(file, Iomode::ReadWrite, reports);
        assert_int_equal(res.applied, 2);
        ++updates;
        if (n % kForgetEvery == 0) {
            cache.forget(file);
            ++forgets;
        }
        if ((n & 0xFFF) == 0) {
            freed_during_run = cache.stats().snapshots_freed - before.snapshots_freed;
        }
    }
    stop = true;
    t1.join();
    t2.join();

    AttrCache::wait_for_reclaim();
    const CacheStats s = cache.stats();
    const std::uint64_t retired = s.snapshots_retired - before.snapshots_retired;
    const std::uint64_t freed = s.snapshots_freed - before.snapshots_freed;
    std::printf(
        "# updates %llu, forgets %llu, reads %llu + %llu (found %llu + %llu), "
        "retired %llu, freed %llu (%llu while running), publish retries %llu, in place %llu\n",
        (unsigned long long)updates, (unsigned long long)forgets, (unsigned long long)r1.reads,
        (unsigned long long)r2.reads, (unsigned long long)r1.found, (unsigned long long)r2.found,
        (unsigned long long)retired, (unsigned long long)freed,
        (unsigned long long)freed_during_run, (unsigned long long)s.publish_retries,
        (unsigned long long)s.updates_in_place);

    assert_int_equal(r1.torn + r2.torn, 0);
    assert_int_equal(r1.backwards + r2.backwards, 0);
    assert_true(r1.found > 1000 && r2.found > 1000);
    // Every update but the first of each file's life is written in place (both mirrors'
    // records are there from the first) or retires a snapshot; forget retires one.
    assert_true(retired + s.updates_in_place + kFiles + forgets >= updates);
    assert_true(s.updates_in_place > updates / 2);
    assert_int_equal(freed, retired);
    assert_true(freed_during_run > 0); // reclaimed while readers ran, not only at the end
}

// Two writers race on the same few files, each on its own mirror. Every update copies the
// whole file and writes it back (in place, or as a new snapshot), so two writers must not
// both copy a snapshot before either writes: one would write back the other's older
// record and that mirror would go back in time. Each writer checks its own mirror after
// every update.
void concurrent_writers_never_lose_each_others_updates(void**) {
    constexpr FileId kHot = 4;
    AttrCache cache(kHot);
    std::atomic<std::uint64_t> regressions{0}, updates{0};
    auto writer = [&](std::size_t mirror) {
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        for (std::uint64_t v = 1; std::chrono::steady_clock::now() < end; ++v) {
            const FileId file = v % kHot;
            const std::array<WccReport, 1> r{WccReport{kMirrors[mirror], encode(v)}};
            // No cmocka assertion in a thread: count, assert after the join.
            regressions += cache.apply_wcc(file, Iomode::ReadWrite, r).applied != 1;
            const auto d = cache.lookup(DataFileKey{file, kMirrors[mirror]});
            regressions += !d || d->attrs.size != v || !consistent(d->attrs);
            updates++;
        }
    };
    std::thread a(writer, 0), b(writer, 1);
    a.join();
    b.join();
    std::printf("# two writers: %llu updates, %llu publish retries\n",
                (unsigned long long)updates.load(),
                (unsigned long long)cache.stats().publish_retries);
    assert_int_equal(regressions.load(), 0);
    assert_true(updates.load() > 1000);
}

// Each thread bumps its own counter stripe with a plain load and store (no atomic
// read-modify-write on the lookup path); threads beyond the owned stripes share one with
// atomic adds, and a stripe passes to a new thread when its owner exits. None of that may
// lose a count: 2 rounds of 100 concurrent threads (more than there are owned stripes).
void counters_stay_exact_with_more_threads_than_stripes(void**) {
    constexpr int kThreads = 100;
    constexpr int kLookups = 2000;
    AttrCache cache(16);
    const std::array<WccReport, 1> r{WccReport{kMirrors[0], encode(1)}};
    cache.apply_wcc(1, Iomode::ReadWrite, r);
    const CacheStats before = cache.stats();
    for (int round = 0; round < 2; ++round) {
        std::vector<std::thread> threads;
        std::latch all_alive(kThreads); // so that some threads must share a stripe
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&cache, &all_alive] {
                all_alive.arrive_and_wait();
                for (int i = 0; i < kLookups; ++i) {
                    (void)cache.lookup(DataFileKey{static_cast<FileId>(i % 2), kMirrors[0]});
                }
            });
        }
        for (auto& t : threads) {
            t.join();
        }
    }
    const CacheStats after = cache.stats();
    const std::uint64_t expected = 2ull * kThreads * kLookups / 2;
    assert_int_equal(after.hits - before.hits, expected);
    assert_int_equal(after.misses - before.misses, expected);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rcu_readers_never_see_torn_records_and_retired_snapshots_are_freed),
        cmocka_unit_test(concurrent_writers_never_lose_each_others_updates),
        cmocka_unit_test(counters_stay_exact_with_more_threads_than_stripes),
    };
    return cmocka_run_group_tests_name("wcc_rcu_stress", tests, nullptr, nullptr);
}
