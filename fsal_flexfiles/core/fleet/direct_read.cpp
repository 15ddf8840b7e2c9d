// SPDX-License-Identifier: LGPL-3.0-or-later
//
// READs sent and answered on the caller's thread, the data received straight into the
// caller's buffer (DataServer::read_here). Through the event thread, a proxied READ of
// 1 MiB cost two thread hand-offs, libnfs's buffer for the whole reply and a copy from it
// into Ganesha's buffer (README.md has what going without them measured). Here the caller
// takes one of the server's direct connections (direct_write.cpp), idle and so with no
// request of libnfs's in it, writes the call itself and reads the reply itself: the head
// into a small buffer (read_wire.hpp parses it as it comes), the data into the caller's.
// libnfs never sees this exchange. A connection whose reply was not read to its end (a
// timeout, a malformed reply) is closed, not given back.
//
// As on the event thread: the deadline bounds the wait, a timeout counts against the
// server's health, an NFS error leaves it alone, and the request is counted.
#include "fleet/data_server_impl.hpp"
#include "fleet/read_wire.hpp"

// clang-format off
#include <nfsc/libnfs.h> // defines EXTERN, used by the others: must come first
#include <nfsc/libnfs-raw.h>
// clang-format on

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

namespace flexfiles::fleet {

namespace {

using Impl = DataServer::Impl;
using std::chrono::duration_cast;
using std::chrono::microseconds;

enum class End { ok, timeout, closed, failed, malformed };

// One exchange on a non-blocking socket, bounded by a deadline.
class Exchange {
public:
    Exchange(int fd, Clock::time_point until) : fd_(fd), until_(until) {}

    End send_all(std::span<const std::uint8_t> bytes) {
        while (!bytes.empty()) {
            const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                bytes = bytes.subspan(static_cast<std::size_t>(n));
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                return fail("send");
            if (End e = wait(POLLOUT); e != End::ok)
                return e;
        }
        return End::ok;
    }

    // Exactly `n` bytes of the reply's record into `to` (record marks left out).
    End read(std::uint8_t* to, std::size_t n) {
        while (n > 0) {
            if (left_ == 0) {
                if (last_)
                    return malformed("the reply ended before its data");
                std::array<std::uint8_t, 4> mark;
                if (End e = recv_exact(mark.data(), mark.size()); e != End::ok)
                    return e;
                const read_wire::RecordMark m = read_wire::decode_mark(mark);
                left_ = m.length;
                last_ = m.last;
                continue;
            }
            const std::size_t k = std::min<std::size_t>(n, left_);
            if (End e = recv_exact(to, k); e != End::ok)
                return e;
            to += k;
            n -= k;
            left_ -= static_cast<std::uint32_t>(k);
        }
        return End::ok;
    }

    bool at_record_end() const { return left_ == 0 && last_; }
    const std::string& why() const { return why_; }
    End malformed(std::string why) {
        why_ = std::move(why);
        return End::malformed;
    }

private:
    // Bytes from here on are many (the data): received blocking, with MSG_WAITALL.
    static constexpr std::size_t kBulk = 64 * 1024;

    End recv_exact(std::uint8_t* to, std::size_t n) {
        if (n >= kBulk)
            return recv_all_blocking(to, n);
        while (n > 0) {
            const ssize_t got = ::recv(fd_, to, n, MSG_DONTWAIT);
            if (got > 0) {
                to += got;
                n -= static_cast<std::size_t>(got);
                continue;
            }
            if (got == 0) {
                why_ = "the server closed the connection";
                return End::closed;
            }
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return fail("recv");
            if (End e = wait(POLLIN); e != End::ok)
                return e;
        }
        return End::ok;
    }

    // With the socket blocking and MSG_WAITALL, the kernel fills `to` as segments arrive
    // instead of waking this thread for each one (poll, then recv, per segment);
    // SO_RCVTIMEO bounds each wait by the deadline. The socket is non-blocking again
    // afterwards, as libnfs wants it.
    End recv_all_blocking(std::uint8_t* to, std::size_t n) {
        const int flags = ::fcntl(fd_, F_GETFL);
        if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) < 0)
            return fail("fcntl");
        End e = End::ok;
        while (n > 0 && e == End::ok) {
            const auto left = until_ - Clock::now();
            if (left <= Clock::duration::zero()) {
                e = timed_out();
                break;
            }
            const auto us = duration_cast<microseconds>(left).count() + 1;
            const timeval tv{static_cast<time_t>(us / 1000000),
                             static_cast<suseconds_t>(us % 1000000)};
            if (::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
                e = fail("setsockopt");
                break;
            }
            const ssize_t got = ::recv(fd_, to, n, MSG_WAITALL);
            if (got > 0) {
                to += got;
                n -= static_cast<std::size_t>(got);
            } else if (got == 0) {
                why_ = "the server closed the connection";
                e = End::closed;
            } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
                e = fail("recv");
            }
        }
        if (::fcntl(fd_, F_SETFL, flags) < 0 && e == End::ok)
            e = fail("fcntl");
        return e;
    }

    End wait(short events) {
        const auto left = until_ - Clock::now();
        if (left <= Clock::duration::zero())
            return timed_out();
        pollfd p{fd_, events, 0};
        const int rc = ::poll(&p, 1, poll_ms(until_));
        if (rc < 0 && errno != EINTR)
            return fail("poll");
        return End::ok; // ready, interrupted, or the deadline: the caller's next try says
    }

    End timed_out() {
        why_ = "no reply";
        return End::timeout;
    }
    End fail(const char* what) {
        why_ = std::string(what) + ": " + std::strerror(errno);
        return End::failed;
    }

    int fd_;
    Clock::time_point until_;
    std::uint32_t left_ = 0; // of the current record fragment
    bool last_ = false;      // the current fragment is the record's last
    std::string why_;
};

