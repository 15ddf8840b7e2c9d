// SPDX-License-Identifier: LGPL-3.0-or-later
#include "rpc_transport.hpp"

#include "xdr_stream.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <random>
#include <rpc/rpc.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/uio.h>
#include <system_error>
#include <unistd.h>

namespace flexfiles::client {

namespace {

// Record marking (RFC 5531 section 11): ntirpc keeps its constant private.
constexpr uint32_t kLastFragment = 0x80000000u;

std::string errno_text(int err) {
    return std::system_category().message(err);
}

std::string local_host_name() {
    char name[256] = {};
    if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
        return "localhost";
    }
    return name;
}

RpcReply failed_reply(RpcStatus status, std::string detail) {
    RpcReply r;
    r.status = status;
    r.detail = std::move(detail);
    return r;
}

// An rpc_msg as ntirpc's routines expect it: zeroed, a null verifier, and xdr_void as the
// results routine, so that decoding a reply stops where its results begin.
rpc_msg empty_msg() {
    rpc_msg m;
    std::memset(&m, 0, sizeof(m));
    rpc_msg_init(&m);
    return m;
}

// Decodes the reply header with xdr_replymsg; fills status and body_offset.
void parse_reply_header(RpcReply& reply) {
    XdrDecoder d(reply.record);
    rpc_msg m = empty_msg();
    if (!xdr_replymsg(d.xdr(), &m)) {
        reply.status = RpcStatus::bad_reply;
        reply.detail = "malformed reply header (" + std::to_string(reply.record.size()) + " bytes)";
        return;
    }
    if (enum_bits(m.rm_reply.rp_stat) == MSG_DENIED) {
        if (enum_bits(m.RPCM_rej.rj_stat) == RPC_MISMATCH) {
            reply.status = RpcStatus::rpc_mismatch;
            reply.detail = "RPC_MISMATCH";
        } else {
            reply.status = RpcStatus::auth_error;
            reply.detail =
                "AUTH_ERROR (auth_stat " + std::to_string(enum_bits(m.RPCM_rej.rj_why)) + ")";
        }
        return;
    }
    const uint32_t accept_stat = enum_bits(m.RPCM_ack.ar_stat);
    switch (accept_stat) {
    case SUCCESS:
        reply.body_offset = d.pos();
        return;
    case PROG_UNAVAIL:
        reply.status = RpcStatus::prog_unavail;
        reply.detail = "PROG_UNAVAIL";
        return;
    case PROG_MISMATCH:
        reply.status = RpcStatus::prog_mismatch;
        reply.detail = "PROG_MISMATCH (server supports " + std::to_string(m.RPCM_ack.ar_vers.low) +
                       ".." + std::to_string(m.RPCM_ack.ar_vers.high) + ")";
        return;
    case PROC_UNAVAIL:
        reply.status = RpcStatus::proc_unavail;
        reply.detail = "PROC_UNAVAIL";
        return;
    case GARBAGE_ARGS:
        reply.status = RpcStatus::garbage_args;
        reply.detail = "GARBAGE_ARGS";
        return;
    default:
        reply.status = RpcStatus::system_err;
        reply.detail = "SYSTEM_ERR (accept_stat " + std::to_string(accept_stat) + ")";
        return;
    }
}

// A REPLY header for the call `xid`: accepted with `answer`'s accept_stat, or denied
// (RPC_MISMATCH) when `answer` is empty. Results go after it as they are.
std::vector<char> reply_header(uint32_t xid, const RpcCallReply* answer) {
    rpc_msg m = empty_msg();
    m.rm_xid = xid;
    m.rm_direction = REPLY;
    if (!answer) {
        m.rm_reply.rp_stat = MSG_DENIED;
        m.RPCM_rej.rj_stat = RPC_MISMATCH;
        m.RPCM_rej.rj_vers.low = RPC_MSG_VERSION;
        m.RPCM_rej.rj_vers.high = RPC_MSG_VERSION;
    } else {
        m.rm_reply.rp_stat = MSG_ACCEPTED;
        set_enum_bits(m.RPCM_ack.ar_stat, answer->accept_stat);
        if (answer->accept_stat == PROG_MISMATCH) {
            m.RPCM_ack.ar_vers.low = answer->low;
            m.RPCM_ack.ar_vers.high = answer->high;
        }
    }
    return xdr_encode(64, "RPC reply header", [&](XDR* x) { return xdr_replymsg(x, &m); });
}

} // namespace

