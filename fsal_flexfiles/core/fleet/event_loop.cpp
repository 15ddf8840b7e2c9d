// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The event thread of a DataServer (data_server.hpp says why there is one per server):
// the inbox callers push to, the poll() over the eventfd and the libnfs sockets, the
// deadline index, the queues a call waits in (for a connection, for the next step of a
// chain, behind an unanswered change of its file) and the completion of every call. How a
// connection is made, lost and proven is connection.cpp's; what each call sends is
// nfs3_calls.cpp's.
#include "fleet/data_server_impl.hpp"

// clang-format off
#include <nfsc/libnfs.h> // defines EXTERN, used by the others: must come first
#include <nfsc/libnfs-raw.h>
// clang-format on

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <poll.h>
#include <pthread.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace flexfiles::fleet {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

} // namespace

std::string ms_string(Clock::duration d) {
    return std::to_string(duration_cast<milliseconds>(d).count()) + " ms";
}

// ---------------------------------------------------------------------------------------
// Any thread

void DataServer::Impl::submit(std::unique_ptr<Call> c, Deadline dl) noexcept {
    auto now = Clock::now();
    c->ds = this;
    c->submitted = now;
    c->deadline = dl == Deadline{} ? now + cfg.request_timeout : dl;
    c_requests.fetch_add(1, std::memory_order_relaxed);
    c_in_flight.fetch_add(1, std::memory_order_relaxed);
    if (std::string err = c->check(*this); !err.empty()) {
        std::string obj = c->object();
        c->fail(*this, DsStatus::error(DsErrc::invalid_argument,
                                       label + ": " + c->op + (obj.empty() ? "" : " " + obj) +
                                           ": " + err));
        return;
    }
    std::unique_lock lk(inbox_mu);
    if (!accepting) {
        lk.unlock();
        c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                       label + ": " + c->op + ": data server client stopped"));
        return;
    }
    bool was_empty = inbox.empty();
    inbox.push_back(c.release());
    lk.unlock();
    if (was_empty)
        wake();
}

void DataServer::Impl::on_finished(Call& c, const DsStatus& st) noexcept {
    c.finished = true;
    if (c.indexed) {
        deadlines.erase(c.dl_it);
        c.indexed = false;
    }
    if (c.probe)
        return;
    c_in_flight.fetch_sub(1, std::memory_order_relaxed);
    if (!st.ok())
        c_errors.fetch_add(1, std::memory_order_relaxed);
    if (st.code == DsErrc::timeout) {
        c_timeouts.fetch_add(1, std::memory_order_relaxed);
        // Only a request the server had and did not answer counts against it; one that
        // never left (deadline already past, or waiting for a connection that failing
        // attempts already account for) does not.
        if (c.in_libnfs)
            note_transition(health.error_reported(ErrorKind::timeout), st.message);
    }
}

void DataServer::Impl::stop() noexcept {
    stop_requested.store(true, std::memory_order_release);
    if (efd >= 0)
        wake();
    if (on_event_thread())
        return; // run() ends once the current callback returns
    std::lock_guard lk(join_mu);
    if (thread.joinable())
        thread.join();
}

// ---------------------------------------------------------------------------------------
// Event thread

void DataServer::Impl::run() noexcept {
    thread_id.store(std::this_thread::get_id(), std::memory_order_release);
    {
        std::string name = "ff-ds" + std::to_string(cfg.id);
        if (name.size() > 15)
            name.resize(15);
        pthread_setname_np(pthread_self(), name.c_str());
    }
    log(LogLevel::info, "client started (NFS port " + std::to_string(cfg.nfs_port) +
                            ", MOUNT port " + std::to_string(cfg.mount_port) + ")");
    start_attempt();
    while (!stop_requested.load(std::memory_order_acquire)) {
        std::vector<Call*> batch;
        {
            std::lock_guard lk(inbox_mu);
            batch.swap(inbox);
        }
        for (Call* c : batch)
            dispatch(c);
        adopt_handed_over();
        issue_ready();

        auto now = Clock::now();
        expire(now);
        release_held();
        if (conn == ConnState::connecting && now >= attempt_deadline)
            attempt_failed(std::string("no answer within ") + ms_string(cfg.connect_timeout) +
                           " (" + attempt_stage + ")");
        if (conn == ConnState::backoff && (now >= next_attempt || probe_requested.exchange(false)))
            start_attempt();
        if (conn == ConnState::connected && !probe_in_flight &&
            (now >= next_probe || probe_requested.exchange(false)))
            send_probe(now);
        if (!teardown_reason.empty()) {
            std::string why;
            why.swap(teardown_reason);
            drop_connection(why, false);
        }
        bury();
        if (!ready.empty() || release_pending)
            continue;
        poll_once(Clock::now());
        if (!teardown_reason.empty()) {
            std::string why;
            why.swap(teardown_reason);
            drop_connection(why, false);
        }
        bury();
    }
    shutdown();
}

