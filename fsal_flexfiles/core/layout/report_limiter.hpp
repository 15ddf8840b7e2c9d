// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A per-client budget for data-server error reports (LAYOUTRETURN's ff_ioerr4, LAYOUTERROR).
// A report within its client's budget makes the MDS probe the data server it names and is
// logged; one beyond it is only counted. So a client that sends thousands of reports a
// second costs the MDS a counter increment each, never a probe storm or a log flood, and
// cannot spend other clients' budgets.
//
// A token bucket per clientid: `burst` reports at once, refilled at `per_second`. The table
// forgets clients whose buckets are full again (idle), so it stays small. Pure C++ (no
// Ganesha header); thread-safe; the caller passes the time, so tests need no clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace flexfiles::layout {

class ReportLimiter {
public:
    using Clock = std::chrono::steady_clock;

    static constexpr unsigned kDefaultBurst = 16;
    static constexpr unsigned kDefaultPerSecond = 4;

    explicit ReportLimiter(unsigned burst = kDefaultBurst,
                           unsigned per_second = kDefaultPerSecond) noexcept;

    // Whether one more report of `client` is within its budget (and spends it if so).
    bool admit(std::uint64_t client, Clock::time_point now = Clock::now());

    // Clients the table holds a bucket for (for tests and the admin interface).
    std::size_t tracked_clients() const;

private:
    struct Bucket {
        double tokens = 0;
        Clock::time_point updated;
    };
    void refill(Bucket& b, Clock::time_point now) const noexcept;
    void forget_idle(Clock::time_point now);

    // Above this many clients, admit() first drops the buckets that have refilled.
    static constexpr std::size_t kPruneAbove = 1024;

    const double burst_;
    const double per_second_;
    mutable std::mutex mu_;
    std::unordered_map<std::uint64_t, Bucket> buckets_;
};

} // namespace flexfiles::layout