const char* to_string(RpcStatus s) {
    switch (s) {
    case RpcStatus::ok:
        return "ok";
    case RpcStatus::timed_out:
        return "timed out";
    case RpcStatus::connection_lost:
        return "connection lost";
    case RpcStatus::closed:
        return "closed";
    case RpcStatus::prog_unavail:
        return "program unavailable";
    case RpcStatus::prog_mismatch:
        return "program version mismatch";
    case RpcStatus::proc_unavail:
        return "procedure unavailable";
    case RpcStatus::garbage_args:
        return "garbage arguments";
    case RpcStatus::system_err:
        return "server system error";
    case RpcStatus::rpc_mismatch:
        return "RPC version mismatch";
    case RpcStatus::auth_error:
        return "authentication error";
    case RpcStatus::bad_reply:
        return "malformed reply";
    }
    return "?";
}

std::vector<char> encode_auth_sys(const AuthSys& cred) {
    std::string machine = cred.machine_name.empty() ? local_host_name() : cred.machine_name;
    if (machine.size() > 255) {
        machine.resize(255);
    }
    std::vector<gid_t> gids(cred.gids.begin(),
                            cred.gids.begin() + std::min<std::size_t>(cred.gids.size(), 16));
    authunix_parms parms{};
    parms.aup_time = static_cast<int32_t>(time(nullptr));
    parms.aup_machname = machine.data();
    parms.aup_uid = cred.uid;
    parms.aup_gid = cred.gid;
    parms.aup_len = static_cast<u_int>(gids.size());
    parms.aup_gids = gids.data();
    return xdr_encode(512, "AUTH_SYS credential",
                      [&](XDR* x) { return xdr_authunix_parms(x, &parms); });
}

std::unique_ptr<RpcTransport> RpcTransport::connect(const std::string& host, uint16_t port,
                                                    std::chrono::milliseconds connect_timeout) {
    const std::string where = host + ":" + std::to_string(port);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
        throw std::runtime_error("cannot resolve " + where + ": " + gai_strerror(rc));
    }
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(found, &freeaddrinfo);

    std::string last_error = "no address";
    const auto deadline = Clock::now() + connect_timeout;
    for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
        int fd =
            socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            last_error = errno_text(errno);
            continue;
        }
        int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            rc = poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0)));
            if (rc == 0) {
                errno = ETIMEDOUT;
                rc = -1;
            } else if (rc > 0) {
                int err = 0;
                socklen_t len = sizeof(err);
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
                errno = err;
                rc = err == 0 ? 0 : -1;
            }
        }
        if (rc != 0) {
            last_error = errno_text(errno);
            ::close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return std::unique_ptr<RpcTransport>(new RpcTransport(fd, where));
    }
    throw std::runtime_error("cannot connect to " + where + ": " + last_error);
}

