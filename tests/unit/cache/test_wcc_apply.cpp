// SPDX-License-Identifier: LGPL-3.0-or-later
//
// LAYOUT_WCC's apply path (fsal_flexfiles/core/cache/wcc_body.hpp, wcc_apply.hpp): validation, the
// (deviceid, stateid, filehandle) triple, all-or-nothing, authority, Trust_WCC, and the
// credential repairs. One test per rule.
#include "cache/wcc_apply.hpp"
#include "wcc_test_body.hpp"

#include <vector>

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}
// clang-format on

using namespace flexfiles;
using namespace flexfiles::wcc;
using namespace wcctest;

namespace {

constexpr FileId kFile = 4242;
constexpr std::int64_t kNow = 5'000'000'000'000;

// Two mirrors on two data servers: the usual Mirrors = 2 file.
mds::DataFileMap two_mirrors() {
    mds::DataFileMap m;
    m.file_id = kFile;
    m.stripe_unit = 1 << 20;
    m.files = {data_file(0, 1, fh_bytes(0x10)), data_file(1, 2, fh_bytes(0x20))};
    return m;
}

// Two data files on ONE device, same (anonymous) stateid: only the filehandle tells them
// apart (RFC 9766 3.7).
mds::DataFileMap one_device_two_files() {
    mds::DataFileMap m;
    m.file_id = kFile;
    m.files = {data_file(0, 7, fh_bytes(0x31)), data_file(1, 7, fh_bytes(0x32))};
    return m;
}

struct Fixture {
    AttrCache cache{16};
    RepairTracker repairs;
    WccCounters counters;
    mds::DataFileMap map = two_mirrors();
    const mds::DataFileMap* layout = nullptr; // the caller's layout, when it names fewer

    ApplyPolicy policy;

    ApplyOutcome apply(const Body& b, LayoutAuthority auth = LayoutAuthority::ReadWrite,
                       bool trust = true, std::int64_t now = kNow) {
        ApplyPolicy p = policy;
        p.trust_wcc = trust;
        return apply_layout_wcc(cache, map, layout, b.entries, test_decode, auth, p, repairs,
                                counters, now);
    }
    std::optional<DsAttrs> at(std::uint16_t mirror, std::uint16_t ds = 0) {
        auto r = cache.lookup(DataFileKey{map.file_id, DataFileSlot{mirror, ds}});
        return r ? std::optional<DsAttrs>(r->attrs) : std::nullopt;
    }
};

// ---- Table 1 -------------------------------------------------------------------------

void table1_mask_is_accepted(void**) {
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1 << 20, 100));
    assert_true(attrmask_is_table1(b.entries[0].attributes));
    Fattr4View empty;
    assert_true(attrmask_is_table1(empty));
}

void attribute_outside_table1_rejects_whole_op_with_inval(void**) {
    for (std::uint32_t bad : {1u /* type */, 3u /* change */, 48u /* time_access_set */,
                              54u /* time_modify_set */, 75u /* word 2 */}) {
        Fixture f;
        Body b;
        b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1 << 20, 100)); // fine
        Attrs a = full(2 << 20, 100);
        set_bit(a.extra_bits, bad);
        b.add(fleet::make_deviceid(2), fh_bytes(0x20), a);
        ApplyOutcome o = f.apply(b);
        assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Inval));
        assert_int_equal(o.bad_entry, 1);
        // Nothing applied, not even the good first entry.
        assert_false(f.at(0).has_value());
        assert_false(f.at(1).has_value());
        assert_int_equal(f.counters.get(WccCounters::kOpsInval), 1);
        assert_int_equal(f.counters.get(WccCounters::kEntriesApplied), 0);
    }
}

void outside_bit_is_inval_even_when_trust_wcc_is_off(void**) {
    Fixture f;
    Body b;
    Attrs a = full(1, 100);
    set_bit(a.extra_bits, 1);
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), a);
    ApplyOutcome o = f.apply(b, LayoutAuthority::ReadWrite, /*trust=*/false);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Inval));
}

// ---- All or nothing ------------------------------------------------------------------

void bad_values_in_last_entry_apply_nothing(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1 << 20, 100));
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), full(1 << 20, 100));
    Attrs trailing = full(3, 100);
    trailing.trailing = {0, 0, 0, 1}; // a value too many
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), trailing);
    ApplyOutcome o = f.apply(b);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::BadXdr));
    assert_int_equal(o.bad_entry, 2);
    assert_false(f.at(0).has_value());
    assert_false(f.at(1).has_value());
    assert_false(f.cache.merged(kFile).has_value());
    assert_int_equal(f.counters.get(WccCounters::kOpsBadXdr), 1);
}

