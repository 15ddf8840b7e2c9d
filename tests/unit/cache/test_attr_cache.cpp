// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The WCC attribute cache's rules through its API (core/cache/attr_cache.hpp), one test per
// rule; test_attr_rules.cpp checks the same rules on records directly.
#include "cache/attr_cache.hpp"
#include "table1_attrs.hpp"

#include <array>
#include <cstdint>
#include <unordered_set>
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
using flexfiles::wcc::test::full;

namespace {

constexpr FileId kFile = 1001;
constexpr DataFileSlot kM0{0, 0}; // mirror 0, data server 0
constexpr DataFileSlot kM1{1, 0}; // mirror 1, data server 0: same data-server index
constexpr DataFileSlot kM2{2, 0};
constexpr std::int64_t kNow = 1'000'000'000'000; // a fixed "monotonic" clock for the tests

WccResult wcc(AttrCache& c, Iomode io, DataFileSlot slot, const DsAttrs& a, std::int64_t now = kNow,
              FileId file = kFile) {
    const std::array<WccReport, 1> r{WccReport{slot, a}};
    return c.apply_wcc(file, io, r, {}, now);
}

DsAttrs cached(const AttrCache& c, DataFileSlot slot, FileId file = kFile) {
    auto got = c.lookup(DataFileKey{file, slot});
    assert_true(got.has_value());
    return got->attrs;
}

MergedAttrs merged(const AttrCache& c, FileId file = kFile) {
    auto m = c.merged(file);
    assert_true(m.has_value());
    return *m;
}

// ---- ordering and ties ----------------------------------------------------------------

void ordering_older_ctime_is_ignored_and_counted(void**) {
    AttrCache c;
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(500, 20, 20, 20)).applied, 1);
    const WccResult r = wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    assert_int_equal(r.applied, 0);
    assert_int_equal(r.ignored_stale, 1);
    assert_int_equal(cached(c, kM0).size, 500);
    assert_int_equal(cached(c, kM0).ctime.ns, 20);
    assert_int_equal(c.stats().entries_ignored_stale, 1);
    assert_int_equal(c.stats().entries_applied, 1);
}

void ordering_newer_ctime_replaces(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    const WccResult r = wcc(c, Iomode::ReadWrite, kM0, full(900, 30, 29, 5, 8192), kNow + 7);
    assert_int_equal(r.applied, 1);
    const auto d = c.lookup(DataFileKey{kFile, kM0});
    assert_int_equal(d->attrs.size, 900);
    assert_int_equal(d->attrs.space_used, 8192);
    assert_int_equal(d->attrs.mtime.ns, 29);
    assert_int_equal(d->attrs.ctime.ns, 30);
    assert_int_equal(d->attrs.atime.ns, 10); // a client's atime never moves backwards
    assert_int_equal(d->learned_ns, kNow + 7);
    assert_true(d->source == Source::Wcc);
}

void ordering_a_repeated_report_renews_the_record_and_changes_nothing(void**) {
    AttrCache c;
    WccResult r = wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    assert_int_equal(r.applied, 1);
    assert_int_equal(r.changed, 1); // a new record
    r = wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10), kNow + 5);
    assert_int_equal(r.applied, 1);
    assert_int_equal(r.changed, 0); // the same values, learned again
    assert_int_equal(c.lookup(DataFileKey{kFile, kM0})->learned_ns, kNow + 5);
    r = wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 11), kNow + 6);
    assert_int_equal(r.changed, 1); // atime moved
    r = wcc(c, Iomode::ReadWrite, kM0, full(200, 12, 12, 11), kNow + 7);
    assert_int_equal(r.changed, 1); // a write
    r = wcc(c, Iomode::ReadWrite, kM0, full(100, 5, 5, 5), kNow + 8);
    assert_int_equal(r.applied, 0);
    assert_int_equal(r.changed, 0); // stale
}

void ordering_ctime_tie_later_arrival_wins_atime_never_backwards(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 50, 50, 60, 4096));
    // Same ctime: same data-file state; later arrival wins (space_used can settle without a
    // ctime change), atime keeps the max.
    const WccResult r = wcc(c, Iomode::ReadWrite, kM0, full(100, 50, 50, 55, 12288));
    assert_int_equal(r.applied, 1);
    assert_int_equal(cached(c, kM0).space_used, 12288);
    assert_int_equal(cached(c, kM0).atime.ns, 60);
    wcc(c, Iomode::ReadWrite, kM0, full(100, 50, 50, 70));
    assert_int_equal(cached(c, kM0).atime.ns, 70);
}

