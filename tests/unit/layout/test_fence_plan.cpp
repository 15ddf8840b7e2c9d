// SPDX-License-Identifier: LGPL-3.0-or-later
// layout/fence_plan: which ends of a layout need a fence, whether a layout still opens a
// data file, and which mirrors a failed fence marks stale.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" { // cmocka.h (1.1) declares its functions without C linkage
#include <cmocka.h>
}
#undef fail

#include "layout/fence_plan.hpp"

#include <vector>

using namespace flexfiles;
using namespace flexfiles::layout;

namespace {

mds::DataFileMap map_of(std::vector<std::pair<std::uint32_t, std::uint32_t>> owners) {
    mds::DataFileMap m;
    std::uint32_t mirror = 0;
    for (auto [uid, gid] : owners) {
        mds::DataFile f;
        f.mirror = mirror++;
        f.fencing_uid = uid;
        f.fencing_gid = gid;
        m.files.push_back(f);
    }
    return m;
}

void test_ended_by_holder(void**) {
    assert_true(ended_by_holder(SegmentEnd::returned));
    assert_true(ended_by_holder(SegmentEnd::reclaimed));
    assert_true(ended_by_holder(SegmentEnd::closed));
    assert_true(ended_by_holder(SegmentEnd::forgotten));
    assert_true(ended_by_holder(SegmentEnd::unsent)); // the client never had its credentials
    assert_false(ended_by_holder(SegmentEnd::revoked));
    assert_false(ended_by_holder(SegmentEnd::server_shutdown));
}

void test_layout_still_writes(void**) {
    const auto granted = map_of({{100, 200}, {100, 200}});
    assert_true(layout_still_writes(granted, map_of({{100, 200}, {100, 200}})));
    // fenced everywhere: no longer
    assert_false(layout_still_writes(granted, map_of({{101, 201}, {101, 201}})));
    // fenced on one mirror only: it still opens the other
    assert_true(layout_still_writes(granted, map_of({{101, 201}, {100, 200}})));
    // the uid alone, or the gid alone, is not the owner
    assert_false(layout_still_writes(granted, map_of({{100, 201}, {101, 200}})));
    // a layout that left a stale mirror out is matched by mirror index, not position
    mds::DataFileMap only_second = map_of({{7, 7}, {100, 200}});
    only_second.files.erase(only_second.files.begin());
    assert_true(layout_still_writes(only_second, map_of({{101, 201}, {100, 200}})));
    assert_false(layout_still_writes(only_second, map_of({{100, 200}, {101, 201}})));
    assert_false(layout_still_writes(mds::DataFileMap{}, granted));
}

void test_stale_after_failed_fence(void**) {
    // one of two failed: marked
    StalePlan p = stale_after_failed_fence({1}, {}, 2);
    assert_true(p.mark == std::vector<std::uint32_t>{1});
    assert_false(p.kept_in_sync.has_value());
    // both failed: the lowest stays in sync, the other is marked
    p = stale_after_failed_fence({1, 0}, {}, 2);
    assert_true(p.mark == std::vector<std::uint32_t>{1});
    assert_true(p.kept_in_sync == std::optional<std::uint32_t>(0));
    // the only in-sync mirror failed (the other is stale already): nothing marked
    p = stale_after_failed_fence({0}, {1}, 2);
    assert_true(p.mark.empty());
    assert_true(p.kept_in_sync == std::optional<std::uint32_t>(0));
    // an already stale mirror is not marked again, and does not count as in sync
    p = stale_after_failed_fence({1, 2}, {2}, 3);
    assert_true(p.mark == std::vector<std::uint32_t>{1});
    assert_false(p.kept_in_sync.has_value());
    // duplicates and mirrors the file does not have are ignored
    p = stale_after_failed_fence({2, 2, 9}, {}, 3);
    assert_true(p.mark == std::vector<std::uint32_t>{2});
    // nothing failed
    p = stale_after_failed_fence({}, {}, 2);
    assert_true(p.mark.empty());
    assert_false(p.kept_in_sync.has_value());
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ended_by_holder),
        cmocka_unit_test(test_layout_still_writes),
        cmocka_unit_test(test_stale_after_failed_fence),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