void short_values_are_badxdr(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1, 100));
    // Mask says size but there are no values at all.
    BodyEntry& e = b.entries.back();
    e.attributes.values = e.attributes.values.first(4);
    assert_int_equal(static_cast<int>(f.apply(b).status), static_cast<int>(BodyStatus::BadXdr));
    // Values without any mask bit.
    Body b2;
    Attrs none;
    none.trailing = {0, 0, 0, 0};
    b2.add(fleet::make_deviceid(1), fh_bytes(0x10), none);
    assert_int_equal(static_cast<int>(f.apply(b2).status), static_cast<int>(BodyStatus::BadXdr));
    assert_false(f.at(0).has_value());
}

void decoder_inval_rejects_whole_op(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1, 100));
    Attrs a = full(1, 100);
    a.owner = "nobody-we-know"; // the idmapper would not map it
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), a);
    ApplyOutcome o = f.apply(b);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Inval));
    assert_false(f.at(0).has_value());
}

// ---- The triple ----------------------------------------------------------------------

void same_device_same_stateid_told_apart_by_fh(void**) {
    const mds::DataFileMap m = one_device_two_files();
    Body b;
    b.add(fleet::make_deviceid(7), fh_bytes(0x32), full(1, 1));
    b.add(fleet::make_deviceid(7), fh_bytes(0x31), full(1, 1));
    assert_int_equal(*match_data_file(m, b.entries[0]), 1);
    assert_int_equal(*match_data_file(m, b.entries[1]), 0);

    Fixture f;
    f.map = m;
    Body body;
    body.add(fleet::make_deviceid(7), fh_bytes(0x32), full(2 << 20, 200)); // second file
    ApplyOutcome o = f.apply(body);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Ok));
    assert_int_equal(o.cache.applied, 1);
    assert_false(f.at(0).has_value()); // the first file on the same device is untouched
    assert_true(f.at(1).has_value());
    assert_int_equal(f.at(1)->size, 2 << 20);
}

void every_part_of_the_triple_is_required(void**) {
    const mds::DataFileMap m = two_mirrors();
    Body b;
    // Right fh, wrong device (mirror 1's device with mirror 0's fh).
    b.add(fleet::make_deviceid(2), fh_bytes(0x10), full(1, 1));
    // Right device and fh, not the stateid the layout gave.
    Stateid other;
    other.seqid = 1;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1, 1), other);
    Stateid other2;
    other2.other[11] = 1;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1, 1), other2);
    // No filehandle at all.
    b.add_fhs(fleet::make_deviceid(1), {}, full(1, 1));
    // A filehandle that differs in its last byte or its length.
    auto fh = fh_bytes(0x10);
    fh.back() ^= 1;
    b.add(fleet::make_deviceid(1), fh, full(1, 1));
    b.add(fleet::make_deviceid(1), fh_bytes(0x10, 27), full(1, 1));
    for (const BodyEntry& e : b.entries) {
        assert_false(match_data_file(m, e).has_value());
    }
    // One of several filehandles (one per NFS version) is enough.
    Body ok;
    ok.add_fhs(fleet::make_deviceid(1), {fh_bytes(0x77), fh_bytes(0x10)}, full(1, 1));
    assert_int_equal(*match_data_file(m, ok.entries[0]), 0);
}

void unmatched_entries_are_counted_never_applied_elsewhere(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(2), fh_bytes(0x10), full(9 << 20, 300)); // mixed triple
    b.add(fleet::make_deviceid(9), fh_bytes(0x99), full(9 << 20, 300)); // another layout
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1 << 20, 100)); // the real one
    ApplyOutcome o = f.apply(b);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Ok));
    assert_int_equal(o.unmatched, 2);
    assert_int_equal(o.cache.applied, 1);
    assert_int_equal(o.cache.ignored_unmatched, 2);
    assert_int_equal(f.at(0)->size, 1 << 20);
    assert_false(f.at(1).has_value());
    assert_int_equal(f.counters.get(WccCounters::kEntriesUnmatched), 2);
    assert_int_equal(f.counters.get(WccCounters::kEntriesApplied), 1);
}

void position_in_body_is_ignored(void**) {
    // The client sends only mirror 1, in first position.
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), full(5, 100));
    f.apply(b);
    assert_false(f.at(0).has_value());
    assert_int_equal(f.at(1)->size, 5);
}

void empty_masks_are_skipped(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(7, 100));
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), Attrs{}); // nothing new for mirror 1
    ApplyOutcome o = f.apply(b);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Ok));
    assert_int_equal(o.empty, 1);
    assert_int_equal(o.cache.applied, 1);
    assert_int_equal(o.cache.ignored_invalid, 0);
    assert_false(f.at(1).has_value());
    assert_int_equal(f.counters.get(WccCounters::kEntriesEmpty), 1);
}

