// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A result set once and waited for with a deadline: what std::promise / std::future do,
// for the proxied WRITE's path, where a 4 KiB write takes about 200 us. std::promise sets
// its value through std::call_once, and glibc's pthread_once ends in a futex wake whether
// anyone waits or not: a system call per mirror per write (about 1 us on this machine's
// VM). Here a value set with nobody waiting costs an uncontended mutex and nothing else;
// most writes' replies are read by the waiting worker itself (DataServer::write_here).
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <utility>

namespace flexfiles::mds {

template <class T> class OneShot {
public:
    // The first value stays; later ones are dropped (each chain settles once).
    void set(T value) {
        std::lock_guard lk(mu_);
        if (value_)
            return;
        value_.emplace(std::move(value));
        cv_.notify_all(); // under the lock: the waiter may free this once it sees the value
    }

    // Whether a value came by `until`.
    template <class TimePoint> bool wait_until(TimePoint until) {
        std::unique_lock lk(mu_);
        return cv_.wait_until(lk, until, [&] { return value_.has_value(); });
    }

    // The value, once wait_until said it came.
    T take() {
        std::lock_guard lk(mu_);
        return std::move(*value_);
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::optional<T> value_;
};

} // namespace flexfiles::mds
