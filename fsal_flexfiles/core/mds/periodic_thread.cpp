// SPDX-License-Identifier: LGPL-3.0-or-later
#include "mds/periodic_thread.hpp"

namespace flexfiles::mds {

void PeriodicThread::start() {
    std::lock_guard lk(mu_);
    if (thread_.joinable() || stopping_)
        return;
    thread_ = std::thread([this] { run(); });
}

void PeriodicThread::stop() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
        thread_.join();
}

void PeriodicThread::kick() {
    {
        std::lock_guard lk(mu_);
        kicked_ = true;
    }
    cv_.notify_all();
}

bool PeriodicThread::stopping() const {
    std::lock_guard lk(mu_);
    return stopping_;
}

void PeriodicThread::run() {
    std::unique_lock lk(mu_);
    while (!stopping_) {
        cv_.wait_for(lk, period_, [this] { return stopping_ || kicked_; });
        if (stopping_)
            break;
        kicked_ = false;
        lk.unlock();
        work_();
        lk.lock();
    }
}

} // namespace flexfiles::mds
