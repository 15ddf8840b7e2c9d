// SPDX-License-Identifier: LGPL-3.0-or-later
//
// WRITEs sent and answered on the caller's thread (DataServer::write_here). The event
// thread's way costs a proxied write two thread hand-offs: the caller wakes the event
// thread to send, the event thread wakes the caller with the reply (README.md has what
// going without them measured). Here the caller takes
// one of the server's direct connections (each a libnfs context of its own, used by one
// thread at a time: libnfs contexts are not thread-safe), sends, and polls it for the
// reply itself.
//
// Everything the event thread guarantees still holds (README.md): deadlines; a timeout of
// a sent request counts against health; and the ordering of changes to one data file. A
// WRITE that times out here is marked at once (direct_unanswered: no newer change of the
// file goes out, on any path) and handed to the event thread with its connection, which
// it keeps and polls as it keeps its own until the late answer, or the server's close,
// settles it. While any change of the server is unanswered, writes take the event
// thread's way, which holds them behind it.
#include "fleet/data_server_impl.hpp"

// clang-format off
#include <nfsc/libnfs.h> // defines EXTERN, used by the others: must come first
#include <nfsc/libnfs-raw.h>
// clang-format on

#include <algorithm>
#include <cerrno>
#include <poll.h>

namespace flexfiles::fleet {

namespace {

using Impl = DataServer::Impl;
using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

// A failed connect waits this long before a caller tries to open one again (writes take
// the event thread's way meanwhile).
constexpr milliseconds kRetryOpenAfter{1000};

std::int64_t ns_of(Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// An idle connection still fit to send on: the server has not closed it (nor sent
// anything unasked).
bool still_open(rpc_context* rpc) {
    const int fd = rpc_get_fd(rpc);
    if (fd < 0)
        return false;
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
}

// Threads in write_here waiting for replies, in this process. A thread that is alone in
// waiting may poll without sleeping for a while (DataServerConfig::direct_spin): a thread
// woken from sleep adds tens of microseconds to a small write here (README.md), and while
// nobody else waits, the core it keeps busy is one no other proxied write wanted.
std::atomic<unsigned> g_waiting{0};

struct Waiting {
    Waiting() { g_waiting.fetch_add(1, std::memory_order_relaxed); }
    ~Waiting() { g_waiting.fetch_sub(1, std::memory_order_relaxed); }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
    bool alone() const { return g_waiting.load(std::memory_order_relaxed) == 1; }
};

// poll() without sleeping until something is ready or `until`: its result.
int spin(std::vector<pollfd>& fds, Clock::time_point until) {
    int rc;
    while ((rc = ::poll(fds.data(), fds.size(), 0)) == 0 && Clock::now() < until) {
    }
    return rc;
}

void connected_cb(rpc_context*, int status, void*, void* priv) {
    *static_cast<int*>(priv) = status;
}

} // namespace

std::optional<Impl::DirectConn> Impl::take_direct(Deadline dl) {
    if (cfg.direct_connections == 0 || health.state() != Health::up ||
        conn.load(std::memory_order_acquire) != ConnState::connected ||
        unanswered_changes.load(std::memory_order_acquire) != 0 ||
        direct_marks.load(std::memory_order_acquire) != 0)
        return std::nullopt;
    const std::uint64_t generation = c_connects.load(std::memory_order_acquire);
    {
        std::lock_guard lk(direct_mu);
        if (direct_closed)
            return std::nullopt;
        while (!direct_idle.empty()) {
            DirectConn dc = direct_idle.back();
            direct_idle.pop_back();
            // One from before the event thread's last reconnect, or one the server closed,
            // goes: a write on it would fail without having been sent.
            if (dc.generation == generation && still_open(dc.rpc))
                return dc;
            rpc_destroy_context(dc.rpc); // idle: no request of ours in it
            direct_open.fetch_sub(1, std::memory_order_relaxed);
        }
        if (direct_open.load(std::memory_order_relaxed) >= cfg.direct_connections ||
            ns_of(Clock::now()) < direct_retry_ns.load(std::memory_order_relaxed))
            return std::nullopt;
        direct_open.fetch_add(1, std::memory_order_relaxed);
    }

    // Open one: plain TCP to the NFS port, as the event thread's own (connection.cpp).
    auto failed = [&](const std::string& why) -> std::optional<DirectConn> {
        direct_open.fetch_sub(1, std::memory_order_relaxed);
        direct_retry_ns.store(ns_of(Clock::now() + kRetryOpenAfter), std::memory_order_relaxed);
        log(LogLevel::warn, "could not open a direct connection (" + why +
                                "); WRITEs and READs go through the event thread for now");
        return std::nullopt;
    };
    rpc_context* rpc = rpc_init_context();
    if (rpc == nullptr)
        return failed("rpc_init_context failed");
    rpc_set_uid(rpc, static_cast<int>(cfg.uid));
    rpc_set_gid(rpc, static_cast<int>(cfg.gid));
    int status = -1;
    if (rpc_connect_async(rpc, cfg.host.c_str(), cfg.nfs_port, connected_cb, &status) != 0) {
        std::string why = rpc_error(rpc);
        rpc_destroy_context(rpc);
        return failed(why);
    }
    const Clock::time_point until = std::min(dl, Clock::now() + cfg.connect_timeout);
    while (status == -1 && Clock::now() < until) {
        pollfd p{rpc_get_fd(rpc), static_cast<short>(rpc_which_events(rpc)), 0};
        const int rc = ::poll(&p, 1, poll_ms(until));
        if (rc < 0 && errno != EINTR)
            break;
        if (rc > 0 && rpc_service(rpc, p.revents) < 0)
            break;
    }
    if (status != RPC_STATUS_SUCCESS) {
        std::string why = status == -1 ? "no connection within " + ms_string(until - Clock::now())
                                       : rpc_error(rpc);
        rpc_destroy_context(rpc);
        return failed(why);
    }
    return DirectConn{rpc, generation};
}

int poll_ms(Clock::time_point until) {
    const auto left = until - Clock::now();
    if (left <= Clock::duration::zero())
        return 0;
    return static_cast<int>(duration_cast<milliseconds>(left + microseconds(999)).count());
}

void Impl::give_back(DirectConn dc, bool usable) {
    std::unique_lock lk(direct_mu);
    if (dc.rpc == nullptr) { // already closed
        direct_open.fetch_sub(1, std::memory_order_relaxed);
        return;
    }
    if (usable && !direct_closed && dc.generation == c_connects.load(std::memory_order_acquire)) {
        direct_idle.push_back(dc);
        return;
    }
    direct_open.fetch_sub(1, std::memory_order_relaxed);
    lk.unlock();
    rpc_destroy_context(dc.rpc);
}

bool Impl::direct_marked(const DsFh& fh) {
    if (direct_marks.load(std::memory_order_acquire) == 0)
        return false;
    std::lock_guard lk(direct_mu);
    return direct_unanswered.count(fh_key(fh)) != 0;
}

void Impl::hand_over(DirectConn dc, Call* c) {
    const std::string key = fh_key(*c->mutated_fh());
    {
        std::lock_guard lk(direct_mu);
        direct_unanswered.insert(key);
        direct_marks.fetch_add(1, std::memory_order_acq_rel);
    }
    c->direct = false; // its late reply, if any, goes to the event loop
    c->sent_on = dc.rpc;
    {
        std::lock_guard lk(inbox_mu);
        if (accepting) {
            handed_over.emplace_back(dc, c);
            wake();
            return;
        }
    }
    // The client is stopped: no thread will poll it. Closing it settles the call (what
    // the server has not run by then, it never will) and frees it (on_rpc_reply).
    rpc_destroy_context(dc.rpc);
    direct_open.fetch_sub(1, std::memory_order_relaxed);
    std::lock_guard lk(direct_mu);
    direct_unanswered.erase(direct_unanswered.find(key));
    direct_marks.fetch_sub(1, std::memory_order_acq_rel);
}

void Impl::adopt_handed_over() {
    std::vector<std::pair<DirectConn, Call*>> h;
    {
        std::lock_guard lk(inbox_mu);
        h.swap(handed_over);
    }
    for (auto& [dc, c] : h) {
        note_unanswered(c); // the event thread's mark replaces the direct one
        draining.push_back(dc.rpc);
        direct_open.fetch_sub(1, std::memory_order_relaxed);
        {
            std::lock_guard lk(direct_mu);
            direct_unanswered.erase(direct_unanswered.find(fh_key(*c->mutated_fh())));
            direct_marks.fetch_sub(1, std::memory_order_acq_rel);
        }
        log(LogLevel::warn, "keeping a direct connection open until its unanswered WRITE is "
                            "answered, so that no newer change of the file lands before it");
    }
}

void Impl::close_direct() {
    std::vector<DirectConn> idle;
    {
        std::lock_guard lk(direct_mu);
        direct_closed = true;
        idle.swap(direct_idle);
    }
    for (DirectConn& dc : idle) {
        rpc_destroy_context(dc.rpc);
        direct_open.fetch_sub(1, std::memory_order_relaxed);
    }
}

void on_direct_reply(Call* c, int status, void* data) {
    c->in_libnfs = false;
    Impl& d = *c->ds;
    if (c->finished)
        return; // cannot happen: a call that timed out is handed over first
    if (status == RPC_STATUS_SUCCESS && data != nullptr) {
        c->on_reply(d, data); // a WRITE is one step
        return;
    }
    std::string why = status == RPC_STATUS_SUCCESS  ? "empty reply"
                      : status == RPC_STATUS_CANCEL ? "connection closed"
                                                    : "connection failed";
    if (status != RPC_STATUS_SUCCESS && status != RPC_STATUS_CANCEL && data != nullptr)
        why += std::string(": ") + static_cast<const char*>(data);
    c->fail(d, DsStatus::error(status == RPC_STATUS_SUCCESS ? DsErrc::rpc : DsErrc::disconnected,
                               d.label + ": " + c->op + " " + c->object() + ": " + why));
}

void DataServer::write_here(std::span<DirectWrite> writes,
                            const std::function<void(std::size_t)>& not_sent) noexcept {
    struct Sent {
        Impl* ds;
        Impl::DirectConn dc;
        Call* call;
        bool usable = true; // the connection can serve the next write
        bool spun = false;  // its reply came while this thread polled for it
    };
    std::vector<Sent> sent;
    sent.reserve(writes.size());
    std::vector<std::size_t> left; // not sent: the caller's to send
    for (std::size_t i = 0; i < writes.size(); ++i) {
        DirectWrite& w = writes[i];
        w.result.reset();
        if (!w.ds) {
            left.push_back(i);
            continue;
        }
        Impl& d = *w.ds->impl_;
        const auto now = Clock::now();
        const Deadline dl = w.deadline == Deadline{} ? now + d.cfg.request_timeout : w.deadline;
        auto dc = d.take_direct(dl);
        if (!dc) {
            left.push_back(i);
            continue;
        }
        Call* c = make_write_call([&w](DsResult<WriteResult> r) { w.result = std::move(r); }, w.fh,
                                  w.offset, w.source, w.at, w.length, w.stable)
                      .release();
        c->ds = &d;
        c->direct = true;
        c->submitted = Clock::now();
        c->deadline = dl;
        d.c_requests.fetch_add(1, std::memory_order_relaxed);
        d.c_in_flight.fetch_add(1, std::memory_order_relaxed);
        if (std::string err = c->check(d); !err.empty()) {
            c->fail(d, DsStatus::error(DsErrc::invalid_argument,
                                       d.label + ": WRITE " + c->object() + ": " + err));
            delete c;
            d.give_back(*dc, true);
            continue;
        }
        c->sent = c->submitted;
        c->in_libnfs = true;
        c->sent_on = dc->rpc;
        if (const int rc = c->issue(d, dc->rpc); rc != 0) {
            c->in_libnfs = false;
            c->fail(d, DsStatus::error(DsErrc::rpc,
                                       d.label + ": WRITE: " + issue_failure(rc, dc->rpc)));
            delete c;
            d.give_back(*dc, false);
            continue;
        }
        d.c_direct_writes.fetch_add(1, std::memory_order_relaxed);
        Sent& s = sent.emplace_back(Sent{&d, *dc, c});
        // Onto the socket now: libnfs sends when told the socket takes more (POLLOUT), which
        // an idle connection's does; asking poll() first would cost a system call per write.
        // A request the socket cannot take yet stays queued for the loop's POLLOUT.
        if (rpc_service(s.dc.rpc, POLLOUT) < 0) {
            rpc_destroy_context(s.dc.rpc); // answers the call (CANCEL), as in the loop below
            s.dc.rpc = nullptr;
            s.usable = false;
        }
    }
    if (not_sent)
        for (std::size_t i : left)
            not_sent(i);

    std::vector<pollfd> fds;
    Waiting waiting;
    std::chrono::microseconds spin_for{0};
    for (const Sent& s : sent)
        spin_for = std::max(spin_for, s.ds->cfg.direct_spin);
    const Clock::time_point spin_until = Clock::now() + spin_for;
    while (!sent.empty()) {
        // Answered (or failed with their connection): done with them.
        std::erase_if(sent, [](Sent& s) {
            if (s.call->in_libnfs)
                return false;
            if (s.spun)
                s.ds->c_direct_spun.fetch_add(1, std::memory_order_relaxed);
            delete s.call;
            s.ds->give_back(s.dc, s.usable);
            return true;
        });
        // Past their deadline: a timeout for the caller, the call to the event thread.
        const auto now = Clock::now();
        std::erase_if(sent, [&](Sent& s) {
            if (s.call->deadline > now)
                return false;
            s.call->fail(*s.ds,
                         DsStatus::error(DsErrc::timeout,
                                         s.ds->label + ": WRITE " + s.call->object() +
                                             ": timed out after " +
                                             ms_string(now - s.call->submitted) + ", no reply"));
            s.ds->hand_over(s.dc, s.call);
            return true;
        });
        if (sent.empty())
            break;
        Deadline next = sent.front().call->deadline;
        fds.clear();
        for (const Sent& s : sent) {
            next = std::min(next, s.call->deadline);
            fds.push_back(
                {rpc_get_fd(s.dc.rpc), static_cast<short>(rpc_which_events(s.dc.rpc)), 0});
        }
        int rc = spin_until > Clock::now() && waiting.alone() ? spin(fds, spin_until) : 0;
        const bool spun = rc > 0;
        if (!spun)
            rc = ::poll(fds.data(), fds.size(), poll_ms(next));
        if (rc < 0 && errno != EINTR) {
            // Cannot wait on them (never seen): closing the connections answers the calls.
            for (Sent& s : sent) {
                rpc_destroy_context(s.dc.rpc);
                s.dc.rpc = nullptr;
                s.usable = false;
            }
            continue;
        }
        if (rc <= 0)
            continue; // a deadline, or EINTR
        for (std::size_t i = 0; i < sent.size(); ++i) {
            if (fds[i].revents == 0)
                continue;
            Sent& s = sent[i];
            s.spun = s.spun || spun;
            if (rpc_service(s.dc.rpc, fds[i].revents) < 0) {
                // The connection failed: the request may or may not have run, and the
                // server will not run it later. Closing the context answers it (CANCEL).
                rpc_destroy_context(s.dc.rpc);
                s.dc.rpc = nullptr;
                s.usable = false;
            }
        }
    }
}

} // namespace flexfiles::fleet
