// SPDX-License-Identifier: LGPL-3.0-or-later
// Data servers nobody answers for: a loopback port that was just free, so connections are
// refused at once and every request fails fast (DsErrc::unavailable) or by its deadline.
#pragma once

#include "fleet/fleet.h"

#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace mds_test {

inline std::uint16_t free_port() {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(s);
    return ntohs(a.sin_port);
}

inline flexfiles::fleet::DataServerConfig offline_config(std::uint64_t id) {
    using namespace std::chrono_literals;
    flexfiles::fleet::DataServerConfig c;
    c.id = id;
    c.host = "127.0.0.1";
    c.export_path = "/nowhere";
    c.nfs_port = free_port();
    c.mount_port = c.nfs_port;
    c.request_timeout = 1000ms;
    c.connect_timeout = 300ms;
    c.probe_interval = 100ms;
    c.probe_timeout = 100ms;
    c.down_after = 2;
    c.backoff_initial = 20ms;
    c.backoff_max = 50ms;
    return c;
}

template <class Pred> bool wait_until(Pred p, std::chrono::milliseconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (p())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return p();
}

// Every data server of the fleet has given up its first connection attempt.
inline bool all_unreachable(const flexfiles::fleet::Fleet& fleet) {
    for (const auto& ds : fleet.servers())
        if (ds->conn_state() == flexfiles::fleet::ConnState::connecting)
            return false;
    return true;
}

} // namespace mds_test