void ordering_report_without_ctime_is_invalid(void**) {
    AttrCache c;
    DsAttrs a = full(100, 10, 10, 10);
    a.valid &= static_cast<std::uint16_t>(~kAttrCtime);
    const WccResult r = wcc(c, Iomode::ReadWrite, kM0, a);
    assert_int_equal(r.ignored_invalid, 1);
    assert_false(c.lookup(DataFileKey{kFile, kM0}).has_value());
    assert_int_equal(c.stats().entries_ignored_invalid, 1);
}

void ordering_same_slot_twice_in_one_op_taken_in_order(void**) {
    AttrCache c;
    const std::array<WccReport, 3> r{WccReport{kM0, full(300, 30, 30, 30)},
                                     WccReport{kM0, full(200, 20, 20, 20)},
                                     WccReport{kM1, full(300, 31, 31, 31)}};
    std::array<Outcome, 3> out{};
    const WccResult res = c.apply_wcc(kFile, Iomode::ReadWrite, r, out, kNow);
    assert_int_equal(res.applied, 2);
    assert_int_equal(res.ignored_stale, 1);
    assert_true(out[0] == Outcome::Applied);
    assert_true(out[1] == Outcome::IgnoredStale);
    assert_true(out[2] == Outcome::Applied);
    assert_int_equal(cached(c, kM0).size, 300);
    assert_int_equal(c.stats().ops, 1);
}

// ---- barriers: LAYOUTCOMMIT and MDS SETATTR(size) ---------------------------------------

void barrier_layoutcommit_ignores_wcc_at_or_below_floor(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    c.record_layoutcommit(kFile, 4000, NfsTime{15}, kNow + 1);
    // Older than the floor, and equal to it (ties go to the barrier): both stale.
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(50, 9, 9, 9)).ignored_stale, 1);
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10)).ignored_stale, 1);
    MergedAttrs m = merged(c);
    assert_int_equal(m.attrs.size, 4000);
    assert_int_equal(m.attrs.mtime.ns, 15);
    assert_true(m.size_source == Source::LayoutCommit);
    // Past the floor: newer than the commit, it competes again.
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(6000, 20, 20, 20)).applied, 1);
    m = merged(c);
    assert_int_equal(m.attrs.size, 6000);
    assert_int_equal(m.attrs.mtime.ns, 20);
    assert_true(m.size_source == Source::Wcc);
}

void barrier_layoutcommit_size_is_a_floor(void**) {
    AttrCache c;
    c.record_layoutcommit(kFile, 4000, std::nullopt, kNow);
    // A data file the cache had not heard of: nothing orders it against the commit, so it
    // is accepted, but a LAYOUTCOMMIT only grows a file: the merged size stays 4000.
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(1000, 10, 10, 10)).applied, 1);
    assert_int_equal(merged(c).attrs.size, 4000);
    assert_int_equal(merged(c).attrs.ctime.ns, 10);
    // A commit never shrinks what is known: max(current, last_write_offset + 1).
    c.record_layoutcommit(kFile, 10, std::nullopt, kNow + 1);
    assert_int_equal(merged(c).attrs.size, 4000);
}

void barrier_setattr_size_post_op_floor_is_truncate_ctime(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(9000, 10, 10, 10));
    const std::array<TruncatedDataFile, 1> t{TruncatedDataFile{kM0, full(0, 40, 40, 10)}};
    c.record_mds_setattr_size(kFile, 0, NfsTime{40}, t, kNow + 1);
    assert_int_equal(merged(c).attrs.size, 0);
    // A write acknowledged before the truncate (ctime 30 < 40) reported late: stale.
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(9000, 30, 30, 30)).ignored_stale, 1);
    // Exactly the truncate's ctime: tie goes to the barrier.
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(0, 40, 40, 40)).ignored_stale, 1);
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(512, 41, 41, 41)).applied, 1);
    assert_int_equal(merged(c).attrs.size, 512);
}

