// SPDX-License-Identifier: LGPL-3.0-or-later
//
// SingleFlight (fsal_flexfiles/fallback/single_flight.h), one test per rule.
#include "mds/single_flight.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
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

using namespace flexfiles::fallback;
using namespace std::chrono_literals;
using Flight = SingleFlight<std::uint64_t, int>;

namespace {

// Wait (bounded) until cond() holds; the tests assert on the result.
template <class Cond> bool eventually(Cond cond, std::chrono::milliseconds limit = 5000ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > end) {
            return false;
        }
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

void single_flight_eight_callers_one_fetch(void**) {
    constexpr int kThreads = 8;
    Flight flight;
    std::atomic<int> fetches{0};
    std::atomic<int> leaders{0};
    std::atomic<bool> saw_all_waiting{false};
    std::vector<FlightResult<int>> results(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([&, i] {
            results[i] = flight.run(42, Flight::Clock::now() + 10s, [&] {
                fetches++;
                // Hold the fetch until the other seven are waiting on it.
                saw_all_waiting = eventually([&] { return flight.waiting(42) == kThreads - 1; });
                return 4242;
            });
            leaders += results[i].leader;
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    assert_true(saw_all_waiting.load());
    assert_int_equal(fetches.load(), 1);
    assert_int_equal(leaders.load(), 1);
    for (const auto& r : results) {
        assert_true(r.status == FlightStatus::Ok);
        assert_int_equal(*r.value, 4242);
    }
    const SingleFlightStats s = flight.stats();
    assert_int_equal(s.sent, 1);
    assert_int_equal(s.coalesced, kThreads - 1);
    assert_int_equal(s.timed_out, 0);
    assert_int_equal(flight.in_flight(), 0);
}

void single_flight_follower_deadline_times_out_and_is_counted(void**) {
    Flight flight;
    std::atomic<bool> release{false};
    FlightResult<int> leader_result;
    std::thread leader([&] {
        leader_result = flight.run(7, Flight::Clock::now() + 10s, [&] {
            eventually([&] { return release.load(); });
            return 1;
        });
    });
    assert_true(eventually([&] { return flight.in_flight() == 1; }));
    const auto t0 = Flight::Clock::now();
    const FlightResult<int> r = flight.run(7, t0 + 50ms, [] { return 2; });
    const auto waited = Flight::Clock::now() - t0;
    assert_true(r.status == FlightStatus::TimedOut);
    assert_false(r.leader);
    assert_false(r.value.has_value());
    assert_true(waited >= 50ms && waited < 2s);
    release = true;
    leader.join();
    assert_true(leader_result.status == FlightStatus::Ok);
    assert_int_equal(*leader_result.value, 1);
    const SingleFlightStats s = flight.stats();
    assert_int_equal(s.sent, 1);
    assert_int_equal(s.timed_out, 1);
    assert_int_equal(s.coalesced, 0);
}

void single_flight_distinct_keys_fetch_separately(void**) {
    Flight flight;
    std::atomic<bool> release{false};
    std::atomic<int> fetches{0};
    auto slow = [&](std::uint64_t key) {
        return flight.run(key, Flight::Clock::now() + 10s, [&, key] {
            fetches++;
            eventually([&] { return release.load(); });
            return static_cast<int>(key);
        });
    };
    FlightResult<int> a, b;
    std::thread ta([&] { a = slow(1); });
    std::thread tb([&] { b = slow(2); });
    assert_true(eventually([&] { return flight.in_flight() == 2; }));
    release = true;
    ta.join();
    tb.join();
    assert_int_equal(fetches.load(), 2);
    assert_true(a.leader && b.leader);
    assert_int_equal(*a.value, 1);
    assert_int_equal(*b.value, 2);
}

void single_flight_failed_fetch_reaches_followers_and_is_not_kept(void**) {
    Flight flight;
    std::atomic<bool> release{false};
    FlightResult<int> leader_result, follower_result;
    std::thread leader([&] {
        leader_result = flight.run(9, Flight::Clock::now() + 10s, [&]() -> int {
            eventually([&] { return release.load(); });
            throw std::runtime_error("data server unreachable");
        });
    });
    assert_true(eventually([&] { return flight.in_flight() == 1; }));
    std::thread follower(
        [&] { follower_result = flight.run(9, Flight::Clock::now() + 10s, [] { return 0; }); });
    assert_true(eventually([&] { return flight.waiting(9) == 1; }));
    release = true;
    leader.join();
    follower.join();
    assert_true(leader_result.status == FlightStatus::Failed);
    assert_true(follower_result.status == FlightStatus::Failed);
    assert_true(follower_result.error == leader_result.error);
    bool rethrown = false;
    try {
        std::rethrow_exception(follower_result.error);
    } catch (const std::runtime_error&) {
        rethrown = true;
    }
    assert_true(rethrown);
    // Nothing is remembered: the next caller fetches again.
    const FlightResult<int> again = flight.run(9, Flight::Clock::now() + 1s, [] { return 5; });
    assert_true(again.leader);
    assert_int_equal(*again.value, 5);
    const SingleFlightStats s = flight.stats();
    assert_int_equal(s.sent, 2);
    assert_int_equal(s.failed, 1);
    assert_int_equal(s.coalesced, 1);
}

void single_flight_sequential_calls_each_fetch(void**) {
    Flight flight;
    int fetches = 0;
    for (int i = 0; i < 3; ++i) {
        const auto r = flight.run(1, Flight::Clock::now() + 1s, [&] { return ++fetches; });
        assert_true(r.leader);
        assert_int_equal(*r.value, i + 1);
    }
    assert_int_equal(flight.stats().sent, 3);
    assert_int_equal(flight.stats().coalesced, 0);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single_flight_eight_callers_one_fetch),
        cmocka_unit_test(single_flight_follower_deadline_times_out_and_is_counted),
        cmocka_unit_test(single_flight_distinct_keys_fetch_separately),
        cmocka_unit_test(single_flight_failed_fetch_reaches_followers_and_is_not_kept),
        cmocka_unit_test(single_flight_sequential_calls_each_fetch),
    };
    return cmocka_run_group_tests_name("fallback_single_flight", tests, nullptr, nullptr);
}