void only_data_files_of_the_callers_layout_match(void**) {
    Fixture f;
    mds::DataFileMap layout = f.map;
    layout.files.resize(1); // the caller's layout names mirror 0 only
    f.layout = &layout;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1, 100));
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), full(2, 100)); // a data file of the file
    ApplyOutcome o = f.apply(b);
    assert_int_equal(o.cache.applied, 1);
    assert_int_equal(o.unmatched, 1);
    assert_int_equal(f.at(0)->size, 1);
    assert_false(f.at(1).has_value());
}

void reports_land_on_the_data_files_cache_key(void**) {
    // The key the rest of the FSAL uses for a data file (mds::cache_key): file, mirror, 0.
    Fixture f;
    f.map = one_device_two_files();
    Body b;
    b.add(fleet::make_deviceid(7), fh_bytes(0x32), full(3, 100));
    f.apply(b);
    const DataFileKey key = mds::cache_key(f.map, f.map.files[1]);
    assert_true(key == (DataFileKey{kFile, DataFileSlot{1, 0}}));
    assert_true(f.cache.lookup(key).has_value());
}

// ---- Authority and Trust_WCC ---------------------------------------------------------

void read_layout_moves_atime_only(void**) {
    Fixture f;
    Body rw;
    rw.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1 << 20, 100, 1000001, 1000001, 100, 100));
    f.apply(rw);
    Body rd;
    rd.add(fleet::make_deviceid(1), fh_bytes(0x10), full(8 << 20, 200, 1000001, 1000001, 200, 250));
    ApplyOutcome o = f.apply(rd, LayoutAuthority::Read);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Ok));
    DsAttrs a = *f.at(0);
    assert_int_equal(a.size, 1 << 20);                // not 8 MiB
    assert_true(a.mtime == NfsTime{100'000'000'000}); // unchanged
    assert_true(a.ctime == NfsTime{100'000'000'000}); // unchanged
    assert_true(a.atime == NfsTime{250'000'000'000}); // moved
    assert_true(f.counters.get(WccCounters::kAttrsUnauthorised) > 0);
}

void read_write_layout_sets_size_and_times(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(3 << 20, 300));
    f.apply(b, LayoutAuthority::ReadWrite);
    DsAttrs a = *f.at(0);
    assert_int_equal(a.size, 3 << 20);
    assert_int_equal(a.space_used, 3 << 20);
    assert_true(a.ctime == NfsTime{300'000'000'000});
}

void no_segment_sets_nothing(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(3, 300));
    ApplyOutcome o = f.apply(b, LayoutAuthority::None);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Ok));
    assert_false(f.at(0).has_value());
    assert_int_equal(f.counters.get(WccCounters::kOpsNoAuthority), 1);
    assert_int_equal(f.counters.get(WccCounters::kEntriesUnauthorised), 1);
}

void trust_wcc_off_answers_ok_and_applies_nothing(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(3, 300));
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), full(3, 300, 42, 42)); // wrong creds too
    ApplyOutcome o = f.apply(b, LayoutAuthority::ReadWrite, /*trust=*/false);
    assert_int_equal(static_cast<int>(o.status), static_cast<int>(BodyStatus::Ok));
    assert_true(o.untrusted);
    assert_false(f.at(0).has_value());
    assert_false(f.at(1).has_value());
    assert_true(o.repairs.empty());
    assert_int_equal(f.counters.get(WccCounters::kOpsUntrusted), 1);
    assert_int_equal(f.counters.get(WccCounters::kEntriesUntrusted), 2);
    assert_int_equal(f.cache.stats().ops, 0); // the cache was never asked
}

void stale_report_changes_nothing(void**) {
    Fixture f;
    Body now;
    now.add(fleet::make_deviceid(1), fh_bytes(0x10), full(2 << 20, 500));
    f.apply(now);
    Body old;
    old.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1 << 20, 400, 7, 7));
    ApplyOutcome o = f.apply(old);
    assert_int_equal(o.cache.ignored_stale, 1);
    assert_int_equal(f.at(0)->size, 2 << 20);
    assert_true(o.repairs.empty()); // a stale report says nothing about the data file now
    assert_int_equal(f.counters.get(WccCounters::kEntriesStale), 1);
}

// ---- Credentials ---------------------------------------------------------------------