RpcTransport::RpcTransport(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {
    std::random_device rd;
    next_xid_ = rd();
    receiver_ = std::thread([this] { receive_loop(); });
}

RpcTransport::~RpcTransport() {
    close();
}

void RpcTransport::close() {
    closing_ = true;
    if (fd_ >= 0) {
        shutdown(fd_, SHUT_RDWR);
    }
    if (receiver_.joinable() && receiver_.get_id() != std::this_thread::get_id()) {
        receiver_.join();
        ::close(fd_);
        fd_ = -1;
    }
}

void RpcTransport::set_call_handler(CallHandler handler) {
    std::lock_guard lock(mu_);
    handler_ = std::move(handler);
}

std::future<RpcReply> RpcTransport::call(uint32_t prog, uint32_t vers, uint32_t proc,
                                         const AuthSys& cred, std::span<const char> args,
                                         std::chrono::milliseconds timeout) {
    auto promise = std::make_shared<std::promise<RpcReply>>();
    auto future = promise->get_future();
    call_async(prog, vers, proc, cred, args, timeout,
               [promise](RpcReply&& reply) { promise->set_value(std::move(reply)); });
    return future;
}

void RpcTransport::call_async(uint32_t prog, uint32_t vers, uint32_t proc, const AuthSys& cred,
                              std::span<const char> args, std::chrono::milliseconds timeout,
                              Completion done) {
    const uint32_t xid = next_xid_++;
    std::vector<char> header;
    try {
        const std::vector<char> auth = encode_auth_sys(cred);
        rpc_msg m = empty_msg();
        m.rm_xid = xid;
        m.rm_direction = CALL;
        m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
        m.cb_prog = prog;
        m.cb_vers = vers;
        m.cb_proc = proc;
        m.cb_cred.oa_flavor = AUTH_SYS;
        if (auth.size() > sizeof(m.cb_cred.oa_body)) {
            throw XdrError("AUTH_SYS credential of " + std::to_string(auth.size()) + " bytes");
        }
        m.cb_cred.oa_length = static_cast<u_int>(auth.size());
        std::memcpy(m.cb_cred.oa_body, auth.data(), auth.size());
        m.cb_verf = _null_auth;
        header = xdr_encode(64 + auth.size(), "RPC call header",
                            [&](XDR* x) { return xdr_callmsg(x, &m); });
    } catch (const XdrError& e) {
        done(failed_reply(RpcStatus::bad_reply, e.what()));
        return;
    }

    const auto now = Clock::now();
    const auto deadline = now + timeout;
    bool registered = false;
    {
        std::lock_guard lock(mu_);
        if (open_) {
            pending_.emplace(xid, Pending{std::move(done), now, deadline});
            registered = true;
        }
    }
    if (!registered) {
        done(failed_reply(closing_ ? RpcStatus::closed : RpcStatus::connection_lost,
                          "transport to " + peer_ + " is not open"));
        return;
    }
    calls_sent_++;
    const std::string err = send_record(header, args, deadline);
    if (err.empty()) {
        return;
    }
    Completion failed;
    {
        std::lock_guard lock(mu_);
        auto it = pending_.find(xid);
        if (it != pending_.end()) {
            failed = std::move(it->second.done);
            pending_.erase(it);
        }
    }
    if (failed) {
        failed(failed_reply(RpcStatus::connection_lost, "send to " + peer_ + ": " + err));
    }
}

std::string RpcTransport::send_record(std::span<const char> header, std::span<const char> body,
                                      Clock::time_point deadline) {
    const std::size_t total = header.size() + body.size();
    if (total > 0x7fffffffu) {
        return "record too large";
    }
    const uint32_t mark = htonl(kLastFragment | static_cast<uint32_t>(total));
    iovec iov[3] = {
        {const_cast<uint32_t*>(&mark), sizeof(mark)},
        {const_cast<char*>(header.data()), header.size()},
        {const_cast<char*>(body.data()), body.size()},
    };
    std::size_t remaining = sizeof(mark) + total;
    std::size_t first = 0;
    bool wrote_any = false;

    std::lock_guard lock(send_mu_);
    while (remaining > 0) {
        msghdr msg{};
        msg.msg_iov = iov + first;
        msg.msg_iovlen = 3 - first;
        const ssize_t n = sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
                pollfd p{fd_, POLLOUT, 0};
                if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) == 0) {
                    if (wrote_any) {
                        shutdown(fd_, SHUT_RDWR); // the stream is now out of frame
                    }
                    return "send timed out";
                }
                continue;
            }
            const int err = errno;
            shutdown(fd_, SHUT_RDWR);
            return errno_text(err);
        }
        wrote_any = true;
        std::size_t done = static_cast<std::size_t>(n);
        remaining -= done;
        while (first < 3 && done >= iov[first].iov_len) {
            done -= iov[first].iov_len;
            ++first;
        }
        if (first < 3) {
            iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
            iov[first].iov_len -= done;
        }
    }
    return {};
}

void RpcTransport::receive_loop() {
    std::vector<char> in;
    std::size_t start = 0;
    std::vector<char> record;
    std::vector<char> chunk(256 * 1024);
    std::string why;

    while (!closing_) {
        bool idle;
        {
            std::lock_guard lock(mu_);
            idle = pending_.empty();
        }
        pollfd p{fd_, POLLIN, 0};
        const int rc = poll(&p, 1, idle ? 50 : 10);
        if (closing_) {
            break;
        }
        if (rc < 0 && errno != EINTR) {
            why = errno_text(errno);
            break;
        }
        if (rc > 0) {
            const ssize_t n = recv(fd_, chunk.data(), chunk.size(), MSG_DONTWAIT);
            if (n == 0) {
                why = "server closed the connection";
                break;
            }
            if (n < 0) {
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    why = errno_text(errno);
                    break;
                }
            } else {
                in.insert(in.end(), chunk.data(), chunk.data() + n);
                while (in.size() - start >= 4) {
                    uint32_t mark = 0;
                    std::memcpy(&mark, in.data() + start, 4);
                    mark = ntohl(mark);
                    const std::size_t len = mark & ~kLastFragment;
                    if (record.size() + len > kMaxRecord) {
                        why = "record of " + std::to_string(record.size() + len) +
                              " bytes exceeds the limit";
                        break;
                    }
                    if (in.size() - start - 4 < len) {
                        break;
                    }
                    record.insert(record.end(), in.data() + start + 4, in.data() + start + 4 + len);
                    start += 4 + len;
                    if (mark & kLastFragment) {
                        handle_record(std::move(record));
                        record = {};
                    }
                }
                if (!why.empty()) {
                    break;
                }
                if (start == in.size()) {
                    in.clear();
                    start = 0;
                } else if (start > (1u << 20)) {
                    in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(start));
                    start = 0;
                }
            }
        }
        expire_overdue(Clock::now());
    }
    if (closing_) {
        fail_all(RpcStatus::closed, "transport to " + peer_ + " closed");
    } else {
        shutdown(fd_, SHUT_RDWR);
        fail_all(RpcStatus::connection_lost, peer_ + ": " + why);
    }
}

