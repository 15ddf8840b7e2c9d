// SPDX-License-Identifier: LGPL-3.0-or-later
// The marks MDSs sharing one namespace leave on a file (model/namespace_marks.hpp): names
// and values parse back to what was written and nothing else (a client or another program
// may have written the object), and a write lease is live for exactly as long as another
// MDS must assume the holder may still write.
#include "cmocka_cpp.hpp"
#include "model/namespace_marks.hpp"

using namespace flexfiles::mds;

namespace {

void test_stale_mark_names(void**) {
    assert_string_equal(stale_mark_name(0).c_str(), "flexfiles.stale.0");
    assert_string_equal(stale_mark_name(13).c_str(), "flexfiles.stale.13");
    for (std::uint32_t m : {0u, 1u, 63u, 4294967295u})
        assert_int_equal(*stale_mark_mirror(stale_mark_name(m)), m);
    for (const char* bad : {"flexfiles.stale.", "flexfiles.stale.-1", "flexfiles.stale.01",
                            "flexfiles.stale.1x", "flexfiles.stale.4294967296", "flexfiles.rw.1",
                            "flexfiles.stale", "stale.1", "flexfiles.stale. 1"})
        assert_false(stale_mark_mirror(bad).has_value());
}

void test_lease_values(void**) {
    assert_string_equal(write_lease_value(1733400000123).c_str(), "1733400000123");
    assert_int_equal(*parse_write_lease(write_lease_value(1733400000123)), 1733400000123);
    assert_int_equal(*parse_write_lease("0"), 0);
    for (const char* bad : {"", "-5", "+5", "05", "5 ", "1e9", "99999999999999999999",
                            "1"
                            "\n"})
        assert_false(parse_write_lease(bad).has_value());
}

void test_lease_times(void**) {
    const WriteLeaseTimes t; // 30 s, renew below 20 s, skew 5 s
    // Another MDS: live until the end plus the skew, not a millisecond longer.
    assert_true(write_lease_live(100'000, 100'000, t));
    assert_true(write_lease_live(100'000, 105'000, t));
    assert_false(write_lease_live(100'000, 105'001, t));
    // The holder: renews before a write when less than 20 s are left.
    assert_false(write_lease_needs_renewal(100'000, 80'000, t));
    assert_true(write_lease_needs_renewal(100'000, 80'001, t));
    assert_true(write_lease_needs_renewal(100'000, 200'000, t));
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stale_mark_names),
        cmocka_unit_test(test_lease_values),
        cmocka_unit_test(test_lease_times),
    };
    return cmocka_run_group_tests_name("model_namespace_marks", tests, nullptr, nullptr);
}