DsErrc error_code(End e) {
    switch (e) {
    case End::timeout:
        return DsErrc::timeout;
    case End::closed:
    case End::failed:
        return DsErrc::disconnected;
    default:
        return DsErrc::rpc;
    }
}

} // namespace

std::optional<DsResult<ReadResult>> DataServer::read_here(const DsFh& fh, std::uint64_t offset,
                                                          std::span<std::uint8_t> into,
                                                          Deadline deadline) noexcept {
    Impl& d = *impl_;
    if (fh.size() == 0 || into.size() > d.cfg.max_io_size)
        return std::nullopt; // refused on the event thread's way, with its message
    const Clock::time_point start = Clock::now();
    const Deadline dl = deadline == Deadline{} ? start + d.cfg.request_timeout : deadline;
    auto dc = d.take_direct(dl);
    if (!dc)
        return std::nullopt;
    d.c_requests.fetch_add(1, std::memory_order_relaxed);
    d.c_in_flight.fetch_add(1, std::memory_order_relaxed);
    d.c_direct_reads.fetch_add(1, std::memory_order_relaxed);
    const auto count = static_cast<std::uint32_t>(into.size());
    const std::uint32_t xid = d.direct_xid.fetch_add(1, std::memory_order_relaxed);

    Exchange x(rpc_get_fd(dc->rpc), dl);
    read_wire::ReplyHead head;
    End e = x.send_all(read_wire::encode_call(xid, d.cfg.uid, d.cfg.gid, fh, offset, count).view());
    // The head, as far as it is known to reach: exactly its bytes, none of the data's.
    std::array<std::uint8_t, 512> bytes;
    std::size_t have = 0;
    while (e == End::ok) {
        head = read_wire::parse_reply_head({bytes.data(), have}, xid, count);
        if (head.kind == read_wire::ReplyHead::Kind::malformed)
            e = x.malformed(head.error);
        else if (head.kind == read_wire::ReplyHead::Kind::done)
            break;
        else if (head.need > bytes.size())
            e = x.malformed("a reply head longer than " + std::to_string(bytes.size()) + " bytes");
        else if (e = x.read(bytes.data() + have, head.need - have); e == End::ok)
            have = head.need;
    }
    if (e == End::ok)
        e = x.read(into.data(), head.data_len);
    if (e == End::ok) {
        std::array<std::uint8_t, 3> pad;
        e = x.read(pad.data(), head.padding());
    }
    if (e == End::ok && !x.at_record_end())
        e = x.malformed("more bytes after the data than the reply's padding");

    DsResult<ReadResult> r;
    if (e != End::ok) {
        r.status = DsStatus::error(error_code(e), d.label + ": READ fh " + fh.hex() +
                                                      " (direct): " + x.why() + " after " +
                                                      ms_string(Clock::now() - start));
    } else if (head.status != 0) {
        r.status = DsStatus{DsErrc::nfs, head.status,
                            d.label + ": READ fh " + fh.hex() + ": " +
                                nfs3::status_name(nfs3::Status{head.status})};
    } else {
        r.value.placed = head.data_len;
        r.value.eof = head.eof;
        if (head.attrs) {
            r.value.attrs = *head.attrs;
            r.value.attrs->mode &= 07777; // the fleet's attributes (ds_types.hpp)
        }
    }
    d.give_back(*dc, e == End::ok);
    d.c_in_flight.fetch_sub(1, std::memory_order_relaxed);
    if (!r.ok())
        d.c_errors.fetch_add(1, std::memory_order_relaxed);
    if (e == End::timeout) {
        d.c_timeouts.fetch_add(1, std::memory_order_relaxed);
        d.note_transition(d.health.error_reported(ErrorKind::timeout), r.status.message);
    }
    return r;
}

} // namespace flexfiles::fleet
