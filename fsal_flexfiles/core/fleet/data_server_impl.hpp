// SPDX-License-Identifier: LGPL-3.0-or-later
//
// DataServer::Impl: the state of one data-server client, shared by the files that make it
// up. Private to ff_fleet. One struct, not one per file, because the concerns meet in
// almost every step (the loop sends only when connected, a lost connection completes the
// queued calls, a kept connection exists only for the ordering rule); each member says
// which file defines it:
//
//   data_server.cpp  config check, start, stop, the state and counters callers read
//   nfs3_calls.cpp   the NFSv3 procedures (request, reply) and the methods that send them
//   event_loop.cpp   the event thread: inbox, queues, deadlines, ordering of changes
//   connection.cpp   connect, MOUNT, reconnect with backoff, probes and health
//   direct_write.cpp the direct connections callers' threads send WRITEs on themselves
//   direct_read.cpp  READs on them, received into the caller's buffer (read_wire.hpp)
//
// Everything under "event thread only" runs on that thread (data_server.hpp says why).
#pragma once

#include "fleet/call.hpp"
#include "fleet/data_server.hpp"
#include "fleet/ds_types.hpp"
#include "fleet/health.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace flexfiles::fleet {

// The key of a data file in the ordering bookkeeping: its filehandle's bytes.
inline std::string fh_key(const DsFh& fh) {
    return std::string(reinterpret_cast<const char*>(fh.data()), fh.size());
}

// "250 ms", for messages (event_loop.cpp).
std::string ms_string(Clock::duration d);
// poll()'s timeout for `until`, rounded up so that a wake-up is never early
// (direct_write.cpp; the direct READ's too).
int poll_ms(Clock::time_point until);
// libnfs's last error on `rpc`, never empty (connection.cpp).
std::string rpc_error(rpc_context* rpc);

struct DataServer::Impl {
    explicit Impl(DataServerConfig c); // data_server.cpp
    ~Impl();

    // ---- any thread ----
    void log(LogLevel lvl, const std::string& msg) const noexcept {
        if (!cfg.log)
            return;
        try {
            cfg.log(lvl, label + ": " + msg);
        } catch (...) {
        }
    }
    void wake() const noexcept {
        std::uint64_t one = 1;
        ssize_t n = ::write(efd, &one, sizeof(one));
        (void)n; // EAGAIN means the counter is already non-zero: the thread will wake
    }
    bool on_event_thread() const noexcept {
        return std::this_thread::get_id() == thread_id.load(std::memory_order_acquire);
    }
    // event_loop.cpp
    void submit(std::unique_ptr<Call> c, Deadline dl) noexcept;
    void on_finished(Call& c, const DsStatus& st) noexcept;
    void stop() noexcept;
    // connection.cpp
    void note_transition(const HealthTransition& t, const std::string& why) const;

    // ---- callers' threads: the direct connections (direct_write.cpp) ----
    struct DirectConn {
        rpc_context* rpc = nullptr;
        std::uint64_t generation = 0; // c_connects when it was opened
    };
    // A free direct connection (opened now if needed), or none when this server cannot
    // take a direct WRITE now (data_server.hpp, write_here).
    std::optional<DirectConn> take_direct(Deadline dl);
    // Back to the idle ones; `usable` false closes it.
    void give_back(DirectConn dc, bool usable);
    // A WRITE that timed out on a direct connection: its file is marked (no newer change
    // goes before it is settled) and the event thread takes over the call and the
    // connection (adopt_handed_over).
    void hand_over(DirectConn dc, Call* c);
    // A file with a direct WRITE handed over and not adopted yet.
    bool direct_marked(const DsFh& fh);
    // event thread: polls the handed-over connections as kept ones (event_loop.cpp rules).
    void adopt_handed_over();
    // event thread, at shutdown: closes every direct connection that is not in use.
    void close_direct();

    // ---- event thread only: the loop, its queues and deadlines (event_loop.cpp) ----
    void run() noexcept;
    void poll_once(Clock::time_point now);
    void dispatch(Call* c);
    void send(Call* c);
    void maybe_delete(Call* c) {
        if (c->finished && !c->in_libnfs && !c->queued)
            delete c;
    }
    void on_rpc_reply(Call* c, int status, void* data);
    void complete_rpc_errors(bool connection_failed);
    void expire(Clock::time_point now);
    void issue_ready();
    void fail_waiting(DsErrc code, const std::string& why);
    DsStatus unavailable_status(const Call& c) const;
    void shutdown();
    // Ordering of changes to one data file (README.md).
    void note_unanswered(Call* c);
    void note_answered(Call* c);
    void release_held();
    void service_draining(const pollfd* fds, rpc_context* const* ctxs, nfds_t n);