void RpcTransport::handle_record(std::vector<char>&& record) {
    // The xid and direction route the record before its header is decoded: a reply whose
    // header xdr_replymsg refuses must still complete its call, and xdr_replymsg and
    // xdr_callmsg each refuse the other direction.
    XdrDecoder d(record);
    uint32_t xid = 0, mtype = 0;
    if (!d.u32(xid) || !d.u32(mtype)) {
        stray_replies_++;
        return;
    }
    if (mtype == REPLY) {
        handle_reply(xid, std::move(record));
    } else if (mtype == CALL) {
        handle_call(xid, std::move(record));
    } else {
        stray_replies_++;
    }
}

void RpcTransport::handle_reply(uint32_t xid, std::vector<char>&& record) {
    Pending pending;
    {
        std::lock_guard lock(mu_);
        auto it = pending_.find(xid);
        if (it == pending_.end()) {
            stray_replies_++; // a reply after its call timed out
            return;
        }
        pending = std::move(it->second);
        pending_.erase(it);
    }
    RpcReply reply;
    reply.record = std::move(record);
    reply.elapsed =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - pending.sent);
    parse_reply_header(reply);
    pending.done(std::move(reply));
}

void RpcTransport::handle_call(uint32_t xid, std::vector<char>&& record) {
    callbacks_received_++;
    XdrDecoder d(record);
    rpc_msg m = empty_msg();
    if (!xdr_callmsg(d.xdr(), &m)) {
        // xdr_callmsg refuses an RPC version other than 2 as it refuses a truncated header,
        // and only a wrong version is answered (RPC_MISMATCH): its word is read here.
        uint32_t rpcvers = RPC_MSG_VERSION;
        if (d.set_pos(8) && d.u32(rpcvers) && rpcvers != RPC_MSG_VERSION) {
            send_record(reply_header(xid, nullptr), {}, Clock::now() + std::chrono::seconds(5));
        }
        return; // otherwise not even a call header: nothing to answer
    }
    RpcCall call;
    call.xid = xid;
    call.prog = m.cb_prog;
    call.vers = m.cb_vers;
    call.proc = m.cb_proc;
    call.cred_flavor = static_cast<uint32_t>(m.cb_cred.oa_flavor);
    call.args = std::span<const char>(record).subspan(d.pos());

    std::optional<RpcCallReply> answer;
    CallHandler handler;
    {
        std::lock_guard lock(mu_);
        handler = handler_;
    }
    if (handler) {
        try {
            answer = handler(call);
        } catch (const std::exception&) {
            answer = RpcCallReply{SYSTEM_ERR, {}};
        }
        if (!answer) {
            return;
        }
    } else {
        answer = RpcCallReply{PROG_UNAVAIL, {}};
    }
    send_record(reply_header(xid, &*answer), answer->results,
                Clock::now() + std::chrono::seconds(5));
}

void RpcTransport::expire_overdue(Clock::time_point now) {
    std::vector<Pending> expired;
    {
        std::lock_guard lock(mu_);
        for (auto it = pending_.begin(); it != pending_.end();) {
            if (it->second.deadline <= now) {
                expired.push_back(std::move(it->second));
                it = pending_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& p : expired) {
        const auto waited =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - p.sent).count();
        p.done(failed_reply(RpcStatus::timed_out, "no reply from " + peer_ + " within " +
                                                      std::to_string(waited) + " ms"));
    }
}

void RpcTransport::fail_all(RpcStatus status, const std::string& detail) {
    std::unordered_map<uint32_t, Pending> failed;
    {
        std::lock_guard lock(mu_);
        open_ = false;
        failed.swap(pending_);
    }
    for (auto& [xid, p] : failed) {
        p.done(failed_reply(status, detail));
    }
}

} // namespace flexfiles::client
