// SPDX-License-Identifier: LGPL-3.0-or-later
#include "mds/reaper.hpp"

#include "model/naming.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <memory>

namespace flexfiles::mds {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kNfs3ErrNoEnt = 2;

bool same_fh(const fleet::DsFh& fh, const std::vector<std::uint8_t>& bytes) {
    return fh.size() == bytes.size() && std::memcmp(fh.data(), bytes.data(), bytes.size()) == 0;
}

std::string describe(const PendingRemoval& r) {
    return "data file " + r.name + " of file " + std::to_string(r.file_id) + " on data server " +
           std::to_string(r.ds_id);
}

// One attempt, as a chain of callbacks on the data server's event thread.
struct AttemptChain : std::enable_shared_from_this<AttemptChain> {
    std::shared_ptr<fleet::DataServer> ds;
    RemovalAttempt result;
    std::chrono::milliseconds timeout;
    std::promise<RemovalAttempt> done;

    void finish(RemovalOutcome outcome, std::string error = {}) {
        result.outcome = outcome;
        result.error = std::move(error);
        done.set_value(std::move(result));
    }

    void start() {
        if (result.removal.fh.empty()) {
            // Filehandle unknown (an interrupted create): nobody else can hold the name,
            // since creates cancel queued removals of the names they take.
            remove();
            return;
        }
        auto self = shared_from_this();
        ds->lookup(result.removal.name, fleet::deadline_in(timeout),
                   [self](fleet::DsResult<fleet::LookupResult> r) {
                       if (!r.ok()) {
                           if (r.status.code == fleet::DsErrc::nfs &&
                               r.status.nfs3 == kNfs3ErrNoEnt)
                               self->finish(RemovalOutcome::already_gone);
                           else
                               self->finish(RemovalOutcome::failed, r.status.message);
                           return;
                       }
                       if (!same_fh(r.value.fh, self->result.removal.fh)) {
                           self->finish(RemovalOutcome::superseded);
                           return;
                       }
                       self->remove();
                   });
    }

    void remove() {
        auto self = shared_from_this();
        ds->remove(result.removal.name, fleet::deadline_in(timeout),
                   [self](fleet::DsResult<fleet::Empty> r) {
                       if (r.ok())
                           self->finish(RemovalOutcome::removed);
                       else if (r.status.code == fleet::DsErrc::nfs &&
                                r.status.nfs3 == kNfs3ErrNoEnt)
                           self->finish(RemovalOutcome::already_gone);
                       else
                           self->finish(RemovalOutcome::failed, r.status.message);
                   });
    }
};

} // namespace

bool removal_is_ours(const PendingRemoval& r, std::uint64_t identity, bool shared_namespace,
                     std::string* why) {
    const auto parsed = fleet::parse_data_file_name(r.name);
    std::string reason;
    if (!parsed)
        reason = "not a data-file name this MDS makes";
    else if (parsed->identity && *parsed->identity != identity && shared_namespace && !r.fh.empty())
        return true; // another MDS's of the namespace, from a map (see reaper.hpp)
    else if (parsed->identity && *parsed->identity != identity)
        reason = "it carries identity " + fleet::identity_hex(*parsed->identity) +
                 ", not this export's " + fleet::identity_hex(identity);
    else if (!parsed->identity && r.fh.empty())
        reason = "an old-form name (no identity) with no filehandle to prove it this export's";
    else
        return true;
    if (why != nullptr)
        *why = std::move(reason);
    return false;
}

std::chrono::milliseconds removal_backoff(std::uint32_t failed_attempts,
                                          std::chrono::milliseconds initial,
                                          std::chrono::milliseconds max) {
    if (initial.count() <= 0)
        initial = 1ms;
    if (max < initial)
        max = initial;
    std::chrono::milliseconds d = initial;
    for (std::uint32_t i = 1; i < failed_attempts && d < max; ++i)
        d *= 2;
    return std::min(d, max);
}

Reaper::Reaper(LayoutStore& store, fleet::Fleet& fleet, ReaperSettings settings, fleet::LogSink log)
    : store_(store), fleet_(fleet), settings_(settings), log_(std::move(log)),
      loop_(settings.tick, [this] { tick_once(); }) {}

Reaper::~Reaper() {
    stop();
}

void Reaper::start() {
    loop_.start();
}

void Reaper::stop() {
    loop_.stop();
}

void Reaper::kick() {
    loop_.kick();
}

void Reaper::log(fleet::LogLevel level, const std::string& message) const {
    if (!log_)
        return;
    try {
        log_(level, "reaper: " + message);
    } catch (...) {
    }
}

