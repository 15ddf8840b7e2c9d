// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The attribute cache's anchors (CacheAnchor, attr_cache.hpp): a file's way in from its FSAL
// object. An attached anchor follows every publication of the file, so merged() through it
// equals merged() through the table; detach(), forget() and a second anchor each leave it
// empty, and reads through an empty anchor go to the table. A writer's next report goes
// through the anchor too (apply_wcc), and any other through the table. Then a stress:
// readers through anchors while two writers update (through the table and through the
// anchors), anchors are attached and detached, and files are forgotten: no read is torn,
// none goes back in time, and every retired snapshot is freed.
#include "cache/attr_cache.hpp"
#include "versioned_attrs.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

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

constexpr DataFileSlot kM0{0, 0};
constexpr DataFileSlot kM1{1, 0};

using versioned::encode;

void update(AttrCache& cache, FileId file, std::uint64_t n) {
    const std::array<WccReport, 2> r{WccReport{kM0, encode(n)}, WccReport{kM1, encode(n)}};
    assert_int_equal(cache.apply_wcc(file, Iomode::ReadWrite, r).applied, 2);
}

// The same report through an anchor (LAYOUT_WCC's way: the FSAL object's anchor).
void update_via(AttrCache& cache, const CacheAnchor& a, FileId file, std::uint64_t n) {
    const std::array<WccReport, 2> r{WccReport{kM0, encode(n)}, WccReport{kM1, encode(n)}};
    assert_int_equal(cache.apply_wcc(a, file, Iomode::ReadWrite, r).applied, 2);
}

std::uint64_t through_anchor(const AttrCache& cache) {
    return cache.stats().updates_through_anchor;
}

std::uint64_t size_via(const AttrCache& cache, const CacheAnchor& a, FileId file) {
    const auto m = cache.merged(a, file);
    return m && m->attrs.has(kAttrSize) ? m->attrs.size : ~0ull;
}

void an_attached_anchor_follows_every_update(void**) {
    AttrCache cache(16);
    update(cache, 1, 10);
    CacheAnchor a;
    assert_false(a.attached());
    cache.attach(1, a);
    assert_true(a.attached());
    assert_int_equal(size_via(cache, a, 1), 10);
    update(cache, 1, 11);
    assert_int_equal(size_via(cache, a, 1), 11);
    cache.record_layoutcommit(1, 5000, std::nullopt);
    assert_int_equal(size_via(cache, a, 1), cache.merged(1)->attrs.size);
    assert_int_equal(cache.merged(a, 1)->data_files, 2);
    cache.detach(1, a);
    assert_false(a.attached());
    update(cache, 1, 12);
    assert_false(a.attached());                                           // detached for good
    assert_int_equal(size_via(cache, a, 1), cache.merged(1)->attrs.size); // the table's
}

// A writer's next report reaches the file's snapshot through its anchor, without the
// table; a report that changes the snapshot's shape, one for another file and one through
// an anchor that is not attached go through the table, with the same outcome.
void an_update_through_the_anchor_writes_the_snapshot_in_place(void**) {
    AttrCache cache(16);
    CacheAnchor a;
    update_via(cache, a, 1, 10); // not attached yet
    assert_int_equal(through_anchor(cache), 0);
    assert_int_equal(cache.merged(1)->attrs.size, 10);

    cache.attach(1, a);
    update_via(cache, a, 1, 11);
    assert_int_equal(through_anchor(cache), 1);
    assert_int_equal(cache.merged(1)->attrs.size, 11);
    assert_int_equal(size_via(cache, a, 1), 11);

    // A third data file: a new snapshot, published through the table; the anchor follows.
    constexpr DataFileSlot kM2{2, 0};
    const std::array<WccReport, 1> third{WccReport{kM2, encode(12)}};
    assert_int_equal(cache.apply_wcc(a, 1, Iomode::ReadWrite, third).applied, 1);
    assert_int_equal(through_anchor(cache), 1);
    assert_int_equal(cache.merged(a, 1)->data_files, 3);
    update_via(cache, a, 1, 13);
    assert_int_equal(through_anchor(cache), 2);
    assert_int_equal(size_via(cache, a, 1), cache.merged(1)->attrs.size);

    // The anchor names file 1: file 2's report goes through the table, file 1 is untouched.
    update_via(cache, a, 2, 5);
    assert_int_equal(through_anchor(cache), 2);
    assert_int_equal(cache.merged(2)->attrs.size, 5);
    assert_int_equal(cache.merged(1)->data_files, 3);

    // A stale report through the anchor changes nothing and is told so.
    const std::array<WccReport, 1> old{WccReport{kM0, encode(1)}};
    const WccResult stale = cache.apply_wcc(a, 1, Iomode::ReadWrite, old);
    assert_int_equal(stale.applied, 0);
    assert_int_equal(stale.ignored_stale, 1);

    cache.detach(1, a);
    update_via(cache, a, 1, 14);
    assert_int_equal(through_anchor(cache), 2);
    assert_int_equal(cache.merged(1)->attrs.size, cache.merged(a, 1)->attrs.size);
    cache.forget(1);
    update_via(cache, a, 1, 15); // the file comes back, through the table
    assert_int_equal(through_anchor(cache), 2);
    assert_int_equal(cache.merged(1)->data_files, 2);
}

