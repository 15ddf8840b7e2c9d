// SPDX-License-Identifier: LGPL-3.0-or-later
#include "mds/ds_getattr.hpp"

#include <vector>

namespace flexfiles::fallback {

void DsGetattrFlights::complete(const Key& key, const std::shared_ptr<Flight>& flight,
                                const fleet::DsResult<fleet::DsAttrs>& result) {
    if (!result.ok()) {
        failed_.fetch_add(1, std::memory_order_relaxed);
    }
    // The answer reaches the cache before anyone waiting for it wakes up.
    if (flight->on_answer) {
        flight->on_answer(flight->target, result, flight->issued_ns);
    }
    {
        std::lock_guard lock(mu_);
        flight->done = true;
        flight->ok = result.ok();
        auto it = flights_.find(key);
        if (it != flights_.end() && it->second == flight) {
            flights_.erase(it);
        }
    }
    flight->cv.notify_all();
}

FetchSummary DsGetattrFlights::fetch(const void* scope, std::span<const GetattrTarget> targets,
                                     Clock::time_point deadline, const SubmitGetattr& submit,
                                     const OnAnswer& on_answer) {
    FetchSummary sum;
    sum.targets = static_cast<unsigned>(targets.size());
    std::vector<std::shared_ptr<Flight>> mine(targets.size());
    std::vector<std::shared_ptr<Flight>> to_submit;

    // Join or start every flight first, so that all mirrors are asked at once.
    {
        std::lock_guard lock(mu_);
        for (std::size_t i = 0; i < targets.size(); ++i) {
            const Key key{scope, targets[i].key};
            auto it = flights_.find(key);
            if (it != flights_.end()) {
                mine[i] = it->second;
                sum.coalesced++;
                continue;
            }
            auto f = std::make_shared<Flight>();
            f->target = targets[i];
            f->on_answer = on_answer;
            flights_.emplace(key, f);
            mine[i] = f;
            to_submit.push_back(f);
            sum.sent++;
        }
    }
    sent_.fetch_add(sum.sent, std::memory_order_relaxed);
    coalesced_.fetch_add(sum.coalesced, std::memory_order_relaxed);

    for (const std::shared_ptr<Flight>& f : to_submit) {
        const Key key{scope, f->target.key};
        f->issued_ns = wcc::monotonic_now_ns();
        submit(f->target, deadline,
               [this, key, f](fleet::DsResult<fleet::DsAttrs> r) { complete(key, f, r); });
    }

    std::unique_lock lock(mu_);
    for (const std::shared_ptr<Flight>& f : mine) {
        const bool done = f->cv.wait_until(lock, deadline, [&] { return f->done; });
        if (!done) {
            sum.timed_out++;
        } else if (f->ok) {
            sum.answered++;
        } else {
            sum.failed++;
        }
    }
    lock.unlock();
    timed_out_.fetch_add(sum.timed_out, std::memory_order_relaxed);
    return sum;
}

std::size_t DsGetattrFlights::in_flight() const {
    std::lock_guard lock(mu_);
    return flights_.size();
}

SingleFlightStats DsGetattrFlights::stats() const {
    SingleFlightStats s;
    s.sent = sent_.load(std::memory_order_relaxed);
    s.coalesced = coalesced_.load(std::memory_order_relaxed);
    s.timed_out = timed_out_.load(std::memory_order_relaxed);
    s.failed = failed_.load(std::memory_order_relaxed);
    return s;
}

} // namespace flexfiles::fallback
