// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Health of one data server (Up / Suspect / Down) and the reconnect backoff. Pure logic, no
// I/O: DataServer feeds it probe results and errors; unit tests feed it directly.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>

namespace flexfiles::fleet {

enum class Health : std::uint8_t {
    up,      // the last probe succeeded and nothing has failed since
    suspect, // something failed since the last good probe (or no probe has succeeded yet)
    down,    // probes kept failing (see HealthTracker): not used for new layouts, fail fast
};

std::string_view to_string(Health h);

// What the MDS's own request saw going wrong with a data server. (A client's report is not
// one: it only makes the FSAL probe the data server, DataServer::probe_now().)
enum class ErrorKind : std::uint8_t {
    timeout,      // a request passed its deadline
    io,           // NFS3ERR_IO / SERVERFAULT or a client-reported I/O error
    access,       // NFS3ERR_ACCES / PERM where access was expected to work
    disconnected, // the connection dropped
    other,
};

std::string_view to_string(ErrorKind k);

struct HealthTransition {
    Health from;
    Health to;
    bool changed() const { return from != to; }
};

// Rules (the only place they live):
//  * starts Suspect: a data server is Up only once a probe has succeeded;
//  * a successful probe makes it Up and clears the failure count;
//  * a failed probe (error, timeout, or a failed connection attempt) makes it Suspect, and
//    Down once `down_after` probes in a row have failed over at least `down_span` since the
//    first of them; Down stays Down until a probe succeeds. The span keeps a restarting
//    server, whose refused connects come within milliseconds, Suspect (callers answer
//    "try again") as long as a server that stopped answering probes would be;
//  * a reported error or timeout makes an Up server Suspect; it never makes it Down by
//    itself (only probes decide Down, so one slow request cannot evict a server).
// state() is a relaxed-cost atomic read; the transitions are serialised by a mutex.
class HealthTracker {
public:
    using Clock = std::chrono::steady_clock;

    explicit HealthTracker(unsigned down_after = 3, Clock::duration down_span = {}) noexcept
        : down_after_(down_after == 0 ? 1 : down_after),
          down_span_(std::max(down_span, Clock::duration{})) {}

    Health state() const noexcept { return state_.load(std::memory_order_acquire); }
    unsigned down_after() const noexcept { return down_after_; }
    unsigned consecutive_probe_failures() const noexcept;
    // While probes fail and the server is not Down yet: the time from which one more
    // failed probe can make it Down (the first failure + down_span); otherwise nullopt.
    // The connection's reconnect schedule tries once more then rather than later.
    std::optional<Clock::time_point> down_due() const noexcept;

    HealthTransition probe_succeeded() noexcept;
    HealthTransition probe_failed(Clock::time_point now = Clock::now()) noexcept;
    HealthTransition error_reported(ErrorKind kind) noexcept;

private:
    HealthTransition set_locked(Health to) noexcept;

    const unsigned down_after_;
    const Clock::duration down_span_;
    mutable std::mutex mu_;
    unsigned failures_ = 0;
    Clock::time_point first_failure_{};
    std::atomic<Health> state_{Health::suspect};
};

// Exponential backoff between reconnect attempts: initial, 2x, 4x ... capped at `max`, each
// delay scaled by a random factor in [0.75, 1.0] so that many clients do not reconnect in
// lock step. The generator is per object (seeded by the caller), no global state.
class Backoff {
public:
    Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max,
            std::uint64_t seed) noexcept;

    // The delay before the next attempt; advances the sequence.
    std::chrono::milliseconds next() noexcept;
    // The undithered delay next() would scale (for tests and logs).
    std::chrono::milliseconds nominal() const noexcept;
    void reset() noexcept { failures_ = 0; }
    unsigned failures() const noexcept { return failures_; }

private:
    std::chrono::milliseconds initial_;
    std::chrono::milliseconds max_;
    unsigned failures_ = 0;
    std::minstd_rand rng_;
};

} // namespace flexfiles::fleet
