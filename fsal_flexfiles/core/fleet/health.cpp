// SPDX-License-Identifier: LGPL-3.0-or-later
#include "fleet/health.hpp"

#include <algorithm>

namespace flexfiles::fleet {

std::string_view to_string(Health h) {
    switch (h) {
    case Health::up:
        return "Up";
    case Health::suspect:
        return "Suspect";
    case Health::down:
        return "Down";
    }
    return "?";
}

std::string_view to_string(ErrorKind k) {
    switch (k) {
    case ErrorKind::timeout:
        return "timeout";
    case ErrorKind::io:
        return "io";
    case ErrorKind::access:
        return "access";
    case ErrorKind::disconnected:
        return "disconnected";
    case ErrorKind::other:
        return "other";
    }
    return "?";
}

unsigned HealthTracker::consecutive_probe_failures() const noexcept {
    std::lock_guard lk(mu_);
    return failures_;
}

HealthTransition HealthTracker::set_locked(Health to) noexcept {
    Health from = state_.load(std::memory_order_relaxed);
    state_.store(to, std::memory_order_release);
    return {from, to};
}

HealthTransition HealthTracker::probe_succeeded() noexcept {
    std::lock_guard lk(mu_);
    failures_ = 0;
    return set_locked(Health::up);
}

std::optional<HealthTracker::Clock::time_point> HealthTracker::down_due() const noexcept {
    std::lock_guard lk(mu_);
    if (failures_ == 0 || state_.load(std::memory_order_relaxed) == Health::down)
        return std::nullopt;
    return first_failure_ + down_span_;
}

HealthTransition HealthTracker::probe_failed(Clock::time_point now) noexcept {
    std::lock_guard lk(mu_);
    if (failures_ == 0)
        first_failure_ = now;
    if (failures_ < down_after_)
        ++failures_;
    const bool down = state_.load(std::memory_order_relaxed) == Health::down ||
                      (failures_ >= down_after_ && now - first_failure_ >= down_span_);
    return set_locked(down ? Health::down : Health::suspect);
}

HealthTransition HealthTracker::error_reported(ErrorKind) noexcept {
    std::lock_guard lk(mu_);
    Health cur = state_.load(std::memory_order_relaxed);
    return set_locked(cur == Health::up ? Health::suspect : cur);
}

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max,
                 std::uint64_t seed) noexcept
    : initial_(std::max(initial, std::chrono::milliseconds(1))),
      max_(std::max(max, std::max(initial, std::chrono::milliseconds(1)))),
      rng_(static_cast<std::uint_fast32_t>(seed % 2147483646u + 1u)) {}

std::chrono::milliseconds Backoff::nominal() const noexcept {
    auto d = initial_;
    for (unsigned i = 0; i < failures_ && d < max_; ++i)
        d *= 2;
    return std::min(d, max_);
}

std::chrono::milliseconds Backoff::next() noexcept {
    auto d = nominal();
    ++failures_;
    // Scale into [0.75, 1.0] of the nominal delay (never above the cap).
    std::uniform_int_distribution<int> pct(75, 100);
    auto scaled = d.count() * pct(rng_) / 100;
    return std::chrono::milliseconds(std::max<std::int64_t>(1, scaled));
}

} // namespace flexfiles::fleet
