// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The attribute cache's rules (core/cache/attr_rules.hpp) as pure functions: records built
// here, no cache, no RCU. test_attr_cache.cpp checks the same rules through AttrCache; this
// one pins each rule down on its own (ordering, equal ctime, authority, barriers, merge,
// credentials), so a change to the RCU table cannot hide a change to a rule, nor the other
// way round.
#include "cache/attr_rules.hpp"
#include "cmocka_cpp.hpp"
#include "table1_attrs.hpp"

#include <array>
#include <cstdint>

using namespace flexfiles::wcc;
using flexfiles::wcc::test::full;

namespace {

constexpr DataFileSlot kM0{0, 0};
constexpr DataFileSlot kM1{1, 0};
constexpr DataFileSlot kM2{2, 0};
constexpr std::int64_t kNow = 1'000'000'000'000;

// A data file's record as a read-write client's report would leave it.
Record record(DataFileSlot slot, const DsAttrs& a, std::int64_t learned = kNow) {
    Record r{};
    r.slot = slot;
    r.attrs = a;
    r.source = Source::Wcc;
    r.learned_ns = learned;
    return r;
}

Outcome apply(Record& rec, const DsAttrs& a, const ApplyRules& rules, bool have_barrier = false,
              std::int64_t now = kNow) {
    std::uint32_t dropped = 0;
    return apply_to_record(rec, have_barrier, a, rules, now, dropped);
}

const ApplyRules kReadWrite = client_report_rules(Iomode::ReadWrite);
const ApplyRules kRead = client_report_rules(Iomode::Read);

// ---- ordering and equal ctime -------------------------------------------------------------

void ordering_older_ctime_is_stale_and_leaves_the_record(void**) {
    Record r = record(kM0, full(500, 20, 20, 20));
    assert_true(apply(r, full(100, 10, 10, 10), kReadWrite) == Outcome::IgnoredStale);
    assert_int_equal(r.attrs.size, 500);
    assert_int_equal(r.attrs.ctime.ns, 20);
}

void ordering_newer_ctime_replaces_but_a_clients_atime_only_moves_forward(void**) {
    Record r = record(kM0, full(100, 10, 10, 10));
    assert_true(apply(r, full(900, 30, 29, 5, 8192), kReadWrite, false, kNow + 7) ==
                Outcome::Applied);
    assert_int_equal(r.attrs.size, 900);
    assert_int_equal(r.attrs.space_used, 8192);
    assert_int_equal(r.attrs.mtime.ns, 29);
    assert_int_equal(r.attrs.ctime.ns, 30);
    assert_int_equal(r.attrs.atime.ns, 10);
    assert_int_equal(r.learned_ns, kNow + 7);
    assert_true(r.source == Source::Wcc);
}

void ordering_without_ctime_is_invalid(void**) {
    Record r{};
    DsAttrs a = full(100, 10, 10, 10);
    a.valid &= static_cast<std::uint16_t>(~kAttrCtime);
    assert_true(apply(r, a, kReadWrite) == Outcome::IgnoredInvalid);
    assert_int_equal(r.attrs.valid, 0);
}

void equal_ctime_later_arrival_wins_atime_keeps_the_max(void**) {
    Record r = record(kM0, full(100, 50, 50, 60, 4096));
    assert_true(apply(r, full(100, 50, 50, 55, 12288), kReadWrite) == Outcome::Applied);
    assert_int_equal(r.attrs.space_used, 12288);
    assert_int_equal(r.attrs.atime.ns, 60);
    assert_true(apply(r, full(100, 50, 50, 70), kReadWrite) == Outcome::Applied);
    assert_int_equal(r.attrs.atime.ns, 70);
}

void equal_ctime_keeps_the_max_atime_even_from_the_mds(void**) {
    // The MDS's own GETATTR replaces atime on a newer ctime, but not on a tie: reads change
    // atime without changing ctime.
    const ApplyRules getattr = ds_getattr_rules(nullptr, kNow);
    Record r = record(kM0, full(100, 50, 50, 60));
    assert_true(apply(r, full(100, 50, 50, 40), getattr) == Outcome::Applied);
    assert_int_equal(r.attrs.atime.ns, 60);
    assert_true(apply(r, full(100, 51, 51, 40), getattr) == Outcome::Applied);
    assert_int_equal(r.attrs.atime.ns, 40);
    assert_true(r.source == Source::DsGetattr);
}

// ---- authority by iomode ---------------------------------------------------------------------

void authority_by_iomode(void**) {
    assert_int_equal(kReadWrite.authority, kAttrsAll);
    assert_int_equal(kRead.authority, kAttrAtime);
    assert_int_equal(client_report_rules(static_cast<Iomode>(3)).authority, 0);
    assert_int_equal(ds_getattr_rules(nullptr, 0).authority, kAttrsAll);
}

void authority_read_moves_atime_only_and_counts_the_rest(void**) {
    Record r = record(kM0, full(100, 10, 10, 10), kNow);
    std::uint32_t dropped = 0;
    const Outcome o = apply_to_record(r, false, full(999999, 20, 20, 25, 1, 0, 0, 0100777), kRead,
                                      kNow + 50, dropped);
    assert_true(o == Outcome::AppliedPartly);
    assert_int_equal(dropped, 7);
    assert_int_equal(r.attrs.size, 100);
    assert_int_equal(r.attrs.ctime.ns, 10);
    assert_int_equal(r.attrs.uid, 7000);
    assert_int_equal(r.attrs.mode, 0100640);
    assert_int_equal(r.attrs.atime.ns, 25);
    assert_int_equal(r.learned_ns, kNow); // a READ report does not vouch for freshness
}

void authority_read_without_atime_is_unauthorised(void**) {
    Record r{};
    r.slot = kM0;
    DsAttrs a = full(999, 20, 20, 20);
    a.valid &= static_cast<std::uint16_t>(~kAttrAtime);
    std::uint32_t dropped = 0;
    assert_true(apply_to_record(r, false, a, kRead, kNow, dropped) == Outcome::IgnoredUnauthorised);
    assert_int_equal(dropped, 7);
    assert_int_equal(r.attrs.valid, 0);
}

void authority_read_never_moves_a_record_past_the_barrier(void**) {
    Record r = record(kM0, full(100, 10, 10, 10));
    assert_true(apply(r, full(100, 20, 20, 30), kRead, true) == Outcome::AppliedPartly);
    assert_false(r.flags & Record::kPastBarrier);
    assert_true(apply(r, full(100, 20, 20, 30), kReadWrite, true) == Outcome::Applied);
    assert_true(r.flags & Record::kPastBarrier);
}

void count_outcome_tallies_like_a_layout_wcc_result(void**) {
    WccResult res;
    count_outcome(res, Outcome::Applied, 0);
    count_outcome(res, Outcome::AppliedPartly, 7);
    count_outcome(res, Outcome::IgnoredStale, 0);
    count_outcome(res, Outcome::IgnoredUnauthorised, 3);
    count_outcome(res, Outcome::IgnoredUnmatched, 0);
    count_outcome(res, Outcome::IgnoredInvalid, 0);
    assert_int_equal(res.applied, 2);
    assert_int_equal(res.ignored_stale, 1);
    assert_int_equal(res.ignored_unauthorised, 1);
    assert_int_equal(res.ignored_unmatched, 1);
    assert_int_equal(res.ignored_invalid, 1);
    assert_int_equal(res.attrs_unauthorised, 10);
}

// ---- bounds on what a client says (issue #13) ------------------------------------------------

// A record the MDS learned from the data server itself.
Record ds_record(DataFileSlot slot, const DsAttrs& a, std::int64_t learned = kNow) {
    Record r = record(slot, a, learned);
    r.source = Source::DsGetattr;
    return r;
}

void future_ctime_from_a_client_is_refused(void**) {
    ReportLimits limits;
    limits.max_ctime = NfsTime{100};
    const ApplyRules rw = client_report_rules(Iomode::ReadWrite, limits);
    Record r = record(kM0, full(500, 20, 20, 20));
    assert_true(apply(r, full(77, 101, 101, 101), rw) == Outcome::IgnoredFuture);
    assert_int_equal(r.attrs.size, 500);
    assert_int_equal(r.attrs.ctime.ns, 20);
    // Up to the limit is fine; the limit binds clients only.
    assert_true(apply(r, full(600, 100, 100, 100), rw) == Outcome::Applied);
    assert_true(apply(r, full(700, 5000, 5000, 5000), ds_getattr_rules(nullptr, kNow + 1)) ==
                Outcome::Applied);
    // And a READ layout's report too.
    Record fresh = record(kM0, full(500, 20, 20, 20));
    assert_true(apply(fresh, full(1, 101, 101, 101), client_report_rules(Iomode::Read, limits)) ==
                Outcome::IgnoredFuture);
    WccResult res;
    count_outcome(res, Outcome::IgnoredFuture, 0);
    assert_int_equal(res.ignored_future, 1);
    assert_int_equal(res.ignored_invalid, 0);
}

void mds_answer_replaces_a_client_record_learned_before_it_whatever_its_ctime(void**) {
    // The wedge: a client reported a ctime far in the future.
    Record r = record(kM0, full(77, 4'102'444'800'000'000'000, 4'102'444'800'000'000'000, 5));
    assert_true(apply(r, full(300, 50, 50, 50), ds_getattr_rules(nullptr, kNow + 1), false,
                      kNow + 2) == Outcome::Applied);
    assert_int_equal(r.attrs.size, 300);
    assert_int_equal(r.attrs.ctime.ns, 50);
    assert_int_equal(r.attrs.mtime.ns, 50);
    assert_true(r.source == Source::DsGetattr);
    assert_int_equal(r.learned_ns, kNow + 2);
    // Healed: an honest later report is ordered against the data server's ctime again.
    assert_true(apply(r, full(400, 60, 60, 60), kReadWrite, false, kNow + 3) == Outcome::Applied);
    assert_int_equal(r.attrs.size, 400);
}

void mds_answer_sent_before_the_client_record_is_ordered_by_ctime(void**) {
    Record r = record(kM0, full(500, 20, 20, 20), kNow);
    assert_true(apply(r, full(300, 10, 10, 10), ds_getattr_rules(nullptr, kNow - 1)) ==
                Outcome::IgnoredStale);
    assert_int_equal(r.attrs.size, 500);
    // Nor does the override apply between the MDS's own answers.
    Record d = ds_record(kM0, full(500, 20, 20, 20), kNow);
    assert_true(apply(d, full(300, 10, 10, 10), ds_getattr_rules(nullptr, kNow + 1)) ==
                Outcome::IgnoredStale);
    assert_int_equal(d.attrs.size, 500);
}

void mds_answer_after_a_barrier_lowers_a_floor_above_its_ctime(void**) {
    // A client's future ctime became a LAYOUTCOMMIT's floor.
    std::array<Record, 1> files{record(kM0, full(77, 1'000'000, 1'000'000, 5))};
    Record b = apply_layoutcommit(nullptr, files, std::nullopt, std::nullopt, kNow + 1);
    assert_int_equal(files[0].floor.ns, 1'000'000);
    const ApplyRules after = ds_getattr_rules(&b, kNow + 2);
    assert_true(apply(files[0], full(300, 50, 50, 50), after, true, kNow + 3) == Outcome::Applied);
    assert_int_equal(files[0].floor.ns, 50);
    assert_true(apply(files[0], full(400, 60, 60, 60), kReadWrite, true) == Outcome::Applied);
    assert_int_equal(files[0].attrs.size, 400);
}

void read_report_never_creates_a_record(void**) {
    Record r{};
    r.slot = kM0;
    std::uint32_t dropped = 0;
    assert_true(apply_to_record(r, false, full(999, 20, 20, 25), kRead, kNow, dropped) ==
                Outcome::IgnoredUnauthorised);
    assert_int_equal(dropped, 7);
    assert_int_equal(r.attrs.valid, 0);
    assert_int_equal(r.learned_ns, 0);
    // An unordered record (SETATTR(size) without post-op attributes) has no ctime either.
    Record u = unordered_record(kM0);
    assert_true(apply(u, full(999, 20, 20, 25), kRead) != Outcome::Applied);
    assert_int_equal(u.attrs.valid, 0);
}

// ---- equal ctime, by who reported the record and who reports now ---------------------------

void equal_ctime_client_cannot_overwrite_the_data_servers_word(void**) {
    Record r = ds_record(kM0, full(100, 50, 50, 60, 4096));
    assert_true(apply(r, full(999, 50, 49, 70, 1), kReadWrite, false, kNow + 5) ==
                Outcome::Applied);
    assert_int_equal(r.attrs.size, 100);
    assert_int_equal(r.attrs.space_used, 4096);
    assert_int_equal(r.attrs.mtime.ns, 50);
    assert_int_equal(r.attrs.atime.ns, 70); // atime still moves forward
    assert_true(r.source == Source::DsGetattr);
    assert_int_equal(r.learned_ns, kNow);
    DsAttrs no_atime = full(999, 50, 50, 0);
    no_atime.valid &= static_cast<std::uint16_t>(~kAttrAtime);
    assert_true(apply(r, no_atime, kReadWrite) == Outcome::IgnoredStale);
    assert_int_equal(r.attrs.size, 100);
    // An MDS_WRITE record (post-op attributes of the MDS's own I/O) is the same.
    Record w = ds_record(kM0, full(100, 50, 50, 60));
    w.source = Source::MdsWrite;
    assert_true(apply(w, full(999, 50, 50, 60), kReadWrite) == Outcome::Applied);
    assert_int_equal(w.attrs.size, 100);
}

void equal_ctime_the_mds_over_a_client_record_later_arrival_wins(void**) {
    Record r = record(kM0, full(100, 50, 50, 60));
    assert_true(apply(r, full(200, 50, 50, 40), ds_getattr_rules(nullptr, kNow - 10)) ==
                Outcome::Applied);
    assert_int_equal(r.attrs.size, 200);
    assert_int_equal(r.attrs.atime.ns, 60); // never backwards on a tie
    assert_true(r.source == Source::DsGetattr);
}

void equal_ctime_with_a_barrier_floor_goes_to_the_barrier(void**) {
    Record r = ds_record(kM0, full(100, 50, 50, 60));
    r.floor = NfsTime{50};
    r.flags = Record::kHasFloor;
    assert_true(apply(r, full(300, 50, 50, 90), kReadWrite, true) == Outcome::IgnoredStale);
    assert_true(apply(r, full(300, 50, 50, 90), ds_getattr_rules(nullptr, kNow), true) ==
                Outcome::IgnoredStale);
    assert_int_equal(r.attrs.size, 100);
    assert_int_equal(r.attrs.atime.ns, 60);
}

// ---- barriers: LAYOUTCOMMIT and MDS SETATTR(size) ----------------------------------------

void layoutcommit_floor_is_newest_ctime_and_ties_go_to_it(void**) {
    std::array<Record, 1> files{record(kM0, full(100, 10, 10, 10))};
    files[0].flags = Record::kPastBarrier;
    const Record b = apply_layoutcommit(nullptr, files, 4000, NfsTime{15}, kNow + 1);
    assert_true(b.slot == kBarrierSlot);
    assert_true(b.source == Source::LayoutCommit);
    assert_int_equal(b.attrs.size, 4000);
    assert_int_equal(b.attrs.mtime.ns, 15);
    assert_true(b.flags & Record::kGrowOnly);
    assert_int_equal(files[0].floor.ns, 10);
    assert_true(files[0].flags & Record::kHasFloor);
    assert_false(files[0].flags & Record::kPastBarrier);
    assert_true(apply(files[0], full(50, 9, 9, 9), kReadWrite, true) == Outcome::IgnoredStale);
    assert_true(apply(files[0], full(100, 10, 10, 10), kReadWrite, true) == Outcome::IgnoredStale);
    assert_true(apply(files[0], full(6000, 20, 20, 20), kReadWrite, true) == Outcome::Applied);
    assert_true(files[0].flags & Record::kPastBarrier);
}

void layoutcommit_size_is_max_of_new_and_current(void**) {
    std::array<Record, 1> files{record(kM0, full(4000, 10, 10, 10))};
    assert_int_equal(apply_layoutcommit(nullptr, files, 10, std::nullopt, kNow).attrs.size, 4000);
    const Record none =
        apply_layoutcommit(nullptr, std::span<Record>{}, std::nullopt, std::nullopt, kNow);
    assert_false(none.attrs.has(kAttrSize));
}

void setattr_size_without_post_op_leaves_data_files_unordered(void**) {
    std::array<Record, 1> files{record(kM0, full(9000, 10, 10, 10))};
    const std::int64_t at = kNow + 100;
    const Record b = apply_setattr_size(files, 0, std::nullopt, at);
    assert_true(b.source == Source::MdsWrite);
    assert_int_equal(b.attrs.size, 0);
    assert_false(b.flags & Record::kGrowOnly);
    assert_true(files[0].flags & Record::kUnordered);
    // Even a newer ctime from a client cannot be ordered against it...
    assert_true(apply(files[0], full(9000, 20, 20, 20), kReadWrite, true) == Outcome::IgnoredStale);
    // ...nor a GETATTR sent before or at the barrier; one sent strictly after settles it.
    assert_false(ds_getattr_rules(&b, at - 5).issued_after_barrier);
    assert_false(ds_getattr_rules(&b, at).issued_after_barrier);
    assert_true(apply(files[0], full(9000, 20, 20, 20), ds_getattr_rules(&b, at), true) ==
                Outcome::IgnoredStale);
    assert_true(apply(files[0], full(0, 45, 45, 20), ds_getattr_rules(&b, at + 1), true) ==
                Outcome::Applied);
    assert_false(files[0].flags & Record::kUnordered);
    assert_true(unordered_record(kM1).flags & Record::kUnordered);
}

void setattr_size_post_op_floor_is_the_truncates_ctime(void**) {
    Record r = record(kM0, full(9000, 10, 10, 10));
    assert_true(apply_truncate_post_op(r, full(0, 40, 40, 10), kNow + 1));
    assert_true(r.source == Source::MdsWrite);
    assert_int_equal(r.floor.ns, 40);
    assert_int_equal(r.flags, Record::kHasFloor | Record::kPastBarrier);
    assert_true(apply(r, full(9000, 30, 30, 30), kReadWrite, true) == Outcome::IgnoredStale);
    assert_true(apply(r, full(0, 40, 40, 40), kReadWrite, true) == Outcome::IgnoredStale);
    assert_true(apply(r, full(512, 41, 41, 41), kReadWrite, true) == Outcome::Applied);
    DsAttrs no_ctime = full(0, 50, 50, 50);
    no_ctime.valid &= static_cast<std::uint16_t>(~kAttrCtime);
    Record u = unordered_record(kM1);
    assert_false(apply_truncate_post_op(u, no_ctime, kNow));
    assert_true(u.flags & Record::kUnordered);
}

// ---- merge of mirrors' records ---------------------------------------------------------------

void merge_size_and_times_from_freshest_mirror_space_used_summed_atime_max(void**) {
    const std::array<Record, 3> files{record(kM0, full(5000, 30, 29, 10, 4096)),
                                      record(kM1, full(7000, 40, 39, 10, 8192)),
                                      record(kM2, full(6000, 35, 38, 90, 4096))};
    const MergedAttrs m = merge_records(nullptr, files);
    assert_int_equal(m.attrs.size, 7000);
    assert_int_equal(m.attrs.mtime.ns, 39); // from the same mirror as size, never mixed
    assert_int_equal(m.attrs.ctime.ns, 40);
    assert_int_equal(m.attrs.atime.ns, 90);
    assert_int_equal(m.attrs.space_used, 16384);
    assert_int_equal(m.space_used_known, 3);
    assert_int_equal(m.data_files, 3);
    assert_false(m.attrs.valid & (kAttrMode | kAttrOwner | kAttrGroup));
}

void merge_ctime_tie_prefers_recently_learned_then_lower_slot(void**) {
    const std::array<Record, 2> learned{record(kM0, full(100, 40, 40, 10), kNow + 5),
                                        record(kM1, full(200, 40, 40, 10), kNow + 9)};
    assert_int_equal(merge_records(nullptr, learned).attrs.size, 200);
    const std::array<Record, 2> tie{record(kM0, full(100, 40, 40, 10)),
                                    record(kM1, full(200, 40, 40, 10))};
    assert_int_equal(merge_records(nullptr, tie).attrs.size, 100);
}

void merge_with_barrier_only_records_past_it_compete(void**) {
    std::array<Record, 1> files{record(kM0, full(1000, 10, 10, 10))};
    const Record b = apply_layoutcommit(nullptr, files, 4000, NfsTime{15}, kNow + 1);
    MergedAttrs m = merge_records(&b, files);
    assert_int_equal(m.attrs.size, 4000);
    assert_int_equal(m.attrs.mtime.ns, 15);
    assert_int_equal(m.attrs.ctime.ns, 10); // from the freshest data file
    assert_true(m.size_source == Source::LayoutCommit);
    assert_int_equal(m.learned_ns, kNow + 1);
    // Past the floor but smaller: a LAYOUTCOMMIT's size stays a floor.
    assert_true(apply(files[0], full(2000, 20, 20, 20), kReadWrite, true) == Outcome::Applied);
    m = merge_records(&b, files);
    assert_int_equal(m.attrs.size, 4000);
    assert_int_equal(m.attrs.mtime.ns, 20);
    assert_true(m.size_source == Source::LayoutCommit);
    // Larger: the data file wins.
    assert_true(apply(files[0], full(6000, 30, 30, 30), kReadWrite, true) == Outcome::Applied);
    m = merge_records(&b, files);
    assert_int_equal(m.attrs.size, 6000);
    assert_true(m.size_source == Source::Wcc);
}

void merge_freshness_is_the_answers_record_and_the_oldest(void**) {
    const std::array<Record, 2> files{record(kM0, full(100, 10, 10, 10), kNow),
                                      record(kM1, full(100, 20, 20, 10), kNow + 500)};
    const MergedAttrs m = merge_records(nullptr, files);
    assert_int_equal(m.learned_ns, kNow + 500);
    assert_int_equal(m.oldest_learned_ns, kNow);
    const std::array<Record, 2> never{files[0], record(kM1, full(100, 20, 20, 10), 0)};
    assert_int_equal(merge_records(nullptr, never).oldest_learned_ns, 0);
}

// ---- credentials -------------------------------------------------------------------------------

void credentials_compare_owner_group_and_permission_bits(void**) {
    const FencingCreds expect{7000, 7000, 0640};
    assert_true(compare_credentials(full(1, 1, 1, 1, 1, 7000, 7000, 0100640), expect) ==
                CredCheck::Match);
    assert_true(compare_credentials(full(1, 1, 1, 1, 1, 7001, 7000, 0100640), expect) ==
                CredCheck::Mismatch);
    assert_true(compare_credentials(full(1, 1, 1, 1, 1, 7000, 7000, 0100600), expect) ==
                CredCheck::Mismatch);
    assert_true(compare_credentials(full(1, 1, 1, 1, 1, 7000, 7000, 0100600),
                                    FencingCreds{7000, 7000, std::nullopt}) == CredCheck::Match);
    DsAttrs no_mode = full(1, 1, 1, 1);
    no_mode.valid &= static_cast<std::uint16_t>(~kAttrMode);
    assert_true(compare_credentials(no_mode, expect) == CredCheck::Unknown);
    assert_true(compare_credentials(DsAttrs{}, FencingCreds{}) == CredCheck::Unknown);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ordering_older_ctime_is_stale_and_leaves_the_record),
        cmocka_unit_test(ordering_newer_ctime_replaces_but_a_clients_atime_only_moves_forward),
        cmocka_unit_test(ordering_without_ctime_is_invalid),
        cmocka_unit_test(equal_ctime_later_arrival_wins_atime_keeps_the_max),
        cmocka_unit_test(equal_ctime_keeps_the_max_atime_even_from_the_mds),
        cmocka_unit_test(authority_by_iomode),
        cmocka_unit_test(authority_read_moves_atime_only_and_counts_the_rest),
        cmocka_unit_test(authority_read_without_atime_is_unauthorised),
        cmocka_unit_test(authority_read_never_moves_a_record_past_the_barrier),
        cmocka_unit_test(count_outcome_tallies_like_a_layout_wcc_result),
        cmocka_unit_test(future_ctime_from_a_client_is_refused),
        cmocka_unit_test(mds_answer_replaces_a_client_record_learned_before_it_whatever_its_ctime),
        cmocka_unit_test(mds_answer_sent_before_the_client_record_is_ordered_by_ctime),
        cmocka_unit_test(mds_answer_after_a_barrier_lowers_a_floor_above_its_ctime),
        cmocka_unit_test(read_report_never_creates_a_record),
        cmocka_unit_test(equal_ctime_client_cannot_overwrite_the_data_servers_word),
        cmocka_unit_test(equal_ctime_the_mds_over_a_client_record_later_arrival_wins),
        cmocka_unit_test(equal_ctime_with_a_barrier_floor_goes_to_the_barrier),
        cmocka_unit_test(layoutcommit_floor_is_newest_ctime_and_ties_go_to_it),
        cmocka_unit_test(layoutcommit_size_is_max_of_new_and_current),
        cmocka_unit_test(setattr_size_without_post_op_leaves_data_files_unordered),
        cmocka_unit_test(setattr_size_post_op_floor_is_the_truncates_ctime),
        cmocka_unit_test(merge_size_and_times_from_freshest_mirror_space_used_summed_atime_max),
        cmocka_unit_test(merge_ctime_tie_prefers_recently_learned_then_lower_slot),
        cmocka_unit_test(merge_with_barrier_only_records_past_it_compete),
        cmocka_unit_test(merge_freshness_is_the_answers_record_and_the_oldest),
        cmocka_unit_test(credentials_compare_owner_group_and_permission_bits),
    };
    return cmocka_run_group_tests_name("wcc_attr_rules", tests, nullptr, nullptr);
}