ReaperCounters Reaper::counters() const {
    ReaperCounters c;
    c.attempts = c_attempts_.load(std::memory_order_relaxed);
    c.removed = c_removed_.load(std::memory_order_relaxed);
    c.already_gone = c_already_gone_.load(std::memory_order_relaxed);
    c.superseded = c_superseded_.load(std::memory_order_relaxed);
    c.failures = c_failures_.load(std::memory_order_relaxed);
    c.retried_ok = c_retried_ok_.load(std::memory_order_relaxed);
    c.store_errors = c_store_errors_.load(std::memory_order_relaxed);
    c.not_ours = c_not_ours_.load(std::memory_order_relaxed);
    return c;
}

std::vector<std::uint64_t> Reaper::servers_back_up() {
    std::vector<std::uint64_t> back;
    for (const auto& ds : fleet_.servers()) {
        const fleet::Health now = ds->health();
        auto [it, first] = last_health_.try_emplace(ds->id(), now);
        if (!first && it->second != fleet::Health::up && now == fleet::Health::up)
            back.push_back(ds->id());
        it->second = now;
    }
    return back;
}

void Reaper::tick_once() {
    const auto due = store_.due_removals(wall_clock_ms(), settings_.batch, servers_back_up());
    if (!due.ok()) {
        c_store_errors_.fetch_add(1, std::memory_order_relaxed);
        log(fleet::LogLevel::error, due.status.error);
        return;
    }
    if (due.value.empty())
        return;
    record(attempt_all(due.value));
}

std::vector<RemovalAttempt> Reaper::remove_now(const std::vector<PendingRemoval>& queued) {
    std::vector<RemovalAttempt> attempts = attempt_all(queued);
    record(attempts);
    return attempts;
}

std::vector<RemovalAttempt> Reaper::attempt_all(const std::vector<PendingRemoval>& removals) {
    std::vector<RemovalAttempt> out(removals.size());
    std::vector<bool> mine(removals.size(), false);
    {
        std::lock_guard lk(mu_);
        for (std::size_t i = 0; i < removals.size(); ++i) {
            out[i].removal = removals[i];
            out[i].outcome = RemovalOutcome::skipped;
            const DataFileName name{removals[i].ds_id, removals[i].name};
            if (claimed_.count(name) != 0 || busy_.count(name) != 0)
                continue;
            busy_.insert(name);
            mine[i] = true;
        }
    }

    std::vector<std::future<RemovalAttempt>> pending(removals.size());
    for (std::size_t i = 0; i < removals.size(); ++i) {
        if (!mine[i])
            continue;
        // A create may have cancelled it between the query and the claim check above.
        const auto exists = store_.removal_exists(removals[i].id);
        if (!exists.ok() || !exists.value) {
            if (!exists.ok()) {
                c_store_errors_.fetch_add(1, std::memory_order_relaxed);
                log(fleet::LogLevel::error, exists.status.error);
            }
            continue; // stays skipped
        }
        if (std::string why;
            !removal_is_ours(removals[i], store_.identity(), settings_.shared_namespace, &why)) {
            out[i].outcome = RemovalOutcome::not_ours;
            out[i].error = std::move(why);
            continue;
        }
        c_attempts_.fetch_add(1, std::memory_order_relaxed);
        auto ds = fleet_.find(removals[i].ds_id);
        if (!ds) {
            out[i].outcome = RemovalOutcome::failed;
            out[i].error = "data server " + std::to_string(removals[i].ds_id) +
                           " is not in this export's configuration";
            continue;
        }
        auto chain = std::make_shared<AttemptChain>();
        chain->ds = std::move(ds);
        chain->result.removal = removals[i];
        chain->timeout = settings_.request_timeout;
        pending[i] = chain->done.get_future();
        chain->start();
    }

    // Each RPC completes by its deadline (the fleet guarantees it); the margin only guards
    // against a fleet bug turning into a stuck thread.
    const auto limit = fleet::Clock::now() + 2 * settings_.request_timeout + 2s;
    for (std::size_t i = 0; i < removals.size(); ++i) {
        if (!pending[i].valid())
            continue;
        if (pending[i].wait_until(limit) == std::future_status::ready) {
            out[i] = pending[i].get();
        } else {
            out[i].outcome = RemovalOutcome::failed;
            out[i].error = "no answer from the data-server client within " +
                           std::to_string((2 * settings_.request_timeout + 2s).count()) + " ms";
        }
    }

    {
        std::lock_guard lk(mu_);
        for (std::size_t i = 0; i < removals.size(); ++i)
            if (mine[i])
                busy_.erase({removals[i].ds_id, removals[i].name});
    }
    cv_.notify_all();
    return out;
}

