// SPDX-License-Identifier: LGPL-3.0-or-later
//
// GETATTR of a FLEXFILES regular file: when the data servers are asked (cache/overlay.hpp),
// what the answer holds, and the fallback's flights (mds/ds_getattr.hpp): all mirrors
// at once, one GETATTR per data file however many callers, callers bounded by their
// deadline, answers in the cache before the callers wake.
#include "cache/overlay.hpp"
#include "mds/ds_getattr.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
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
using namespace flexfiles::fallback;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kNow = 9'000'000 * kMs;

MergedAttrs merged_learned_at(std::int64_t learned_ns) {
    MergedAttrs m;
    m.attrs.size = 1 << 20;
    m.attrs.valid = kAttrSize | kAttrCtime;
    m.data_files = 2;
    m.learned_ns = learned_ns;
    return m;
}

// ---- fetch_reason ----------------------------------------------------------------------

void nothing_cached_fetches_whatever_the_layouts(void**) {
    assert_int_equal(static_cast<int>(fetch_reason(std::nullopt, false, 1000 * kMs, kNow)),
                     static_cast<int>(FetchReason::Empty));
    assert_int_equal(static_cast<int>(fetch_reason(std::nullopt, true, 1000 * kMs, kNow)),
                     static_cast<int>(FetchReason::Empty));
    MergedAttrs barrier_only = merged_learned_at(kNow);
    barrier_only.data_files = 0;
    assert_int_equal(static_cast<int>(fetch_reason(barrier_only, false, 1000 * kMs, kNow)),
                     static_cast<int>(FetchReason::Empty));
}

