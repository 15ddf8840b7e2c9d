// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/rpc_ping.hpp"

// The tools' ONC RPC transport: call and reply headers with ntirpc's routines and
// constants, and the accept_stat and reject names, in one place for both.
#include "client/rpc_transport.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <exception>
#include <memory>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace flexfiles::harness {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kNullProcedure = 0; // procedure 0 of every program (RFC 5531)

class Socket {
public:
    explicit Socket(int fd) : fd_(fd) {}
    ~Socket() {
        if (fd_ >= 0)
            close(fd_);
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    int fd() const { return fd_; }

private:
    int fd_;
};

int remaining_ms(Clock::time_point deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

std::string errno_text(const char* what, int err) {
    return std::string(what) + ": " + std::strerror(err);
}

// Connects a non-blocking socket within the deadline; returns an error text or "".
std::string connect_with_deadline(int fd, const std::string& ipv4, std::uint16_t port,
                                  Clock::time_point deadline) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    if (inet_pton(AF_INET, ipv4.c_str(), &sa.sin_addr) != 1)
        return "bad IPv4 address '" + ipv4 + "'";
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0)
        return "";
    if (errno != EINPROGRESS)
        return errno_text("connect", errno);
    pollfd p{fd, POLLOUT, 0};
    const int r = poll(&p, 1, remaining_ms(deadline));
    if (r == 0)
        return "connect: timed out";
    if (r < 0)
        return errno_text("poll", errno);
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    return err == 0 ? "" : errno_text("connect", err);
}

} // namespace

bool tcp_port_open(const std::string& ipv4, std::uint16_t port, std::chrono::milliseconds timeout) {
    Socket sock(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (sock.fd() < 0)
        return false;
    return connect_with_deadline(sock.fd(), ipv4, port, Clock::now() + timeout).empty();
}

RpcPingResult rpc_null_ping(const std::string& ipv4, std::uint16_t port, std::uint32_t program,
                            std::uint32_t version, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    RpcPingResult result;
    std::unique_ptr<client::RpcTransport> transport;
    try {
        transport = client::RpcTransport::connect(ipv4, port, timeout);
    } catch (const std::exception& e) {
        result.error = e.what();
        return result;
    }
    const auto left = std::chrono::milliseconds(remaining_ms(deadline));
    const client::RpcReply reply =
        transport->call(program, version, kNullProcedure, client::AuthSys{}, {}, left).get();
    result.ok = reply.ok();
    if (!result.ok)
        result.error = reply.detail.empty() ? client::to_string(reply.status) : reply.detail;
    return result;
}

} // namespace flexfiles::harness
