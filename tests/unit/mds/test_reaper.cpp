// SPDX-License-Identifier: LGPL-3.0-or-later
// The reaper (fsal_flexfiles/mds/reaper.hpp) with data servers that do not answer: the
// backoff policy, a failed removal stays queued and is rescheduled (counted, with its
// error), a data server missing from the configuration is an error not a silent drop,
// names claimed by a create are left alone, and the thread retries by itself.
#include "cmocka_cpp.hpp"
#include "fresh_store.hpp"
#include "mds/reaper.hpp"
#include "model/naming.hpp"
#include "offline_fleet/offline_fleet.hpp"

#include <cstring>
#include <filesystem>
#include <mutex>
#include <unistd.h>

using namespace flexfiles;
using namespace flexfiles::mds;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<LayoutStore> fresh_store(const char* name) {
    return ::fresh_store("ff-mds-reaper", name);
}

// A name of the store's own form (the reaper removes only its export's data files).
std::string own(const LayoutStore& store, std::uint64_t fileid, std::uint32_t mirror = 0) {
    return fleet::data_file_name(store.identity(), fileid, mirror);
}

PendingRemoval removal(std::uint64_t ds_id, const std::string& name) {
    PendingRemoval r;
    r.ds_id = ds_id;
    r.name = name;
    r.fh = {1, 2, 3, 4};
    r.file_id = 77;
    r.next_attempt_ms = wall_clock_ms();
    return r;
}

struct Logs {
    std::mutex mu;
    std::vector<std::string> lines;
    fleet::LogSink sink() {
        return [this](fleet::LogLevel, std::string_view m) {
            std::lock_guard lk(mu);
            lines.emplace_back(m);
        };
    }
    bool contains(const char* text) {
        std::lock_guard lk(mu);
        for (const auto& l : lines)
            if (l.find(text) != std::string::npos)
                return true;
        return false;
    }
};

void test_backoff(void**) {
    assert_int_equal(removal_backoff(1, 1000ms, 60000ms).count(), 1000);
    assert_int_equal(removal_backoff(2, 1000ms, 60000ms).count(), 2000);
    assert_int_equal(removal_backoff(4, 1000ms, 60000ms).count(), 8000);
    assert_int_equal(removal_backoff(7, 1000ms, 60000ms).count(), 60000); // capped
    assert_int_equal(removal_backoff(1000, 1000ms, 60000ms).count(), 60000);
    assert_int_equal(removal_backoff(0, 1000ms, 60000ms).count(), 1000);
    assert_int_equal(removal_backoff(3, 0ms, 0ms).count(), 1); // never zero
}

void test_failed_removal_stays_queued(void**) {
    auto store = fresh_store("failed");
    fleet::Fleet fleet;
    assert_true(fleet.add(offline_fleet::offline_config(1)).ok());
    assert_true(
        offline_fleet::wait_until([&] { return offline_fleet::all_unreachable(fleet); }, 3000ms));
    Logs logs;
    ReaperSettings s;
    s.request_timeout = 500ms;
    s.backoff_initial = 10000ms;
    Reaper reaper(*store, fleet, s, logs.sink());

    auto queued = store->queue_removals(
        {removal(1, "ff-000000000000004d-m0"), removal(9, "ff-000000000000004d-m1")});
    // (Old-form names with their filehandles: the LOOKUP would prove them this export's.)
    assert_true(queued.ok());
    const std::int64_t before = wall_clock_ms();
    auto attempts = reaper.remove_now(queued.value);
    assert_int_equal(attempts.size(), 2);
    for (const auto& a : attempts) {
        print_message("%s: %s\n", a.removal.name.c_str(), a.error.c_str());
        assert_int_equal(static_cast<int>(a.outcome), static_cast<int>(RemovalOutcome::failed));
    }
    assert_non_null(std::strstr(attempts[1].error.c_str(),
                                "data server 9 is not in this export's configuration"));

    auto all = store->all_removals().value;
    assert_int_equal(all.size(), 2);
    for (const auto& r : all) {
        assert_int_equal(r.attempts, 1);
        assert_true(r.next_attempt_ms >= before + 10000);
        assert_false(r.last_error.empty());
    }
    assert_int_equal(store->due_removals(wall_clock_ms(), 10).value.size(), 0);
    const ReaperCounters c = reaper.counters();
    assert_int_equal(c.attempts, 2);
    assert_int_equal(c.failures, 2);
    assert_int_equal(c.removed, 0);
    assert_true(logs.contains("removal attempt 1 failed"));
    assert_true(logs.contains("ff-000000000000004d-m1 of file 77 on data server 9"));
}

void test_claimed_names_are_skipped(void**) {
    auto store = fresh_store("claimed");
    fleet::Fleet fleet;
    Reaper reaper(*store, fleet, ReaperSettings{}, {});
    const std::string a = own(*store, 0xa), b = own(*store, 0xb);
    auto queued = store->queue_removals({removal(1, a), removal(1, b)}).value;

    Reaper::Claim claim = reaper.claim({{1, a}}, fleet::deadline_in(100ms));
    assert_true(static_cast<bool>(claim));
    // The same name cannot be claimed twice.
    assert_false(static_cast<bool>(reaper.claim({{1, a}}, fleet::deadline_in(50ms))));
    auto attempts = reaper.remove_now(queued);
    assert_int_equal(static_cast<int>(attempts[0].outcome),
                     static_cast<int>(RemovalOutcome::skipped));
    assert_int_equal(static_cast<int>(attempts[1].outcome),
                     static_cast<int>(RemovalOutcome::failed));
    auto all = store->all_removals().value;
    assert_int_equal(all[0].attempts, 0); // untouched
    assert_int_equal(all[1].attempts, 1);

    claim = Reaper::Claim(); // released
    assert_true(static_cast<bool>(reaper.claim({{1, a}}, fleet::deadline_in(50ms))));

    // A removal a create cancelled in the meantime is not attempted.
    assert_int_equal(store->cancel_removals(1, b).value, 1);
    attempts = reaper.remove_now({all[1]});
    assert_int_equal(static_cast<int>(attempts[0].outcome),
                     static_cast<int>(RemovalOutcome::skipped));
}

void test_thread_retries(void**) {
    auto store = fresh_store("thread");
    fleet::Fleet fleet;
    ReaperSettings s;
    s.tick = 20ms;
    s.backoff_initial = 30ms;
    s.backoff_max = 60ms;
    Reaper reaper(*store, fleet, s, {});
    assert_true(store->queue_removals({removal(5, own(*store, 0x5))}).ok());
    reaper.start();
    assert_true(offline_fleet::wait_until(
        [&] { return store->all_removals().value.at(0).attempts >= 3; }, 3000ms));
    reaper.stop();
    const auto failures = reaper.counters().failures;
    assert_true(failures >= 3);
    std::this_thread::sleep_for(100ms);
    assert_int_equal(reaper.counters().failures, failures);    // stopped means stopped
    assert_int_equal(store->pending_removal_count().value, 1); // never dropped
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_failed_removal_stays_queued),
        cmocka_unit_test(test_claimed_names_are_skipped),
        cmocka_unit_test(test_thread_retries),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