    // ---- event thread only: the connection and its health (connection.cpp) ----
    void start_attempt();
    void attempt_failed(const std::string& why);
    // Sets next_attempt after a failure (backoff, or sooner when Down is due); the delay.
    Clock::duration schedule_attempt();
    void on_mnt_connected(rpc_context* rpc, int status, void* data);
    void on_mnt_reply(rpc_context* rpc, int status, void* data);
    void on_nfs_connected(rpc_context* rpc, int status, void* data);
    void connection_lost(const std::string& why);
    void drop_connection(const std::string& why, bool retry_now);
    void retire(rpc_context*& rpc);
    void bury();
    void send_probe(Clock::time_point now);
    void on_probe_done(const DsResult<NullResult>& r, Clock::time_point sent_at, std::uint64_t gen);

    const DataServerConfig cfg;
    const std::string label;
    HealthTracker health;
    Backoff backoff; // event thread only

    std::atomic<ConnState> conn{ConnState::connecting};

    std::atomic<std::uint64_t> c_requests{0}, c_errors{0}, c_timeouts{0}, c_reported{0},
        c_probes{0}, c_probe_failures{0}, c_connects{0}, c_connect_failures{0};
    std::atomic<std::uint32_t> c_in_flight{0};
    std::atomic<std::int64_t> last_probe_ns{-1};
    std::atomic<bool> last_probe_ok{false};
    std::atomic<std::int64_t> last_probe_rtt_us{0};

    int efd = -1;
    std::mutex inbox_mu;
    std::vector<Call*> inbox; // guarded by inbox_mu
    bool accepting = true;    // guarded by inbox_mu
    std::atomic<bool> stop_requested{false};
    std::atomic<bool> probe_requested{false};
    std::mutex join_mu;
    std::thread thread;
    std::atomic<std::thread::id> thread_id{};

    // event thread only
    bool stopping = false;
    rpc_context* mnt = nullptr;
    rpc_context* nfs = nullptr;
    std::vector<rpc_context*> graveyard;
    DsFh root_fh;
    std::multimap<Deadline, Call*> deadlines;
    std::deque<Call*> waiting; // submitted while a connection attempt runs
    std::deque<Call*> ready;   // next step of a chained operation
    // Ordering of changes (WRITE, SETATTR) per data file: those sent and unanswered after
    // their deadline, by file and by connection; calls held behind them; connections kept
    // open only for their answers.
    std::map<std::string, unsigned> unanswered;
    std::map<rpc_context*, unsigned> unanswered_on;
    std::deque<Call*> held;
    std::vector<rpc_context*> draining;
    bool release_pending = false; // a file's last unanswered change was settled
    Clock::time_point attempt_started{}, attempt_deadline{}, next_attempt{}, next_probe{};
    const char* attempt_stage = "";
    std::string last_error;
    bool probe_in_flight = false;
    std::uint64_t probe_gen = 0; // bumped per probe and per dropped connection
    // Requests libnfs failed with RPC_STATUS_ERROR during the current rpc_service(): a
    // dying connection (libnfs fails everything in flight) or an RPC-level rejection. Which
    // one is known only when rpc_service() returns, so they complete then.
    std::vector<std::pair<Call*, std::string>> rpc_errored;
    std::string teardown_reason; // non-empty: drop the connection when safe

    // The direct connections (direct_write.cpp).
    std::atomic<std::uint64_t> c_direct_writes{0};
    std::atomic<std::uint64_t> c_direct_spun{0};
    std::atomic<std::uint64_t> c_direct_reads{0};
    std::atomic<std::uint32_t> direct_xid{0};     // direct READs' transaction ids (data_server.cpp)
    std::atomic<unsigned> unanswered_changes{0};  // the event thread's `unanswered`, summed
    std::atomic<unsigned> direct_marks{0};        // size of direct_unanswered
    std::atomic<unsigned> direct_open{0};         // idle + in use
    std::atomic<std::int64_t> direct_retry_ns{0}; // after a failed connect: not before this
    std::mutex direct_mu;
    std::vector<DirectConn> direct_idle;                   // guarded by direct_mu
    bool direct_closed = false;                            // guarded by direct_mu
    std::multiset<std::string> direct_unanswered;          // guarded by direct_mu: fh bytes
    std::vector<std::pair<DirectConn, Call*>> handed_over; // guarded by inbox_mu
};

} // namespace flexfiles::fleet
