// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Owner strings of a LAYOUT_WCC body (fsal_flexfiles/core/cache/owner_map.hpp): decimal ids
// without a lookup, names through the lookup at most kMaxOwnerLookupsPerBody per body and
// once each, an unmappable owner unknown (never the anonymous id, never a repair); and the
// Table 1 values decoder the FSAL uses instead of Ganesha's (so that it gets the raw strings).
#include "cache/owner_map.hpp"
#include "cache/wcc_apply.hpp"
#include "wcc_test_body.hpp"

#include <deque>
#include <string>
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

// A lookup that knows "alice" (uid 501, gid 601) and records every name it was asked.
struct FakeIdmapper {
    std::vector<std::string> asked;
    OwnerMap::Lookup lookup() {
        return [this](std::string_view name, bool group) -> std::optional<std::uint32_t> {
            asked.emplace_back(name);
            if (name == "alice@example.com")
                return group ? 601u : 501u;
            return std::nullopt;
        };
    }
};

void decimal_ids_need_no_lookup(void**) {
    assert_int_equal(*decimal_id("0"), 0);
    assert_int_equal(*decimal_id("1000001"), 1000001);
    assert_int_equal(*decimal_id("4294967295"), 4294967295u);
    for (const char* not_id : {"", "4294967296", "01", "+1", "-1", " 1", "1 ", "1a", "x1@dom"})
        assert_false(decimal_id(not_id).has_value());
    FakeIdmapper idm;
    OwnerMap m(idm.lookup());
    assert_int_equal(*m.map("1000001", false), 1000001);
    assert_int_equal(*m.map("1000002", true), 1000002);
    assert_true(idm.asked.empty());
    assert_int_equal(m.lookups(), 0);
}

void names_are_looked_up_once_per_body(void**) {
    FakeIdmapper idm;
    OwnerMap m(idm.lookup());
    for (int i = 0; i < 5; ++i) {
        assert_int_equal(*m.map("alice@example.com", false), 501);
        assert_int_equal(*m.map("alice@example.com", true), 601);
    }
    // One lookup for the owner, one for the group (different namespaces).
    assert_int_equal(idm.asked.size(), 2);
    assert_int_equal(m.lookups(), 2);
    assert_int_equal(m.unknown(), 0);
}

void an_unmappable_owner_is_unknown_not_anonymous(void**) {
    FakeIdmapper idm;
    OwnerMap m(idm.lookup());
    assert_false(m.map("x1@hostile.example", false).has_value());
    assert_false(m.map("x1@hostile.example", false).has_value()); // cached: no second lookup
    assert_int_equal(idm.asked.size(), 1);
    assert_int_equal(m.unknown(), 2);
    OwnerMap no_lookup({});
    assert_false(no_lookup.map("alice@example.com", false).has_value());
}

void lookups_are_bounded_per_body(void**) {
    FakeIdmapper idm;
    OwnerMap m(idm.lookup(), 8);
    for (int i = 0; i < 600; ++i)
        assert_false(m.map("x" + std::to_string(i) + "@hostile.example", i % 2 == 1).has_value());
    assert_int_equal(idm.asked.size(), 8);
    assert_int_equal(m.lookups(), 8);
    assert_int_equal(m.unknown(), 600);
    assert_int_equal(m.over_bound(), 592);
    // Past the bound a known name is unknown too; decimal ids still map.
    assert_false(m.map("alice@example.com", false).has_value());
    assert_int_equal(*m.map("1000001", false), 1000001);
    assert_int_equal(kMaxOwnerLookupsPerBody, 8);
}

// ---- decode_table1 --------------------------------------------------------------------

// The owner strings of `v` are views into the body: it outlives the decode (one per test
// file, holding every body decoded; found by AddressSanitizer when it was a local).
BodyStatus decode(const Attrs& a, Table1Values& v, std::string& why) {
    static std::deque<Body> bodies;
    Body& b = bodies.emplace_back();
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), a);
    return decode_table1(b.entries[0].attributes, v, why);
}