void credential_mismatch_asks_for_one_repair(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), full(1, 100, 0, 0)); // root-owned data file
    ApplyOutcome o = f.apply(b);
    assert_int_equal(o.credential_mismatches, 1);
    assert_int_equal(o.repairs.size(), 1);
    const CredentialRepair& r = o.repairs[0];
    assert_int_equal(r.data_file, 1);
    assert_int_equal(r.reported_uid, 0);
    assert_int_equal(r.expected_uid, 1000001);
    assert_int_equal(r.expected_gid, 1000001);
    assert_true(r.key == (DataFileKey{kFile, DataFileSlot{1, 0}}));

    // A second report while the repair is in flight: counted, no second repair.
    Body again;
    again.add(fleet::make_deviceid(2), fh_bytes(0x20), full(1, 101, 0, 0));
    ApplyOutcome o2 = f.apply(again);
    assert_int_equal(o2.repairs.size(), 0);
    assert_int_equal(o2.repairs_coalesced, 1);
    assert_int_equal(f.repairs.in_flight(), 1);

    f.repairs.end(r.key);
    Body third;
    third.add(fleet::make_deviceid(2), fh_bytes(0x20), full(1, 102, 0, 0));
    assert_int_equal(f.apply(third).repairs.size(), 1);
    assert_int_equal(f.counters.get(WccCounters::kCredMismatches), 3);
}

void read_layout_reports_credentials_too(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1, 100, 1000001, 5));
    ApplyOutcome o = f.apply(b, LayoutAuthority::Read);
    assert_int_equal(o.repairs.size(), 1);
    assert_int_equal(o.repairs[0].reported_gid, 5);
}

void matching_credentials_need_no_repair(void**) {
    Fixture f;
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1, 100));
    Attrs no_owner = full(1, 100);
    no_owner.owner.reset();
    no_owner.group.reset();
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), no_owner);
    ApplyOutcome o = f.apply(b);
    assert_int_equal(o.credential_mismatches, 0);
    assert_true(o.repairs.empty());
}

// ---- bounds on what a client says (issue #13) ------------------------------------------

void entry_for_a_stale_mirror_is_ignored_and_counted(void**) {
    Fixture f;
    f.policy.stale_mirrors = {0};
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(77, 900, 1)); // mirror 0: stale
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), full(1 << 20, 100));
    const ApplyOutcome o = f.apply(b);
    assert_true(o.status == BodyStatus::Ok);
    assert_int_equal(o.stale_mirror, 1);
    assert_int_equal(o.cache.applied, 1);
    assert_false(f.at(0).has_value());
    assert_int_equal(f.at(1)->size, 1 << 20);
    assert_true(o.repairs.empty()); // its wrong owner is not repaired either
    assert_int_equal(f.counters.get(WccCounters::kEntriesStaleMirror), 1);
    assert_int_equal(f.counters.get(WccCounters::kEntriesApplied), 1);
    assert_int_equal(f.cache.merged(kFile)->attrs.size, 1 << 20);
}

void future_ctime_is_refused_and_counted(void**) {
    Fixture f;
    f.policy.limits.max_ctime = *NfsTime::from_parts(1000, 0);
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(77, 4102444800));
    b.add(fleet::make_deviceid(2), fh_bytes(0x20), full(1 << 20, 1000));
    const ApplyOutcome o = f.apply(b);
    assert_true(o.status == BodyStatus::Ok);
    assert_int_equal(o.cache.ignored_future, 1);
    assert_int_equal(o.cache.applied, 1);
    assert_false(f.at(0).has_value());
    assert_int_equal(f.counters.get(WccCounters::kEntriesFutureCtime), 1);
    assert_int_equal(f.cache.stats().entries_ignored_future, 1);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table1_mask_is_accepted),
        cmocka_unit_test(attribute_outside_table1_rejects_whole_op_with_inval),
        cmocka_unit_test(outside_bit_is_inval_even_when_trust_wcc_is_off),
        cmocka_unit_test(bad_values_in_last_entry_apply_nothing),
        cmocka_unit_test(short_values_are_badxdr),
        cmocka_unit_test(decoder_inval_rejects_whole_op),
        cmocka_unit_test(same_device_same_stateid_told_apart_by_fh),
        cmocka_unit_test(every_part_of_the_triple_is_required),
        cmocka_unit_test(unmatched_entries_are_counted_never_applied_elsewhere),
        cmocka_unit_test(position_in_body_is_ignored),
        cmocka_unit_test(empty_masks_are_skipped),
        cmocka_unit_test(only_data_files_of_the_callers_layout_match),
        cmocka_unit_test(reports_land_on_the_data_files_cache_key),
        cmocka_unit_test(read_layout_moves_atime_only),
        cmocka_unit_test(read_write_layout_sets_size_and_times),
        cmocka_unit_test(no_segment_sets_nothing),
        cmocka_unit_test(trust_wcc_off_answers_ok_and_applies_nothing),
        cmocka_unit_test(stale_report_changes_nothing),
        cmocka_unit_test(entry_for_a_stale_mirror_is_ignored_and_counted),
        cmocka_unit_test(future_ctime_is_refused_and_counted),
        cmocka_unit_test(credential_mismatch_asks_for_one_repair),
        cmocka_unit_test(read_layout_reports_credentials_too),
        cmocka_unit_test(matching_credentials_need_no_repair),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
