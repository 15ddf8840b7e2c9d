// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The connection of a DataServer and its health: MOUNT (MNT) then NFS over plain TCP to
// the fixed ports, the connect timeout, reconnect with backoff, the NULL probes that drive
// HealthTracker, and the retirement of libnfs contexts. README.md ("Connection and
// reconnect", "Health") has the rules. Runs on the event thread (event_loop.cpp), except
// note_transition().
#include "fleet/data_server_impl.hpp"

// clang-format off
#include <nfsc/libnfs.h> // defines EXTERN, used by the others: must come first
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
// clang-format on

#include <chrono>
#include <deque>
#include <string>

namespace flexfiles::fleet {

namespace {

using Impl = DataServer::Impl;

void mnt_connect_cb(rpc_context* rpc, int status, void* data, void* priv) {
    static_cast<Impl*>(priv)->on_mnt_connected(rpc, status, data);
}
void mnt_reply_cb(rpc_context* rpc, int status, void* data, void* priv) {
    static_cast<Impl*>(priv)->on_mnt_reply(rpc, status, data);
}
void nfs_connect_cb(rpc_context* rpc, int status, void* data, void* priv) {
    static_cast<Impl*>(priv)->on_nfs_connected(rpc, status, data);
}

} // namespace

std::string rpc_error(rpc_context* rpc) {
    const char* e = rpc != nullptr ? rpc_get_error(rpc) : nullptr;
    // libnfs sets no message when the peer simply closes the socket.
    return e != nullptr && *e != '\0' ? e : "socket closed or failed (no detail from libnfs)";
}

void DataServer::Impl::note_transition(const HealthTransition& t, const std::string& why) const {
    if (!t.changed())
        return;
    LogLevel lvl = t.to == Health::up     ? LogLevel::info
                   : t.to == Health::down ? LogLevel::error
                                          : LogLevel::warn;
    log(lvl, std::string("health ") + std::string(to_string(t.from)) + " -> " +
                 std::string(to_string(t.to)) + (why.empty() ? "" : ": " + why));
}

void DataServer::Impl::retire(rpc_context*& rpc) {
    if (rpc != nullptr) {
        // A connection that carried changes still unanswered stays open (and polled)
        // until they are answered or the server closes it: dropped, it could still
        // deliver them after a newer change of the same file sent on the next one.
        if (auto it = unanswered_on.find(rpc);
            !stopping && it != unanswered_on.end() && it->second > 0) {
            draining.push_back(rpc);
            log(LogLevel::warn,
                "keeping the old connection open until its " + std::to_string(it->second) +
                    " unanswered WRITE/SETATTR(s) are answered, so that none lands after a "
                    "newer change of the same file");
        } else {
            graveyard.push_back(rpc);
        }
    }
    rpc = nullptr;
}

void DataServer::Impl::start_attempt() {
    retire(mnt);
    retire(nfs);
    conn = ConnState::connecting;
    attempt_started = Clock::now();
    attempt_deadline = attempt_started + cfg.connect_timeout;
    attempt_stage = "MOUNT connect";
    mnt = rpc_init_context();
    if (mnt == nullptr) {
        attempt_failed("rpc_init_context failed");
        return;
    }
    rpc_set_uid(mnt, static_cast<int>(cfg.uid));
    rpc_set_gid(mnt, static_cast<int>(cfg.gid));
    // Plain TCP connect to the fixed port. (rpc_connect_port_async would also send a
    // portmapper NULL to that port first, and leaks its state if the context is destroyed
    // while connecting.)
    if (rpc_connect_async(mnt, cfg.host.c_str(), cfg.mount_port, mnt_connect_cb, this) != 0)
        attempt_failed("MOUNT connect to port " + std::to_string(cfg.mount_port) + ": " +
                       rpc_error(mnt));
}

void DataServer::Impl::on_mnt_connected(rpc_context* rpc, int status, void* data) {
    if (rpc != mnt || mnt == nullptr)
        return; // a retired context
    if (status != RPC_STATUS_SUCCESS) {
        attempt_failed("MOUNT connect to port " + std::to_string(cfg.mount_port) + ": " +
                       (data != nullptr ? static_cast<const char*>(data) : rpc_error(rpc)));
        return;
    }
    attempt_stage = "MNT";
    if (rpc_mount3_mnt_async(mnt, mnt_reply_cb, const_cast<char*>(cfg.export_path.c_str()), this) !=
        0)
        attempt_failed("MNT " + cfg.export_path + ": " + rpc_error(mnt));
}

void DataServer::Impl::on_mnt_reply(rpc_context* rpc, int status, void* data) {
    if (rpc != mnt || mnt == nullptr)
        return;
    if (status != RPC_STATUS_SUCCESS || data == nullptr) {
        attempt_failed("MNT " + cfg.export_path + ": " +
                       (status == RPC_STATUS_ERROR && data != nullptr
                            ? static_cast<const char*>(data)
                            : rpc_error(rpc)));
        return;
    }
    auto* res = static_cast<mountres3*>(data);
    if (res->fhs_status != MNT3_OK) {
        attempt_failed("MNT " + cfg.export_path + ": " + mountstat3_to_str(res->fhs_status) +
                       " (is it the export's Path?)");
        return;
    }
    auto fh = DsFh::from_bytes(res->mountres3_u.mountinfo.fhandle.fhandle3_val,
                               res->mountres3_u.mountinfo.fhandle.fhandle3_len);
    if (!fh) {
        attempt_failed("MNT " + cfg.export_path + ": invalid root filehandle");
        return;
    }
    root_fh = *fh;
    retire(mnt);
    attempt_stage = "NFS connect";
    nfs = rpc_init_context();
    if (nfs == nullptr) {
        attempt_failed("rpc_init_context failed");
        return;
    }
    rpc_set_uid(nfs, static_cast<int>(cfg.uid));
    rpc_set_gid(nfs, static_cast<int>(cfg.gid));
    if (rpc_connect_async(nfs, cfg.host.c_str(), cfg.nfs_port, nfs_connect_cb, this) != 0)
        attempt_failed("NFS connect to port " + std::to_string(cfg.nfs_port) + ": " +
                       rpc_error(nfs));
}

void DataServer::Impl::on_nfs_connected(rpc_context* rpc, int status, void* data) {
    if (rpc != nfs || nfs == nullptr)
        return;
    if (status != RPC_STATUS_SUCCESS) {
        attempt_failed("NFS connect to port " + std::to_string(cfg.nfs_port) + ": " +
                       (data != nullptr ? static_cast<const char*>(data) : rpc_error(rpc)));
        return;
    }
    conn = ConnState::connected;
    c_connects.fetch_add(1, std::memory_order_relaxed);
    // The backoff is reset by the first good probe, not here: a server that accepts
    // connections but does not answer NFS must not be reconnected to in a tight loop.
    last_error.clear();
    log(LogLevel::info, "connected in " + ms_string(Clock::now() - attempt_started) + " (root fh " +
                            root_fh.hex() + ")");
    next_probe = Clock::now(); // prove it with a NULL right away
    std::deque<Call*> w;
    w.swap(waiting);
    for (Call* c : w) {
        c->queued = false;
        if (c->finished)
            maybe_delete(c);
        else
            send(c);
    }
}

void DataServer::Impl::attempt_failed(const std::string& why) {
    retire(mnt);
    retire(nfs);
    c_connect_failures.fetch_add(1, std::memory_order_relaxed);
    last_error = why;
    const HealthTransition t = health.probe_failed();
    conn = ConnState::backoff;
    auto delay = schedule_attempt();
    // Log the first failure of a series and then only every 10th, to keep logs readable
    // while a server is away.
    unsigned n = backoff.failures();
    if (n == 1 || n % 10 == 0)
        log(LogLevel::warn, "connection attempt " + std::to_string(n) + " failed: " + why +
                                "; retrying in " + ms_string(delay));
    note_transition(t, "cannot connect: " + why);
    fail_waiting(DsErrc::unavailable, "connection attempt failed: " + why);
}

Clock::duration DataServer::Impl::schedule_attempt() {
    const auto now = Clock::now();
    Clock::duration delay = backoff.next();
    // A server failing but not Down yet gets one more attempt when it may become Down,
    // not a backoff step later: a server that is back by then is Up again at once, and
    // one that is not is declared Down on time (so its requests fail fast from then on).
    if (const auto due = health.down_due(); due && *due > now && *due < now + delay)
        delay = *due - now;
    next_attempt = now + delay;
    return delay;
}

void DataServer::Impl::connection_lost(const std::string& why) {
    log(LogLevel::warn, "connection lost: " + why);
    note_transition(health.probe_failed(), "connection lost: " + why);
    drop_connection("connection lost: " + why, health.state() != Health::down);
}

void DataServer::Impl::drop_connection(const std::string& why, bool retry_now) {
    retire(nfs);
    retire(mnt);
    probe_in_flight = false;
    ++probe_gen; // the cancelled probe's completion is ignored
    last_error = why;
    if (retry_now) {
        start_attempt();
    } else {
        conn = ConnState::backoff;
        auto delay = schedule_attempt();
        unsigned n = backoff.failures(); // first of a series, then every 10th
        if (n == 1 || n % 10 == 0)
            log(LogLevel::warn,
                "dropped the connection (" + why + "); reconnecting in " + ms_string(delay));
    }
}

void DataServer::Impl::send_probe(Clock::time_point now) {
    probe_in_flight = true;
    Clock::time_point sent_at = now;
    std::uint64_t gen = ++probe_gen;
    auto probe = make_null_call("NULL (probe)", [this, sent_at, gen](DsResult<NullResult> r) {
        on_probe_done(r, sent_at, gen);
    });
    Call* c = probe.release(); // owned by the event loop from here (maybe_delete())
    c->ds = this;
    c->probe = true;
    c->submitted = now;
    c->deadline = now + cfg.probe_timeout;
    dispatch(c);
}

void DataServer::Impl::on_probe_done(const DsResult<NullResult>& r, Clock::time_point sent_at,
                                     std::uint64_t gen) {
    if (stopping || gen != probe_gen)
        return; // stopping, or the probe of a connection already dropped
    probe_in_flight = false;
    if (r.status.code == DsErrc::disconnected)
        return; // the connection-loss path counts it
    next_probe = sent_at + cfg.probe_interval;
    c_probes.fetch_add(1, std::memory_order_relaxed);
    auto wall = std::chrono::system_clock::now().time_since_epoch();
    last_probe_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count(),
                        std::memory_order_relaxed);
    if (r.ok()) {
        backoff.reset();
        last_probe_ok.store(true, std::memory_order_relaxed);
        last_probe_rtt_us.store(r.value.rtt.count(), std::memory_order_relaxed);
        note_transition(health.probe_succeeded(), "probe answered");
        return;
    }
    c_probe_failures.fetch_add(1, std::memory_order_relaxed);
    last_probe_ok.store(false, std::memory_order_relaxed);
    auto t = health.probe_failed();
    note_transition(t, r.status.message);
    if (t.to == Health::down && conn == ConnState::connected)
        teardown_reason = "Down after " + std::to_string(cfg.down_after) + " failed probes";
}

void DataServer::Impl::bury() {
    // Destroying a context cancels its requests, whose callbacks may queue more work but
    // never touch a retired context; new retirements land in `graveyard` again.
    while (!graveyard.empty()) {
        rpc_context* rpc = graveyard.back();
        graveyard.pop_back();
        rpc_destroy_context(rpc);
    }
}

} // namespace flexfiles::fleet
