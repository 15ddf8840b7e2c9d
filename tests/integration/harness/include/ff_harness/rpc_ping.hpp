// SPDX-License-Identifier: LGPL-3.0-or-later
//
// An ONC RPC NULL call over TCP (RFC 5531, record marking), straight to a port: the
// readiness probe for servers, with no portmapper involved.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace flexfiles::harness {

inline constexpr std::uint32_t kNfsProgram = 100003;
inline constexpr std::uint32_t kMountProgram = 100005;
inline constexpr std::uint32_t kPortmapProgram = 100000;

struct RpcPingResult {
    bool ok = false;
    std::string error; // why not, when !ok ("connect: Connection refused", "PROG_MISMATCH 3-4")
    explicit operator bool() const { return ok; }
};

// Calls procedure 0 of (program, version) at ipv4:port; success means an accepted reply
// with accept_stat SUCCESS arrived within `timeout`.
RpcPingResult rpc_null_ping(const std::string& ipv4, std::uint16_t port, std::uint32_t program,
                            std::uint32_t version, std::chrono::milliseconds timeout);

// True if something accepts TCP connections at ipv4:port.
bool tcp_port_open(const std::string& ipv4, std::uint16_t port, std::chrono::milliseconds timeout);

} // namespace flexfiles::harness
