// SPDX-License-Identifier: LGPL-3.0-or-later
// layout/previous_instance: the window in which layouts of the MDS's previous instance may
// still write stays open until the grace period is over and one lease has passed; once
// closed, it names the time before which answers must be learned again; a store without
// files opens none.
#include "cmocka_cpp.hpp"
#include "layout/previous_instance.hpp"

using namespace flexfiles::layout;

namespace {

constexpr std::int64_t kS = 1'000'000'000;
bool grace = true;
int grace_asked = 0;
bool in_grace() {
    grace_asked++;
    return grace;
}

void test_open_until_grace_over_and_one_lease_passed(void**) {
    PreviousInstanceWindow w;
    w.start(true, 100 * kS, 60 * kS);
    grace = false;
    assert_true(w.at(100 * kS, in_grace).open);
    assert_true(w.at(159 * kS, in_grace).open); // grace over early: the lease still runs
    grace = true;
    assert_true(w.at(161 * kS, in_grace).open); // the lease is over, grace is not
    grace = false;
    const PreviousInstanceWindow::View closed = w.at(170 * kS, in_grace);
    assert_false(closed.open);
    assert_int_equal(closed.relearn_before_ns, 170 * kS);
    // Closed for good, and grace is not asked any more.
    grace = true;
    grace_asked = 0;
    const PreviousInstanceWindow::View later = w.at(500 * kS, in_grace);
    assert_false(later.open);
    assert_int_equal(later.relearn_before_ns, 170 * kS);
    assert_int_equal(grace_asked, 0);
}

void test_no_files_no_window(void**) {
    PreviousInstanceWindow w;
    w.start(false, 100 * kS, 60 * kS);
    grace = true;
    const PreviousInstanceWindow::View v = w.at(100 * kS, in_grace);
    assert_false(v.open);
    assert_int_equal(v.relearn_before_ns, 0);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_until_grace_over_and_one_lease_passed),
        cmocka_unit_test(test_no_files_no_window),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