void DataServer::Impl::poll_once(Clock::time_point now) {
    auto next = now + milliseconds(1000);
    if (!deadlines.empty())
        next = std::min(next, deadlines.begin()->first);
    if (conn == ConnState::connecting)
        next = std::min(next, attempt_deadline);
    if (conn == ConnState::backoff)
        next = std::min(next, next_attempt);
    if (conn == ConnState::connected && !probe_in_flight)
        next = std::min(next, next_probe);
    int timeout_ms = 0;
    if (next > now)
        timeout_ms =
            static_cast<int>(duration_cast<milliseconds>(next - now + microseconds(999)).count());

    constexpr nfds_t kMaxDraining = 8; // more are polled on later rounds
    pollfd fds[3 + kMaxDraining];
    rpc_context* drain_ctx[kMaxDraining];
    nfds_t n = 0;
    fds[n++] = {efd, POLLIN, 0};
    int mi = -1, ni = -1;
    if (mnt != nullptr && rpc_get_fd(mnt) >= 0) {
        mi = static_cast<int>(n);
        fds[n++] = {rpc_get_fd(mnt), static_cast<short>(rpc_which_events(mnt)), 0};
    }
    if (nfs != nullptr && rpc_get_fd(nfs) >= 0) {
        ni = static_cast<int>(n);
        fds[n++] = {rpc_get_fd(nfs), static_cast<short>(rpc_which_events(nfs)), 0};
    }
    const nfds_t di = n;
    nfds_t nd = 0;
    for (rpc_context* d : draining) {
        if (nd == kMaxDraining)
            break;
        if (rpc_get_fd(d) < 0)
            continue;
        drain_ctx[nd++] = d;
        fds[n++] = {rpc_get_fd(d), static_cast<short>(rpc_which_events(d)), 0};
    }
    int rc = ::poll(fds, n, timeout_ms);
    if (rc < 0) {
        if (errno != EINTR)
            log(LogLevel::error, std::string("poll failed: ") + std::strerror(errno));
        return;
    }
    if (rc == 0)
        return;
    if (fds[0].revents & POLLIN) {
        std::uint64_t v;
        ssize_t r = ::read(efd, &v, sizeof(v));
        (void)r;
    }
    if (mi >= 0 && fds[mi].revents != 0) {
        rpc_context* m = mnt;
        if (rpc_service(m, fds[mi].revents) < 0 && m == mnt)
            attempt_failed(std::string("MOUNT connection failed (") + attempt_stage +
                           "): " + rpc_error(m));
    }
    if (ni >= 0 && fds[ni].revents != 0) {
        rpc_context* c = nfs;
        bool failed = rpc_service(c, fds[ni].revents) < 0;
        complete_rpc_errors(failed);
        if (failed && c == nfs) {
            if (conn == ConnState::connecting)
                attempt_failed(std::string("NFS connection failed (") + attempt_stage +
                               "): " + rpc_error(c));
            else
                connection_lost(rpc_error(c));
        }
    }
    service_draining(fds + di, drain_ctx, nd);
    complete_rpc_errors(false); // none expected here; never leave one unanswered
}

void DataServer::Impl::dispatch(Call* c) {
    auto now = Clock::now();
    if (c->deadline <= now) {
        c->fail(*this, DsStatus::error(DsErrc::timeout,
                                       label + ": " + c->op + ": deadline passed before sending"));
        maybe_delete(c);
        return;
    }
    c->dl_it = deadlines.emplace(c->deadline, c);
    c->indexed = true;
    if (conn == ConnState::connected) {
        send(c);
        return;
    }
    if (conn == ConnState::connecting && health.state() != Health::down) {
        c->queued = true;
        waiting.push_back(c);
        return;
    }
    c->fail(*this, unavailable_status(*c));
    maybe_delete(c);
}

DsStatus DataServer::Impl::unavailable_status(const Call& c) const {
    std::string why;
    if (health.state() == Health::down)
        why = "data server is Down";
    else
        why = "not connected";
    if (!last_error.empty())
        why += " (last error: " + last_error + ")";
    if (conn == ConnState::backoff) {
        auto left = next_attempt - Clock::now();
        why += "; next connection attempt in " + ms_string(std::max(left, Clock::duration{}));
    }
    DsStatus st = DsStatus::error(DsErrc::unavailable, label + ": " + c.op + ": " + why);
    st.reconnecting = health.state() != Health::down;
    return st;
}