void barrier_setattr_size_unknown_ctime_blocks_wcc_until_getattr_after_it(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(9000, 10, 10, 10));
    const std::int64_t barrier = kNow + 100;
    const std::array<TruncatedDataFile, 2> t{TruncatedDataFile{kM0, std::nullopt},
                                             TruncatedDataFile{kM1, std::nullopt}};
    c.record_mds_setattr_size(kFile, 0, std::nullopt, t, barrier);
    MergedAttrs m = merged(c);
    assert_int_equal(m.attrs.size, 0);
    assert_int_equal(m.data_files, 2);
    // Even a newer ctime cannot be ordered against a truncate whose ctime is unknown.
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(9000, 20, 20, 20)).ignored_stale, 1);
    // A GETATTR sent before, or at the same instant as, the barrier does not count.
    const DataFileKey k0{kFile, kM0};
    assert_true(c.apply_ds_getattr(k0, full(9000, 20, 20, 20), barrier - 5, barrier + 1) ==
                Outcome::IgnoredStale);
    assert_true(c.apply_ds_getattr(k0, full(9000, 20, 20, 20), barrier, barrier + 1) ==
                Outcome::IgnoredStale);
    assert_true(c.apply_ds_getattr(k0, full(0, 45, 45, 20), barrier + 1, barrier + 2) ==
                Outcome::Applied);
    assert_false(c.lookup(k0)->unordered);
    assert_true(c.lookup(DataFileKey{kFile, kM1})->unordered);
    // Ordered again: normal rules for kM0.
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(100, 50, 50, 50)).applied, 1);
    m = merged(c);
    assert_int_equal(m.attrs.size, 100);
    assert_int_equal(c.stats().ds_getattr_stale, 2);
    assert_int_equal(c.stats().ds_getattr_applied, 1);
    assert_int_equal(c.stats().mds_setattrs, 1);
}

void barrier_setattr_size_stands_in_for_a_size_the_fresher_report_lacks(void**) {
    AttrCache c;
    const std::array<TruncatedDataFile, 1> t{TruncatedDataFile{kM0, std::nullopt}};
    c.record_mds_setattr_size(kFile, 300, std::nullopt, t, kNow);
    DsAttrs no_size = full(999, 50, 50, 50);
    no_size.valid &= static_cast<std::uint16_t>(~kAttrSize);
    assert_true(c.apply_ds_getattr(DataFileKey{kFile, kM0}, no_size, kNow + 1, kNow + 2) ==
                Outcome::Applied);
    const MergedAttrs m = merged(c);
    assert_int_equal(m.attrs.size, 300);
    assert_int_equal(m.attrs.mtime.ns, 50);
}

// ---- bounds on what a client says (issue #13) ------------------------------------------

void bounds_future_ctime_is_refused_and_counted(void**) {
    AttrCache c;
    ReportLimits limits;
    limits.max_ctime = NfsTime{1000};
    const std::array<WccReport, 2> r{WccReport{kM0, full(77, 5000, 5000, 5000)},
                                     WccReport{kM1, full(300, 900, 900, 900)}};
    std::array<Outcome, 2> per{};
    const WccResult res = c.apply_wcc(kFile, Iomode::ReadWrite, r, per, kNow, limits);
    assert_int_equal(res.ignored_future, 1);
    assert_int_equal(res.applied, 1);
    assert_true(per[0] == Outcome::IgnoredFuture);
    assert_false(c.lookup(DataFileKey{kFile, kM0}).has_value());
    assert_int_equal(merged(c).attrs.size, 300);
    assert_int_equal(c.stats().entries_ignored_future, 1);
}

void bounds_a_wedged_file_heals_at_the_next_data_server_answer(void**) {
    AttrCache c;
    // No limit (as before WCC_Max_Ctime_Skew): a client's ctime in 2100 gets in.
    wcc(c, Iomode::ReadWrite, kM0,
        full(77, 4'102'444'800'000'000'000, 4'102'444'800'000'000'000, 1), kNow);
    assert_int_equal(merged(c).attrs.size, 77);
    // The MDS's GETATTR, sent after that, answers the data server's truth: it wins.
    assert_true(c.apply_ds_getattr(DataFileKey{kFile, kM0}, full(300, 50, 60, 50), kNow + 1,
                                   kNow + 2) == Outcome::Applied);
    assert_int_equal(merged(c).attrs.size, 300);
    assert_int_equal(merged(c).attrs.mtime.ns, 60);
    // An honest report of a later write is ordered again.
    assert_int_equal(wcc(c, Iomode::ReadWrite, kM0, full(400, 70, 70, 70), kNow + 3).applied, 1);
    assert_int_equal(merged(c).attrs.size, 400);
}

