// SPDX-License-Identifier: LGPL-3.0-or-later
//
// SingleFlight: any number of concurrent callers asking for the same key cause one fetch.
// The first caller (the leader) runs the fetch in its own thread; callers that arrive while
// it is in flight (followers) wait, each until its own deadline, and share the leader's
// result. Nothing is cached: once the leader publishes, the next caller starts a new fetch
// (the WCC cache is the cache; this only stops a GETATTR storm on a data server).
//
// The leader cannot be interrupted, so the fetch must respect its own deadline (the RPC
// layer's timeout); a follower that gives up only stops waiting. A fetch that throws fails
// the leader and every follower with the same exception_ptr, and is not retried here.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace flexfiles::fallback {

enum class FlightStatus : std::uint8_t {
    Ok,       // value holds the fetched result
    TimedOut, // a follower's deadline passed before the leader finished
    Failed,   // the fetch threw; error holds the exception
};
const char* to_string(FlightStatus s);

template <class Value> struct FlightResult {
    FlightStatus status = FlightStatus::Failed;
    bool leader = false; // this caller ran the fetch
    std::optional<Value> value;
    std::exception_ptr error;
};

struct SingleFlightStats {
    std::uint64_t sent = 0;      // fetches run (one per leader)
    std::uint64_t coalesced = 0; // followers that received a leader's result (Ok or Failed)
    std::uint64_t timed_out = 0; // followers whose deadline passed
    std::uint64_t failed = 0;    // fetches that threw
};

template <class Key, class Value, class Hash = std::hash<Key>, class Equal = std::equal_to<Key>>
class SingleFlight {
public:
    using Clock = std::chrono::steady_clock;

    /// Fetch the value for key, or join the fetch already in flight for it. fetch() is
    /// called with no argument and returns a Value; deadline bounds only a follower's wait.
    template <class Fetch>
    FlightResult<Value> run(const Key& key, Clock::time_point deadline, Fetch&& fetch) {
        std::unique_lock lock(mu_);
        if (auto it = calls_.find(key); it != calls_.end()) {
            std::shared_ptr<Call> call = it->second; // keeps the call alive past erase
            call->waiters++;
            const bool done = call->cv.wait_until(lock, deadline, [&] { return call->done; });
            call->waiters--;
            FlightResult<Value> r;
            if (!done) {
                r.status = FlightStatus::TimedOut;
                timed_out_.fetch_add(1, std::memory_order_relaxed);
                return r;
            }
            r.status = call->error ? FlightStatus::Failed : FlightStatus::Ok;
            r.value = call->value;
            r.error = call->error;
            coalesced_.fetch_add(1, std::memory_order_relaxed);
            return r;
        }
        auto call = std::make_shared<Call>();
        calls_.emplace(key, call);
        lock.unlock();

        sent_.fetch_add(1, std::memory_order_relaxed);
        FlightResult<Value> r;
        r.leader = true;
        try {
            r.value.emplace(std::forward<Fetch>(fetch)());
            r.status = FlightStatus::Ok;
        } catch (...) {
            r.error = std::current_exception();
            r.status = FlightStatus::Failed;
            failed_.fetch_add(1, std::memory_order_relaxed);
        }

        lock.lock();
        call->value = r.value;
        call->error = r.error;
        call->done = true;
        calls_.erase(key);
        lock.unlock();
        call->cv.notify_all();
        return r;
    }

    /// Keys with a fetch in flight.
    std::size_t in_flight() const {
        std::lock_guard lock(mu_);
        return calls_.size();
    }

    /// Followers waiting on key's fetch right now (0 when none is in flight).
    std::size_t waiting(const Key& key) const {
        std::lock_guard lock(mu_);
        auto it = calls_.find(key);
        return it == calls_.end() ? 0 : it->second->waiters;
    }

    SingleFlightStats stats() const {
        SingleFlightStats s;
        s.sent = sent_.load(std::memory_order_relaxed);
        s.coalesced = coalesced_.load(std::memory_order_relaxed);
        s.timed_out = timed_out_.load(std::memory_order_relaxed);
        s.failed = failed_.load(std::memory_order_relaxed);
        return s;
    }

private:
    struct Call {
        std::condition_variable cv; // waited on with mu_
        bool done = false;
        std::size_t waiters = 0;
        std::optional<Value> value;
        std::exception_ptr error;
    };

    mutable std::mutex mu_;
    std::unordered_map<Key, std::shared_ptr<Call>, Hash, Equal> calls_;
    std::atomic<std::uint64_t> sent_{0};
    std::atomic<std::uint64_t> coalesced_{0};
    std::atomic<std::uint64_t> timed_out_{0};
    std::atomic<std::uint64_t> failed_{0};
};

} // namespace flexfiles::fallback