void Reaper::record(const std::vector<RemovalAttempt>& attempts) {
    // Finished ones leave the queue together (one durable commit, not one each).
    std::vector<std::int64_t> done;
    for (const RemovalAttempt& a : attempts)
        if (a.outcome == RemovalOutcome::removed || a.outcome == RemovalOutcome::already_gone ||
            a.outcome == RemovalOutcome::superseded || a.outcome == RemovalOutcome::not_ours)
            done.push_back(a.removal.id);
    if (auto st = store_.removals_done(done); !st.ok()) {
        c_store_errors_.fetch_add(1, std::memory_order_relaxed);
        log(fleet::LogLevel::error, st.error);
    }
    for (const RemovalAttempt& a : attempts)
        record_one(a);
}

void Reaper::record_one(const RemovalAttempt& a) {
    const PendingRemoval& r = a.removal;
    switch (a.outcome) {
    case RemovalOutcome::skipped:
        return;
    case RemovalOutcome::not_ours:
        c_not_ours_.fetch_add(1, std::memory_order_relaxed);
        log(fleet::LogLevel::warn, describe(r) + ": not this export's to remove (" + a.error +
                                       "): left alone and dropped from the removal queue");
        return;
    case RemovalOutcome::removed:
    case RemovalOutcome::already_gone:
    case RemovalOutcome::superseded: {
        if (a.outcome == RemovalOutcome::removed)
            c_removed_.fetch_add(1, std::memory_order_relaxed);
        else if (a.outcome == RemovalOutcome::already_gone)
            c_already_gone_.fetch_add(1, std::memory_order_relaxed);
        else
            c_superseded_.fetch_add(1, std::memory_order_relaxed);
        if (r.attempts > 0) {
            c_retried_ok_.fetch_add(1, std::memory_order_relaxed);
            log(fleet::LogLevel::info,
                describe(r) +
                    (a.outcome == RemovalOutcome::removed        ? ": removed"
                     : a.outcome == RemovalOutcome::already_gone ? ": already gone"
                                                                 : ": name now belongs to a "
                                                                   "newer data file, left "
                                                                   "alone") +
                    " after " + std::to_string(r.attempts) + " failed attempt(s)");
        } else if (a.outcome == RemovalOutcome::superseded) {
            log(fleet::LogLevel::warn,
                describe(r) + ": the name now belongs to a newer data file, left alone");
        }
        return;
    }
    case RemovalOutcome::failed: {
        c_failures_.fetch_add(1, std::memory_order_relaxed);
        const std::uint32_t attempts = r.attempts + 1;
        const auto delay =
            removal_backoff(attempts, settings_.backoff_initial, settings_.backoff_max);
        if (auto st =
                store_.removal_failed(r.id, attempts, wall_clock_ms() + delay.count(), a.error);
            !st.ok()) {
            c_store_errors_.fetch_add(1, std::memory_order_relaxed);
            log(fleet::LogLevel::error, st.error);
        }
        // Every failure is counted; the log gets attempts 1, 2, 4, 8, ... and every 100th,
        // so a data server away for a day does not flood it.
        const bool noteworthy = (attempts & (attempts - 1)) == 0 || attempts % 100 == 0;
        log(noteworthy ? fleet::LogLevel::warn : fleet::LogLevel::debug,
            describe(r) + ": removal attempt " + std::to_string(attempts) + " failed: " + a.error +
                "; still queued, next attempt in " + std::to_string(delay.count()) + " ms");
        return;
    }
    }
}

// ---------------------------------------------------------------------------------------
// Claims

Reaper::Claim Reaper::claim(std::vector<DataFileName> names, fleet::Deadline deadline) {
    std::unique_lock lk(mu_);
    auto taken = [&] {
        for (const auto& n : names)
            if (busy_.count(n) != 0 || claimed_.count(n) != 0)
                return true;
        return false;
    };
    while (taken()) {
        if (cv_.wait_until(lk, deadline) == std::cv_status::timeout && taken())
            return {};
    }
    for (const auto& n : names)
        claimed_.insert(n);
    Claim c;
    c.reaper_ = this;
    c.names_ = std::move(names);
    return c;
}

Reaper::Claim& Reaper::Claim::operator=(Claim&& other) noexcept {
    if (this != &other) {
        release();
        reaper_ = std::exchange(other.reaper_, nullptr);
        names_ = std::move(other.names_);
    }
    return *this;
}

Reaper::Claim::~Claim() {
    release();
}

void Reaper::Claim::release() noexcept {
    if (reaper_ == nullptr)
        return;
    {
        std::lock_guard lk(reaper_->mu_);
        for (const auto& n : names_)
            reaper_->claimed_.erase(n);
    }
    reaper_->cv_.notify_all();
    reaper_ = nullptr;
    names_.clear();
}

} // namespace flexfiles::mds