void bounds_read_report_on_an_uncached_file_caches_nothing(void**) {
    AttrCache c;
    const WccResult r = wcc(c, Iomode::Read, kM0, full(100, 10, 10, 10));
    assert_int_equal(r.applied, 0);
    assert_int_equal(r.ignored_unauthorised, 1);
    assert_false(c.merged(kFile).has_value());
    assert_int_equal(c.files(), 0);
    // Onto a record with a ctime it still moves atime.
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    assert_int_equal(wcc(c, Iomode::Read, kM0, full(100, 20, 20, 30)).applied, 1);
    assert_int_equal(cached(c, kM0).atime.ns, 30);
    assert_int_equal(cached(c, kM0).size, 100);
}

// ---- authority ------------------------------------------------------------------------

void authority_read_layout_cannot_change_size(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10), kNow);
    const WccResult r = wcc(c, Iomode::Read, kM0, full(999999, 20, 20, 25), kNow + 50);
    assert_int_equal(r.applied, 1); // its atime
    assert_int_equal(r.attrs_unauthorised, 7);
    const auto d = c.lookup(DataFileKey{kFile, kM0});
    assert_int_equal(d->attrs.size, 100);
    assert_int_equal(d->attrs.mtime.ns, 10);
    assert_int_equal(d->attrs.ctime.ns, 10);
    assert_int_equal(d->attrs.atime.ns, 25);
    assert_int_equal(d->learned_ns, kNow); // a READ report does not vouch for freshness
    assert_int_equal(merged(c).attrs.size, 100);
    assert_int_equal(c.stats().attrs_unauthorised, 7);
}

void authority_read_without_atime_is_unauthorised(void**) {
    AttrCache c;
    DsAttrs a = full(999, 20, 20, 20);
    a.valid &= static_cast<std::uint16_t>(~kAttrAtime);
    const WccResult r = wcc(c, Iomode::Read, kM0, a);
    assert_int_equal(r.ignored_unauthorised, 1);
    assert_int_equal(r.applied, 0);
    assert_false(c.merged(kFile).has_value());
    assert_int_equal(c.stats().entries_ignored_unauthorised, 1);
}

void authority_read_cannot_store_credentials(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10, 4096, 7000, 7000, 0100640));
    wcc(c, Iomode::Read, kM0, full(100, 20, 20, 20, 4096, 0, 0, 0100777));
    const DsAttrs a = cached(c, kM0);
    assert_int_equal(a.uid, 7000);
    assert_int_equal(a.gid, 7000);
    assert_int_equal(a.mode, 0100640);
}

void authority_stale_read_report_moves_nothing(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    assert_int_equal(wcc(c, Iomode::Read, kM0, full(100, 5, 5, 99)).ignored_stale, 1);
    assert_int_equal(cached(c, kM0).atime.ns, 10);
}

void authority_unknown_iomode_sets_nothing(void**) {
    AttrCache c;
    const WccResult r = wcc(c, static_cast<Iomode>(3), kM0, full(100, 10, 10, 10));
    assert_int_equal(r.ignored_unauthorised, 1);
    assert_false(c.lookup(DataFileKey{kFile, kM0}).has_value());
}

// ---- keys -----------------------------------------------------------------------------

void keys_two_data_files_with_same_device_index_stay_separate(void**) {
    AttrCache c;
    // Same data-server index 0 in mirror 0 and mirror 1 (possibly the same device), and the
    // same slot in another file: three records.
    wcc(c, Iomode::ReadWrite, kM0, full(111, 10, 10, 10));
    wcc(c, Iomode::ReadWrite, kM1, full(222, 11, 11, 11));
    wcc(c, Iomode::ReadWrite, kM0, full(333, 12, 12, 12), kNow, kFile + 1);
    assert_int_equal(cached(c, kM0).size, 111);
    assert_int_equal(cached(c, kM1).size, 222);
    assert_int_equal(cached(c, kM0, kFile + 1).size, 333);
    assert_int_equal(c.data_files(kFile).size(), 2);
    assert_int_equal(c.data_files(kFile + 1).size(), 1);
    assert_int_equal(c.files(), 2);
    const std::unordered_set<DataFileKey, DataFileKeyHash> keys{
        DataFileKey{kFile, kM0}, DataFileKey{kFile, kM1}, DataFileKey{kFile + 1, kM0}};
    assert_int_equal(keys.size(), 3);
    // A stale report for one never touches its neighbour.
    wcc(c, Iomode::ReadWrite, kM1, full(1, 1, 1, 1));
    assert_int_equal(cached(c, kM0).size, 111);
}