void attaching_a_file_the_cache_does_not_know_gives_it_an_empty_snapshot(void**) {
    AttrCache cache(16);
    CacheAnchor a;
    cache.attach(7, a);
    assert_true(a.attached());
    const auto m = cache.merged(a, 7);
    assert_true(m.has_value());
    assert_int_equal(m->data_files, 0); // GETATTR's "nothing cached": ask the data servers
    assert_true(cache.apply_ds_getattr(DataFileKey{7, kM0}, encode(3), 0) == Outcome::Applied);
    assert_int_equal(size_via(cache, a, 7), 3);
    cache.detach(7, a);
}

void forget_and_a_second_anchor_empty_the_first(void**) {
    AttrCache cache(16);
    update(cache, 2, 20);
    CacheAnchor a, b;
    cache.attach(2, a);
    cache.attach(2, b);
    assert_false(a.attached());
    assert_true(b.attached());
    assert_int_equal(size_via(cache, a, 2), 20); // through the table
    cache.detach(2, a);                          // not the file's anchor: nothing happens
    assert_true(b.attached());
    cache.forget(2);
    assert_false(b.attached());
    assert_false(cache.merged(b, 2).has_value());
    cache.detach(2, b); // after forget: nothing to do
    update(cache, 2, 21);
    assert_false(b.attached());
}

// ---- Stress ---------------------------------------------------------------------------

constexpr FileId kFiles = 32;
constexpr auto kRunFor = std::chrono::milliseconds(1500);

struct Seen {
    std::uint64_t reads = 0, torn = 0, backwards = 0, attached_reads = 0;
};

void readers_through_anchors_never_see_torn_or_older_snapshots(void**) {
    AttrCache::wait_for_reclaim();                  // what the tests before retired is freed by now
    const CacheStats before = AttrCache(1).stats(); // process-wide reclaim counters
    AttrCache cache(kFiles);
    std::array<CacheAnchor, kFiles> anchors;
    std::atomic<std::uint64_t> version{0};
    std::atomic<bool> stop{false};
    // Each writer has its own half of the files, so a file's versions only grow.
    auto writer = [&](unsigned seed, FileId parity) {
        std::uint64_t x = seed;
        while (!stop.load(std::memory_order_relaxed)) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const FileId f = (x % (kFiles / 2)) * 2 + parity;
            if (x & 1)
                update(cache, f, version.fetch_add(1) + 1);
            else
                update_via(cache, anchors[f], f, version.fetch_add(1) + 1);
            if (x % 1009 == 0)
                cache.forget(f);
        }
    };
    // Attaches and detaches anchors under the readers and writers. (Right after detach()
    // an anchor may still hold a snapshot for a moment: a forget() that removed it empties
    // the anchor after the removal, inside its read section.)
    auto churn = [&] {
        std::uint64_t i = 0;
        while (!stop.load(std::memory_order_relaxed)) {
            const FileId f = i++ % kFiles;
            if (i % 3 == 0)
                cache.detach(f, anchors[f]);
            else
                cache.attach(f, anchors[f]);
        }
    };
    auto reader = [&](Seen& out) {
        std::array<std::uint64_t, kFiles> last{};
        std::uint64_t x = 0x9e3779b9;
        while (!stop.load(std::memory_order_relaxed)) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const FileId f = x % kFiles;
            out.reads++;
            out.attached_reads += anchors[f].attached();
            const auto m = cache.merged(anchors[f], f);
            if (!m || m->data_files == 0)
                continue;
            const DsAttrs& a = m->attrs;
            out.torn += !versioned::consistent(a);
            // Versions only grow: a forgotten file comes back at a higher one.
            out.backwards += a.size < last[f];
            last[f] = a.size;
        }
    };
    Seen s1, s2;
    std::thread w1(writer, 0x85ebca6bu, 0), w2(writer, 0xc2b2ae35u, 1), c(churn);
    std::thread r1(reader, std::ref(s1)), r2(reader, std::ref(s2));
    std::this_thread::sleep_for(kRunFor);
    stop = true;
    for (std::thread* t : {&w1, &w2, &c, &r1, &r2})
        t->join();
    for (FileId f = 0; f < kFiles; ++f)
        cache.detach(f, anchors[f]);
    for (const CacheAnchor& a : anchors)
        assert_false(a.attached());

    AttrCache::wait_for_reclaim();
    const CacheStats after = cache.stats();
    std::printf("# reads %llu + %llu (through attached anchors %llu + %llu), updates %llu, "
                "retired %llu, freed %llu\n",
                (unsigned long long)s1.reads, (unsigned long long)s2.reads,
                (unsigned long long)s1.attached_reads, (unsigned long long)s2.attached_reads,
                (unsigned long long)version.load(),
                (unsigned long long)(after.snapshots_retired - before.snapshots_retired),
                (unsigned long long)(after.snapshots_freed - before.snapshots_freed));
    assert_int_equal(s1.torn + s2.torn, 0);
    assert_int_equal(s1.backwards + s2.backwards, 0);
    assert_true(s1.attached_reads > 1000 && s2.attached_reads > 1000);
    assert_true(after.updates_through_anchor > 1000);
    assert_int_equal(after.snapshots_freed - before.snapshots_freed,
                     after.snapshots_retired - before.snapshots_retired);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_attached_anchor_follows_every_update),
        cmocka_unit_test(an_update_through_the_anchor_writes_the_snapshot_in_place),
        cmocka_unit_test(attaching_a_file_the_cache_does_not_know_gives_it_an_empty_snapshot),
        cmocka_unit_test(forget_and_a_second_anchor_empty_the_first),
        cmocka_unit_test(readers_through_anchors_never_see_torn_or_older_snapshots),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
