// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The resilverer: copies an in-sync mirror over each stale one (stale_mirrors.hpp says how
// a mirror becomes stale) and clears the mark, so a file is fully mirrored again without
// an administrator.
//
// One attempt on a stale mirror:
//   1. wait while a client holds an RW layout on the file (it may write the in-sync
//      mirrors directly; the MDS would not see it) or a write through the MDS is in
//      flight, and while the stale mirror's data server is not Up; RW layouts waited on
//      for `recall_after` are recalled (hooks.recall_rw_layouts), and again every
//      `recall_after` while they stay out: a client that keeps a layout it no longer
//      writes through (or one the MDS still counts after the client dropped it) would
//      otherwise hold the file degraded indefinitely;
//   2. take the file's epoch; GETATTR an in-sync mirror on an Up data server (the source);
//   3. copy it whole: READ the source, WRITE the stale data file (UNSTABLE), COMMIT, then
//      SETATTR size, atime and mtime to the source's (a stale copy may be longer, and the
//      file's times are the source's, not the copy's), and the data-file mode 0640
//      (model/data_files.hpp: READ layouts read through its group bits);
//   4. clear the mark if the epoch has not moved and no RW layout appeared: nothing wrote
//      the file during the copy. Otherwise the copy is thrown away and retried next tick
//      (writes through the MDS also go to the stale mirror, so a later copy catches up).
// Where several MDSs share the namespace, steps 1 and 4 also ask the other MDSs' marks on
// the namespace object (hooks.other_writers: no RW layouts of theirs that are not fenced,
// no live write lease, nothing changed during the copy), and the stale data file is closed
// to READ layouts (kStaleDataFileMode) before anything else; the clear also removes the
// namespace's mark (hooks.cleared).
// A failed attempt (an RPC error, a data server going away) is logged, counted and
// retried after a backoff (initial, 2x, 4x ... capped).
//
// Threading: one thread per export, waking every `tick`; one file at a
// time, one chunk at a time (resilvering is background work: it must not crowd out
// clients' I/O on the data servers).
#pragma once

#include "fleet/fleet.hpp"
#include "mds/periodic_thread.hpp"
#include "store/layout_store.hpp"
#include "store/stale_mirrors.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

namespace flexfiles::mds {

struct ResilverSettings {
    // Several MDSs share the namespace: while a mirror is stale its data file is
    // kStaleDataFileMode (model/data_files.hpp).
    bool close_stale_to_reads = false;
    std::chrono::milliseconds tick{1000};
    // Waiting this long on a file's RW layouts recalls them (then again as often); 0: never.
    std::chrono::milliseconds recall_after{10000};
    std::chrono::milliseconds request_timeout{5000}; // per RPC
    std::chrono::milliseconds backoff_initial{1000};
    std::chrono::milliseconds backoff_max{60000};
};

struct ResilverCounters {
    std::uint64_t attempts = 0;   // copies started
    std::uint64_t resilvered = 0; // marks cleared
    std::uint64_t restarts = 0;   // copies thrown away: the file was written meanwhile
    std::uint64_t failures = 0;   // copies that failed (retried after a backoff)
    std::uint64_t recalls = 0;    // RW layouts recalled after waiting recall_after on them
    std::uint64_t bytes_copied = 0;
};

enum class ResilverOutcome { resilvered, waiting, restarted, failed };

// On a namespace several MDSs share: whether another MDS may write the file behind this
// one's back (its clients' RW layouts, its own proxied writes).
struct OtherWriters {
    bool quiet = false; // none can write it now
    std::string state;  // what changes when one starts (compared before and after a copy)
    std::string why;    // when not quiet: what is waited for
};

struct ResilverHooks {
    // Whether a client holds an RW layout on the file (fileid).
    std::function<bool(std::uint64_t)> rw_layout_outstanding;
    // Recalls the file's layouts (queued, not waited for): the copy waited recall_after on
    // RW layouts.
    std::function<void(const StaleMirror&)> recall_rw_layouts;
    // Bytes per READ and WRITE between two data servers (source, target Ids).
    std::function<std::uint32_t(std::uint64_t, std::uint64_t)> chunk_size;
    // Several MDSs share the namespace: asked before a copy (it waits unless quiet) and
    // after it (the copy counts only if still quiet with the same state).
    std::function<OtherWriters(const StaleMirror&)> other_writers;
    // After the mark is cleared here: the other MDSs' view of it goes too.
    std::function<void(const StaleMirror&)> cleared;
};

class Resilverer {
public:
    Resilverer(LayoutStore& store, StaleMirrors& stale, fleet::Fleet& fleet, ResilverHooks hooks,
               ResilverSettings settings, fleet::LogSink log);
    ~Resilverer(); // stops the thread
    Resilverer(const Resilverer&) = delete;
    Resilverer& operator=(const Resilverer&) = delete;

    void start();
    void stop();

    // One attempt on every stale mirror that is due, on the caller's thread.
    void pass();
    // One attempt on one mark (the thread's unit of work; tests call it directly).
    ResilverOutcome resilver(const StaleMirror& mark, std::string* why = nullptr);

    ResilverCounters counters() const;

private:
    void log(fleet::LogLevel level, const std::string& message) const;
    // Waiting on the file's RW layouts: recalls them once waited on for recall_after since
    // the wait began or the last recall, and says so in `reason`.
    void recall_when_waited_long(const StaleMirror& mark, std::string& reason);

    LayoutStore& store_;
    StaleMirrors& stale_;
    fleet::Fleet& fleet_;
    const ResilverHooks hooks_;
    const ResilverSettings settings_;
    const fleet::LogSink log_;

    // Per (fileid, mirror): failed attempts in a row and when the next one is due
    // (resilvering thread only).
    struct Backoff {
        std::uint32_t failures = 0;
        std::chrono::steady_clock::time_point due{};
    };
    std::map<std::pair<std::uint64_t, std::uint32_t>, Backoff> backoff_;
    // Marks already logged as waiting for a data server (to log that once).
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::string> waiting_logged_;
    // Marks waiting on RW layouts: since when, when they were last recalled (or the wait
    // began), and after how long the first recall came. Erased once no RW layout is out.
    struct RwWait {
        std::chrono::steady_clock::time_point since;
        std::chrono::steady_clock::time_point last_recall;
        bool recalled = false;
        std::chrono::milliseconds first_recall_after{0};
    };
    std::map<std::pair<std::uint64_t, std::uint32_t>, RwWait> rw_waits_;

    std::atomic<std::uint64_t> c_attempts_{0}, c_resilvered_{0}, c_restarts_{0}, c_failures_{0},
        c_bytes_{0}, c_recalls_{0};

    PeriodicThread loop_; // last: stopped and joined before the rest goes
};

} // namespace flexfiles::mds