void table1_values_decode_in_attribute_order(void**) {
    Attrs a = full(123456789012ull, 1700000000, 1000001, 1000002, 1700000001, 1699999999);
    a.ctime->nsec = 5;
    a.owner = "alice@example.com";
    Table1Values v;
    std::string why;
    assert_true(decode(a, v, why) == BodyStatus::Ok);
    assert_int_equal(v.attrs.size, 123456789012ull);
    assert_int_equal(v.attrs.mode, 0640);
    assert_int_equal(v.attrs.space_used, *a.used);
    assert_int_equal(v.attrs.ctime.ns, 1700000000'000000005ll);
    assert_int_equal(v.attrs.mtime.ns, 1700000001'000000000ll);
    assert_int_equal(v.attrs.atime.ns, 1699999999'000000000ll);
    assert_true(*v.owner == "alice@example.com");
    assert_true(*v.owner_group == "1000002");
    // Owner and group are left to the OwnerMap.
    assert_int_equal(v.attrs.valid,
                     kAttrSize | kAttrMode | kAttrSpaceUsed | kAttrAtime | kAttrMtime | kAttrCtime);
}

void table1_bad_values(void**) {
    Table1Values v;
    std::string why;
    Attrs trailing = full(1, 100);
    trailing.trailing = {0, 0, 0, 1};
    assert_true(decode(trailing, v, why) == BodyStatus::BadXdr);
    Attrs nsec = full(1, 100);
    nsec.mtime->nsec = 1'000'000'000;
    assert_true(decode(nsec, v, why) == BodyStatus::Inval);
    Attrs empty_owner = full(1, 100);
    empty_owner.owner = "";
    assert_true(decode(empty_owner, v, why) == BodyStatus::Inval);
    Attrs long_owner = full(1, 100);
    long_owner.owner = std::string(1025, 'x');
    assert_true(decode(long_owner, v, why) == BodyStatus::Inval);
    long_owner.owner = std::string(1024, 'x');
    assert_true(decode(long_owner, v, why) == BodyStatus::Ok);
    // Short: the mask names size but the values end.
    Body b;
    b.add(fleet::make_deviceid(1), fh_bytes(0x10), full(1, 100));
    b.entries[0].attributes.values = b.entries[0].attributes.values.first(4);
    assert_true(decode_table1(b.entries[0].attributes, v, why) == BodyStatus::BadXdr);
    // A string whose length runs past the end.
    Body s;
    Attrs only_owner;
    only_owner.owner = "abcd";
    s.add(fleet::make_deviceid(1), fh_bytes(0x10), only_owner);
    s.entries[0].attributes.values = s.entries[0].attributes.values.first(6);
    assert_true(decode_table1(s.entries[0].attributes, v, why) == BodyStatus::BadXdr);
}

// ---- through LAYOUT_WCC's apply path ---------------------------------------------------

void unknown_owners_are_no_mismatch_and_no_repair(void**) {
    AttrCache cache{16};
    RepairTracker repairs;
    WccCounters counters;
    mds::DataFileMap map;
    map.file_id = 77;
    map.files = {data_file(0, 1, fh_bytes(0x10))};
    Body b;
    for (int i = 0; i < 300; ++i) {
        Attrs a = full(4096, 100 + i);
        a.owner = "x" + std::to_string(i) + "@hostile.example";
        a.group = "g" + std::to_string(i) + "@hostile.example";
        b.add(fleet::make_deviceid(1), fh_bytes(0x10), a);
    }
    FakeIdmapper idm;
    OwnerMap owners(idm.lookup());
    const Validation v = validate_entries(b.entries, table1_decoder(owners));
    assert_true(v.status == BodyStatus::Ok);
    assert_int_equal(owners.unknown(), 600);
    assert_int_equal(idm.asked.size(), kMaxOwnerLookupsPerBody);
    for (const DsAttrs& a : v.attrs)
        assert_false(a.valid & (kAttrOwner | kAttrGroup));
    const ApplyOutcome o =
        apply_layout_wcc(cache, map, nullptr, b.entries, v, LayoutAuthority::ReadWrite,
                         ApplyPolicy{}, repairs, counters, 1000);
    assert_true(o.status == BodyStatus::Ok);
    assert_int_equal(o.cache.applied, 300); // sizes and times still count
    assert_int_equal(o.credential_mismatches, 0);
    assert_true(o.repairs.empty());
    assert_int_equal(counters.get(WccCounters::kCredMismatches), 0);
    // A known wrong owner in the same kind of body is still repaired.
    Body wrong;
    Attrs a = full(4096, 1000);
    a.owner = "alice@example.com";
    wrong.add(fleet::make_deviceid(1), fh_bytes(0x10), a);
    OwnerMap owners2(idm.lookup());
    const Validation v2 = validate_entries(wrong.entries, table1_decoder(owners2));
    const ApplyOutcome o2 =
        apply_layout_wcc(cache, map, nullptr, wrong.entries, v2, LayoutAuthority::ReadWrite,
                         ApplyPolicy{}, repairs, counters, 2000);
    assert_int_equal(o2.repairs.size(), 1);
    assert_int_equal(o2.repairs[0].reported_uid, 501);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decimal_ids_need_no_lookup),
        cmocka_unit_test(names_are_looked_up_once_per_body),
        cmocka_unit_test(an_unmappable_owner_is_unknown_not_anonymous),
        cmocka_unit_test(lookups_are_bounded_per_body),
        cmocka_unit_test(table1_values_decode_in_attribute_order),
        cmocka_unit_test(table1_bad_values),
        cmocka_unit_test(unknown_owners_are_no_mismatch_and_no_repair),
    };
    return cmocka_run_group_tests_name("wcc_owner_map", tests, nullptr, nullptr);
}
