// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Counters of one export's data path (placement, removal, proxy I/O). Relaxed atomics:
// written from Ganesha's worker threads and the data servers' event threads, read by
// logs, tests and (later) the dbus interface. The reaper keeps its own (ReaperCounters).
#pragma once

#include <atomic>
#include <cstdint>

namespace flexfiles::mds {

struct DataPathCounters {
    using Counter = std::atomic<std::uint64_t>;

    Counter files_placed{0};       // files that got their data files (create or adoption)
    Counter placement_failures{0}; // creates refused: too few data servers, or a CREATE failed
    Counter data_files_created{0};
    Counter files_removed{0};   // files whose last link went (their data files queued)
    Counter removals_queued{0}; // data files queued for removal (all causes)
    Counter store_errors{0};    // the layout store failed an operation
    // Creates that found a data file under a planned name with no record of it in the
    // layout store: left alone, the create refused (placement_at_create.hpp).
    Counter name_collisions{0};

    Counter proxy_reads{0};
    Counter proxy_read_fallbacks{0}; // a mirror failed and another one answered
    Counter proxy_read_errors{0};    // no mirror answered
    Counter proxy_writes{0};
    Counter proxy_write_errors{0}; // at least one mirror failed
    Counter proxy_bytes_read{0};
    Counter proxy_bytes_written{0};
    // Proxied writes whose every mirror was sent from the worker's own thread
    // (DataServer::write_here), without the data servers' event threads.
    Counter proxy_writes_direct{0};
    // Where the time of proxied writes went, summed over the writes that succeeded on every
    // mirror (proxy_writes_timed), in ns, for the mirror the write waited for last (the
    // last chunk of it): waiting for the data server's event thread to send the request
    // (its wake-up included; 0 when the worker sent it itself), the data server's round
    // trip as the sending thread saw it, and from the reply until the worker thread ran
    // again; total is the whole ProxyIo::write.
    Counter proxy_writes_timed{0};
    Counter proxy_write_queue_ns{0};
    Counter proxy_write_data_server_ns{0};
    Counter proxy_write_wake_ns{0};
    Counter proxy_write_total_ns{0};
    Counter proxy_commits{0};
    Counter proxy_commit_errors{0};
    Counter truncates{0};
    Counter truncate_errors{0};
    // Writes and truncates that some in-sync mirrors missed and that succeeded on the
    // others (stale_mirrors.hpp), and the mirrors marked stale by them.
    Counter degraded_writes{0};
    Counter mirrors_marked_stale{0};
    // Failures on mirrors already stale (they fail nothing).
    Counter stale_mirror_errors{0};

    static void add(Counter& c, std::uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
    static std::uint64_t get(const Counter& c) { return c.load(std::memory_order_relaxed); }
};

} // namespace flexfiles::mds
