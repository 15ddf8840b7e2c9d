// SPDX-License-Identifier: LGPL-3.0-or-later
//
// An ONC RPC NULL call over TCP (RFC 5531, record marking), straight to a port: the
// readiness probe for servers, with no portmapper involved. It is sent with the tools'
// RpcTransport (tools/client/rpc_transport.hpp), so the RPC headers and their error names
// exist once.
#pragma once

#include "model/nfs3.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace flexfiles::harness {

inline constexpr std::uint32_t kNfsProgram = nfs3::kNfsProgram;
inline constexpr std::uint32_t kMountProgram = nfs3::kMountProgram;
// rpcbind (RFC 1833): only the harness's fixture asks it anything.
inline constexpr std::uint32_t kPortmapProgram = 100000;

struct RpcPingResult {
    bool ok = false;
    // why not, when !ok ("cannot connect to 127.0.0.1:2049: Connection refused",
    // "PROG_MISMATCH (server supports 3..4)")
    std::string error;
    explicit operator bool() const { return ok; }
};

// Calls procedure 0 of (program, version) at ipv4:port; success means an accepted reply
// with accept_stat SUCCESS arrived within `timeout`.
RpcPingResult rpc_null_ping(const std::string& ipv4, std::uint16_t port, std::uint32_t program,
                            std::uint32_t version, std::chrono::milliseconds timeout);

// True if something accepts TCP connections at ipv4:port.
bool tcp_port_open(const std::string& ipv4, std::uint16_t port, std::chrono::milliseconds timeout);

} // namespace flexfiles::harness