void no_rw_layout_answers_from_cache_however_old(void**) {
    const MergedAttrs old = merged_learned_at(kNow - 3600'000 * kMs);
    assert_int_equal(static_cast<int>(fetch_reason(old, false, 1000 * kMs, kNow)),
                     static_cast<int>(FetchReason::None));
    MergedAttrs never = merged_learned_at(0);
    assert_int_equal(static_cast<int>(fetch_reason(never, false, 0, kNow)),
                     static_cast<int>(FetchReason::None));
}

void rw_layout_fetches_when_older_than_max_age(void**) {
    const std::int64_t max_age = 1000 * kMs;
    assert_int_equal(
        static_cast<int>(fetch_reason(merged_learned_at(kNow - 999 * kMs), true, max_age, kNow)),
        static_cast<int>(FetchReason::None));
    assert_int_equal(
        static_cast<int>(fetch_reason(merged_learned_at(kNow - 1001 * kMs), true, max_age, kNow)),
        static_cast<int>(FetchReason::Stale));
    // WCC_Max_Age = 0: always ask while a writer may be at work.
    assert_int_equal(static_cast<int>(fetch_reason(merged_learned_at(kNow), true, 0, kNow)),
                     static_cast<int>(FetchReason::Stale));
}

// After the previous instance's layouts could no longer write, an answer learned before
// is asked again once, with or without an RW layout; a later one stands.
void answers_learned_before_the_window_closed_are_asked_again(void**) {
    const std::int64_t closed = kNow - 10 * kMs;
    assert_int_equal(static_cast<int>(fetch_reason(merged_learned_at(closed - 1), false, 1000 * kMs,
                                                   kNow, closed)),
                     static_cast<int>(FetchReason::Relearn));
    assert_int_equal(static_cast<int>(fetch_reason(merged_learned_at(closed - 1), true, 1000 * kMs,
                                                   kNow, closed)),
                     static_cast<int>(FetchReason::Relearn));
    assert_int_equal(
        static_cast<int>(fetch_reason(merged_learned_at(closed), false, 1000 * kMs, kNow, closed)),
        static_cast<int>(FetchReason::None));
    assert_int_equal(static_cast<int>(fetch_reason(std::nullopt, false, 1000 * kMs, kNow, closed)),
                     static_cast<int>(FetchReason::Empty));
}

// ---- overlay ---------------------------------------------------------------------------

void overlay_takes_data_attributes(void**) {
    MergedAttrs m;
    m.attrs.size = 1 << 20;
    m.attrs.space_used = 2 << 20; // two mirrors
    m.attrs.atime = NfsTime{50 * kMs * 1000};
    m.attrs.mtime = NfsTime{60 * kMs * 1000};
    m.attrs.ctime = NfsTime{70 * kMs * 1000};
    m.attrs.valid = kAttrSize | kAttrSpaceUsed | kAttrAtime | kAttrMtime | kAttrCtime;

    FileAttrView v;
    v.valid = kAttrSize | kAttrSpaceUsed | kAttrAtime | kAttrMtime | kAttrCtime;
    v.size = 0; // the metadata file is empty
    v.space_used = 0;
    v.atime = NfsTime{10 * kMs * 1000};
    v.mtime = NfsTime{90 * kMs * 1000}; // later than the data: still the data's
    v.ctime = NfsTime{20 * kMs * 1000};
    v.has_change = true;
    v.change = 1000;
    const std::uint16_t set = overlay(m, v);
    assert_int_equal(set, kAttrSize | kAttrSpaceUsed | kAttrAtime | kAttrMtime | kAttrCtime);
    assert_int_equal(v.size, 1 << 20);
    assert_int_equal(v.space_used, 2 << 20);
    assert_true(v.mtime == m.attrs.mtime);
    assert_true(v.atime == m.attrs.atime);
    assert_true(v.ctime == m.attrs.ctime);
    assert_int_equal(v.change, 1000 + static_cast<std::uint64_t>(m.attrs.ctime.ns));
}

void overlay_keeps_later_metadata_ctime(void**) {
    MergedAttrs m;
    m.attrs.ctime = NfsTime{70};
    m.attrs.valid = kAttrCtime;
    FileAttrView v;
    v.valid = kAttrCtime | kAttrSize;
    v.ctime = NfsTime{80}; // a chmod on the MDS after the last data write
    v.size = 12;
    overlay(m, v);
    assert_true(v.ctime == NfsTime{80});
    assert_int_equal(v.size, 12); // the merged view had no size: left alone
}

void change_moves_with_data_ctime(void**) {
    MergedAttrs m1, m2;
    m1.attrs.ctime = NfsTime{100};
    m1.attrs.valid = kAttrCtime;
    m2 = m1;
    m2.attrs.ctime = NfsTime{101};
    FileAttrView a, b;
    a.has_change = b.has_change = true;
    a.change = b.change = 5;
    overlay(m1, a);
    overlay(m2, b);
    assert_true(b.change > a.change);
}

// ---- the flights -----------------------------------------------------------------------

// A data server stand-in: records GETATTRs, answers them when told (from its own thread,
// like the fleet's event thread) or never.
class FakeServers {
public:
    void submit(const GetattrTarget& t, fleet::Deadline, fleet::Callback<fleet::DsAttrs> done) {
        std::lock_guard lock(mu_);
        sent_.push_back(t);
        pending_.push_back(std::move(done));
        cv_.notify_all();
    }
    // Completes every pending request from another thread with `size`.
    void answer_all(std::uint64_t size) {
        std::vector<fleet::Callback<fleet::DsAttrs>> p;
        {
            std::lock_guard lock(mu_);
            p.swap(pending_);
        }
        std::thread([p = std::move(p), size] {
            for (auto& cb : p) {
                fleet::DsAttrs a;
                a.size = size;
                a.ctime = fleet::DsTime{1, 0};
                cb(fleet::DsResult<fleet::DsAttrs>::success(a));
            }
        }).join();
    }
    void fail_all() {
        std::vector<fleet::Callback<fleet::DsAttrs>> p;
        {
            std::lock_guard lock(mu_);
            p.swap(pending_);
        }
        for (auto& cb : p) {
            cb(fleet::DsResult<fleet::DsAttrs>::failure(
                fleet::DsStatus::error(fleet::DsErrc::timeout, "ds: GETATTR timed out")));
        }
    }
    bool wait_sent(std::size_t n, std::chrono::milliseconds within) {
        std::unique_lock lock(mu_);
        return cv_.wait_for(lock, within, [&] { return sent_.size() >= n; });
    }
    std::size_t sent() {
        std::lock_guard lock(mu_);
        return sent_.size();
    }
    SubmitGetattr submitter() {
        return [this](const GetattrTarget& t, fleet::Deadline d,
                      fleet::Callback<fleet::DsAttrs> cb) { submit(t, d, std::move(cb)); };
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<GetattrTarget> sent_;
    std::vector<fleet::Callback<fleet::DsAttrs>> pending_;
};

std::vector<GetattrTarget> mirrors(unsigned n) {
    std::vector<GetattrTarget> t;
    for (unsigned i = 0; i < n; ++i) {
        t.push_back(
            GetattrTarget{DataFileKey{77, DataFileSlot{static_cast<std::uint16_t>(i), 0}}, i});
    }
    return t;
}

void all_mirrors_are_asked_at_once(void**) {
    DsGetattrFlights flights;
    FakeServers ds;
    std::atomic<int> answers{0};
    FetchSummary sum;
    std::thread caller([&] {
        sum = flights.fetch(nullptr, mirrors(3), fleet::Clock::now() + 5s, ds.submitter(),
                            [&](const GetattrTarget&, const fleet::DsResult<fleet::DsAttrs>& r,
                                std::int64_t issued) {
                                // Not a cmocka assert: this runs on the answering thread.
                                if (r.ok() && issued > 0) {
                                    answers++;
                                }
                            });
    });
    // All three are out before any is answered: parallel, not one after the other.
    assert_true(ds.wait_sent(3, 2s));
    ds.answer_all(4096);
    caller.join();
    assert_int_equal(sum.sent, 3);
    assert_int_equal(sum.answered, 3);
    assert_int_equal(sum.timed_out, 0);
    assert_int_equal(answers.load(), 3);
    assert_int_equal(flights.in_flight(), 0);
}

void concurrent_callers_share_one_getattr_per_data_file(void**) {
    DsGetattrFlights flights;
    FakeServers ds;
    std::atomic<int> answers{0};
    const auto on_answer = [&](const GetattrTarget&, const fleet::DsResult<fleet::DsAttrs>&,
                               std::int64_t) { answers++; };
    constexpr int kCallers = 50;
    std::vector<std::thread> callers;
    std::atomic<unsigned> answered{0}, coalesced{0};
    // The first caller starts the flights and they stay in flight while the rest arrive.
    std::thread first([&] {
        FetchSummary s =
            flights.fetch(nullptr, mirrors(2), fleet::Clock::now() + 5s, ds.submitter(), on_answer);
        answered += s.answered;
    });
    assert_true(ds.wait_sent(2, 2s));
    for (int i = 1; i < kCallers; ++i) {
        callers.emplace_back([&] {
            FetchSummary s = flights.fetch(nullptr, mirrors(2), fleet::Clock::now() + 5s,
                                           ds.submitter(), on_answer);
            answered += s.answered;
            coalesced += s.coalesced;
        });
    }
    // Let them all join the flights.
    for (int spin = 0; spin < 200 && flights.stats().coalesced < (kCallers - 1) * 2u; ++spin) {
        std::this_thread::sleep_for(5ms);
    }
    ds.answer_all(1 << 20);
    first.join();
    for (auto& t : callers) {
        t.join();
    }
    assert_int_equal(ds.sent(), 2);      // one per data file
    assert_int_equal(answers.load(), 2); // each answer reached the cache once
    assert_int_equal(answered.load(), kCallers * 2);
    assert_int_equal(coalesced.load(), (kCallers - 1) * 2);
    assert_int_equal(flights.stats().sent, 2);
}

void a_silent_data_server_costs_at_most_the_deadline(void**) {
    DsGetattrFlights flights;
    FakeServers ds;
    const auto start = std::chrono::steady_clock::now();
    FetchSummary s =
        flights.fetch(nullptr, mirrors(2), fleet::Clock::now() + 150ms, ds.submitter(), {});
    const auto took = std::chrono::steady_clock::now() - start;
    assert_int_equal(s.timed_out, 2);
    assert_true(took >= 140ms);
    assert_true(took < 400ms);
    // The requests are still out: a caller arriving now joins them instead of sending more.
    assert_int_equal(flights.in_flight(), 2);
    FetchSummary again =
        flights.fetch(nullptr, mirrors(2), fleet::Clock::now() + 20ms, ds.submitter(), {});
    assert_int_equal(again.coalesced, 2);
    assert_int_equal(ds.sent(), 2);
    // The fleet ends every request by its deadline.
    ds.fail_all();
    assert_int_equal(flights.in_flight(), 0);
    assert_int_equal(flights.stats().failed, 2);
    assert_int_equal(flights.stats().timed_out, 4);
}

void failures_end_the_wait(void**) {
    DsGetattrFlights flights;
    const SubmitGetattr refuse = [](const GetattrTarget&, fleet::Deadline,
                                    fleet::Callback<fleet::DsAttrs> cb) {
        // Completed on the caller's thread, before submit returns (e.g. server removed).
        cb(fleet::DsResult<fleet::DsAttrs>::failure(
            fleet::DsStatus::error(fleet::DsErrc::shutdown, "gone")));
    };
    int seen = 0;
    const auto start = std::chrono::steady_clock::now();
    FetchSummary s = flights.fetch(
        nullptr, mirrors(2), fleet::Clock::now() + 5s, refuse,
        [&](const GetattrTarget&, const fleet::DsResult<fleet::DsAttrs>& r, std::int64_t) {
            assert_false(r.ok());
            seen++;
        });
    assert_true(std::chrono::steady_clock::now() - start < 1s);
    assert_int_equal(s.failed, 2);
    assert_int_equal(seen, 2);
    assert_int_equal(flights.in_flight(), 0);
}

void scopes_do_not_share_flights(void**) {
    DsGetattrFlights flights;
    FakeServers ds;
    int a = 0, b = 0;
    std::thread t1(
        [&] { flights.fetch(&a, mirrors(1), fleet::Clock::now() + 5s, ds.submitter(), {}); });
    assert_true(ds.wait_sent(1, 2s));
    std::thread t2(
        [&] { flights.fetch(&b, mirrors(1), fleet::Clock::now() + 5s, ds.submitter(), {}); });
    assert_true(ds.wait_sent(2, 2s)); // same key, other cache: its own GETATTR
    ds.answer_all(1);
    t1.join();
    t2.join();
    assert_int_equal(ds.sent(), 2);
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_cached_fetches_whatever_the_layouts),
        cmocka_unit_test(no_rw_layout_answers_from_cache_however_old),
        cmocka_unit_test(rw_layout_fetches_when_older_than_max_age),
        cmocka_unit_test(answers_learned_before_the_window_closed_are_asked_again),
        cmocka_unit_test(overlay_takes_data_attributes),
        cmocka_unit_test(overlay_keeps_later_metadata_ctime),
        cmocka_unit_test(change_moves_with_data_ctime),
        cmocka_unit_test(all_mirrors_are_asked_at_once),
        cmocka_unit_test(concurrent_callers_share_one_getattr_per_data_file),
        cmocka_unit_test(a_silent_data_server_costs_at_most_the_deadline),
        cmocka_unit_test(failures_end_the_wait),
        cmocka_unit_test(scopes_do_not_share_flights),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