void keys_unmatched_and_reserved_slots_are_counted(void**) {
    AttrCache c;
    const std::array<WccReport, 3> r{WccReport{std::nullopt, full(1, 1, 1, 1)},
                                     WccReport{DataFileSlot{0xFFFF, 0}, full(1, 1, 1, 1)},
                                     WccReport{kM0, full(1, 1, 1, 1)}};
    const WccResult res = c.apply_wcc(kFile, Iomode::ReadWrite, r, {}, kNow);
    assert_int_equal(res.ignored_unmatched, 1);
    assert_int_equal(res.ignored_invalid, 1);
    assert_int_equal(res.applied, 1);
    assert_int_equal(c.stats().entries_ignored_unmatched, 1);
    assert_true(c.apply_ds_getattr(DataFileKey{kFile, {0, 0xFFFF}}, full(1, 1, 1, 1), 0, 0) ==
                Outcome::IgnoredInvalid);
}

// ---- merged view ----------------------------------------------------------------------

void merge_size_and_times_from_freshest_mirror(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(5000, 30, 29, 10));
    wcc(c, Iomode::ReadWrite, kM1, full(7000, 40, 39, 10)); // freshest by ctime
    wcc(c, Iomode::ReadWrite, kM2, full(6000, 35, 38, 10));
    const MergedAttrs m = merged(c);
    assert_int_equal(m.attrs.size, 7000);
    assert_int_equal(m.attrs.mtime.ns, 39); // from the same mirror as size, never mixed
    assert_int_equal(m.attrs.ctime.ns, 40);
    assert_int_equal(m.data_files, 3);
}

void merge_ctime_tie_prefers_recently_learned_then_lower_slot(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 40, 40, 10), kNow + 5);
    wcc(c, Iomode::ReadWrite, kM1, full(200, 40, 40, 10), kNow + 9);
    assert_int_equal(merged(c).attrs.size, 200); // learned later
    AttrCache d;
    wcc(d, Iomode::ReadWrite, kM1, full(200, 40, 40, 10), kNow);
    wcc(d, Iomode::ReadWrite, kM0, full(100, 40, 40, 10), kNow);
    assert_int_equal(merged(d).attrs.size, 100); // full tie: lower (mirror, data server)
}

void merge_space_used_is_sum_over_mirrors(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10, 4096));
    wcc(c, Iomode::ReadWrite, kM1, full(100, 11, 11, 10, 8192));
    DsAttrs no_used = full(100, 12, 12, 10);
    no_used.valid &= static_cast<std::uint16_t>(~kAttrSpaceUsed);
    wcc(c, Iomode::ReadWrite, kM2, no_used);
    const MergedAttrs m = merged(c);
    assert_true(m.attrs.has(kAttrSpaceUsed));
    assert_int_equal(m.attrs.space_used, 12288);
    assert_int_equal(m.space_used_known, 2);
    assert_int_equal(m.data_files, 3);
}

void merge_atime_is_max_over_mirrors(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 40, 40, 77)); // freshest, older atime...
    wcc(c, Iomode::ReadWrite, kM1, full(100, 30, 30, 90)); // ...reads went to mirror 1
    assert_int_equal(merged(c).attrs.atime.ns, 90);
}

void merge_has_no_credentials(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    const MergedAttrs m = merged(c);
    assert_false(m.attrs.valid & (kAttrMode | kAttrOwner | kAttrGroup));
}

// ---- credentials ----------------------------------------------------------------------

