// SPDX-License-Identifier: LGPL-3.0-or-later
// Data servers for tests of the data-server fleet (fsal_flexfiles/core/fleet) and of what
// uses it: timings short enough for failure detection to fit in a test, and data servers
// nobody answers for (a loopback port that was just free, so connections are refused at
// once and every request fails fast with DsErrc::unavailable, or by its deadline).
// Header-only: target ff_testing_offline_fleet, #include "offline_fleet/offline_fleet.hpp".
#pragma once

#include "fleet/fleet.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <cstdint>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace flexfiles::offline_fleet {

// The timings of DataServerConfig a test sets. The defaults are those of the unit tests'
// offline data servers: Down after 2 refused connects, each retried within 50 ms.
struct Timings {
    std::chrono::milliseconds request_timeout{1000};
    std::chrono::milliseconds connect_timeout{300};
    std::chrono::milliseconds probe_interval{100};
    std::chrono::milliseconds probe_timeout{100};
    unsigned down_after = 2;
    std::chrono::milliseconds backoff_initial{20};
    std::chrono::milliseconds backoff_max{50};
};

inline void apply(const Timings& t, fleet::DataServerConfig& c) {
    c.request_timeout = t.request_timeout;
    c.connect_timeout = t.connect_timeout;
    c.probe_interval = t.probe_interval;
    c.probe_timeout = t.probe_timeout;
    c.down_after = t.down_after;
    c.backoff_initial = t.backoff_initial;
    c.backoff_max = t.backoff_max;
}

// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
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

// Data server ID at 127.0.0.1:free_port(), export /nowhere, with timings T.
inline fleet::DataServerConfig offline_config(std::uint64_t id, const Timings& t = {}) {
    fleet::DataServerConfig c;
    c.id = id;
    c.host = "127.0.0.1";
    c.export_path = "/nowhere";
    c.nfs_port = free_port();
    c.mount_port = c.nfs_port;
    apply(t, c);
    return c;
}

// P() became true within LIMIT (checked every 5 ms, and once more at the end).
template <class Pred> bool wait_until(Pred p, std::chrono::milliseconds limit) {
    auto end = fleet::Clock::now() + limit;
    while (fleet::Clock::now() < end) {
        if (p())
            return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return p();
}

// Every data server of the fleet has given up its first connection attempt.
inline bool all_unreachable(const fleet::Fleet& f) {
    for (const auto& ds : f.servers())
        if (ds->conn_state() == fleet::ConnState::connecting)
            return false;
    return true;
}

} // namespace flexfiles::offline_fleet
