// SPDX-License-Identifier: LGPL-3.0-or-later
// layout/report_limiter: each client's error reports are admitted up to a burst, then at
// the refill rate; one client's flood never spends another's budget; idle clients are
// forgotten.
#include "cmocka_cpp.hpp"
#include "layout/report_limiter.hpp"

using namespace flexfiles::layout;
using namespace std::chrono_literals;

namespace {

const ReportLimiter::Clock::time_point t0{};

void test_burst_then_refill(void**) {
    ReportLimiter limiter(4, 2);
    for (int i = 0; i < 4; i++)
        assert_true(limiter.admit(1, t0));
    assert_false(limiter.admit(1, t0));
    assert_false(limiter.admit(1, t0 + 400ms)); // 0.8 of a report refilled
    assert_true(limiter.admit(1, t0 + 500ms));  // one
    assert_false(limiter.admit(1, t0 + 500ms));
    // a long pause refills to the burst, never beyond it
    int admitted = 0;
    while (limiter.admit(1, t0 + 1h))
        admitted++;
    assert_int_equal(admitted, 4);
}

void test_clients_are_independent(void**) {
    ReportLimiter limiter(2, 1);
    assert_true(limiter.admit(7, t0));
    assert_true(limiter.admit(7, t0));
    for (int i = 0; i < 1000; i++)
        assert_false(limiter.admit(7, t0 + 1ms));
    assert_true(limiter.admit(8, t0 + 1ms)); // another client, its own budget
    assert_true(limiter.admit(8, t0 + 1ms));
    assert_false(limiter.admit(8, t0 + 1ms));
}

void test_time_going_backwards_refills_nothing(void**) {
    ReportLimiter limiter(1, 1);
    assert_true(limiter.admit(3, t0 + 10s));
    assert_false(limiter.admit(3, t0));
    assert_false(limiter.admit(3, t0 + 10s));
    assert_true(limiter.admit(3, t0 + 11s));
}

void test_idle_clients_are_forgotten(void**) {
    ReportLimiter limiter(2, 1);
    for (std::uint64_t c = 1; c <= 1024; c++)
        assert_true(limiter.admit(c, t0));
    assert_int_equal(limiter.tracked_clients(), 1024);
    // a new client when the table is full: the refilled buckets go, the new one stays
    assert_true(limiter.admit(5000, t0 + 10s));
    assert_int_equal(limiter.tracked_clients(), 1);
    // a client still short of tokens is kept
    ReportLimiter busy(2, 1);
    for (std::uint64_t c = 1; c <= 1024; c++) {
        assert_true(busy.admit(c, t0));
        assert_true(busy.admit(c, t0));
    }
    assert_true(busy.admit(5000, t0 + 500ms));
    assert_int_equal(busy.tracked_clients(), 1025);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_then_refill),
        cmocka_unit_test(test_clients_are_independent),
        cmocka_unit_test(test_time_going_backwards_refills_nothing),
        cmocka_unit_test(test_idle_clients_are_forgotten),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
