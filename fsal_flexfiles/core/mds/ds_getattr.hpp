// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The on-demand NFSv3 GETATTR behind the WCC cache: when a GETATTR needs data-file
// attributes the cache does not have fresh enough, every data file of the file (all
// mirrors) is asked at once, single-flight per data file, and the caller waits until every
// answer is in or its deadline passes, whichever comes first.
//
// Why not SingleFlight::run (single_flight.h): its leader runs the fetch on its own thread
// and blocks in it, so asking N mirrors in parallel would need N threads per GETATTR. The
// fleet's requests complete by callback, so here a flight is a request in progress: the
// first caller for a data file (the leader) submits the GETATTR, any caller for that data
// file that arrives before the answer joins it, and the completion, on the data server's
// event thread, hands the answer to on_answer (which puts it in the cache) and then wakes
// every waiter. Same rules as SingleFlight otherwise: nothing is cached here (the WCC cache
// is the cache), a follower's deadline bounds only its own wait, and the counters use
// SingleFlightStats. The request's own deadline is the leader's, so a flight always ends
// (the fleet completes every request by its deadline) and a dead data server costs a
// caller at most its deadline.
//
// Threading: fetch() runs on Ganesha worker threads; completions on the fleet's event
// threads (submit may also complete synchronously on the caller's thread, e.g. after the
// data server was removed). No lock is held while submitting or while on_answer runs.
#pragma once

#include "cache/attr_cache.hpp"
#include "fleet/ds_types.hpp"
#include "mds/single_flight.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>

namespace flexfiles::fallback {

/// One data file to ask.
struct GetattrTarget {
    wcc::DataFileKey key;
    std::size_t data_file = 0; // index in the file's DataFileMap, for the submitter
};

/// Sends the GETATTR for target with this deadline; must make `done` run exactly once.
using SubmitGetattr = std::function<void(const GetattrTarget& target, fleet::Deadline deadline,
                                         fleet::Callback<fleet::DsAttrs> done)>;

/// Receives each flight's result once, before its waiters wake (on the completing thread:
/// keep it short). issued_ns is CLOCK_MONOTONIC (wcc::monotonic_now_ns) just before the
/// GETATTR was submitted.
using OnAnswer =
    std::function<void(const GetattrTarget& target, const fleet::DsResult<fleet::DsAttrs>& result,
                       std::int64_t issued_ns)>;

/// What one fetch() saw, per target.
struct FetchSummary {
    unsigned targets = 0;
    unsigned sent = 0;      // this caller led the flight
    unsigned coalesced = 0; // this caller joined a flight in progress
    unsigned answered = 0;  // finished with attributes before the deadline
    unsigned failed = 0;    // finished with an error before the deadline
    unsigned timed_out = 0; // still in flight at the deadline
};

class DsGetattrFlights {
public:
    using Clock = fleet::Clock;

    DsGetattrFlights() = default;
    /// Requires no flight in progress (their completions point here).
    ~DsGetattrFlights() = default;
    DsGetattrFlights(const DsGetattrFlights&) = delete;
    DsGetattrFlights& operator=(const DsGetattrFlights&) = delete;

    /// Asks every target, joining flights already in progress for the same (scope, key);
    /// scope tells apart data files of different caches (exports). Returns when every
    /// target's flight has finished or `deadline` has passed.
    FetchSummary fetch(const void* scope, std::span<const GetattrTarget> targets,
                       Clock::time_point deadline, const SubmitGetattr& submit,
                       const OnAnswer& on_answer);

    std::size_t in_flight() const;
    SingleFlightStats stats() const;

private:
    struct Flight {
        GetattrTarget target;
        OnAnswer on_answer;
        std::int64_t issued_ns = 0;
        std::condition_variable cv; // waited on with mu_
        bool done = false;
        bool ok = false;
    };
    struct Key {
        const void* scope;
        wcc::DataFileKey key;
        bool operator==(const Key&) const = default;
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept {
            return wcc::DataFileKeyHash{}(k.key) ^ std::hash<const void*>{}(k.scope);
        }
    };

    void complete(const Key& key, const std::shared_ptr<Flight>& flight,
                  const fleet::DsResult<fleet::DsAttrs>& result);

    mutable std::mutex mu_;
    std::unordered_map<Key, std::shared_ptr<Flight>, KeyHash> flights_;
    std::atomic<std::uint64_t> sent_{0};
    std::atomic<std::uint64_t> coalesced_{0};
    std::atomic<std::uint64_t> timed_out_{0};
    std::atomic<std::uint64_t> failed_{0};
};

} // namespace flexfiles::fallback
