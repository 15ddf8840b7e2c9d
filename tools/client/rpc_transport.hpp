// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ONC RPC over one TCP connection: record marking, AUTH_SYS, many calls in flight.
//
// A single receive thread reads records, matches REPLY messages to pending calls by XID
// and completes them (a callback, or a future via call()). CALL messages arriving on the
// same connection (the NFSv4.1 backchannel: the server calling the client) go to the
// installed CallHandler, whose answer is sent back on the connection. Every call has a
// deadline; the receive thread expires overdue calls, so nothing waits forever when the
// server dies. The transport does not reconnect: once the connection is lost every
// pending and later call completes with RpcStatus::connection_lost.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace flexfiles::client {

using Clock = std::chrono::steady_clock;

enum class RpcStatus {
    ok,
    timed_out,       // no reply before the call's deadline
    connection_lost, // connect failed, peer closed, or the stream broke
    closed,          // the transport was closed locally
    prog_unavail,    // accepted, but the server does not serve the program
    prog_mismatch,
    proc_unavail,
    garbage_args,
    system_err,
    rpc_mismatch, // denied: RPC version
    auth_error,   // denied: credentials refused
    bad_reply,    // unparseable reply header
};
const char* to_string(RpcStatus s);

// AUTH_SYS (RFC 5531 appendix A) credentials.
struct AuthSys {
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::vector<uint32_t> gids; // at most 16 are sent
    std::string machine_name;   // empty: this host's name
};

struct RpcReply {
    RpcStatus status = RpcStatus::ok;
    std::string detail;       // why, when status != ok
    std::vector<char> record; // the whole reply record
    std::size_t body_offset = 0;
    std::chrono::microseconds elapsed{0};

    bool ok() const { return status == RpcStatus::ok; }
    // The procedure's results (valid when ok()).
    std::span<const char> body() const {
        return std::span<const char>(record).subspan(std::min(body_offset, record.size()));
    }
};

// A CALL received from the peer (backchannel).
struct RpcCall {
    uint32_t xid = 0;
    uint32_t prog = 0;
    uint32_t vers = 0;
    uint32_t proc = 0;
    uint32_t cred_flavor = 0;
    std::span<const char> args;
};

// The answer to an RpcCall: an accept_stat (ntirpc's enum accept_stat: SUCCESS,
// PROG_UNAVAIL, ...) with, for SUCCESS, the XDR-encoded results and, for PROG_MISMATCH,
// the lowest and highest version supported.
struct RpcCallReply {
    uint32_t accept_stat = 0;
    std::vector<char> results;
    uint32_t low = 0;
    uint32_t high = 0;
};

// Runs on the receive thread: it must not block on fore-channel calls of the same
// transport (their replies arrive on this thread). std::nullopt drops the call unanswered.
using CallHandler = std::function<std::optional<RpcCallReply>(const RpcCall&)>;

class RpcTransport {
public:
    using Completion = std::function<void(RpcReply&&)>;

    // Connects (host name or address, TCP port) within `connect_timeout`.
    // Throws std::system_error / std::runtime_error with the address in the message.
    static std::unique_ptr<RpcTransport> connect(const std::string& host, uint16_t port,
                                                 std::chrono::milliseconds connect_timeout);
    ~RpcTransport();
    RpcTransport(const RpcTransport&) = delete;
    RpcTransport& operator=(const RpcTransport&) = delete;

    // Sends one call; `done` runs exactly once, on the receive thread or (for a call that
    // could not be sent) on the caller's thread. `args` are the XDR-encoded arguments.
    void call_async(uint32_t prog, uint32_t vers, uint32_t proc, const AuthSys& cred,
                    std::span<const char> args, std::chrono::milliseconds timeout, Completion done);
    std::future<RpcReply> call(uint32_t prog, uint32_t vers, uint32_t proc, const AuthSys& cred,
                               std::span<const char> args, std::chrono::milliseconds timeout);

    void set_call_handler(CallHandler handler);

    // Fails pending calls with RpcStatus::closed and stops the receive thread.
    void close();
    bool is_open() const { return open_.load(); }
    const std::string& peer() const { return peer_; }

    // Counters for tests and benchmarks.
    uint64_t calls_sent() const { return calls_sent_.load(); }
    uint64_t callbacks_received() const { return callbacks_received_.load(); }
    uint64_t stray_replies() const { return stray_replies_.load(); }

    // Largest record accepted from the peer; a bigger one breaks the connection.
    static constexpr std::size_t kMaxRecord = 64u << 20;

private:
    struct Pending {
        Completion done;
        Clock::time_point sent;
        Clock::time_point deadline;
    };

    RpcTransport(int fd, std::string peer);
    void receive_loop();
    void handle_record(std::vector<char>&& record);
    void handle_reply(uint32_t xid, std::vector<char>&& record);
    void handle_call(uint32_t xid, std::vector<char>&& record);
    void expire_overdue(Clock::time_point now);
    void fail_all(RpcStatus status, const std::string& detail);
    // Sends one record (header + body) before `deadline`; breaks the connection on a
    // partial write. Returns an error message, empty on success.
    std::string send_record(std::span<const char> header, std::span<const char> body,
                            Clock::time_point deadline);

    int fd_ = -1;
    std::string peer_;
    std::atomic<bool> open_{true};
    std::atomic<bool> closing_{false};
    std::atomic<uint32_t> next_xid_;
    std::mutex send_mu_;
    std::mutex mu_; // pending_, handler_
    std::unordered_map<uint32_t, Pending> pending_;
    CallHandler handler_;
    std::thread receiver_;
    std::atomic<uint64_t> calls_sent_{0};
    std::atomic<uint64_t> callbacks_received_{0};
    std::atomic<uint64_t> stray_replies_{0};
};

// Encodes an AUTH_SYS credential body (used by the transport; exposed for tests).
std::vector<char> encode_auth_sys(const AuthSys& cred);

} // namespace flexfiles::client