void DataServer::Impl::send(Call* c) {
    if (const DsFh* fh = c->mutated_fh();
        fh != nullptr &&
        ((!unanswered.empty() && unanswered.count(fh_key(*fh)) != 0) || direct_marked(*fh))) {
        c->held = true;
        c->queued = true;
        held.push_back(c);
        return;
    }
    c->sent = Clock::now();
    c->in_libnfs = true;
    c->sent_on = nfs;
    if (const int rc = c->issue(*this, nfs); rc != 0) {
        c->in_libnfs = false;
        c->fail(*this,
                DsStatus::error(DsErrc::rpc, label + ": " + c->op + ": " + issue_failure(rc, nfs)));
        maybe_delete(c);
    }
}

void DataServer::Impl::issue_ready() {
    while (!ready.empty()) {
        Call* c = ready.front();
        ready.pop_front();
        c->queued = false;
        if (c->finished) {
            maybe_delete(c);
        } else if (conn == ConnState::connected) {
            send(c);
        } else {
            c->fail(*this,
                    DsStatus::error(DsErrc::disconnected,
                                    label + ": " + c->op + ": connection lost mid-operation"));
            maybe_delete(c);
        }
    }
}

void DataServer::Impl::on_rpc_reply(Call* c, int status, void* data) {
    c->in_libnfs = false;
    if (c->unanswered) // a late reply, or its connection is gone: it cannot land later
        note_answered(c);
    if (c->finished) { // timed out earlier: drop the late reply
        maybe_delete(c);
        return;
    }
    if (status == RPC_STATUS_SUCCESS && (data != nullptr || c->void_reply())) {
        if (c->on_reply(*this, data) == Step::again) {
            c->queued = true;
            ready.push_back(c);
            return;
        }
    } else if (status == RPC_STATUS_SUCCESS) {
        c->fail(*this, DsStatus::error(DsErrc::rpc, label + ": " + c->op + ": empty reply"));
    } else if (status == RPC_STATUS_TIMEOUT) {
        c->fail(*this, DsStatus::error(DsErrc::timeout, label + ": " + c->op + ": RPC timed out"));
    } else if (status == RPC_STATUS_ERROR && !stopping) {
        c->queued = true; // completed by complete_rpc_errors() after rpc_service() returns
        rpc_errored.emplace_back(c, data != nullptr ? static_cast<const char*>(data) : "");
        return;
    } else {
        c->fail(*this, DsStatus::error(
                           stopping ? DsErrc::shutdown : DsErrc::disconnected,
                           label + ": " + c->op + ": " +
                               (stopping ? "data server client stopped" : "connection reset")));
    }
    maybe_delete(c);
}

void DataServer::Impl::complete_rpc_errors(bool connection_failed) {
    std::vector<std::pair<Call*, std::string>> errs;
    errs.swap(rpc_errored);
    for (auto& [c, why] : errs) {
        c->queued = false;
        if (!c->finished) {
            std::string detail = why.empty() ? std::string() : ": " + why;
            if (connection_failed)
                c->fail(*this,
                        DsStatus::error(DsErrc::disconnected,
                                        label + ": " + c->op + ": connection failed" + detail));
            else
                c->fail(*this, DsStatus::error(DsErrc::rpc,
                                               label + ": " + c->op + ": RPC error" + detail));
        }
        maybe_delete(c);
    }
}

void DataServer::Impl::expire(Clock::time_point now) {
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
        Call* c = deadlines.begin()->second;
        std::string where = c->in_libnfs ? "no reply"
                            : c->held    ? "not sent: an earlier change of this file is "
                                           "still unanswered"
                                         : "not sent (waiting for a connection)";
        if (c->in_libnfs && c->mutated_fh() != nullptr)
            note_unanswered(c);
        if (c->held) { // it leaves the queue with its answer
            std::erase(held, c);
            c->held = false;
            c->queued = false;
        }
        std::string obj = c->object();
        c->fail(*this, DsStatus::error(DsErrc::timeout,
                                       label + ": " + c->op + (obj.empty() ? "" : " " + obj) +
                                           ": timed out after " + ms_string(now - c->submitted) +
                                           ", " + where));
        maybe_delete(c);
    }
}

