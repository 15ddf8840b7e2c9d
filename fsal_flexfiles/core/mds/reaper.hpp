// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The reaper: removes data files the MDS no longer needs (their file was removed, or a
// create failed half-way) from the data servers, and keeps retrying the ones that fail.
//
// Every removal is in the layout store's queue before it is first tried, so none is lost
// to an error or a restart. A failed attempt stays queued with its next attempt after a
// backoff (initial, 2x, 4x ... capped); it is counted and logged with the data file, the
// data server and the error. An attempt is: LOOKUP the name (when the filehandle is known)
// and REMOVE it only if it is still the same file (a newer data file may have taken the
// name: names derive from the MDS fileid, which the namespace reuses), then REMOVE. A name
// already gone counts as removed.
//
// Threading. One thread per export wakes every `tick` (or when kicked), takes the due
// removals from the store, and tries them in parallel (the data servers' event threads
// run the RPCs; this thread waits, bounded by the request deadlines). A data server that
// comes back Up gets its queued removals tried at once rather than at their backoff time.
// remove_now() runs the same attempt on the caller's thread (the unlink path).
//
// Whose. The reaper removes only data files that are this export's: a name carrying the
// store's identity (model/naming.hpp), or an old-form name (no identity: stores made before
// identities) whose filehandle it knows, so that the LOOKUP above proves it is the very
// file this export made. Anything else in the queue (another identity, a name this code
// never makes, an old-form name with no filehandle: a create interrupted before identities)
// may be another export's or another MDS's data file: it is never removed, only dropped
// from the queue, counted (not_ours) and logged with its name, for an operator to judge.
// Except on a shared namespace (Map_In_Namespace: several MDSs on one CephFS, each with its
// own identity): there a data file of another identity is removed when its filehandle is
// known, since only a map of the namespace gave the queue that filehandle, and the LOOKUP
// proves it is that very file.
//
// Names. Placement claims the names it is about to create (claim()): the reaper never
// works on a claimed name, and a claim waits (bounded) for an attempt on that name to
// finish, so a removal can never hit a data file created after its LOOKUP.
#pragma once

#include "fleet/fleet.hpp"
#include "mds/periodic_thread.hpp"
#include "store/layout_store.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace flexfiles::mds {

struct ReaperSettings {
    std::chrono::milliseconds tick{500};
    std::chrono::milliseconds backoff_initial{1000};
    std::chrono::milliseconds backoff_max{60000};
    std::chrono::milliseconds request_timeout{5000}; // per RPC (LOOKUP, REMOVE)
    std::size_t batch = 64;                          // removals tried per tick at most
    bool shared_namespace = false;                   // Map_In_Namespace: see "Whose" above
};

// Delay before the next attempt after `failed_attempts` failures (>= 1): initial doubled per
// earlier failure, capped at max.
std::chrono::milliseconds removal_backoff(std::uint32_t failed_attempts,
                                          std::chrono::milliseconds initial,
                                          std::chrono::milliseconds max);

struct ReaperCounters {
    std::uint64_t attempts = 0;     // removal attempts (reaper and remove_now)
    std::uint64_t removed = 0;      // data files removed
    std::uint64_t already_gone = 0; // the name did not exist (counted as removed too)
    std::uint64_t superseded = 0;   // the name belonged to a newer data file: left alone
    std::uint64_t failures = 0;     // attempts that failed and were rescheduled
    std::uint64_t retried_ok = 0;   // removals that succeeded after at least one failure
    std::uint64_t store_errors = 0; // the queue could not be updated
    std::uint64_t not_ours = 0;     // not provably this export's: dropped, never removed
};

enum class RemovalOutcome { removed, already_gone, superseded, failed, skipped, not_ours };

// Whether the reaper may try to remove this queued data file (see "Whose" above); when it
// may not, `why` says why.
bool removal_is_ours(const PendingRemoval& r, std::uint64_t identity, bool shared_namespace,
                     std::string* why = nullptr);

struct RemovalAttempt {
    PendingRemoval removal;
    RemovalOutcome outcome = RemovalOutcome::failed;
    std::string error; // when failed
};

using DataFileName = std::pair<std::uint64_t, std::string>; // (data-server Id, name)

class Reaper {
public:
    Reaper(LayoutStore& store, fleet::Fleet& fleet, ReaperSettings settings, fleet::LogSink log);
    ~Reaper(); // stops the thread
    Reaper(const Reaper&) = delete;
    Reaper& operator=(const Reaper&) = delete;

    void start();
    void stop();
    // Wake the thread now (e.g. after queueing).
    void kick();

    // Tries these queued removals now, in parallel, on the caller's thread; each one is
    // dropped from the queue when it succeeds and rescheduled when it fails. Names claimed by
    // a create are skipped (left queued).
    std::vector<RemovalAttempt> remove_now(const std::vector<PendingRemoval>& queued);

    // Claims names for a create until the returned Claim is destroyed. Waits until the reaper
    // is not working on any of them, at most until `deadline`; false (nothing claimed) when
    // that passes.
    class Claim {
    public:
        Claim() = default;
        Claim(Claim&& other) noexcept { *this = std::move(other); }
        Claim& operator=(Claim&& other) noexcept;
        ~Claim();
        explicit operator bool() const { return reaper_ != nullptr; }

    private:
        friend class Reaper;
        void release() noexcept;
        Reaper* reaper_ = nullptr;
        std::vector<DataFileName> names_;
    };
    Claim claim(std::vector<DataFileName> names, fleet::Deadline deadline);

    ReaperCounters counters() const;

private:
    void tick_once();
    std::vector<std::uint64_t> servers_back_up();
    std::vector<RemovalAttempt> attempt_all(const std::vector<PendingRemoval>& removals);
    void record(const std::vector<RemovalAttempt>& attempts);
    void record_one(const RemovalAttempt& attempt);
    void log(fleet::LogLevel level, const std::string& message) const;

    LayoutStore& store_;
    fleet::Fleet& fleet_;
    const ReaperSettings settings_;
    const fleet::LogSink log_;

    std::mutex mu_;                  // busy_ and claimed_
    std::condition_variable cv_;     // a name was released
    std::set<DataFileName> busy_;    // names an attempt is working on
    std::set<DataFileName> claimed_; // names a create is working on

    std::map<std::uint64_t, fleet::Health> last_health_; // reaper thread only

    std::atomic<std::uint64_t> c_attempts_{0}, c_removed_{0}, c_already_gone_{0}, c_superseded_{0},
        c_failures_{0}, c_retried_ok_{0}, c_store_errors_{0}, c_not_ours_{0};

    PeriodicThread loop_; // last: stopped and joined before the rest goes
};

} // namespace flexfiles::mds
