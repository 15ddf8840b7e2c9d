// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/rpc_ping.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <random>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace flexfiles::harness {

namespace {

using Clock = std::chrono::steady_clock;

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

std::string send_all(int fd, const std::vector<std::uint8_t>& buf, Clock::time_point deadline) {
    std::size_t off = 0;
    while (off < buf.size()) {
        const ssize_t n = send(fd, buf.data() + off, buf.size() - off, MSG_NOSIGNAL);
        if (n > 0) {
            off += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR)
            return errno_text("send", errno);
        pollfd p{fd, POLLOUT, 0};
        if (poll(&p, 1, remaining_ms(deadline)) == 0)
            return "send: timed out";
    }
    return "";
}

std::string recv_exact(int fd, std::uint8_t* out, std::size_t size, Clock::time_point deadline) {
    std::size_t off = 0;
    while (off < size) {
        const ssize_t n = recv(fd, out + off, size - off, 0);
        if (n > 0) {
            off += static_cast<std::size_t>(n);
            continue;
        }
        if (n == 0)
            return "connection closed by the server";
        if (errno != EAGAIN && errno != EINTR)
            return errno_text("recv", errno);
        pollfd p{fd, POLLIN, 0};
        const int r = poll(&p, 1, remaining_ms(deadline));
        if (r == 0)
            return "no reply: timed out";
    }
    return "";
}

void put32(std::vector<std::uint8_t>& buf, std::uint32_t v) {
    buf.push_back(static_cast<std::uint8_t>(v >> 24));
    buf.push_back(static_cast<std::uint8_t>(v >> 16));
    buf.push_back(static_cast<std::uint8_t>(v >> 8));
    buf.push_back(static_cast<std::uint8_t>(v));
}

std::uint32_t get32(const std::vector<std::uint8_t>& buf, std::size_t at) {
    return (std::uint32_t{buf[at]} << 24) | (std::uint32_t{buf[at + 1]} << 16) |
           (std::uint32_t{buf[at + 2]} << 8) | std::uint32_t{buf[at + 3]};
}

const char* accept_stat_name(std::uint32_t stat) {
    switch (stat) {
    case 1:
        return "PROG_UNAVAIL";
    case 2:
        return "PROG_MISMATCH";
    case 3:
        return "PROC_UNAVAIL";
    case 4:
        return "GARBAGE_ARGS";
    case 5:
        return "SYSTEM_ERR";
    default:
        return "unknown accept_stat";
    }
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
    Socket sock(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (sock.fd() < 0) {
        result.error = errno_text("socket", errno);
        return result;
    }
    result.error = connect_with_deadline(sock.fd(), ipv4, port, deadline);
    if (!result.error.empty())
        return result;

    static std::mt19937 rng{std::random_device{}()};
    const std::uint32_t xid = rng();
    std::vector<std::uint8_t> call;
    put32(call, 0x80000000U | 40U); // last fragment, 10 words follow
    for (std::uint32_t word :
         {xid, 0U /* CALL */, 2U /* RPC version */, program, version, 0U /* NULL procedure */, 0U,
          0U /* AUTH_NONE cred */, 0U, 0U /* AUTH_NONE verifier */})
        put32(call, word);
    result.error = send_all(sock.fd(), call, deadline);
    if (!result.error.empty())
        return result;

    std::vector<std::uint8_t> reply;
    for (bool last = false; !last;) {
        std::uint8_t mark[4];
        result.error = recv_exact(sock.fd(), mark, sizeof(mark), deadline);
        if (!result.error.empty())
            return result;
        const std::uint32_t header = (std::uint32_t{mark[0]} << 24) |
                                     (std::uint32_t{mark[1]} << 16) |
                                     (std::uint32_t{mark[2]} << 8) | std::uint32_t{mark[3]};
        last = (header & 0x80000000U) != 0;
        const std::size_t length = header & 0x7fffffffU;
        if (reply.size() + length > 65536) {
            result.error = "reply too large for a NULL call";
            return result;
        }
        const std::size_t at = reply.size();
        reply.resize(at + length);
        result.error = recv_exact(sock.fd(), reply.data() + at, length, deadline);
        if (!result.error.empty())
            return result;
    }
    // xid, REPLY, MSG_ACCEPTED, verifier (flavor, length, body), accept_stat
    if (reply.size() < 24 || get32(reply, 0) != xid || get32(reply, 4) != 1) {
        result.error = "malformed RPC reply";
        return result;
    }
    if (get32(reply, 8) != 0) {
        result.error = "RPC call denied (MSG_DENIED)";
        return result;
    }
    const std::size_t verf_len = get32(reply, 16);
    const std::size_t stat_at = 20 + ((verf_len + 3) & ~std::size_t{3});
    if (reply.size() < stat_at + 4) {
        result.error = "malformed RPC reply";
        return result;
    }
    const std::uint32_t stat = get32(reply, stat_at);
    if (stat != 0) {
        result.error = accept_stat_name(stat);
        if (stat == 2 && reply.size() >= stat_at + 12)
            result.error += " (server has versions " + std::to_string(get32(reply, stat_at + 4)) +
                            "-" + std::to_string(get32(reply, stat_at + 8)) + ")";
        return result;
    }
    result.ok = true;
    return result;
}

} // namespace flexfiles::harness
