// SPDX-License-Identifier: LGPL-3.0-or-later
#include "mds/fence_retry.hpp"

#include "mds/reaper.hpp" // removal_backoff: the same doubling, capped

#include <future>

namespace flexfiles::mds {

FenceRetrier::FenceRetrier(fleet::Fleet& fleet, FenceRetrySettings settings, fleet::LogSink log)
    : fleet_(fleet), settings_(settings), log_(std::move(log)),
      loop_(settings.tick, [this] { pass(); }) {}

FenceRetrier::~FenceRetrier() {
    stop();
}

void FenceRetrier::start() {
    loop_.start();
}

void FenceRetrier::stop() {
    loop_.stop();
}

void FenceRetrier::log(fleet::LogLevel level, const std::string& message) const {
    if (!log_)
        return;
    try {
        log_(level, "fence retry: " + message);
    } catch (...) {
    }
}

void FenceRetrier::queue(PendingFence fence) {
    std::lock_guard lk(mu_);
    const Key key{fence.file_id, fence.mirror};
    Entry& e = pending_[key];
    e.fence = std::move(fence);
    e.failures = 1;
    e.due = std::chrono::steady_clock::now() + settings_.backoff_initial;
    e.generation = next_generation_++;
    counters_.queued++;
}

void FenceRetrier::supersede(std::uint64_t file_id) {
    std::unique_lock lk(mu_);
    for (auto it = pending_.lower_bound(Key{file_id, 0});
         it != pending_.end() && it->first.first == file_id;) {
        it = pending_.erase(it);
        counters_.superseded++;
    }
    idle_cv_.wait_for(lk, settings_.request_timeout + std::chrono::milliseconds(500),
                      [&] { return in_flight_.count(file_id) == 0; });
}

void FenceRetrier::pass() {
    struct Attempt {
        Key key;
        std::uint64_t generation;
        PendingFence fence;
        std::future<fleet::DsResult<fleet::SetattrResult>> reply;
        std::string error; // set when it could not be sent
    };
    std::vector<Attempt> attempts;
    {
        std::lock_guard lk(mu_);
        const auto now = std::chrono::steady_clock::now();
        for (auto& [key, e] : pending_) {
            if (e.due > now)
                continue;
            attempts.push_back(Attempt{key, e.generation, e.fence, {}, {}});
            in_flight_.insert(key.first);
            counters_.attempts++;
        }
    }
    if (attempts.empty())
        return;
    const fleet::Deadline deadline = fleet::deadline_in(settings_.request_timeout);
    for (Attempt& a : attempts) {
        auto ds = fleet_.find(a.fence.ds_id);
        auto fh = fleet::DsFh::from_bytes(a.fence.fh.data(), a.fence.fh.size());
        if (!ds || !fh) {
            a.error = "data server not in the fleet, or no filehandle";
            continue;
        }
        fleet::SetAttrs attrs;
        attrs.uid = a.fence.uid;
        attrs.gid = a.fence.gid;
        a.reply = ds->setattr(*fh, attrs, deadline);
    }
    for (Attempt& a : attempts) {
        bool ok = false;
        if (a.error.empty()) {
            const auto r = a.reply.get();
            ok = r.ok();
            if (!ok)
                a.error = r.status.message;
        }
        const std::string what = "file " + std::to_string(a.fence.file_id) + " mirror " +
                                 std::to_string(a.fence.mirror) + " (" + a.fence.name +
                                 " on data server " + std::to_string(a.fence.ds_id) + ")";
        std::lock_guard lk(mu_);
        in_flight_.erase(in_flight_.find(a.key.first));
        auto it = pending_.find(a.key);
        const bool current = it != pending_.end() && it->second.generation == a.generation;
        if (ok) {
            counters_.completed++;
            if (current)
                pending_.erase(it);
            log(fleet::LogLevel::info, what + ": owner now " + std::to_string(a.fence.uid) + ":" +
                                           std::to_string(a.fence.gid) + ", fenced");
        } else {
            counters_.failures++;
            if (current) {
                Entry& e = it->second;
                const auto delay =
                    removal_backoff(++e.failures, settings_.backoff_initial, settings_.backoff_max);
                e.due = std::chrono::steady_clock::now() + delay;
                log(fleet::LogLevel::warn, what + ": still not fenced (" + a.error +
                                               "), next try in " + std::to_string(delay.count()) +
                                               " ms");
            }
        }
    }
    idle_cv_.notify_all();
}

std::size_t FenceRetrier::pending() const {
    std::lock_guard lk(mu_);
    return pending_.size();
}

FenceRetryCounters FenceRetrier::counters() const {
    std::lock_guard lk(mu_);
    return counters_;
}

} // namespace flexfiles::mds
