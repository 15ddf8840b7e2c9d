// SPDX-License-Identifier: LGPL-3.0-or-later
// The fence retries (fsal_flexfiles/core/mds/fence_retry.hpp) with a data server that does
// not answer: a failed retry stays queued with a longer backoff, a queued one for the same
// data file is replaced, a newer fence of the file drops its retries, and one for a data
// server missing from the fleet fails (counted) rather than vanishing.
#include "cmocka_cpp.hpp"
#include "mds/fence_retry.hpp"
#include "offline_fleet/offline_fleet.hpp"

using namespace flexfiles;
using namespace flexfiles::mds;
using namespace std::chrono_literals;

namespace {

PendingFence fence(std::uint64_t file, std::uint32_t mirror, std::uint64_t ds_id) {
    PendingFence f;
    f.file_id = file;
    f.mirror = mirror;
    f.ds_id = ds_id;
    f.fh = {1, 2, 3, 4};
    f.name = "ff-test-m" + std::to_string(mirror);
    f.uid = f.gid = 1000001;
    return f;
}

FenceRetrySettings quick() {
    FenceRetrySettings s;
    s.backoff_initial = 0ms; // due at once
    s.backoff_max = 0ms;
    s.request_timeout = 300ms;
    return s;
}

void test_failed_retry_stays_queued(void**) {
    fleet::Fleet fleet;
    assert_true(fleet.add(offline_fleet::offline_config(1)).ok());
    assert_true(
        offline_fleet::wait_until([&] { return offline_fleet::all_unreachable(fleet); }, 3000ms));
    FenceRetrier r(fleet, quick(), {});
    r.queue(fence(7, 1, 1));
    r.queue(fence(7, 1, 1)); // the same data file: replaced, not doubled
    r.queue(fence(7, 0, 9)); // data server 9 is not in the fleet
    assert_int_equal(r.pending(), 2);
    r.pass();
    FenceRetryCounters c = r.counters();
    assert_int_equal(c.queued, 3);
    assert_int_equal(c.attempts, 2);
    assert_int_equal(c.failures, 2);
    assert_int_equal(c.completed, 0);
    assert_int_equal(r.pending(), 2); // both still to do

    // A newer fence of the file takes over: its retries are dropped.
    r.supersede(7);
    c = r.counters();
    assert_int_equal(c.superseded, 2);
    assert_int_equal(r.pending(), 0);
    r.pass();
    assert_int_equal(r.counters().attempts, 2); // nothing left to try
}

void test_backoff_defers_the_next_attempt(void**) {
    fleet::Fleet fleet;
    assert_true(fleet.add(offline_fleet::offline_config(1)).ok());
    FenceRetrySettings s = quick();
    s.backoff_initial = 60000ms;
    s.backoff_max = 60000ms;
    FenceRetrier r(fleet, s, {});
    r.queue(fence(8, 0, 1));
    r.pass(); // not due yet
    assert_int_equal(r.counters().attempts, 0);
    assert_int_equal(r.pending(), 1);
    r.supersede(9); // another file's fence leaves it alone
    assert_int_equal(r.pending(), 1);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_retry_stays_queued),
        cmocka_unit_test(test_backoff_defers_the_next_attempt),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
