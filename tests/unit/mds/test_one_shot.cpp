// SPDX-License-Identifier: LGPL-3.0-or-later
//
// mds/one_shot: the result a proxied WRITE's worker waits for, per mirror.
#include "mds/one_shot.hpp"

#include <chrono>
#include <string>
#include <thread>

// clang-format off
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
extern "C" {
#include <cmocka.h>
}
// clang-format on

using flexfiles::mds::OneShot;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// Set before anyone waits (the worker read its own reply): the wait returns at once.
void test_a_value_set_first_is_there_at_once(void**) {
    OneShot<std::string> r;
    r.set("answered");
    const auto t0 = Clock::now();
    assert_true(r.wait_until(Clock::now() + 10s));
    assert_true(Clock::now() - t0 < 1s);
    assert_string_equal(r.take().c_str(), "answered");
}

// Nothing set: the wait ends at its deadline, saying so.
void test_no_value_ends_at_the_deadline(void**) {
    OneShot<int> r;
    const auto until = Clock::now() + 50ms;
    assert_false(r.wait_until(until));
    assert_true(Clock::now() >= until);
}

// Set from another thread while the worker waits (an event thread's reply): it wakes.
void test_a_value_from_another_thread_wakes_the_waiter(void**) {
    OneShot<int> r;
    std::thread t([&] {
        std::this_thread::sleep_for(20ms);
        r.set(7);
    });
    const auto t0 = Clock::now();
    assert_true(r.wait_until(Clock::now() + 10s));
    assert_true(Clock::now() - t0 < 5s); // woken, not found at the deadline
    assert_int_equal(r.take(), 7);
    t.join();
}

// A chain settles once: a later value does not replace the first.
void test_the_first_value_stays(void**) {
    OneShot<int> r;
    r.set(1);
    r.set(2);
    assert_true(r.wait_until(Clock::now()));
    assert_int_equal(r.take(), 1);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_value_set_first_is_there_at_once),
        cmocka_unit_test(test_no_value_ends_at_the_deadline),
        cmocka_unit_test(test_a_value_from_another_thread_wakes_the_waiter),
        cmocka_unit_test(test_the_first_value_stays),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
