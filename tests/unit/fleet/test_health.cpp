// SPDX-License-Identifier: LGPL-3.0-or-later
// Health state machine and reconnect backoff (fleet/health.hpp), driven by injected probe
// results and reported errors.
#include "cmocka_cpp.hpp"
#include "fleet/health.hpp"

#include <string>

using namespace flexfiles::fleet;
using std::chrono::milliseconds;

namespace {

void test_starts_suspect_up_on_probe(void**) {
    HealthTracker h(3);
    assert_true(h.state() == Health::suspect);
    auto t = h.probe_succeeded();
    assert_true(t.from == Health::suspect && t.to == Health::up && t.changed());
    assert_true(h.state() == Health::up);
    assert_false(h.probe_succeeded().changed());
}

void test_suspect_then_down_after_n(void**) {
    HealthTracker h(3);
    h.probe_succeeded();
    auto t = h.probe_failed();
    assert_true(t.from == Health::up && t.to == Health::suspect);
    assert_int_equal(h.consecutive_probe_failures(), 1);
    assert_true(h.probe_failed().to == Health::suspect);
    t = h.probe_failed();
    assert_true(t.from == Health::suspect && t.to == Health::down);
    // Stays Down on more failures and on reported errors.
    assert_true(h.probe_failed().to == Health::down);
    assert_true(h.error_reported(ErrorKind::io).to == Health::down);
    // One good probe brings it back.
    t = h.probe_succeeded();
    assert_true(t.from == Health::down && t.to == Health::up);
    assert_int_equal(h.consecutive_probe_failures(), 0);
}

void test_success_resets_the_count(void**) {
    HealthTracker h(3);
    h.probe_failed();
    h.probe_failed();
    h.probe_succeeded();
    h.probe_failed();
    h.probe_failed();
    assert_true(h.state() == Health::suspect); // 2 in a row, not 4
    h.probe_failed();
    assert_true(h.state() == Health::down);
}

void test_reported_errors_never_down(void**) {
    HealthTracker h(2);
    h.probe_succeeded();
    auto t = h.error_reported(ErrorKind::timeout);
    assert_true(t.from == Health::up && t.to == Health::suspect);
    for (int i = 0; i < 100; ++i)
        h.error_reported(ErrorKind::io);
    assert_true(h.state() == Health::suspect);
    assert_int_equal(h.consecutive_probe_failures(), 0);
    assert_true(h.probe_succeeded().to == Health::up);
}

void test_never_probed_goes_down(void**) {
    HealthTracker h(2);
    assert_true(h.probe_failed().to == Health::suspect);
    assert_true(h.probe_failed().to == Health::down);
}

void test_down_after_zero_means_one(void**) {
    HealthTracker h(0);
    assert_int_equal(h.down_after(), 1);
    h.probe_succeeded();
    assert_true(h.probe_failed().to == Health::down);
}

// Refused connects of a restarting server come within milliseconds: they count, but the
// server is Down only once the failures span down_span (what unanswered probes would take).
void test_quick_failures_wait_for_the_span(void**) {
    using Clock = HealthTracker::Clock;
    HealthTracker h(3, milliseconds(4000));
    h.probe_succeeded();
    assert_false(h.down_due().has_value());
    const Clock::time_point t0{};
    assert_true(h.probe_failed(t0).to == Health::suspect);
    assert_true(h.down_due() == t0 + milliseconds(4000));
    assert_true(h.probe_failed(t0 + milliseconds(1)).to == Health::suspect);
    assert_true(h.probe_failed(t0 + milliseconds(100)).to == Health::suspect);
    assert_true(h.probe_failed(t0 + milliseconds(3999)).to == Health::suspect);
    auto t = h.probe_failed(t0 + milliseconds(4000));
    assert_true(t.from == Health::suspect && t.to == Health::down);
    assert_false(h.down_due().has_value());
    // A good probe in the span starts the count and the span again.
    h.probe_succeeded();
    h.probe_failed(t0 + milliseconds(5000));
    h.probe_failed(t0 + milliseconds(5001));
    h.probe_succeeded();
    h.probe_failed(t0 + milliseconds(8000));
    h.probe_failed(t0 + milliseconds(9000));
    assert_true(h.probe_failed(t0 + milliseconds(11999)).to == Health::suspect);
    assert_true(h.probe_failed(t0 + milliseconds(12000)).to == Health::down);
}

// Slow failures (probes timing out an interval apart) reach the span by themselves: the
// count decides, as without a span.
void test_slow_failures_down_after_n(void**) {
    using Clock = HealthTracker::Clock;
    HealthTracker h(3, milliseconds(4000));
    const Clock::time_point t0{};
    h.probe_succeeded();
    assert_true(h.probe_failed(t0).to == Health::suspect);
    assert_true(h.probe_failed(t0 + milliseconds(2000)).to == Health::suspect);
    assert_true(h.probe_failed(t0 + milliseconds(4000)).to == Health::down);
}

void test_backoff_sequence(void**) {
    Backoff b(milliseconds(100), milliseconds(1000), 42);
    const long nominal[] = {100, 200, 400, 800, 1000, 1000, 1000};
    for (long want : nominal) {
        assert_int_equal(b.nominal().count(), want);
        auto d = b.next().count();
        assert_true(d >= want * 75 / 100);
        assert_true(d <= want);
    }
    assert_int_equal(b.failures(), 7);
    b.reset();
    assert_int_equal(b.nominal().count(), 100);
    // Many failures: capped, no overflow.
    for (int i = 0; i < 10000; ++i)
        b.next();
    assert_int_equal(b.nominal().count(), 1000);
}

void test_backoff_jitter_differs_by_seed(void**) {
    Backoff a(milliseconds(1000), milliseconds(1000), 1);
    Backoff b(milliseconds(1000), milliseconds(1000), 2);
    bool differ = false;
    for (int i = 0; i < 20; ++i)
        differ = differ || a.next() != b.next();
    assert_true(differ);
}

void test_names(void**) {
    assert_string_equal(std::string(to_string(Health::up)).c_str(), "Up");
    assert_string_equal(std::string(to_string(Health::suspect)).c_str(), "Suspect");
    assert_string_equal(std::string(to_string(Health::down)).c_str(), "Down");
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_starts_suspect_up_on_probe),
        cmocka_unit_test(test_suspect_then_down_after_n),
        cmocka_unit_test(test_success_resets_the_count),
        cmocka_unit_test(test_reported_errors_never_down),
        cmocka_unit_test(test_never_probed_goes_down),
        cmocka_unit_test(test_down_after_zero_means_one),
        cmocka_unit_test(test_quick_failures_wait_for_the_span),
        cmocka_unit_test(test_slow_failures_down_after_n),
        cmocka_unit_test(test_backoff_sequence),
        cmocka_unit_test(test_backoff_jitter_differs_by_seed),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests_name("fleet_health", tests, nullptr, nullptr);
}
