// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A background thread that runs `work` every `period`, and at once when kicked, until
// stopped: the loop of the reaper and of the resilverer.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace flexfiles::mds {

class PeriodicThread {
public:
    PeriodicThread(std::chrono::milliseconds period, std::function<void()> work)
        : period_(period), work_(std::move(work)) {}
    ~PeriodicThread() { stop(); }
    PeriodicThread(const PeriodicThread&) = delete;
    PeriodicThread& operator=(const PeriodicThread&) = delete;

    // Starts the thread (once; not after stop()).
    void start();
    // Stops it and waits for `work` to return (unless called from `work` itself).
    void stop();
    // Runs `work` now rather than at the next period.
    void kick();
    // Whether stop() was called (long work checks it between items).
    bool stopping() const;

private:
    void run();

    const std::chrono::milliseconds period_;
    const std::function<void()> work_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stopping_ = false;
    bool kicked_ = false;
    std::thread thread_;
};

} // namespace flexfiles::mds
