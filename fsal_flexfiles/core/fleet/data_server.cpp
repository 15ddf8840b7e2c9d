// SPDX-License-Identifier: LGPL-3.0-or-later
//
// DataServer: its configuration, its lifetime (the event thread is started here and
// stopped through Impl::stop()) and the state callers read from any thread. The
// operations are in nfs3_calls.cpp, the event thread in event_loop.cpp, the connection and
// health in connection.cpp; data_server_impl.hpp is the state they share.
#include "fleet/data_server.hpp"

#include "fleet/data_server_impl.hpp"

#include <cerrno>
#include <cstring>
#include <random>
#include <sys/eventfd.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace flexfiles::fleet {

using std::chrono::microseconds;

std::string_view to_string(ConnState s) {
    switch (s) {
    case ConnState::connecting:
        return "connecting";
    case ConnState::connected:
        return "connected";
    case ConnState::backoff:
        return "backoff";
    case ConnState::stopped:
        return "stopped";
    }
    return "?";
}

DsStatus DataServerConfig::validate() const {
    auto bad = [](std::string m) {
        return DsStatus::error(DsErrc::invalid_argument, std::move(m));
    };
    if (id == 0)
        return bad("data server: Id must be >= 1");
    std::string who = "data server " + std::to_string(id) + ": ";
    if (host.empty())
        return bad(who + "host is empty");
    if (export_path.empty() || export_path[0] != '/')
        return bad(who + "export path \"" + export_path + "\" is not absolute");
    if (nfs_port == 0 || mount_port == 0)
        return bad(who + "NFS and MOUNT ports must be set (no portmapper is used)");
    if (request_timeout.count() <= 0 || connect_timeout.count() <= 0 ||
        probe_interval.count() <= 0 || probe_timeout.count() <= 0)
        return bad(who + "timeouts and the probe interval must be > 0");
    if (down_after == 0)
        return bad(who + "down_after must be >= 1");
    if (backoff_initial.count() <= 0 || backoff_max < backoff_initial)
        return bad(who + "backoff needs 0 < initial <= max");
    if (max_io_size == 0)
        return bad(who + "max_io_size must be > 0");
    return DsStatus::success();
}

namespace {

// Down takes `down_after` failed probes over at least as long as that many unanswered
// probes would take, however fast the failures come (refused connects while a data server
// restarts come within milliseconds).
Clock::duration down_span(const DataServerConfig& c) {
    return c.probe_interval * (c.down_after == 0 ? 0 : c.down_after - 1);
}

} // namespace

DataServer::Impl::Impl(DataServerConfig c)
    : cfg(std::move(c)),
      label("ds " + std::to_string(cfg.id) + " (" + cfg.host + ":" + cfg.export_path + ")"),
      health(cfg.down_after, down_span(cfg)),
      backoff(cfg.backoff_initial, cfg.backoff_max, cfg.id) {
    // A random start, so that a restarted MDS's transaction ids are not the last one's.
    direct_xid.store(std::random_device{}(), std::memory_order_relaxed);
}

DataServer::Impl::~Impl() {
    if (efd >= 0)
        ::close(efd);
}

// ---------------------------------------------------------------------------------------
// DataServer

DsResult<std::shared_ptr<DataServer>> DataServer::start(DataServerConfig config) {
    using R = DsResult<std::shared_ptr<DataServer>>;
    if (auto st = config.validate(); !st.ok())
        return R::failure(st);
    auto impl = std::make_shared<Impl>(std::move(config));
    impl->efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (impl->efd < 0)
        return R::failure(
            DsStatus::error(DsErrc::rpc, impl->label + ": eventfd: " + std::strerror(errno)));
    std::shared_ptr<DataServer> ds(new DataServer(impl));
    try {
        std::lock_guard lk(impl->join_mu);
        impl->thread = std::thread([self = impl] { self->run(); });
    } catch (const std::system_error& e) {
        return R::failure(
            DsStatus::error(DsErrc::rpc, impl->label + ": cannot start event thread: " + e.what()));
    }
    return R::success(std::move(ds));
}

DataServer::DataServer(std::shared_ptr<Impl> impl)
    : impl_(std::move(impl)), id_(impl_->cfg.id),
      deviceid_(make_deviceid(impl_->cfg.id, impl_->cfg.fsal_id)) {}

DataServer::~DataServer() {
    impl_->stop();
    if (impl_->on_event_thread()) {
        // The last reference went away inside a callback: let the thread finish by itself
        // (it holds its own reference to the state).
        std::lock_guard lk(impl_->join_mu);
        if (impl_->thread.joinable())
            impl_->thread.detach();
    }
}

void DataServer::stop() noexcept {
    impl_->stop();
}

const DataServerConfig& DataServer::config() const noexcept {
    return impl_->cfg;
}
const std::string& DataServer::label() const noexcept {
    return impl_->label;
}
Health DataServer::health() const noexcept {
    return impl_->health.state();
}
ConnState DataServer::conn_state() const noexcept {
    return impl_->conn.load();
}
std::uint32_t DataServer::in_flight() const noexcept {
    return impl_->c_in_flight.load(std::memory_order_relaxed);
}

DsCounters DataServer::counters() const noexcept {
    const Impl& d = *impl_;
    DsCounters c;
    c.requests = d.c_requests.load(std::memory_order_relaxed);
    c.errors = d.c_errors.load(std::memory_order_relaxed);
    c.timeouts = d.c_timeouts.load(std::memory_order_relaxed);
    c.reported_errors = d.c_reported.load(std::memory_order_relaxed);
    c.probes = d.c_probes.load(std::memory_order_relaxed);
    c.probe_failures = d.c_probe_failures.load(std::memory_order_relaxed);
    c.connects = d.c_connects.load(std::memory_order_relaxed);
    c.connect_failures = d.c_connect_failures.load(std::memory_order_relaxed);
    c.in_flight = d.c_in_flight.load(std::memory_order_relaxed);
    c.direct_writes = d.c_direct_writes.load(std::memory_order_relaxed);
    c.direct_spun = d.c_direct_spun.load(std::memory_order_relaxed);
    c.direct_reads = d.c_direct_reads.load(std::memory_order_relaxed);
    c.direct_connections = d.direct_open.load(std::memory_order_relaxed);
    auto ns = d.last_probe_ns.load(std::memory_order_relaxed);
    if (ns >= 0)
        c.last_probe = std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                std::chrono::nanoseconds(ns)));
    c.last_probe_ok = d.last_probe_ok.load(std::memory_order_relaxed);
    c.last_probe_rtt = microseconds(d.last_probe_rtt_us.load(std::memory_order_relaxed));
    return c;
}

void DataServer::report_error(ErrorKind kind) noexcept {
    impl_->c_reported.fetch_add(1, std::memory_order_relaxed);
    impl_->note_transition(impl_->health.error_reported(kind),
                           std::string("error reported: ") + std::string(to_string(kind)));
}

void DataServer::probe_now() noexcept {
    impl_->probe_requested.store(true, std::memory_order_release);
    impl_->wake();
}

} // namespace flexfiles::fleet