void DataServer::Impl::fail_waiting(DsErrc code, const std::string& why) {
    std::deque<Call*> w;
    w.swap(waiting);
    for (Call* c : w) {
        c->queued = false;
        if (!c->finished) {
            DsStatus st = DsStatus::error(code, label + ": " + c->op + ": " + why);
            st.reconnecting = code == DsErrc::unavailable && health.state() != Health::down;
            c->fail(*this, std::move(st));
        }
        maybe_delete(c);
    }
}

void DataServer::Impl::shutdown() {
    complete_rpc_errors(true);
    stopping = true;
    std::vector<Call*> batch;
    {
        std::lock_guard lk(inbox_mu);
        accepting = false;
        batch.swap(inbox);
    }
    for (Call* c : batch) {
        c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                       label + ": " + c->op + ": data server client stopped"));
        maybe_delete(c);
    }
    adopt_handed_over(); // into `draining`, closed below with the others
    close_direct();
    fail_waiting(DsErrc::shutdown, "data server client stopped");
    for (Call* c : held) {
        c->queued = false;
        c->held = false;
        if (!c->finished)
            c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                           label + ": " + c->op + ": data server client stopped"));
        maybe_delete(c);
    }
    held.clear();
    for (rpc_context* d : draining)
        graveyard.push_back(d);
    draining.clear();
    while (!ready.empty()) {
        Call* c = ready.front();
        ready.pop_front();
        c->queued = false;
        if (!c->finished)
            c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                           label + ": " + c->op + ": data server client stopped"));
        maybe_delete(c);
    }
    retire(mnt);
    retire(nfs);
    bury();
    // Anything still indexed was neither queued nor in libnfs: cannot happen, but never
    // leave a caller without an answer.
    while (!deadlines.empty()) {
        Call* c = deadlines.begin()->second;
        c->fail(*this, DsStatus::error(DsErrc::shutdown,
                                       label + ": " + c->op + ": data server client stopped"));
        maybe_delete(c);
    }
    conn = ConnState::stopped;
    log(LogLevel::info, "client stopped");
}

// ---------------------------------------------------------------------------------------
// Ordering of changes to one data file (README.md)

void DataServer::Impl::note_unanswered(Call* c) {
    c->unanswered = true;
    unanswered_changes.fetch_add(1, std::memory_order_acq_rel);
    ++unanswered[fh_key(*c->mutated_fh())];
    ++unanswered_on[c->sent_on];
}

void DataServer::Impl::note_answered(Call* c) {
    c->unanswered = false;
    unanswered_changes.fetch_sub(1, std::memory_order_acq_rel);
    if (auto it = unanswered.find(fh_key(*c->mutated_fh()));
        it != unanswered.end() && --it->second == 0) {
        unanswered.erase(it);
        release_pending = true;
    }
    if (auto it = unanswered_on.find(c->sent_on); it != unanswered_on.end() && --it->second == 0) {
        unanswered_on.erase(it);
        // A kept connection whose last unanswered change is settled can go now; never
        // destroyed here, inside its own rpc_service().
        if (auto d = std::find(draining.begin(), draining.end(), c->sent_on); d != draining.end()) {
            draining.erase(d);
            graveyard.push_back(c->sent_on);
            log(LogLevel::info, "old connection closed: its unanswered changes are settled");
        }
    }
}

// Calls held behind a change that is now settled go out, in the order they came.
void DataServer::Impl::release_held() {
    if (!release_pending)
        return;
    release_pending = false;
    std::deque<Call*> h;
    h.swap(held);
    for (Call* c : h) {
        c->queued = false;
        c->held = false;
        if (c->finished) {
            maybe_delete(c);
        } else if (conn == ConnState::connected) {
            send(c); // held again if its file still has an unanswered change
        } else if (conn == ConnState::connecting && health.state() != Health::down) {
            c->queued = true;
            waiting.push_back(c);
        } else {
            c->fail(*this, unavailable_status(*c));
            maybe_delete(c);
        }
    }
}

// Late replies on kept connections. One the server closed goes: whatever it had not run,
// it never will, and destroying the context settles its calls (libnfs calls back).
void DataServer::Impl::service_draining(const pollfd* fds, rpc_context* const* ctxs, nfds_t n) {
    for (nfds_t i = 0; i < n; ++i) {
        if (fds[i].revents == 0)
            continue;
        rpc_context* d = ctxs[i];
        const bool failed = rpc_service(d, fds[i].revents) < 0;
        complete_rpc_errors(true);
        if (failed) {
            if (auto it = std::find(draining.begin(), draining.end(), d); it != draining.end()) {
                draining.erase(it);
                graveyard.push_back(d);
                log(LogLevel::info, "old connection closed by the server");
            }
        }
    }
}

} // namespace flexfiles::fleet