void credentials_mismatch_is_reported_and_counted(void**) {
    AttrCache c;
    const DataFileKey k{kFile, kM0};
    const FencingCreds expect{7000, 7000, 0640};
    assert_true(c.check_credentials(k, expect) == CredCheck::Unknown);
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10, 4096, 7000, 7000, 0100640));
    assert_true(c.check_credentials(k, expect) == CredCheck::Match);
    wcc(c, Iomode::ReadWrite, kM0, full(100, 11, 11, 11, 4096, 7001, 7000, 0100640));
    assert_true(c.check_credentials(k, expect) == CredCheck::Mismatch);
    wcc(c, Iomode::ReadWrite, kM0, full(100, 12, 12, 12, 4096, 7000, 7000, 0100600));
    assert_true(c.check_credentials(k, expect) == CredCheck::Mismatch);
    assert_true(c.check_credentials(k, FencingCreds{7000, 7000, std::nullopt}) == CredCheck::Match);
    assert_int_equal(c.stats().credential_checks, 5);
    assert_int_equal(c.stats().credential_mismatches, 2);
}

void credentials_reported_by_read_layout_are_checked_not_stored(void**) {
    AttrCache c;
    const DsAttrs reported = full(100, 10, 10, 10, 4096, 0, 0, 0100644);
    assert_true(c.check_reported_credentials(reported, FencingCreds{7000, 7000, {}}) ==
                CredCheck::Mismatch);
    assert_false(c.lookup(DataFileKey{kFile, kM0}).has_value());
    assert_int_equal(c.stats().credential_mismatches, 1);
}

// ---- freshness, counters, lifecycle ---------------------------------------------------

void freshness_age_decides_older_than_max_age(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10), kNow);
    wcc(c, Iomode::ReadWrite, kM1, full(100, 20, 20, 10), kNow + 500);
    const MergedAttrs m = merged(c);
    assert_int_equal(m.learned_ns, kNow + 500);
    assert_int_equal(m.oldest_learned_ns, kNow);
    assert_false(m.older_than(1000, kNow + 1500));
    assert_true(m.older_than(1000, kNow + 1501));
    assert_int_equal(c.lookup(DataFileKey{kFile, kM0})->age_ns(kNow + 300), 300);
    // A READ client's report alone never makes a record (the file would look cached with
    // nothing to answer size from): nothing is cached, the data servers get asked.
    AttrCache r;
    assert_int_equal(wcc(r, Iomode::Read, kM0, full(100, 10, 10, 10), kNow).ignored_unauthorised,
                     1);
    assert_false(r.merged(kFile).has_value());
}

void counters_hits_misses_and_ops(void**) {
    AttrCache c;
    assert_false(c.lookup(DataFileKey{kFile, kM0}).has_value());
    assert_false(c.merged(kFile).has_value());
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    assert_true(c.lookup(DataFileKey{kFile, kM0}).has_value());
    assert_false(c.lookup(DataFileKey{kFile, kM1}).has_value()); // known file, unknown slot
    assert_true(c.merged(kFile).has_value());
    const CacheStats s = c.stats();
    assert_int_equal(s.ops, 1);
    assert_int_equal(s.hits, 2);
    assert_int_equal(s.misses, 3);
    assert_int_equal(s.files, 1);
}

// A report for data files the file's snapshot holds already (a writer's next report, the
// common case) is written into that snapshot in place: no new snapshot, nothing for
// call_rcu. One that adds a data file or the barrier publishes a new snapshot.
void a_report_for_known_data_files_is_written_in_place(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10)); // the file's first snapshot
    CacheStats before = c.stats();
    wcc(c, Iomode::ReadWrite, kM0, full(200, 11, 11, 11));
    CacheStats after = c.stats();
    assert_int_equal(after.snapshots_retired - before.snapshots_retired, 0);
    assert_int_equal(after.updates_in_place - before.updates_in_place, 1);
    assert_int_equal(cached(c, kM0).size, 200);

    before = after;
    wcc(c, Iomode::ReadWrite, kM1, full(300, 12, 12, 12)); // a second data file
    after = c.stats();
    assert_int_equal(after.snapshots_retired - before.snapshots_retired, 1);
    assert_int_equal(after.updates_in_place - before.updates_in_place, 0);

    before = after;
    c.record_layoutcommit(kFile, 400, std::nullopt); // the barrier: a new record
    c.record_layoutcommit(kFile, 500, std::nullopt); // the barrier again: in place
    after = c.stats();
    assert_int_equal(after.snapshots_retired - before.snapshots_retired, 1);
    assert_int_equal(c.merged(kFile)->attrs.size, 500);
}

