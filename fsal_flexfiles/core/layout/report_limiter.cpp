// SPDX-License-Identifier: LGPL-3.0-or-later
#include "layout/report_limiter.hpp"

#include <algorithm>
#include <iterator>

namespace flexfiles::layout {

ReportLimiter::ReportLimiter(unsigned burst, unsigned per_second) noexcept
    : burst_(std::max(1u, burst)), per_second_(std::max(1u, per_second)) {}

void ReportLimiter::refill(Bucket& b, Clock::time_point now) const noexcept {
    if (now <= b.updated)
        return;
    const double elapsed = std::chrono::duration<double>(now - b.updated).count();
    b.tokens = std::min(burst_, b.tokens + elapsed * per_second_);
    b.updated = now;
}

void ReportLimiter::forget_idle(Clock::time_point now) {
    for (auto it = buckets_.begin(); it != buckets_.end();) {
        refill(it->second, now);
        it = it->second.tokens >= burst_ ? buckets_.erase(it) : std::next(it);
    }
}

bool ReportLimiter::admit(std::uint64_t client, Clock::time_point now) {
    std::lock_guard lk(mu_);
    auto it = buckets_.find(client);
    if (it == buckets_.end()) {
        if (buckets_.size() >= kPruneAbove)
            forget_idle(now);
        it = buckets_.emplace(client, Bucket{burst_, now}).first;
    } else {
        refill(it->second, now);
    }
    if (it->second.tokens < 1.0)
        return false;
    it->second.tokens -= 1.0;
    return true;
}

std::size_t ReportLimiter::tracked_clients() const {
    std::lock_guard lk(mu_);
    return buckets_.size();
}

} // namespace flexfiles::layout
