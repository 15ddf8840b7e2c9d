// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Fence retries: a data file whose owner change (a fence, pnfs/fencing.cpp) failed is
// tried again until it succeeds.
//
// Until then the fenced client may still write that data file, so fencing marks its
// mirror stale (unless it is the last in sync, layout/fence_plan.hpp) and records the new
// owner in the file's map; this class only has to make the data server agree with the
// map. A retry sets the owner the fence wanted; a newer fence of the same file first calls
// supersede(), so an older retry never lands after a newer owner.
//
// In memory only: after a restart every client reclaims or loses its layouts, and a
// layout carrying an old owner on a data file that still has it is refused nowhere. The
// stale mark (in the layout store) is what outlives a restart: the resilverer copies over
// whatever the old client wrote. A holder of the current owner that gets NFS3ERR_ACCES
// reports it, and LAYOUTRETURN/LAYOUTERROR set the owner again (pnfs/layoutreturn.cpp).
//
// Threading: one thread per export, waking every `tick` (or when kicked); due retries run
// in parallel on the data servers' event threads, this thread waits for them (bounded by
// the request deadline). Backoff per data file: initial, 2x, 4x ... capped at max.
#pragma once

#include "fleet/fleet.hpp"
#include "mds/periodic_thread.hpp"

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

struct FenceRetrySettings {
    std::chrono::milliseconds tick{250};
    std::chrono::milliseconds backoff_initial{250};
    std::chrono::milliseconds backoff_max{30000};
    std::chrono::milliseconds request_timeout{2000};
};

// One data file's owner to set again.
struct PendingFence {
    std::uint64_t file_id = 0;
    std::uint32_t mirror = 0;
    std::uint64_t ds_id = 0;
    std::vector<std::uint8_t> fh;
    std::string name; // the data file's, for log lines
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
};

struct FenceRetryCounters {
    std::uint64_t queued = 0;     // failed fences handed over
    std::uint64_t attempts = 0;   // retries sent
    std::uint64_t failures = 0;   // retries that failed (rescheduled)
    std::uint64_t completed = 0;  // data files fenced by a retry
    std::uint64_t superseded = 0; // dropped for a newer fence of the file
};

class FenceRetrier {
public:
    FenceRetrier(fleet::Fleet& fleet, FenceRetrySettings settings, fleet::LogSink log);
    ~FenceRetrier(); // stops the thread
    FenceRetrier(const FenceRetrier&) = delete;
    FenceRetrier& operator=(const FenceRetrier&) = delete;

    void start();
    void stop();

    // Queues a retry (first attempt after backoff_initial); replaces one queued for the
    // same data file (file, mirror).
    void queue(PendingFence fence);
    // A new fence of the file is about to start: forgets its queued retries and waits
    // (bounded by the request timeout) for one in flight to finish.
    void supersede(std::uint64_t file_id);

    // One attempt on every due retry, on the caller's thread (the thread's unit of work).
    void pass();

    std::size_t pending() const;
    FenceRetryCounters counters() const;

private:
    struct Entry {
        PendingFence fence;
        std::uint32_t failures = 0;
        std::chrono::steady_clock::time_point due{};
        std::uint64_t generation = 0;
    };
    using Key = std::pair<std::uint64_t, std::uint32_t>; // (file, mirror)

    void log(fleet::LogLevel level, const std::string& message) const;

    fleet::Fleet& fleet_;
    const FenceRetrySettings settings_;
    const fleet::LogSink log_;

    mutable std::mutex mu_;
    std::condition_variable idle_cv_;
    std::map<Key, Entry> pending_;
    std::multiset<std::uint64_t> in_flight_; // files with an attempt in flight
    std::uint64_t next_generation_ = 1;
    FenceRetryCounters counters_;

    PeriodicThread loop_; // last: stopped and joined before the rest goes
};

} // namespace flexfiles::mds