void forget_drops_the_file_and_reclaims_it(void**) {
    AttrCache c;
    wcc(c, Iomode::ReadWrite, kM0, full(100, 10, 10, 10));
    wcc(c, Iomode::ReadWrite, kM1, full(100, 11, 11, 11)); // retires one snapshot
    c.forget(kFile);
    c.forget(kFile); // twice is harmless
    assert_false(c.merged(kFile).has_value());
    assert_int_equal(c.files(), 0);
    AttrCache::wait_for_reclaim();
    const CacheStats s = c.stats();
    assert_true(s.snapshots_retired >= 2);
    assert_int_equal(s.snapshots_freed, s.snapshots_retired);
    // The file can come back.
    wcc(c, Iomode::ReadWrite, kM0, full(5, 1, 1, 1));
    assert_int_equal(cached(c, kM0).size, 5);
}

void nfstime_rejects_bad_nseconds_and_overflow(void**) {
    assert_false(NfsTime::from_parts(1, 1'000'000'000).has_value());
    assert_false(NfsTime::from_parts(INT64_MAX / 2, 0).has_value());
    const auto t = NfsTime::from_parts(-2, 500);
    assert_true(t.has_value());
    assert_int_equal(t->seconds(), -2);
    assert_int_equal(t->nseconds(), 500);
    const auto u = NfsTime::from_parts(4294967295, 999'999'999); // NFSv3's largest
    assert_true(u.has_value());
    assert_int_equal(u->seconds(), 4294967295);
    assert_int_equal(u->nseconds(), 999'999'999);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bounds_future_ctime_is_refused_and_counted),
        cmocka_unit_test(bounds_a_wedged_file_heals_at_the_next_data_server_answer),
        cmocka_unit_test(bounds_read_report_on_an_uncached_file_caches_nothing),
        cmocka_unit_test(ordering_older_ctime_is_ignored_and_counted),
        cmocka_unit_test(ordering_newer_ctime_replaces),
        cmocka_unit_test(ordering_a_repeated_report_renews_the_record_and_changes_nothing),
        cmocka_unit_test(ordering_ctime_tie_later_arrival_wins_atime_never_backwards),
        cmocka_unit_test(ordering_report_without_ctime_is_invalid),
        cmocka_unit_test(ordering_same_slot_twice_in_one_op_taken_in_order),
        cmocka_unit_test(barrier_layoutcommit_ignores_wcc_at_or_below_floor),
        cmocka_unit_test(barrier_layoutcommit_size_is_a_floor),
        cmocka_unit_test(barrier_setattr_size_post_op_floor_is_truncate_ctime),
        cmocka_unit_test(barrier_setattr_size_unknown_ctime_blocks_wcc_until_getattr_after_it),
        cmocka_unit_test(barrier_setattr_size_stands_in_for_a_size_the_fresher_report_lacks),
        cmocka_unit_test(authority_read_layout_cannot_change_size),
        cmocka_unit_test(authority_read_without_atime_is_unauthorised),
        cmocka_unit_test(authority_read_cannot_store_credentials),
        cmocka_unit_test(authority_stale_read_report_moves_nothing),
        cmocka_unit_test(authority_unknown_iomode_sets_nothing),
        cmocka_unit_test(keys_two_data_files_with_same_device_index_stay_separate),
        cmocka_unit_test(keys_unmatched_and_reserved_slots_are_counted),
        cmocka_unit_test(merge_size_and_times_from_freshest_mirror),
        cmocka_unit_test(merge_ctime_tie_prefers_recently_learned_then_lower_slot),
        cmocka_unit_test(merge_space_used_is_sum_over_mirrors),
        cmocka_unit_test(merge_atime_is_max_over_mirrors),
        cmocka_unit_test(merge_has_no_credentials),
        cmocka_unit_test(credentials_mismatch_is_reported_and_counted),
        cmocka_unit_test(credentials_reported_by_read_layout_are_checked_not_stored),
        cmocka_unit_test(freshness_age_decides_older_than_max_age),
        cmocka_unit_test(counters_hits_misses_and_ops),
        cmocka_unit_test(a_report_for_known_data_files_is_written_in_place),
        cmocka_unit_test(forget_drops_the_file_and_reclaims_it),
        cmocka_unit_test(nfstime_rejects_bad_nseconds_and_overflow),
    };
    return cmocka_run_group_tests_name("wcc_attr_cache", tests, nullptr, nullptr);
}
